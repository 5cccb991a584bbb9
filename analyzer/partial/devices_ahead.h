// A merge's devices made on worker threads a few ahead of the one the caller
// takes, in order. The engine's decisions are taken in order under the lock
// (the engine moves on device by device); the making (reading a device back,
// putting the decisions in, rendering it), most of the work, runs side by
// side. The JSON report takes rendered objects, the text report and the
// job's Analysis take devices read back.
#pragma once

#include "analyzer/partial/merge.h"

#include <condition_variable>
#include <cstddef>
#include <exception>
#include <functional>
#include <map>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

namespace osc::partial {

template <class Product>
class DevicesAhead {
public:
    // make(worker, index, decisions): device `index`'s product, on worker thread `worker`.
    using Make = std::function<Product(size_t worker, size_t index, const crossrank::DeviceCrossRank& cross)>;

    // At most `ahead` devices are made beyond the last one taken.
    DevicesAhead(Merge& merge, int threads, size_t ahead, Make make)
        : merge_(merge), make_(std::move(make)), ahead_(ahead) {
        for (int t = 0; t < threads; ++t) workers_.emplace_back([this, t] { work(static_cast<size_t>(t)); });
    }
    ~DevicesAhead() {
        {
            std::lock_guard lock(mutex_);
            stop_ = true;
        }
        changed_.notify_all();
        for (auto& w : workers_) w.join();
    }
    DevicesAhead(const DevicesAhead&) = delete;
    DevicesAhead& operator=(const DevicesAhead&) = delete;

    // Device `index` (0, 1, ...) once made; rethrows what its making threw.
    // The next devices are made meanwhile.
    Product take(size_t index) {
        Made m;
        {
            std::unique_lock lock(mutex_);
            changed_.wait(lock, [&] { return done_.count(index) != 0; });
            m = std::move(done_[index]);
            done_.erase(index);
            taken_ = index + 1;
        }
        changed_.notify_all();
        if (m.error) std::rethrow_exception(m.error);
        return std::move(m.product);
    }

private:
    struct Made {
        Product product{};
        std::exception_ptr error;
    };

    void work(size_t worker) {
        for (;;) {
            size_t index = 0;
            crossrank::DeviceCrossRank cross;
            Made m;
            {
                std::unique_lock lock(mutex_);
                changed_.wait(lock, [&] {
                    return stop_ || failed_ || (next_ < merge_.deviceCount() && next_ < taken_ + ahead_);
                });
                if (stop_ || failed_) return;
                index = next_++;
                try {
                    cross = merge_.decide(index);  // in order: under the lock
                } catch (...) {
                    m.error = std::current_exception();
                    failed_ = true;  // the engine cannot go on past a device it failed on
                }
            }
            if (!m.error) {
                try {
                    m.product = make_(worker, index, cross);
                } catch (...) {
                    m.error = std::current_exception();
                }
            }
            {
                std::lock_guard lock(mutex_);
                done_[index] = std::move(m);
            }
            changed_.notify_all();
        }
    }

    Merge& merge_;
    Make make_;
    size_t ahead_;
    std::mutex mutex_;
    std::condition_variable changed_;
    std::map<size_t, Made> done_;
    size_t next_ = 0, taken_ = 0;
    bool stop_ = false, failed_ = false;
    std::vector<std::thread> workers_;  // last: started once everything above exists
};

}  // namespace osc::partial
