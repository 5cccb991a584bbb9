#include "analyzer/capture/sqlite_read_context.h"

#include "analyzer/capture/capture_error.h"
#include "analyzer/capture/schema.h"

namespace osc::sqlread {
namespace {

std::string quoted(const std::string& identifier) { return "\"" + identifier + "\""; }

}  // namespace

ReadContext::ReadContext(const std::string& filePath, const LoadOptions& loadOptions,
                         Capture& target)
    : db(filePath, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX),
      path(filePath),
      options(loadOptions),
      capture(target),
      firstProcess(target.processes.size()) {
    // A live capture's writer may hold a lock for a moment (WAL checkpoint).
    sqlite3_busy_timeout(db.get(), 5000);
    // The first read of the schema is where "not a database" and most
    // corruption show up.
    sql::Statement list(db, "SELECT name FROM sqlite_master WHERE type IN ('table', 'view')");
    while (list.step()) tables_.emplace(list.text(0));
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

std::string ReadContext::column(const std::string& table, const std::string& name,
                                const std::string& fallback) {
    if (!hasColumn(table, name)) return fallback;
    return "coalesce(" + quoted(name) + ", " + fallback + ")";
}

std::string ReadContext::rawColumn(const std::string& table, const std::string& name,
                                   const std::string& fallback) {
    return hasColumn(table, name) ? quoted(name) : fallback;
}

std::string ReadContext::firstColumn(const std::string& table,
                                     std::initializer_list<const char*> names) {
    for (const char* n : names)
        if (hasColumn(table, n)) return quoted(n);
    return {};
}

int64_t ReadContext::rowCount(const std::string& table) {
    if (!hasTable(table)) return 0;
    if (auto it = counts_.find(table); it != counts_.end()) return it->second;
    // The rowid span bounds the row count from above and costs two b-tree
    // descents, where count(*) reads the whole table. Rowids are dense in
    // every capture we know; where they are not, the surplus is reserved
    // address space that is never touched.
    int64_t n = 0;
    try {
        // Two scalar subqueries: SQLite answers a lone min() or max() from
        // the b-tree's edge, but min() and max() in one SELECT scan the table.
        sql::Statement span(db, "SELECT (SELECT max(rowid) FROM " + quoted(table) +
                                    ") - (SELECT min(rowid) FROM " + quoted(table) + ") + 1");
        n = span.step() ? span.int64(0) : 0;
    } catch (const CaptureError&) {
        sql::Statement count(db, "SELECT count(*) FROM " + quoted(table));  // a view, say
        n = count.step() ? count.int64(0) : 0;
    }
    counts_.emplace(table, n);
    return n;
}

void ReadContext::loadStrings() {
    if (!hasTable("StringIds")) return;
    int64_t maxId = -1;
    {
        sql::Statement top(db, "SELECT max(id), count(*) FROM StringIds");
        if (top.step() && !top.isNull(0)) maxId = top.int64(0);
        // A dense remap vector is the fast path; ids are dense in every file
        // we know, so a wildly sparse table is treated as damage.
        if (maxId > 4 * top.int64(1) + (1 << 20))
            throw CaptureError(path, "StringIds ids are implausibly sparse (max id " +
                                         std::to_string(maxId) + ")");
    }
    remap_.assign(static_cast<size_t>(maxId + 1), 0);
    sql::Statement rows(db, "SELECT id, value FROM StringIds");
    int64_t done = 0;
    while (rows.step()) {
        const int64_t id = rows.int64(0);
        if (id >= 0 && id <= maxId)
            remap_[static_cast<size_t>(id)] = capture.strings.intern(rows.text(1));
        if ((++done & 0xFFFF) == 0) tick(done, maxId + 1);
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
