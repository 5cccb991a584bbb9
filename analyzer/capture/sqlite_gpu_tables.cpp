// Readers for the per-device GPU activity tables: kernels, copies, memsets,
// synchronisations. Rows are read straight into one flat columnar table
// (reserved from count(*)), then handed to their (process, device): moved
// whole when the file holds one device (the common case: no copy at all),
// scattered column by column otherwise so the peak stays near one copy.
// Kernels come in two layouts: nsys's (and our format 1) one wide table, and
// our format 2's narrow OVERLAPSCOPE_KERNEL rows plus the launches they share.
#include "analyzer/capture/parallel_scan.h"
#include "analyzer/capture/sqlite_read_context.h"

#include <optional>
#include <tuple>
#include <vector>

namespace osc::sqlread {
namespace {

const auto kKernelColumns = std::make_tuple(
    &KernelTable::start, &KernelTable::end, &KernelTable::stream, &KernelTable::correlation, &KernelTable::name,
    &KernelTable::shortName, &KernelTable::gridX, &KernelTable::gridY, &KernelTable::gridZ, &KernelTable::blockX,
    &KernelTable::blockY, &KernelTable::blockZ, &KernelTable::registersPerThread, &KernelTable::staticSharedMemory,
    &KernelTable::dynamicSharedMemory, &KernelTable::graphId, &KernelTable::graphNodeId);
// What is read without launch details (LoadOptions::launchDetails off).
const auto kKernelCoreColumns = std::make_tuple(&KernelTable::start, &KernelTable::end, &KernelTable::stream,
                                                &KernelTable::correlation, &KernelTable::name, &KernelTable::shortName);
// ... and with the launch shape only (LoadOptions::launchShapeOnly).
const auto kKernelShapeColumns =
    std::make_tuple(&KernelTable::start, &KernelTable::end, &KernelTable::stream, &KernelTable::correlation,
                    &KernelTable::name, &KernelTable::shortName, &KernelTable::gridX, &KernelTable::gridY,
                    &KernelTable::gridZ, &KernelTable::blockX, &KernelTable::blockY, &KernelTable::blockZ);

// Which launch columns a reading fills.
enum class LaunchColumns : uint8_t { None, Shape, All };
const auto kCopyColumns = std::make_tuple(
    &CopyTable::start, &CopyTable::end, &CopyTable::stream, &CopyTable::correlation, &CopyTable::bytes,
    &CopyTable::copyKind, &CopyTable::srcKind, &CopyTable::dstKind, &CopyTable::srcDevice, &CopyTable::dstDevice);
const auto kMemsetColumns = std::make_tuple(&MemsetTable::start, &MemsetTable::end, &MemsetTable::stream,
                                            &MemsetTable::correlation, &MemsetTable::bytes, &MemsetTable::value);
const auto kSyncColumns = std::make_tuple(&SyncTable::start, &SyncTable::end, &SyncTable::stream,
                                          &SyncTable::correlation, &SyncTable::type, &SyncTable::eventId);

// SELECT list shared by all four tables: placement first, then times. Raw
// columns, not coalesce(): NULL reads as 0, which is the right default for
// these, and the kernel table is big enough for the difference to show.
const char* const kPlacement[] = {"globalPid", "deviceId", "start", "end", "streamId", "correlationId"};
std::string placement(ReadContext& ctx, const std::string& table) {
    std::string out = "SELECT ";
    const char* separator = "";
    for (const char* c : kPlacement) {
        out += separator + ctx.rawColumn(table, c, "0");
        separator = ", ";
    }
    return out;
}

// The same columns as read from the table's pages (a missing one reads 0,
// as the literal selected for it does), followed by `extra`.
std::vector<PageColumn> placementPages(std::vector<PageColumn> extra) {
    std::vector<PageColumn> out(std::begin(kPlacement), std::end(kPlacement));
    out.insert(out.end(), extra.begin(), extra.end());
    return out;
}

// `"name"` (firstColumn()'s quoting) as the bare name; "" stays "".
std::string unquoted(const std::string& quoted) {
    return quoted.size() >= 2 && quoted.front() == '"' ? quoted.substr(1, quoted.size() - 2) : quoted;
}

// gridX, gridY, gridZ, blockX, blockY, blockZ from result column `first` on.
template <typename Row>
void readShape(KernelTable& k, const Row& r, int first) {
    k.gridX.push_back(u32(r.integer(first)));
    k.gridY.push_back(u32(r.integer(first + 1)));
    k.gridZ.push_back(u32(r.integer(first + 2)));
    k.blockX.push_back(u32(r.integer(first + 3)));
    k.blockY.push_back(u32(r.integer(first + 4)));
    k.blockZ.push_back(u32(r.integer(first + 5)));
}

// Whether the table exists and holds rows: checked before its column list is
// built, which costs a PRAGMA table_info (copies, memsets and synchronisations
// are often empty).
bool hasRows(ReadContext& ctx, const std::string& table) { return ctx.hasTable(table) && ctx.rowCount(table) > 0; }

// Reads one table: `row(table, r, tally)` appends the columns after the six
// placement ones, reading r.integer(column). `extraPages` are the same
// columns as read from the table's pages (TablePages); empty when one of
// them is an expression pages cannot give, and then SQLite reads the table.
// Returns the row function's tally.
template <typename Table, typename... Columns, typename RowFn>
uint64_t readTable(ReadContext& ctx, const std::string& table, const std::string& extraColumns,
                   const std::vector<PageColumn>& extraPages, Table Device::*member,
                   const std::tuple<Columns...>& columns, RowFn row) {
    if (!ctx.hasTable(table) || ctx.rowCount(table) == 0) return 0;
    auto oneRow = [&row](TablePart<Table>& p, const auto& r) {
        readPlacementColumns(p, r);
        row(p.rows, r, p.counter);
    };
    std::optional<TablePart<Table>> fromPages;
    if (!extraPages.empty())
        fromPages = scanTablePages<Table>(ctx, table, placementPages(extraPages), columns,
                                          [&oneRow](TablePart<Table>& p, const DecodedRows& r) {
                                              for (size_t i = 0; i < r.count; ++i) oneRow(p, BatchRow{r, i});
                                          });
    TablePart<Table> part =
        fromPages
            ? std::move(*fromPages)
            : scanTable<Table>(ctx, table, placement(ctx, table) + extraColumns + " FROM \"" + table + "\"", columns,
                               [&oneRow](TablePart<Table>& p, sqlite3_stmt* s) { oneRow(p, StatementValues{s}); });
    fromPages.reset();
    distribute(part.rows, part.slotOf, placementTables(ctx, part, member), columns);
    return part.counter;
}

// --- format 2: OVERLAPSCOPE_KERNEL + OVERLAPSCOPE_KERNEL_LAUNCH ---

struct LaunchRow {
    uint64_t globalPid = 0, graphNodeId = 0;
    uint32_t stream = 0, name = 0, shortName = 0;  // names: capture string ids
    uint32_t gridX = 0, gridY = 0, gridZ = 0, blockX = 0, blockY = 0, blockZ = 0;
    uint32_t registersPerThread = 0, staticSharedMemory = 0, dynamicSharedMemory = 0, graphId = 0;
};

// The launches in table order, found by id through `position` (index + 1;
// 0 for ids the table does not have, which only a damaged file holds: they
// read as the all-zero launch at index 0).
struct Launches {
    std::vector<LaunchRow> rows{LaunchRow{}};
    IdIndex<uint32_t> position;
    const LaunchRow& byId(int64_t id) const { return rows[position.get(id)]; }
};

Launches readLaunches(ReadContext& ctx) {
    const std::string t = "OVERLAPSCOPE_KERNEL_LAUNCH";
    Launches launches;
    launches.position = ctx.idIndexFor<uint32_t>(t);
    sql::Statement rows(ctx.db,
                        "SELECT id, globalPid, streamId, coalesce(demangledName, -1), "
                        "coalesce(shortName, demangledName, -1), gridX, gridY, gridZ, blockX, "
                        "blockY, blockZ, registersPerThread, staticSharedMemory, "
                        "dynamicSharedMemory, graphId, graphNodeId FROM " +
                            t);
    while (rows.step()) {
        rows.requireIntegers(0, 16, t);
        launches.position.set(rows.int64(0), static_cast<uint32_t>(launches.rows.size()));
        LaunchRow& l = launches.rows.emplace_back();
        l.globalPid = static_cast<uint64_t>(rows.int64(1));
        l.stream = u32(rows.int64(2));
        l.name = ctx.name(rows.int64(3));
        l.shortName = ctx.name(rows.int64(4));
        l.gridX = u32(rows.int64(5));
        l.gridY = u32(rows.int64(6));
        l.gridZ = u32(rows.int64(7));
        l.blockX = u32(rows.int64(8));
        l.blockY = u32(rows.int64(9));
        l.blockZ = u32(rows.int64(10));
        l.registersPerThread = u32(rows.int64(11));
        l.staticSharedMemory = u32(rows.int64(12));
        l.dynamicSharedMemory = u32(rows.int64(13));
        l.graphId = u32(rows.int64(14));
        l.graphNodeId = static_cast<uint64_t>(rows.int64(15));
    }
    return launches;
}

// The narrow rows, joined with their launch here rather than through the
// view: a vector lookup instead of a b-tree descent per kernel.
template <LaunchColumns Columns_, typename... Columns>
uint64_t readSplitKernels(ReadContext& ctx, const Launches& launches, const std::tuple<Columns...>& columns) {
    const std::string t = "OVERLAPSCOPE_KERNEL";
    if (ctx.rowCount(t) == 0) return 0;
    // Columns 0-4: start, end, deviceId, correlationId, launchId.
    auto rows = [&](TablePart<KernelTable>& p, const DecodedRows& r) {
        const size_t n = r.count;
        const int64_t* launchId = r.column(4);
        const int64_t* device = r.column(2);
        const LaunchRow* launch[DecodedRows::kMaxRows];
        for (size_t i = 0; i < n; ++i) launch[i] = &launches.byId(launchId[i]);
        for (size_t i = 0; i < n; ++i) p.slotOf.push_back(p.slot(launch[i]->globalPid, u32(device[i])));
        auto& k = p.rows;
        const int64_t* start = r.column(0);
        const int64_t* end = r.column(1);
        const int64_t* correlation = r.column(3);
        k.start.insert(k.start.end(), start, start + n);
        k.end.insert(k.end.end(), end, end + n);
        appendEach(k.correlation, n, [&](size_t i) { return u32(correlation[i]); });
        auto fromLaunch = [&](std::vector<uint32_t>& column, uint32_t LaunchRow::*field) {
            appendEach(column, n, [&](size_t i) { return launch[i]->*field; });
        };
        fromLaunch(k.stream, &LaunchRow::stream);
        fromLaunch(k.name, &LaunchRow::name);
        fromLaunch(k.shortName, &LaunchRow::shortName);
        if constexpr (Columns_ != LaunchColumns::None) {
            fromLaunch(k.gridX, &LaunchRow::gridX);
            fromLaunch(k.gridY, &LaunchRow::gridY);
            fromLaunch(k.gridZ, &LaunchRow::gridZ);
            fromLaunch(k.blockX, &LaunchRow::blockX);
            fromLaunch(k.blockY, &LaunchRow::blockY);
            fromLaunch(k.blockZ, &LaunchRow::blockZ);
        }
        if constexpr (Columns_ == LaunchColumns::All) {
            fromLaunch(k.registersPerThread, &LaunchRow::registersPerThread);
            fromLaunch(k.staticSharedMemory, &LaunchRow::staticSharedMemory);
            fromLaunch(k.dynamicSharedMemory, &LaunchRow::dynamicSharedMemory);
            fromLaunch(k.graphId, &LaunchRow::graphId);
            appendEach(k.graphNodeId, n, [&](size_t i) { return launch[i]->graphNodeId; });
            for (size_t i = 0; i < n; ++i) p.counter += launch[i]->graphNodeId != 0;
        }
    };
    std::optional<TablePart<KernelTable>> fromPages =
        scanTablePages<KernelTable>(ctx, t, {"start", "end", "deviceId", "correlationId", "launchId"}, columns, rows);
    TablePart<KernelTable> part =
        fromPages ? std::move(*fromPages)
                  : scanTable<KernelTable>(
                        ctx, t, "SELECT start, end, deviceId, correlationId, launchId FROM " + t, columns,
                        [&rows](TablePart<KernelTable>& p, sqlite3_stmt* s) { rows(p, StatementRow<5>(s).rows()); });
    fromPages.reset();
    distribute(part.rows, part.slotOf, placementTables(ctx, part, &Device::kernels), columns);
    return part.counter;
}

}  // namespace

void readKernels(ReadContext& ctx, uint64_t& kernelsInGraphs) {
    if (ctx.hasSplitKernels()) {
        const auto launches = readLaunches(ctx);
        if (ctx.options.launchDetails && !ctx.options.launchShapeOnly) {
            kernelsInGraphs = readSplitKernels<LaunchColumns::All>(ctx, launches, kKernelColumns);
            return;
        }
        if (ctx.options.launchDetails)
            readSplitKernels<LaunchColumns::Shape>(ctx, launches, kKernelShapeColumns);
        else
            readSplitKernels<LaunchColumns::None>(ctx, launches, kKernelCoreColumns);
        kernelsInGraphs = 0;
        for (const auto& l : launches.rows) kernelsInGraphs |= l.graphNodeId != 0;
        return;
    }
    const std::string t = "CUPTI_ACTIVITY_KIND_KERNEL";
    const std::string nameColumn = ctx.firstColumn(t, {"demangledName", "shortName", "mangledName"});
    const std::string shortColumn = ctx.firstColumn(t, {"shortName", "demangledName"});
    std::string extra = ", " + (nameColumn.empty() ? "-1" : "coalesce(" + nameColumn + ", -1)") + ", " +
                        (shortColumn.empty() ? "-1" : "coalesce(" + shortColumn + ", -1)");
    // An empty name is no column: it reads the -1 selected instead.
    std::vector<PageColumn> pages = {{unquoted(nameColumn), -1, -1}, {unquoted(shortColumn), -1, -1}};
    std::string shapeColumns;  // what readShape reads
    std::vector<PageColumn> shapePages;
    for (const char* c : {"gridX", "gridY", "gridZ", "blockX", "blockY", "blockZ"}) {
        shapeColumns += ", " + ctx.rawColumn(t, c, "1");
        shapePages.push_back({c, 1, 0});
    }
    if (!ctx.options.launchDetails || ctx.options.launchShapeOnly) {
        if (ctx.options.launchDetails) {
            extra += shapeColumns;
            pages.insert(pages.end(), shapePages.begin(), shapePages.end());
            readTable(ctx, t, extra, pages, &Device::kernels, kKernelShapeColumns,
                      [&ctx](KernelTable& k, const auto& r, uint64_t&) {
                          k.name.push_back(ctx.name(r.integer(6)));
                          k.shortName.push_back(ctx.name(r.integer(7)));
                          readShape(k, r, 8);
                      });
        } else {
            readTable(ctx, t, extra, pages, &Device::kernels, kKernelCoreColumns,
                      [&ctx](KernelTable& k, const auto& r, uint64_t&) {
                          k.name.push_back(ctx.name(r.integer(6)));
                          k.shortName.push_back(ctx.name(r.integer(7)));
                      });
        }
        // Only "are any kernels in graphs" matters then, and only for the
        // whole-graph warning: ask SQLite, which stops at the first one.
        kernelsInGraphs = 0;
        if (ctx.rowCount("CUPTI_ACTIVITY_KIND_GRAPH_TRACE") > 0 && ctx.hasColumn(t, "graphNodeId")) {
            sql::Statement any(ctx.db, "SELECT EXISTS (SELECT 1 FROM \"" + t + "\" WHERE \"graphNodeId\" != 0)");
            kernelsInGraphs = any.step() && any.int64(0) != 0 ? 1 : 0;
        }
        return;
    }
    extra += shapeColumns;
    pages.insert(pages.end(), shapePages.begin(), shapePages.end());
    for (const char* c :
         {"registersPerThread", "staticSharedMemory", "dynamicSharedMemory", "graphId", "graphNodeId"}) {
        extra += ", " + ctx.rawColumn(t, c, "0");
        pages.push_back(c);
    }
    kernelsInGraphs = readTable(ctx, t, extra, pages, &Device::kernels, kKernelColumns,
                                [&ctx](KernelTable& k, const auto& r, uint64_t& inGraphs) {
                                    k.name.push_back(ctx.name(r.integer(6)));
                                    k.shortName.push_back(ctx.name(r.integer(7)));
                                    readShape(k, r, 8);
                                    k.registersPerThread.push_back(u32(r.integer(14)));
                                    k.staticSharedMemory.push_back(u32(r.integer(15)));
                                    k.dynamicSharedMemory.push_back(u32(r.integer(16)));
                                    k.graphId.push_back(u32(r.integer(17)));
                                    const auto node = static_cast<uint64_t>(r.integer(18));
                                    k.graphNodeId.push_back(node);
                                    inGraphs += node != 0;
                                });
}

void readCopies(ReadContext& ctx) {
    const std::string t = "CUPTI_ACTIVITY_KIND_MEMCPY";
    if (!hasRows(ctx, t)) return;
    const std::string extra = ", " + ctx.column(t, "bytes", "0") + ", " + ctx.column(t, "copyKind", "0") + ", " +
                              ctx.column(t, "srcKind", "0") + ", " + ctx.column(t, "dstKind", "0") + ", " +
                              ctx.column(t, "srcDeviceId", "4294967295") + ", " +
                              ctx.column(t, "dstDeviceId", "4294967295");
    const std::vector<PageColumn> pages = {"bytes",
                                           "copyKind",
                                           "srcKind",
                                           "dstKind",
                                           {"srcDeviceId", 4294967295, 4294967295},
                                           {"dstDeviceId", 4294967295, 4294967295}};
    readTable(ctx, t, extra, pages, &Device::copies, kCopyColumns, [](CopyTable& c, const auto& r, uint64_t&) {
        c.bytes.push_back(static_cast<uint64_t>(r.integer(6)));
        c.copyKind.push_back(static_cast<CopyKind>(r.integer(7)));
        c.srcKind.push_back(static_cast<MemKind>(r.integer(8)));
        c.dstKind.push_back(static_cast<MemKind>(r.integer(9)));
        c.srcDevice.push_back(u32(r.integer(10)));
        c.dstDevice.push_back(u32(r.integer(11)));
    });
}

void readMemsets(ReadContext& ctx) {
    const std::string t = "CUPTI_ACTIVITY_KIND_MEMSET";
    if (!hasRows(ctx, t)) return;
    const std::string extra = ", " + ctx.column(t, "bytes", "0") + ", " + ctx.column(t, "value", "0");
    readTable(ctx, t, extra, {"bytes", "value"}, &Device::memsets, kMemsetColumns,
              [](MemsetTable& m, const auto& r, uint64_t&) {
                  m.bytes.push_back(static_cast<uint64_t>(r.integer(6)));
                  m.value.push_back(u32(r.integer(7)));
              });
}

void readSyncs(ReadContext& ctx) {
    const std::string t = "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION";
    if (!hasRows(ctx, t)) return;
    // streamId NULL means "no stream" here, unlike the other tables: an
    // expression no page gives, so SQLite reads this (small) table.
    const std::string extra = ", " + ctx.column(t, "syncType", "0") + ", " + ctx.column(t, "eventId", "4294967295") +
                              ", " + (ctx.hasColumn(t, "streamId") ? "\"streamId\" IS NULL" : "1");
    readTable(ctx, t, extra, {}, &Device::syncs, kSyncColumns, [](SyncTable& y, const auto& r, uint64_t&) {
        y.type.push_back(static_cast<SyncType>(r.integer(6)));
        y.eventId.push_back(u32(r.integer(7)));
        if (r.integer(8) != 0) y.stream.back() = kNoId;
    });
}

}  // namespace osc::sqlread
