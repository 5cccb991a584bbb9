#include "analyzer/crossrank/collective_keys.h"

#include <algorithm>

namespace osc::crossrank {

size_t KeyTable::KeyHash::operator()(const CollectiveKey& k) const {
    uint64_t h = k.commHash * 0x9e3779b97f4a7c15ull;
    h ^= (k.seq + 0x632be59bd9b4e019ull) * 0xbf58476d1ce4e5b9ull;
    h ^= (static_cast<uint64_t>(k.name) << 1 | static_cast<uint64_t>(k.scheme)) * 0x94d049bb133111ebull;
    return static_cast<size_t>(h ^ (h >> 31));
}

uint32_t KeyTable::nameId(std::string_view collective) {
    // Called once per operation: a name already numbered makes no string.
    if (const auto found = nameIndex_.find(collective); found != nameIndex_.end()) return found->second;
    const auto [it, added] = nameIndex_.emplace(std::string(collective), static_cast<uint32_t>(names_.size()));
    if (added) {
        names_.emplace_back(collective);
        if (collective.empty()) none_ = it->second;
        if (collective == "SendRecv") sendRecv_ = it->second;
    }
    return it->second;
}

KeyTable::SeqRun& KeyTable::runOf(const CollectiveKey& key) {
    CollectiveKey stream = key;
    stream.seq = 0;
    // Operations of one run mostly follow each other: hashed only on a change.
    if (lastRun_ != kNoKey && stream == lastStream_) return runs_[lastRun_];
    const auto [it, added] = runIndex_.emplace(stream, static_cast<uint32_t>(runs_.size()));
    if (added) runs_.push_back({key.seq, 0, {}});
    lastStream_ = stream;
    lastRun_ = it->second;
    return runs_[it->second];
}

uint32_t KeyTable::intern(const CollectiveKey& key) {
    SeqRun& run = runOf(key);
    uint32_t* slot = nullptr;
    // The run grows only while at least half of it is filled, so numbers
    // far apart (hostile, or not counting by one) cost the hash, not memory.
    if (key.seq >= run.base &&
        (key.seq - run.base < run.ids.size() || key.seq - run.base < 2 * uint64_t{run.filled} + 64)) {
        const uint64_t at = key.seq - run.base;
        if (at >= run.ids.size()) run.ids.resize(at + 1, kNoKey);
        slot = &run.ids[at];
        if (*slot != kNoKey) return *slot;
        ++run.filled;
    }
    // A number first seen beyond the run's reach may have come into it since.
    if (!keyIndex_.empty()) {
        if (const auto it = keyIndex_.find(key); it != keyIndex_.end()) {
            if (slot) *slot = it->second;
            return it->second;
        }
    }
    const auto id = static_cast<uint32_t>(keys_.size());
    keys_.push_back(key);
    if (slot)
        *slot = id;
    else
        keyIndex_.emplace(key, id);
    return id;
}

KeyTable::Device::Device(KeyTable& table, size_t operations, bool alone) : table_(table), alone_(alone) {
    auto& keys = table_.keys_;
    if (!alone && keys.capacity() - keys.size() < operations)
        keys.reserve(std::max(keys.size() + operations, 2 * keys.capacity()));
}

uint32_t KeyTable::Device::key(std::string_view collective, std::optional<uint64_t> commHash,
                               std::optional<uint64_t> seqNumber) {
    if (lastName_ == kNoKey || collective != lastText_) {
        lastName_ = table_.nameId(collective);
        lastText_.assign(collective);
    }
    return key(lastName_, commHash, seqNumber);
}

uint32_t KeyTable::Device::key(uint32_t name, std::optional<uint64_t> commHash, std::optional<uint64_t> seqNumber) {
    if (name == table_.none_ || name == table_.sendRecv_) return kNoKey;
    CollectiveKey k;
    k.name = name;
    if (alone_) return table_.intern(k);
    if (commHash && seqNumber) {
        k.scheme = 0;
        k.commHash = *commHash;
        k.seq = *seqNumber;
    } else {
        if (name >= ordinal_.size()) ordinal_.resize(name + 1, 0);
        k.seq = ordinal_[name]++;
    }
    return table_.intern(k);
}

}  // namespace osc::crossrank
