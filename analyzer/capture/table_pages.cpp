#include "analyzer/capture/table_pages.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <utility>

namespace osc::sqlread {
namespace {

bool exists(const std::string& path) {
    struct stat st {};
    return ::lstat(path.c_str(), &st) == 0;
}

uint32_t u32At(const unsigned char* p) {
    return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | p[3];
}

// Deeper than any real table: a 64 KiB-page b-tree of depth 8 would hold
// more rows than SQLite allows pages.
constexpr int kMaxDepth = 16;

}  // namespace

TablePages::Batch::Batch(const TablePages& pages)
    : values(static_cast<size_t>(pages.columnCount_) * DecodedRows::kMaxRows) {
    for (int c = 0; c < pages.columnCount_; ++c) {
        int64_t* column = values.data() + static_cast<size_t>(c) * DecodedRows::kMaxRows;
        columns[c] = column;
        if (pages.missing_[c]) std::fill(column, column + DecodedRows::kMaxRows, pages.ifMissing_[c]);
    }
}

TablePages::TablePages(TablePages&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)),
      pageSize_(other.pageSize_),
      usable_(other.usable_),
      leaves_(std::move(other.leaves_)),
      columnCount_(other.columnCount_),
      rootIsLeaf_(other.rootIsLeaf_),
      recordColumns_(other.recordColumns_) {
    std::memcpy(ifMissing_, other.ifMissing_, sizeof ifMissing_);
    std::memcpy(ifNull_, other.ifNull_, sizeof ifNull_);
    std::memcpy(missing_, other.missing_, sizeof missing_);
    std::memcpy(copyOf_, other.copyOf_, sizeof copyOf_);
    copies_ = other.copies_;
    std::memcpy(slot_, other.slot_, sizeof slot_);
}

TablePages::~TablePages() {
    if (fd_ >= 0) ::close(fd_);
}

bool TablePages::readPage(uint32_t number, std::vector<unsigned char>& page) const {
    const auto offset = static_cast<off_t>(number - 1) * static_cast<off_t>(pageSize_);
    size_t done = 0;
    while (done < pageSize_) {
        const ssize_t n = ::pread(fd_, page.data() + done, pageSize_ - done, offset + static_cast<off_t>(done));
        if (n <= 0) return false;
        done += static_cast<size_t>(n);
    }
    return true;
}

std::optional<TablePages> TablePages::open(ReadContext& ctx, const std::string& table,
                                           const std::vector<PageColumn>& columns) {
    if (columns.empty() || columns.size() > static_cast<size_t>(kMaxColumns)) return std::nullopt;
    // Pages in a -wal, or a journal to roll back, would change what the
    // file's own pages say; SQLite reads those (a live capture's, say).
    if (exists(ctx.path + "-wal") || exists(ctx.path + "-journal")) return std::nullopt;

    TablePages out;
    out.columnCount_ = static_cast<int>(columns.size());
    std::fill(std::begin(out.slot_), std::end(out.slot_), int8_t{-1});
    std::fill(std::begin(out.copyOf_), std::end(out.copyOf_), int8_t{-1});
    {
        // Each wanted column's place in a record. A hidden (generated)
        // column or a primary key (an INTEGER one is the rowid, stored as
        // NULL) is not stored as it reads: SQLite then.
        sql::Statement info(ctx.db, "PRAGMA table_xinfo(\"" + table + "\")");
        std::vector<int> found(columns.size(), -1);
        int cid = 0;
        for (; info.step(); ++cid) {
            if (info.int64(5) != 0 || info.int64(6) != 0) return std::nullopt;
            const std::string_view name = info.text(1);
            for (size_t c = 0; c < columns.size(); ++c)
                if (found[c] < 0 && !columns[c].name.empty() && name == columns[c].name) found[c] = cid;
        }
        for (size_t c = 0; c < columns.size(); ++c) {
            out.ifMissing_[c] = columns[c].ifMissing;
            out.ifNull_[c] = columns[c].ifNull;
            if (found[c] < 0) {
                out.missing_[c] = true;
                continue;
            }
            if (found[c] >= kMaxRecordColumns) return std::nullopt;
            if (out.slot_[found[c]] >= 0) {
                if (columns[c].ifNull != columns[static_cast<size_t>(out.slot_[found[c]])].ifNull) return std::nullopt;
                out.copyOf_[c] = out.slot_[found[c]];
                out.copies_ = true;
                continue;
            }
            out.slot_[found[c]] = static_cast<int8_t>(c);
            out.recordColumns_ = std::max(out.recordColumns_, found[c] + 1);
        }
    }
    int64_t root = 0;
    {
        sql::Statement st(ctx.db, "SELECT rootpage FROM sqlite_master WHERE type = 'table' AND name = ?");
        st.bindText(1, table);
        if (!st.step()) return std::nullopt;
        root = st.int64(0);
    }

    out.fd_ = ::open(ctx.path.c_str(), O_RDONLY | O_CLOEXEC);
    if (out.fd_ < 0) return std::nullopt;
    unsigned char header[100];
    if (::pread(out.fd_, header, sizeof header, 0) != static_cast<ssize_t>(sizeof header) ||
        std::memcmp(header, "SQLite format 3", 16) != 0)
        return std::nullopt;
    const uint32_t size = pages::u16(header + 16);
    out.pageSize_ = size == 1 ? 65536 : size;
    if (out.pageSize_ < 512 || (out.pageSize_ & (out.pageSize_ - 1)) != 0 || header[20] > out.pageSize_ - 480)
        return std::nullopt;
    out.usable_ = out.pageSize_ - header[20];
    struct stat st {};
    if (::fstat(out.fd_, &st) != 0) return std::nullopt;
    const auto filePages = static_cast<uint64_t>(st.st_size) / out.pageSize_;
    // The header's page count holds when its "valid for" matches the change
    // counter (SQLite's rule); pages past it are not the database's.
    uint64_t pageCount = filePages;
    if (u32At(header + 28) != 0 && u32At(header + 24) == u32At(header + 92)) {
        pageCount = u32At(header + 28);
        if (pageCount > filePages) return std::nullopt;
    }
    // The page holding byte 2^30 is SQLite's lock page, never a table's.
    const uint64_t lockPage = (uint64_t{1} << 30) / out.pageSize_ + 1;
    if (root < 2 || static_cast<uint64_t>(root) > pageCount) return std::nullopt;

    // Leaves in key order, a level at a time: every leaf of a b-tree is at
    // the same depth, so once a level's first page is a leaf the level is
    // taken as leaves unread (scan() checks each one's type as it reads it).
    // A page met twice is a cycle.
    std::vector<bool> seen(pageCount + 1, false);
    auto take = [&](uint64_t number) {
        if (number < 2 || number > pageCount || number == lockPage || seen[number]) return false;
        seen[number] = true;
        return true;
    };
    std::vector<unsigned char> page(out.pageSize_);
    // The children of an interior page, appended to `level` in key order.
    auto children = [&](uint32_t number, std::vector<uint32_t>& level) {
        if (!out.readPage(number, page) || page[0] != pages::kInteriorTablePage) return false;
        const uint32_t cells = pages::u16(page.data() + 3);
        if (12 + 2 * cells > out.usable_ || cells > (out.pageSize_ - 8) / 6 ||
            (cells == 0 && number != static_cast<uint64_t>(root)))
            return false;
        for (uint32_t c = 0; c < cells; ++c) {
            const uint32_t offset = pages::u16(page.data() + 12 + 2 * c);
            if (offset < 12 + 2 * cells || offset + 4 > out.usable_) return false;
            level.push_back(u32At(page.data() + offset));
        }
        level.push_back(u32At(page.data() + 8));
        return true;
    };
    if (!take(static_cast<uint64_t>(root))) return std::nullopt;
    std::vector<uint32_t> level{static_cast<uint32_t>(root)};
    for (int depth = 0;; ++depth) {
        if (depth == kMaxDepth || !out.readPage(level.front(), page)) return std::nullopt;
        if (page[0] == pages::kLeafTablePage) {
            out.rootIsLeaf_ = depth == 0;
            break;
        }
        std::vector<uint32_t> below;
        for (uint32_t number : level)
            if (!children(number, below)) return std::nullopt;
        for (uint32_t number : below)
            if (!take(number)) return std::nullopt;
        level = std::move(below);
    }
    out.leaves_ = std::move(level);
    return out;
}

}  // namespace osc::sqlread
