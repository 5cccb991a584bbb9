#include "analyzer/capture/sqlite_read_context.h"

#include "analyzer/capture/capture_error.h"
#include "analyzer/capture/schema.h"

#include <algorithm>
#include <filesystem>

namespace osc::sqlread {
namespace {

constexpr int kStepsPerCallback = 1 << 16;

std::string quoted(const std::string& identifier) { return "\"" + identifier + "\""; }

}  // namespace

ReadContext::ReadContext(const std::string& filePath, const LoadOptions& loadOptions, Capture& target)
    : db(sql::Database::openForReading(filePath)),
      path(filePath),
      options(loadOptions),
      capture(target),
      firstProcess(target.processes.size()) {
    // A live capture's writer may hold a lock for a moment (WAL checkpoint).
    sqlite3_busy_timeout(db.get(), 5000);
    // One read transaction: every table is read from the same snapshot, so
    // a live capture's rows never refer to strings or kernel launches
    // committed after those tables were read.
    db.exec("BEGIN");
    // The first read of the schema is where "not a database" and most
    // corruption show up.
    sql::Statement list(db, "SELECT name, type FROM sqlite_master WHERE type IN ('table', 'view')");
    while (list.step()) (list.text(1) == "view" ? views_ : tables_).emplace(list.text(0));
    // Honest reads take work in proportion to the file (rows <= bytes, an
    // index lookup or a sort step per row); a query that runs far past that
    // (a trigger or view that never ends, which hasTable() should already
    // have refused) is interrupted instead of hanging.
    stepBudget_ = sqliteStepBudgetForTests != 0
                      ? sqliteStepBudgetForTests
                      : std::max<uint64_t>(uint64_t{1} << 32, static_cast<uint64_t>(fileBytes()) * 4096);
    sqlite3_progress_handler(db.get(), kStepsPerCallback, &ReadContext::onProgress, this);
}

int ReadContext::onProgress(void* self) {
    auto* ctx = static_cast<ReadContext*>(self);
    ctx->stepsTaken_ += kStepsPerCallback;
    return ctx->stepsTaken_ > ctx->stepBudget_ ? 1 : 0;
}

bool ReadContext::hasTable(const std::string& table) const {
    if (views_.count(table) != 0 && !(table == "CUPTI_ACTIVITY_KIND_KERNEL" && hasSplitKernels()))
        throw CaptureError(path, table + " is a view where a table was expected; not reading it");
    return tables_.count(table) != 0;
}

bool ReadContext::hasColumn(const std::string& table, const std::string& column) {
    if (!hasTable(table)) return false;
    auto it = columns_.find(table);
    if (it == columns_.end()) {
        std::set<std::string> names;
        sql::Statement info(db, "PRAGMA table_info(" + quoted(table) + ")");
        while (info.step()) names.emplace(info.text(1));
        it = columns_.emplace(table, std::move(names)).first;
    }
    return it->second.count(column) != 0;
}

std::string ReadContext::column(const std::string& table, const std::string& name, const std::string& fallback) {
    if (!hasColumn(table, name)) return fallback;
    return "coalesce(" + quoted(name) + ", " + fallback + ")";
}

std::string ReadContext::rawColumn(const std::string& table, const std::string& name, const std::string& fallback) {
    return hasColumn(table, name) ? quoted(name) : fallback;
}

std::string ReadContext::firstColumn(const std::string& table, std::initializer_list<const char*> names) {
    for (const char* n : names)
        if (hasColumn(table, n)) return quoted(n);
    return {};
}

int64_t ReadContext::fileBytes() {
    if (fileBytes_ < 0) {
        std::error_code ec;
        fileBytes_ = 0;
        for (const std::string& p : {path, path + "-wal"}) {
            const auto n = std::filesystem::file_size(p, ec);
            if (!ec) fileBytes_ += static_cast<int64_t>(n);
        }
    }
    return fileBytes_;
}

int64_t ReadContext::rowCount(const std::string& table) {
    if (!hasTable(table)) return 0;
    if (auto it = counts_.find(table); it != counts_.end()) return it->second;
    // The rowid span bounds the row count from above and costs two b-tree
    // descents, where count(*) reads the whole table. Rowids are dense in
    // every capture we know; where they are not, the surplus is reserved
    // address space that is never touched. A span no file of this size
    // could hold (sparse or hostile rowids) would be reserved for real, or
    // not at all: then the rows are counted.
    int64_t n = -1;
    try {
        // Two scalar subqueries: SQLite answers a lone min() or max() from
        // the b-tree's edge, but min() and max() in one SELECT scan the table.
        sql::Statement span(db, "SELECT (SELECT max(rowid) FROM " + quoted(table) + ") - (SELECT min(rowid) FROM " +
                                    quoted(table) + ") + 1");
        if (span.step()) {
            const int type = sqlite3_column_type(span.get(), 0);
            if (type == SQLITE_NULL)
                n = 0;  // an empty table
            else if (type == SQLITE_INTEGER)
                n = span.int64(0);  // not REAL: no overflow
        }
    } catch (const CaptureError&) {
        // A view, say: counted below.
    }
    if (n < 0 || n > fileBytes()) {
        sql::Statement count(db, "SELECT count(*) FROM " + quoted(table));
        n = count.step() ? count.int64(0) : 0;
    }
    counts_.emplace(table, n);
    return n;
}

ReadContext::IdSpan ReadContext::idSpan(const std::string& table) {
    IdSpan span;
    sql::Statement top(db, "SELECT min(id), max(id), count(*) FROM " + quoted(table));
    if (!top.step() || top.isNull(0)) return span;
    top.requireIntegers(0, 2, table);
    span.min = top.int64(0);
    span.max = top.int64(1);
    span.rows = top.int64(2);
    return span;
}

void ReadContext::loadStrings() {
    if (!hasTable("StringIds")) return;
    const IdSpan span = idSpan("StringIds");
    strings_.prepare(span.min, span.max, span.rows);
    const int64_t total = span.rows;
    sql::Statement rows(db, "SELECT id, value FROM StringIds");
    int64_t done = 0;
    while (rows.step()) {
        rows.requireIntegers(0, 1, "StringIds");
        strings_.set(rows.int64(0), capture.strings.intern(rows.text(1)));
        if ((++done & 0xFFFF) == 0) tick(done, total);
    }
}

size_t ReadContext::processIndex(uint64_t global) {
    const uint64_t key = global >> 24;  // hardware, VM and pid bits: one process
    if (key == lastKey_) return lastIndex_;
    size_t index;
    if (key == 0) {
        index = defaultProcess();  // no globalPid column, or NULLs in it
    } else if (auto it = processByKey_.find(key); it != processByKey_.end()) {
        index = it->second;
    } else {
        index = addProcess(key);
    }
    lastKey_ = key;
    lastIndex_ = index;
    return index;
}

size_t ReadContext::existingProcess(uint64_t global) const {
    const uint64_t key = global >> 24;
    if (key == 0) return capture.processes.size() > firstProcess ? firstProcess : kNoProcess;
    const auto it = processByKey_.find(key);
    return it == processByKey_.end() ? kNoProcess : it->second;
}

size_t ReadContext::addProcess(uint64_t key) {
    Process p;
    p.pid = static_cast<int64_t>(key & 0xFFFFFF);
    p.sourcePath = path;
    capture.processes.push_back(std::move(p));
    const size_t index = capture.processes.size() - 1;
    processByKey_.emplace(key, index);
    return index;
}

size_t ReadContext::defaultProcess() {
    if (capture.processes.size() > firstProcess) return firstProcess;
    return addProcess(0);
}

void ReadContext::stage(const char* label, double from, double to) {
    stageLabel_ = label;
    stageFrom_ = from;
    stageTo_ = to;
    tick(0, 1);
}

void ReadContext::tick(int64_t done, int64_t total) {
    if (options.cancelled()) throw LoadCancelled{};
    if (!options.progress) return;
    const double part = total > 0 ? static_cast<double>(done) / static_cast<double>(total) : 0.0;
    options.progress(stageFrom_ + (stageTo_ - stageFrom_) * part, stageLabel_);
}

}  // namespace osc::sqlread
