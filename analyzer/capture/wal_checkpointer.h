// Copies committed WAL frames into the database file on a thread of its own,
// with its own connection, so the writer thread spends its time inserting.
//
// SQLite's automatic checkpoint runs inside the committing thread and, under
// a steady stream of inserts, costs the writer about a sixth of its time
// (the copy, and the fsync that NORMAL synchronous mode does at checkpoint).
// A PASSIVE checkpoint from another connection never blocks the writer.
//
// The WAL file only starts over when a transaction begins while every frame
// has been copied. A writer that is never idle never sees that moment, so
// past `walLimitBytes` the writer waits (briefly, bounded) for the copy to
// finish before starting its next transaction.
#pragma once

#include "analyzer/capture/sqlite_util.h"

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>

namespace osc::sql {

class WalCheckpointer {
public:
    // `writer` is the connection that commits; its automatic checkpoint is
    // turned off and its commits are counted through sqlite3_wal_hook.
    WalCheckpointer(sqlite3* writer, std::string path, int64_t walLimitBytes);
    ~WalCheckpointer();
    WalCheckpointer(const WalCheckpointer&) = delete;
    WalCheckpointer& operator=(const WalCheckpointer&) = delete;

    // Call on the writer's thread after each COMMIT, outside any transaction.
    void afterCommit();
    // Stops the thread and closes its connection (a WAL -> DELETE journal
    // change needs the writer to be the only connection). Idempotent.
    void stop();

    uint64_t writerWaits() const { return writerWaits_; }

private:
    static int onCommit(void* self, sqlite3*, const char*, int frames);
    void run();

    sqlite3* writer_;
    std::string path_;
    int64_t walLimitFrames_ = 0;
    int64_t waitAtFrames_ = 0;  // the limit, or further while a reader pins frames
    int framesInWal_ = 0;       // written by the writer's wal hook, read on the writer's thread

    std::mutex mutex_;
    std::condition_variable wake_;
    bool requested_ = false, stopping_ = false;
    std::thread thread_;
    uint64_t writerWaits_ = 0;
};

}  // namespace osc::sql
