// The instances of every matched collective, (device, collective) pairs, put
// in any order by slot and read back in slot order. Up to a limit they stay
// in memory; beyond it they go to a scratch file in buckets of that many
// slots, each read back whole when its first slot is asked for, so memory
// stays at the limit however many ranks and collectives a job has.
#pragma once

#include "analyzer/crossrank/byte_io.h"

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

namespace osc::crossrank {

class InstanceTable {
public:
    InstanceTable(uint64_t slots, uint64_t inMemory);

    void put(uint64_t slot, int device, int collective);
    // Slots are read in increasing order (a bucket is loaded once).
    std::pair<int, int> at(uint64_t slot);

private:
    struct Record {
        uint64_t slot;
        int32_t device, collective;
    };
    void flush(size_t bucket);
    void load(size_t bucket);

    uint64_t slots_, bucketSlots_;
    std::vector<std::pair<int32_t, int32_t>> loaded_;
    size_t loadedBucket_ = static_cast<size_t>(-1);
    // Buckets on disk: records waiting per bucket, then chunks written.
    std::vector<std::vector<Record>> pending_;
    std::vector<std::vector<std::pair<uint64_t, size_t>>> chunks_;  // (offset, records)
    std::unique_ptr<ScratchFile> scratch_;                          // only when the slots do not fit in memory
};

}  // namespace osc::crossrank
