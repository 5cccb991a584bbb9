#include "analyzer/import/gz_reader.h"

#include "analyzer/capture/capture_error.h"
#include "analyzer/import/inflate_stream.h"

#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

namespace osc {
namespace {

constexpr size_t kChunkBytes = 1 << 20;
// Chunks the inflater may run ahead of the parser: enough to ride out the
// parser's uneven pace, few enough to keep memory at a few MiB.
constexpr size_t kQueuedChunksMax = 4;

}  // namespace

// Runs the InflateStream on its own thread and queues its output for read().
class GzReader::Inflater {
public:
    explicit Inflater(const std::string& path) : stream_(path) {
        thread_ = std::thread([this] { run(); });
    }
    ~Inflater() {
        {
            std::lock_guard lock(mutex_);
            stopping_ = true;
        }
        changed_.notify_all();
        thread_.join();
    }

    // The next chunk, or nullopt at the end; throws the producer's error.
    std::optional<std::vector<char>> next() {
        std::unique_lock lock(mutex_);
        changed_.wait(lock, [&] { return !queue_.empty() || finished_; });
        if (!queue_.empty()) {
            auto chunk = std::move(queue_.front());
            queue_.pop_front();
            lock.unlock();
            changed_.notify_all();
            return chunk;
        }
        if (!error_.empty()) throw CaptureError(stream_.path(), error_);
        return std::nullopt;
    }

    uint64_t fileBytesRead() const { return stream_.fileBytesRead(); }
    uint64_t fileSize() const { return stream_.fileSize(); }

private:
    // False when the reader is being destroyed and the producer should stop.
    bool push(std::vector<char>&& chunk) {
        std::unique_lock lock(mutex_);
        changed_.wait(lock, [&] { return queue_.size() < kQueuedChunksMax || stopping_; });
        if (stopping_) return false;
        queue_.push_back(std::move(chunk));
        lock.unlock();
        changed_.notify_all();
        return true;
    }

    void finish(std::string error) {
        {
            std::lock_guard lock(mutex_);
            finished_ = true;
            error_ = std::move(error);
        }
        changed_.notify_all();
    }

    void run() {
        try {
            for (;;) {
                std::vector<char> chunk(kChunkBytes);
                const size_t n = stream_.read(chunk.data(), chunk.size());
                if (n == 0) break;
                chunk.resize(n);
                if (!push(std::move(chunk))) return;
            }
            finish({});
        } catch (const CaptureError& e) {
            finish(e.problem());  // next() throws it again, naming the file, on the parser's thread
        } catch (const std::exception& e) {
            finish(e.what());
        }
    }

    InflateStream stream_;
    std::mutex mutex_;
    std::condition_variable changed_;
    std::deque<std::vector<char>> queue_;
    bool finished_ = false, stopping_ = false;
    std::string error_;
    std::thread thread_;  // last: started once everything above exists
};

GzReader::GzReader(const std::string& path) : path_(path) {
    inflater_ = std::make_unique<Inflater>(path);
    fileSize_ = inflater_->fileSize();
}

GzReader::~GzReader() = default;

size_t GzReader::read(char* into, size_t size) {
    size_t copied = 0;
    while (copied < size) {
        if (pos_ == current_.size()) {
            auto chunk = inflater_->next();
            if (!chunk) break;
            current_ = std::move(*chunk);
            pos_ = 0;
            continue;
        }
        const size_t n = std::min(size - copied, current_.size() - pos_);
        std::memcpy(into + copied, current_.data() + pos_, n);
        pos_ += n;
        copied += n;
    }
    return copied;
}

uint64_t GzReader::fileBytesRead() const { return inflater_->fileBytesRead(); }

}  // namespace osc
