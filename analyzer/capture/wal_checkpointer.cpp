#include "analyzer/capture/wal_checkpointer.h"

#include "analyzer/capture/background_thread.h"

#include <algorithm>
#include <chrono>

namespace osc::sql {
namespace {

int pageSize(sqlite3* db) {
    sqlite3_stmt* st = nullptr;
    int size = 4096;
    if (sqlite3_prepare_v2(db, "PRAGMA page_size", -1, &st, nullptr) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
        size = sqlite3_column_int(st, 0);
    sqlite3_finalize(st);
    return size > 0 ? size : 4096;
}

}  // namespace

WalCheckpointer::WalCheckpointer(sqlite3* writer, std::string path, int64_t walLimitBytes)
    : writer_(writer), path_(std::move(path)) {
    walLimitFrames_ = std::max<int64_t>(1, walLimitBytes / pageSize(writer_));
    waitAtFrames_ = walLimitFrames_;
    sqlite3_wal_hook(writer_, &WalCheckpointer::onCommit, this);  // replaces autocheckpoint
    thread_ = startBackgroundThread([this] { run(); });
}

WalCheckpointer::~WalCheckpointer() { stop(); }

int WalCheckpointer::onCommit(void* self, sqlite3*, const char*, int frames) {
    static_cast<WalCheckpointer*>(self)->framesInWal_ = frames;
    return SQLITE_OK;
}

void WalCheckpointer::afterCommit() {
    {
        std::lock_guard lock(mutex_);
        requested_ = true;
    }
    wake_.notify_one();
    if (framesInWal_ < walLimitFrames_) waitAtFrames_ = walLimitFrames_;  // it started over
    if (framesInWal_ < waitAtFrames_) return;
    // Finish the copy ourselves (the helper has done most of it) so that our
    // next transaction finds the WAL fully copied and starts it over. A
    // reader holding an old snapshot (a viewer following the capture) can
    // keep frames pinned: give up after a while rather than stall the
    // capture, and let the WAL grow by another limit before trying again,
    // so a long read costs one wait, not one per commit.
    ++writerWaits_;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(250);
    for (;;) {
        int log = 0, copied = 0;
        const int rc = sqlite3_wal_checkpoint_v2(writer_, nullptr, SQLITE_CHECKPOINT_PASSIVE, &log, &copied);
        if (rc == SQLITE_OK && copied >= log) return;
        if (std::chrono::steady_clock::now() >= deadline) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    waitAtFrames_ = framesInWal_ + walLimitFrames_;
}

void WalCheckpointer::stop() {
    if (!thread_.joinable()) return;
    {
        std::lock_guard lock(mutex_);
        stopping_ = true;
    }
    wake_.notify_one();
    thread_.join();
    sqlite3_wal_hook(writer_, nullptr, nullptr);
}

void WalCheckpointer::run() {
    sqlite3* db = nullptr;
    if (sqlite3_open_v2(path_.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_NOFOLLOW,
                        nullptr) != SQLITE_OK) {
        // Without our own connection the writer's size limit still bounds
        // the WAL: each time it is reached the writer copies the frames.
        sqlite3_close_v2(db);
        return;
    }
    // A connection learns the file is in WAL mode only when it first reads
    // it; until then a checkpoint reports "not WAL" and copies nothing.
    sqlite3_exec(db, "SELECT 1 FROM sqlite_master LIMIT 1", nullptr, nullptr, nullptr);
    std::unique_lock lock(mutex_);
    while (!stopping_) {
        wake_.wait_for(lock, std::chrono::seconds(1), [&] { return requested_ || stopping_; });
        if (stopping_) break;
        requested_ = false;
        lock.unlock();
        sqlite3_wal_checkpoint_v2(db, nullptr, SQLITE_CHECKPOINT_PASSIVE, nullptr, nullptr);
        lock.lock();
    }
    lock.unlock();
    sqlite3_close_v2(db);
}

}  // namespace osc::sql
