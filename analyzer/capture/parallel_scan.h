// Internal to the SQLite reader: scanning a big GPU activity table with two
// threads. SQLite spends up to a microsecond per 20-column row decoding
// records, so a 10-million-kernel table is read in two rowid halves, each on
// its own read-only connection, and the halves are joined in rowid order.
// Rows go straight into columnar tables (no per-row allocation); each row
// also records its (globalPid, deviceId) placement as a small slot number.
#pragma once

#include "analyzer/capture/capture_error.h"
#include "analyzer/capture/column_scatter.h"
#include "analyzer/capture/sqlite_read_context.h"
#include "analyzer/capture/table_pages.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <optional>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

namespace osc::sqlread {

// The rows one thread read, and where each belongs.
template <typename Table>
struct TablePart {
    Table rows;
    std::vector<uint32_t> slotOf;                           // per row, into placements
    std::vector<std::pair<uint64_t, uint32_t>> placements;  // (globalPid, deviceId)
    uint64_t counter = 0;                                   // for the row function's own tally

    uint32_t slot(uint64_t globalPid, uint32_t deviceId) {
        if (globalPid == lastPid_ && deviceId == lastDevice_) [[likely]]
            return lastSlot_;
        return newSlot(globalPid, deviceId);
    }

private:
    // Kept out of line so that slot()'s common case inlines into row loops.
    [[gnu::noinline]] uint32_t newSlot(uint64_t globalPid, uint32_t deviceId) {
        // Indexed: a hostile file with 500k distinct pairs made a linear
        // search here quadratic (259 s).
        const auto [it, added] = index_.try_emplace({globalPid, deviceId}, static_cast<uint32_t>(placements.size()));
        if (added) placements.emplace_back(globalPid, deviceId);
        const uint32_t found = it->second;
        lastPid_ = globalPid;
        lastDevice_ = deviceId;
        lastSlot_ = found;
        return found;
    }

    struct PairHash {
        size_t operator()(const std::pair<uint64_t, uint32_t>& p) const {
            return std::hash<uint64_t>()(p.first * 0x9E3779B97F4A7C15ull ^ p.second);
        }
    };
    std::unordered_map<std::pair<uint64_t, uint32_t>, uint32_t, PairHash> index_;
    uint64_t lastPid_ = ~0ull;
    uint32_t lastDevice_ = 0xFFFFFFFFu;
    uint32_t lastSlot_ = 0;
};

// Reads the rows `select` returns into `part`: `row(part, statement)` appends
// one row to part.rows and its placement slot to part.slotOf. `tick(done)` is
// called every 65536 rows.
// flatten: the per-row push_backs are inlined (GCC otherwise calls an
// out-of-line emplace_back for each of the ~20 columns; 9% of the read).
template <typename Table, typename RowFn, typename Tick>
[[gnu::flatten]] void scanRows(sql::Statement& st, std::string_view table, TablePart<Table>& part, RowFn& row,
                               Tick tick) {
    sqlite3_stmt* s = st.get();
    const int columns = st.columnCount();  // all integers in these selects
    int64_t done = 0;
    while (st.step()) {
        try {
            row(part, s);  // reads with sql::integerColumn
        } catch (const sql::NotAnInteger&) {
            st.requireIntegers(0, columns, table);  // throws the message naming the column
            throw;
        }
        if ((++done & 0xFFFF) == 0) tick(done);
    }
}

// The current row of a statement's first `Columns` columns as a batch of
// one, for row functions written once for TablePages' batches.
template <int Columns>
struct StatementRow {
    int64_t values[Columns];
    const int64_t* columns[Columns];
    explicit StatementRow(sqlite3_stmt* statement) {
        for (int c = 0; c < Columns; ++c) {
            values[c] = sql::integerColumn(statement, c);
            columns[c] = &values[c];
        }
    }
    DecodedRows rows() const { return DecodedRows{columns, 1}; }
};

// One row's integers, for row functions written once for a statement's row
// (StatementValues) and a row of a batch read from pages (BatchRow).
struct StatementValues {
    sqlite3_stmt* statement;
    int64_t integer(int column) const { return sql::integerColumn(statement, column); }
};
struct BatchRow {
    const DecodedRows& rows;
    size_t row;
    int64_t integer(int column) const { return rows.columns[column][row]; }
};

// The usual first six result columns: globalPid, deviceId, start, end,
// streamId, correlationId.
template <typename Table, typename Row>
inline void readPlacementColumns(TablePart<Table>& part, const Row& r) {
    part.slotOf.push_back(part.slot(static_cast<uint64_t>(r.integer(0)), static_cast<uint32_t>(r.integer(1))));
    auto& t = part.rows;
    t.start.push_back(r.integer(2));
    t.end.push_back(r.integer(3));
    t.stream.push_back(static_cast<uint32_t>(r.integer(4)));
    t.correlation.push_back(static_cast<uint32_t>(r.integer(5)));
}

// Appends `from` to `into`, keeping rowid order (into's rows come first).
// The columns are appended on two threads, alternately: most of the time is
// the first touch of into's new pages, which two cores fault in at twice
// the rate of one (0.2 s on one thread for 10 M kernels).
template <typename Table, typename... Columns>
void mergeParts(TablePart<Table>& into, TablePart<Table>& from, const std::tuple<Columns...>& columns) {
    std::vector<uint32_t> remap(from.placements.size());
    for (size_t i = 0; i < from.placements.size(); ++i) {
        const auto [pid, device] = from.placements[i];
        remap[i] = into.slot(pid, device);
    }
    auto appendEvery = [&](size_t parity) {
        size_t index = 0;
        std::apply(
            [&](auto... col) {
                ((index++ % 2 == parity ? appendColumn(into.rows.*col, from.rows.*col) : void()), ...);
            },
            columns);
    };
    std::exception_ptr helperError;
    std::thread helper([&] {
        try {
            appendEvery(1);
        } catch (...) {
            helperError = std::current_exception();
        }
    });
    try {
        for (uint32_t s : from.slotOf) into.slotOf.push_back(remap[s]);
        std::vector<uint32_t>().swap(from.slotOf);
        appendEvery(0);
    } catch (...) {
        helper.join();
        throw;
    }
    helper.join();
    if (helperError) std::rethrow_exception(helperError);
    into.counter += from.counter;
}

// Tables smaller than this are read by one thread (tests lower it to
// exercise the two-thread path on small files).
inline int64_t parallelScanMinRows = 1 << 20;

// The first and last rowid of a table as SQLite has them: where a scan
// splits, and what rows read from its pages must begin and end with (absent
// for an empty table). Separate subqueries: min() and max() in one SELECT
// scan the table.
struct RowidSpan {
    int64_t first = 0, last = 0;
    static std::optional<RowidSpan> of(ReadContext& ctx, const std::string& table) {
        const std::string from = " FROM \"" + table + "\")";
        sql::Statement range(ctx.db, "SELECT (SELECT min(rowid)" + from + ", (SELECT max(rowid)" + from);
        if (!range.step() || range.isNull(0)) return std::nullopt;
        return RowidSpan{range.int64(0), range.int64(1)};
    }
    // Whether `seen` (every leaf read as expected) holds the rows SQLite
    // would give: rowids rising from the table's first to its last.
    bool agrees(const TablePages::Scanned& seen) const {
        return seen.ok && seen.rows > 0 && seen.firstRowid == first && seen.lastRowid == last &&
               seen.rows <= static_cast<uint64_t>(last - first) + 1;
    }
};

// A scan's second half on a thread of its own: `scan(part, stopped)` fills
// `part`, reserved for `rows` rows, and calls stopped() now and then, which
// throws LoadCancelled once the first half is done or unwinding. The thread
// is joined before anything of the caller's unwinds; join() rethrows its
// error.
template <typename Table>
class SecondHalf {
public:
    template <typename... Columns, typename Scan>
    SecondHalf(size_t rows, const std::tuple<Columns...>& columns, Scan scan)
        : thread_([this, rows, &columns, scan]() mutable {
              try {
                  reserveAll(part.rows, rows, columns);
                  part.slotOf.reserve(rows);
                  scan(part, [this] {
                      if (stop_.load(std::memory_order_relaxed)) throw LoadCancelled{};
                  });
              } catch (...) {
                  error_ = std::current_exception();
              }
          }) {}
    ~SecondHalf() {
        stop_ = true;
        if (thread_.joinable()) thread_.join();
    }
    SecondHalf(const SecondHalf&) = delete;
    SecondHalf& operator=(const SecondHalf&) = delete;

    TablePart<Table>& join() {
        if (thread_.joinable()) thread_.join();
        if (error_) std::rethrow_exception(error_);
        return part;
    }

    TablePart<Table> part;

private:
    std::atomic<bool> stop_{false};
    std::exception_ptr error_;
    std::thread thread_;  // last: it starts once the members it uses exist
};

// Scans `select` (one table, no WHERE clause) over `table`: in two threads
// when the table is big and the machine has two cores, else in this thread.
template <typename Table, typename... Columns, typename RowFn>
TablePart<Table> scanTable(ReadContext& ctx, const std::string& table, const std::string& select,
                           const std::tuple<Columns...>& columns, RowFn row) {
    TablePart<Table> first;
    const int64_t total = ctx.rowCount(table);
    reserveAll(first.rows, static_cast<size_t>(total), columns);
    first.slotOf.reserve(static_cast<size_t>(total));

    std::optional<RowidSpan> span;
    if (total >= parallelScanMinRows && std::thread::hardware_concurrency() >= 2) span = RowidSpan::of(ctx, table);
    if (!span || span->last <= span->first) {
        sql::Statement st(ctx.db, select);
        scanRows(st, table, first, row, [&](int64_t done) { ctx.tick(done, total); });
        return first;
    }

    const int64_t lo = span->first, hi = span->last;
    const int64_t mid = lo + (hi - lo) / 2;
    // Rowids are dense in practice, so the halves are about even.
    const double firstShare = static_cast<double>(mid - lo + 1) / static_cast<double>(hi - lo + 1);
    const auto firstRows = static_cast<int64_t>(firstShare * static_cast<double>(total));
    SecondHalf<Table> second(static_cast<size_t>(total - firstRows + (total >> 6) + 1024), columns,
                             [&](TablePart<Table>& part, auto stopped) {
                                 sql::Database db = sql::Database::openForReading(ctx.path);
                                 sqlite3_busy_timeout(db.get(), 5000);
                                 // Bounded by the first connection's max(rowid): a live capture
                                 // may have committed more since, and those rows could refer to
                                 // launches or strings the first connection's snapshot lacks.
                                 sql::Statement st(db, select + " WHERE rowid > " + std::to_string(mid) +
                                                           " AND rowid <= " + std::to_string(hi));
                                 scanRows(st, table, part, row, [&](int64_t) { stopped(); });
                             });
    {
        sql::Statement st(ctx.db, select + " WHERE rowid <= " + std::to_string(mid));
        scanRows(st, table, first, row, [&](int64_t done) { ctx.tick(done, firstRows); });
    }
    mergeParts(first, second.join(), columns);
    return first;
}

// scanTable's result read from the table's pages (TablePages), `columns` in
// the order `rows(part, DecodedRows)` reads them; nullopt when the file or
// table is not one TablePages reads or its pages hold anything unexpected,
// and then the caller reads it with scanTable.
template <typename Table, typename... Columns, typename RowFn>
std::optional<TablePart<Table>> scanTablePages(ReadContext& ctx, const std::string& table,
                                               const std::vector<PageColumn>& names,
                                               const std::tuple<Columns...>& columns, RowFn rows) {
    if (!readTablePagesDirectly) return std::nullopt;
    auto pages = TablePages::open(ctx, table, names);
    if (!pages) return std::nullopt;
    const std::optional<RowidSpan> span = RowidSpan::of(ctx, table);
    if (!span) return std::nullopt;
    const int64_t total = ctx.rowCount(table);
    const size_t leaves = pages->leafCount();
    const bool split = total >= parallelScanMinRows && std::thread::hardware_concurrency() >= 2 && leaves >= 2;
    const size_t mid = split ? leaves / 2 : leaves;
    const auto firstRows =
        static_cast<int64_t>(static_cast<double>(total) * static_cast<double>(mid) / static_cast<double>(leaves));
    std::optional<TablePart<Table>> first(std::in_place);
    reserveAll(first->rows, static_cast<size_t>(total), columns);
    first->slotOf.reserve(static_cast<size_t>(total));
    TablePages::Scanned secondSeen;
    std::optional<SecondHalf<Table>> second;
    if (split)
        second.emplace(static_cast<size_t>(total - firstRows + (total >> 6) + 1024), columns,
                       [&](TablePart<Table>& part, auto stopped) {
                           secondSeen = pages->scan(
                               mid, leaves, [&](const DecodedRows& r) { rows(part, r); }, [&](uint64_t) { stopped(); });
                       });
    TablePages::Scanned all = pages->scan(
        0, mid, [&](const DecodedRows& r) { rows(*first, r); },
        [&](uint64_t done) { ctx.tick(static_cast<int64_t>(done), firstRows); });
    TablePart<Table>* secondPart = split ? &second->join() : nullptr;
    if (split && all.ok) {
        // The halves' rowids must rise across the seam too.
        if (!secondSeen.ok || (all.rows > 0 && secondSeen.rows > 0 && secondSeen.firstRowid <= all.lastRowid))
            all.ok = false;
        if (all.rows == 0) all.firstRowid = secondSeen.firstRowid;
        if (secondSeen.rows > 0) all.lastRowid = secondSeen.lastRowid;
        all.rows += secondSeen.rows;
    }
    if (!span->agrees(all)) return std::nullopt;
    if (split) mergeParts(*first, *secondPart, columns);
    return first;
}

// The per-device tables the part's placements name, creating devices (and
// processes) as needed. Devices are all created before any pointer is taken,
// since creating one can move the others.
template <typename Table>
std::vector<Table*> placementTables(ReadContext& ctx, const TablePart<Table>& part, Table Device::*member) {
    std::vector<std::pair<size_t, uint32_t>> where;
    for (const auto& [pid, device] : part.placements) where.emplace_back(ctx.processIndex(pid), device);
    // Created in ascending order, each device is appended to its process's
    // sorted list instead of inserted in the middle (quadratic for many).
    std::vector<std::pair<size_t, uint32_t>> sorted = where;
    std::sort(sorted.begin(), sorted.end());
    for (const auto& [process, device] : sorted) ctx.capture.processes[process].deviceById(device);
    std::vector<Table*> out;
    for (const auto& [process, device] : where)
        out.push_back(&(ctx.capture.processes[process].deviceById(device).*member));
    return out;
}

}  // namespace osc::sqlread
