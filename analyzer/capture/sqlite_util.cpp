#include "analyzer/capture/sqlite_util.h"

#include "analyzer/capture/capture_error.h"

#include <cctype>
#include <cerrno>
#include <cstring>
#include <utility>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace osc::sql {

std::string describe(sqlite3* db, int rc) {
    const int primary = rc & 0xFF;
    std::string detail = db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
    switch (primary) {
        case SQLITE_NOTADB:
            return "not a SQLite database";
        case SQLITE_CORRUPT:
            return "the file is corrupt or truncated (" + detail + ")";
        case SQLITE_CANTOPEN: {
            // SQLite opens the file and its -wal and -shm with O_NOFOLLOW:
            // ELOOP means a link stands at one of those names (planted by
            // someone else, or left there), not that the file is unreadable.
            const int error = db ? sqlite3_system_errno(db) : 0;
            if (rc == SQLITE_CANTOPEN_SYMLINK || error == ELOOP)
                return "a symbolic link stands where the file or its -wal or -shm side file goes; SQLite never "
                       "opens one through a link (remove it)";
            if (error != 0) return "cannot open (" + detail + ": " + std::strerror(error) + ")";
            return "cannot open (" + detail + ")";
        }
        case SQLITE_IOERR:
            return "input/output error (" + detail + ")";
        case SQLITE_FULL:
            return "the disk is full";
        case SQLITE_READONLY:
            return "the file is read-only (" + detail + ")";
        case SQLITE_PERM:
            return "permission denied (" + detail + ")";
        case SQLITE_BUSY:
        case SQLITE_LOCKED:
            return "the file is locked by another process (" + detail + ")";
        case SQLITE_NOMEM:
            return "out of memory";
        case SQLITE_INTERRUPT:
            return "reading took far more work than a file this size can need (a view or trigger "
                   "that never ends?); stopped";
        default:
            return detail;
    }
}

void fail(const std::string& path, sqlite3* db, int rc, std::string_view doing) {
    std::string problem = describe(db, rc);
    if (!doing.empty()) problem = std::string(doing) + ": " + problem;
    throw CaptureError(path, problem);
}

Database::Database(const std::string& path, int flags, const std::string& openName) : path_(path) {
    const int rc = sqlite3_open_v2(openName.empty() ? path.c_str() : openName.c_str(), &db_, flags, nullptr);
    if (rc != SQLITE_OK) {
        const std::string problem = describe(db_, rc);
        sqlite3_close_v2(db_);
        db_ = nullptr;
        throw CaptureError(path, problem);
    }
    sqlite3_extended_result_codes(db_, 1);
}

namespace {

// The header's read/write versions are 2 for a WAL-mode database.
bool headerSaysWal(const std::string& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return false;
    unsigned char header[20] = {};
    const ssize_t n = ::pread(fd, header, sizeof header, 0);
    ::close(fd);
    return n == static_cast<ssize_t>(sizeof header) && header[18] == 2 && header[19] == 2;
}

bool exists(const std::string& path) {
    struct stat st {};
    return ::lstat(path.c_str(), &st) == 0;
}

// file: URI for `path`: every byte but unreserved ones and '/' percent-encoded.
std::string fileUri(const std::string& path, const char* query) {
    static constexpr char hex[] = "0123456789ABCDEF";
    std::string uri = "file:";
    for (const unsigned char c : path) {
        if (std::isalnum(c) || c == '/' || c == '-' || c == '_' || c == '.' || c == '~') {
            uri += static_cast<char>(c);
        } else {
            uri += '%';
            uri += hex[c >> 4];
            uri += hex[c & 15];
        }
    }
    return uri + "?" + query;
}

}  // namespace

namespace {

// A reader never checkpoints: the -wal it opens is often writable to us even
// when the connection is read-only, and SQLite's checkpoint on close would
// then delete a -wal holding no valid frame (garbage, zeros, a torn header)
// from beside the input (docs/capture-format.md: nothing beside it changes).
Database withoutCheckpointOnClose(Database db) {
    sqlite3_db_config(db.get(), SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, nullptr);
    return db;
}

}  // namespace

Database Database::openForReading(const std::string& path) {
    constexpr int kFlags = SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX;
    // A -wal beside the file is opened (and a -shm created for it) even when
    // the header says rollback journal: the -wal, not the header, decides.
    const bool walFile = exists(path + "-wal"), walHeader = headerSaysWal(path);
    if (walHeader && !walFile) {
        // A WAL-mode file with no -wal (a writer that died after its last
        // checkpoint, or a copy of the file alone) holds everything itself,
        // yet SQLite would create an empty -wal beside it to read it:
        // immutable reads the file alone and leaves its folder as it was.
        return withoutCheckpointOnClose(Database(path, kFlags | SQLITE_OPEN_URI, fileUri(path, "mode=ro&immutable=1")));
    }
    const bool wal = walFile || walHeader;
    if (!wal || exists(path + "-shm")) return withoutCheckpointOnClose(Database(path, kFlags));
    Database db =
        withoutCheckpointOnClose(Database(path, kFlags | SQLITE_OPEN_URI, fileUri(path, "mode=ro&vfs=unix-none")));
    // Set before the first read: SQLite then keeps the wal-index in memory
    // and never creates a -shm (https://sqlite.org/wal.html#noshm).
    db.exec("PRAGMA locking_mode=EXCLUSIVE");
    return db;
}

Database::~Database() {
    if (db_) sqlite3_close_v2(db_);
}

Database::Database(Database&& other) noexcept : db_(std::exchange(other.db_, nullptr)), path_(std::move(other.path_)) {}

Database& Database::operator=(Database&& other) noexcept {
    if (this != &other) {
        if (db_) sqlite3_close_v2(db_);
        db_ = std::exchange(other.db_, nullptr);
        path_ = std::move(other.path_);
    }
    return *this;
}

void Database::exec(const char* sql) {
    char* message = nullptr;
    const int rc = sqlite3_exec(db_, sql, nullptr, nullptr, &message);
    sqlite3_free(message);  // describe() reads the same text from the handle
    if (rc != SQLITE_OK) fail(path_, db_, rc, "");
}

void Database::close() {
    if (!db_) return;
    sqlite3* db = std::exchange(db_, nullptr);
    const int rc = sqlite3_close(db);
    if (rc != SQLITE_OK) {
        const std::string problem = describe(db, rc);
        sqlite3_close_v2(db);
        throw CaptureError(path_, "closing: " + problem);
    }
}

void Statement::failNotInteger(int column, std::string_view table) const {
    // The result column is named after its expression, e.g. coalesce("start", 0):
    // the first quoted identifier in it is the file's column.
    std::string name = sqlite3_column_name(stmt_, column) ? sqlite3_column_name(stmt_, column) : "?";
    if (const auto open = name.find('"'); open != std::string::npos) {
        const auto close = name.find('"', open + 1);
        if (close != std::string::npos) name = name.substr(open + 1, close - open - 1);
    }
    throw CaptureError(path_, std::string(table) + "." + name + " holds " +
                                  (sqlite3_column_type(stmt_, column) == SQLITE_TEXT ? "text" : "a blob") +
                                  " where an integer is expected");
}

Statement::Statement(const Database& db, std::string_view sql) : db_(db.get()), path_(db.path()) {
    const int rc =
        sqlite3_prepare_v3(db_, sql.data(), static_cast<int>(sql.size()), SQLITE_PREPARE_PERSISTENT, &stmt_, nullptr);
    if (rc != SQLITE_OK) fail(path_, db_, rc, "");
}

Statement::~Statement() { sqlite3_finalize(stmt_); }

Statement::Statement(Statement&& other) noexcept
    : stmt_(std::exchange(other.stmt_, nullptr)),
      db_(std::exchange(other.db_, nullptr)),
      path_(std::move(other.path_)) {}

Statement& Statement::operator=(Statement&& other) noexcept {
    if (this != &other) {
        sqlite3_finalize(stmt_);
        stmt_ = std::exchange(other.stmt_, nullptr);
        db_ = std::exchange(other.db_, nullptr);
        path_ = std::move(other.path_);
    }
    return *this;
}

bool Statement::step() {
    const int rc = sqlite3_step(stmt_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    sqlite3_reset(stmt_);
    fail(path_, db_, rc, "");
}

void Statement::run() {
    const int rc = sqlite3_step(stmt_);
    sqlite3_reset(stmt_);
    if (rc != SQLITE_DONE && rc != SQLITE_ROW) fail(path_, db_, rc, "");
}

std::string_view Statement::text(int column) const {
    const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, column));
    if (!p) return {};
    return {p, static_cast<size_t>(sqlite3_column_bytes(stmt_, column))};
}

}  // namespace osc::sql
