// Internal to the SQLite reader: a rowid table's rows decoded straight from
// the file's b-tree pages, for the tables big enough to be worth it
// (kernels, copies, memsets, API calls). SQLite's virtual machine spends
// about 90 ns a row stepping and handing out five integer columns; the
// cells themselves decode in a fraction of that.
//
// This is a fast path, never the only one: anything that is not plainly a
// finished file's well-formed table (a -wal or -journal beside the file, an
// overflow cell, a value that is not an integer, a page out of place, rowids
// out of order, a first or last rowid other than SQLite's) makes open() or
// scan() say no, and the caller reads the table through SQLite as before,
// which then decides what the file holds and what its errors say.
#pragma once

#include "analyzer/capture/sqlite_read_context.h"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace osc::sqlread {

// Decoded rows, column by column: column(c)[i] is row i's value of the
// c-th column asked for. Row functions take rows in batches so that each
// column is appended in a loop of its own, its vector's ends in registers
// (a row at a time, twelve vectors' ends went through memory on every row).
struct DecodedRows {
    static constexpr size_t kMaxRows = 4096;
    const int64_t* const* columns;
    size_t count;
    const int64_t* column(int c) const { return columns[c]; }
};

// Off: every table is read through SQLite. Tests turn it off to compare the
// two readings of one file.
inline bool readTablePagesDirectly = true;

// A column to read, as the SQL readers read it: a table without the column
// reads `ifMissing` (the literal they select instead), a NULL reads `ifNull`
// (0 as sqlite3_column_int64 has it, or coalesce()'s fallback).
struct PageColumn {
    PageColumn(std::string column, int64_t missing = 0, int64_t null = 0)
        : name(std::move(column)), ifMissing(missing), ifNull(null) {}
    PageColumn(const char* column, int64_t missing = 0, int64_t null = 0)
        : PageColumn(std::string(column), missing, null) {}
    std::string name;
    int64_t ifMissing, ifNull;
};

class TablePages {
public:
    // The table's leaf pages, found through its interior pages, or nullopt
    // when the file or the table is not one this reads. At most kMaxColumns.
    static std::optional<TablePages> open(ReadContext& ctx, const std::string& table,
                                          const std::vector<PageColumn>& columns);
    static constexpr int kMaxColumns = 24;

    TablePages(TablePages&& other) noexcept;
    TablePages& operator=(TablePages&&) = delete;
    TablePages(const TablePages&) = delete;
    ~TablePages();

    size_t leafCount() const { return leaves_.size(); }

    // What scan() saw of the rows it decoded.
    struct Scanned {
        bool ok = false;
        uint64_t rows = 0;
        int64_t firstRowid = 0, lastRowid = 0;
    };
    // Decodes the rows of leaves [from, to) in rowid order, calling
    // rows(DecodedRows) for each batch and tick(rowsSoFar) every 65536 rows.
    // ok is false, part way, at anything unexpected; rows and tick may throw.
    template <typename Rows, typename Tick>
    Scanned scan(size_t from, size_t to, Rows&& rows, Tick&& tick) const;

private:
    TablePages() = default;
    // Reads page `number` (all pageSize_ bytes) into `page`; false on a short read.
    bool readPage(uint32_t number, std::vector<unsigned char>& page) const;
    // Rows being decoded, a column at a time, until handed on.
    struct Batch {
        std::vector<int64_t> values;
        const int64_t* columns[kMaxColumns] = {};
        size_t count = 0;
        // A column the table lacks holds its ifMissing throughout.
        explicit Batch(const TablePages& pages);
    };
    // Walks the cells of one leaf page into `batch`, handing it to `rows`
    // when full; false at anything unexpected.
    template <typename Rows>
    bool leafRows(const unsigned char* page, Scanned& seen, Batch& batch, Rows& rows) const;

    int fd_ = -1;
    uint32_t pageSize_ = 0, usable_ = 0;
    std::vector<uint32_t> leaves_;
    int columnCount_ = 0;
    bool rootIsLeaf_ = false;
    int64_t ifMissing_[kMaxColumns] = {}, ifNull_[kMaxColumns] = {};
    bool missing_[kMaxColumns] = {};
    // A column asked for twice (nsys exports without shortName read
    // demangledName for both names): the second copies the first's value.
    int8_t copyOf_[kMaxColumns] = {};
    bool copies_ = false;
    // A record's first recordColumns_ columns are read; slot_[c] is where
    // column c goes among the wanted ones (-1: not wanted).
    static constexpr int kMaxRecordColumns = 32;
    int recordColumns_ = 0;
    int8_t slot_[kMaxRecordColumns] = {};
};

namespace pages {

inline constexpr unsigned char kInteriorTablePage = 0x05;
inline constexpr unsigned char kLeafTablePage = 0x0D;

// SQLite's variable-length integer at p (at most 9 bytes, never past end).
// Returns the bytes taken, 0 when it runs past end.
inline int varint(const unsigned char* p, const unsigned char* end, uint64_t& out) {
    uint64_t v = 0;
    for (int i = 0; i < 8; ++i) {
        if (p + i >= end) return 0;
        v = (v << 7) | (p[i] & 0x7F);
        if ((p[i] & 0x80) == 0) {
            out = v;
            return i + 1;
        }
    }
    if (p + 8 >= end) return 0;
    out = (v << 8) | p[8];
    return 9;
}

inline uint32_t u16(const unsigned char* p) { return (uint32_t{p[0]} << 8) | p[1]; }

// A record value of serial type 0-6, 8 or 9 as SQLite's column_int64 reads
// it (NULL as 0); false for the others (a real, text or blob: SQLite
// decides those).
inline bool integerValue(uint64_t serialType, const unsigned char*& p, const unsigned char* end, int64_t& out) {
    static constexpr int kBytes[7] = {0, 1, 2, 3, 4, 6, 8};
    if (serialType == 8 || serialType == 9 || serialType == 0) {
        out = serialType == 9 ? 1 : 0;  // NULL reads as 0
        return true;
    }
    if (serialType > 6) return false;
    const int n = kBytes[serialType];
    if (end - p < n) return false;
    uint64_t v = 0;
    for (int i = 0; i < n; ++i) v = (v << 8) | p[i];
    const int shift = 64 - 8 * n;  // sign-extend from n bytes
    out = static_cast<int64_t>(v << shift) >> shift;
    p += n;
    return true;
}

// Steps over a value of any serial type; false for the reserved 10 and 11
// and for a value running past end.
inline bool skipValue(uint64_t serialType, const unsigned char*& p, const unsigned char* end) {
    static constexpr int kBytes[10] = {0, 1, 2, 3, 4, 6, 8, 8, 0, 0};
    if (serialType == 10 || serialType == 11) return false;
    const uint64_t n = serialType < 10 ? kBytes[serialType] : (serialType - 12) / 2;  // blob even, text odd
    if (static_cast<uint64_t>(end - p) < n) return false;
    p += n;
    return true;
}

}  // namespace pages

template <typename Rows>
bool TablePages::leafRows(const unsigned char* page, Scanned& seen, Batch& batch, Rows& rows) const {
    using namespace pages;
    const unsigned char* end = page + usable_;
    const uint32_t cells = u16(page + 3);
    const uint32_t pointers = 8;
    // SQLite's own page checks (btreeInitPage, getAndInitPage): at most a
    // cell per 6 bytes, and no empty page but an empty table's root.
    if (pointers + 2 * cells > usable_ || cells > (pageSize_ - 8) / 6 || (cells == 0 && !rootIsLeaf_)) return false;
    const uint64_t maxLocal = usable_ - 35;  // larger payloads spill to overflow pages
    int64_t* values = batch.values.data();
    for (uint32_t c = 0; c < cells; ++c) {
        const uint32_t offset = u16(page + pointers + 2 * c);
        if (offset < pointers + 2 * cells || offset >= usable_) return false;
        const unsigned char* p = page + offset;
        uint64_t payload = 0, rowid = 0;
        int n = varint(p, end, payload);
        if (n == 0 || payload > maxLocal) return false;
        p += n;
        n = varint(p, end, rowid);
        if (n == 0) return false;
        p += n;
        if (payload > static_cast<uint64_t>(end - p)) return false;
        const unsigned char* recordEnd = p + payload;
        uint64_t headerBytes = 0;
        n = varint(p, recordEnd, headerBytes);
        if (n == 0 || headerBytes < static_cast<uint64_t>(n) || headerBytes > payload) return false;
        const unsigned char* type = p + n;
        const unsigned char* typesEnd = p + headerBytes;
        const unsigned char* value = typesEnd;
        for (int column = 0; column < recordColumns_; ++column) {
            uint64_t serial = 0;
            n = varint(type, typesEnd, serial);
            if (n == 0) return false;  // fewer columns than the table: SQLite fills defaults
            type += n;
            if (slot_[column] < 0) {  // not wanted: whatever it is, stepped over
                if (!skipValue(serial, value, recordEnd)) return false;
                continue;
            }
            int64_t v = 0;
            if (serial == 0)
                v = ifNull_[slot_[column]];
            else if (!integerValue(serial, value, recordEnd, v))
                return false;
            values[static_cast<size_t>(slot_[column]) * DecodedRows::kMaxRows + batch.count] = v;
        }
        // Having read the whole header, SQLite checks that the values fill
        // the record exactly.
        if (type == typesEnd && value != recordEnd) return false;
        if (copies_)
            for (int w = 0; w < columnCount_; ++w)
                if (copyOf_[w] >= 0)
                    values[static_cast<size_t>(w) * DecodedRows::kMaxRows + batch.count] =
                        values[static_cast<size_t>(copyOf_[w]) * DecodedRows::kMaxRows + batch.count];
        const auto id = static_cast<int64_t>(rowid);
        if (seen.rows == 0)
            seen.firstRowid = id;
        else if (id <= seen.lastRowid)
            return false;
        seen.lastRowid = id;
        ++seen.rows;
        if (++batch.count == DecodedRows::kMaxRows) {
            rows(DecodedRows{batch.columns, batch.count});
            batch.count = 0;
        }
    }
    return true;
}

// flatten: the row function's column appends inline into the cell loop.
template <typename Rows, typename Tick>
TablePages::Scanned TablePages::scan(size_t from, size_t to, Rows&& rows, Tick&& tick) const {
    Scanned seen;
    std::vector<unsigned char> page(pageSize_);
    Batch batch(*this);
    uint64_t nextTick = 65536;
    for (size_t leaf = from; leaf < to; ++leaf) {
        if (!readPage(leaves_[leaf], page) || page[0] != pages::kLeafTablePage ||
            !leafRows(page.data(), seen, batch, rows))
            return seen;
        if (seen.rows >= nextTick) {
            tick(seen.rows);
            nextTick = seen.rows + 65536;
        }
    }
    if (batch.count > 0) rows(DecodedRows{batch.columns, batch.count});
    seen.ok = true;
    return seen;
}

}  // namespace osc::sqlread
