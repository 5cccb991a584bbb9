#include "analyzer/crossrank/instance_table.h"

#include <algorithm>
#include <stdexcept>

namespace osc::crossrank {
namespace {

constexpr size_t kChunkRecords = 4096;

}  // namespace

InstanceTable::InstanceTable(uint64_t slots, uint64_t inMemory)
    : slots_(slots), bucketSlots_(std::max<uint64_t>(inMemory, 1)) {
    if (slots_ <= bucketSlots_) {
        bucketSlots_ = std::max<uint64_t>(slots_, 1);
        loaded_.assign(slots_, {-1, -1});
        loadedBucket_ = 0;
        return;
    }
    const size_t buckets = static_cast<size_t>((slots_ + bucketSlots_ - 1) / bucketSlots_);
    pending_.resize(buckets);
    chunks_.resize(buckets);
    scratch_ = std::make_unique<ScratchFile>();
}

void InstanceTable::put(uint64_t slot, int device, int collective) {
    if (slot >= slots_) throw std::logic_error("instance slot out of range");
    if (!scratch_) {
        loaded_[slot] = {device, collective};
        return;
    }
    const auto bucket = static_cast<size_t>(slot / bucketSlots_);
    pending_[bucket].push_back({slot, device, collective});
    if (pending_[bucket].size() >= kChunkRecords) flush(bucket);
}

void InstanceTable::flush(size_t bucket) {
    auto& p = pending_[bucket];
    if (p.empty()) return;
    chunks_[bucket].emplace_back(scratch_->append(p.data(), p.size() * sizeof(Record)), p.size());
    p.clear();
    p.shrink_to_fit();
}

void InstanceTable::load(size_t bucket) {
    const uint64_t first = bucket * bucketSlots_;
    loaded_.assign(static_cast<size_t>(std::min(bucketSlots_, slots_ - first)), {-1, -1});
    const auto place = [&](const Record& r) {
        loaded_[static_cast<size_t>(r.slot - first)] = {r.device, r.collective};
    };
    std::vector<Record> chunk;
    for (const auto& [offset, count] : chunks_[bucket]) {
        chunk.resize(count);
        scratch_->read(offset, chunk.data(), count * sizeof(Record));
        for (const auto& r : chunk) place(r);
    }
    for (const auto& r : pending_[bucket]) place(r);
    pending_[bucket].clear();
    pending_[bucket].shrink_to_fit();
    chunks_[bucket].clear();
    loadedBucket_ = bucket;
}

std::pair<int, int> InstanceTable::at(uint64_t slot) {
    if (slot >= slots_) throw std::logic_error("instance slot out of range");
    const auto bucket = static_cast<size_t>(slot / bucketSlots_);
    if (bucket != loadedBucket_) load(bucket);
    return loaded_[static_cast<size_t>(slot - bucket * bucketSlots_)];
}

}  // namespace osc::crossrank
