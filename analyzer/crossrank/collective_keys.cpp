#include "analyzer/crossrank/collective_keys.h"

namespace osc::crossrank {

size_t KeyTable::KeyHash::operator()(const CollectiveKey& k) const {
    uint64_t h = k.commHash * 0x9e3779b97f4a7c15ull;
    h ^= (k.seq + 0x632be59bd9b4e019ull) * 0xbf58476d1ce4e5b9ull;
    h ^= (static_cast<uint64_t>(k.name) << 1 | static_cast<uint64_t>(k.scheme)) * 0x94d049bb133111ebull;
    return static_cast<size_t>(h ^ (h >> 31));
}

uint32_t KeyTable::nameId(const std::string& collective) {
    const auto [it, added] = nameIndex_.emplace(collective, static_cast<uint32_t>(names_.size()));
    if (added) {
        names_.push_back(collective);
        if (collective.empty()) none_ = it->second;
        if (collective == "SendRecv") sendRecv_ = it->second;
    }
    return it->second;
}

uint32_t KeyTable::intern(const CollectiveKey& key) {
    const auto [it, added] = keyIndex_.emplace(key, static_cast<uint32_t>(keys_.size()));
    if (added) keys_.push_back(key);
    return it->second;
}

uint32_t KeyTable::Device::key(const std::string& collective, std::optional<uint64_t> commHash,
                               std::optional<uint64_t> seqNumber) {
    return key(table_.nameId(collective), commHash, seqNumber);
}

uint32_t KeyTable::Device::key(uint32_t name, std::optional<uint64_t> commHash, std::optional<uint64_t> seqNumber) {
    if (name == table_.none_ || name == table_.sendRecv_) return kNoKey;
    CollectiveKey k;
    k.name = name;
    if (commHash && seqNumber) {
        k.scheme = 0;
        k.commHash = *commHash;
        k.seq = *seqNumber;
    } else {
        k.seq = ordinal_[name]++;
    }
    return table_.intern(k);
}

}  // namespace osc::crossrank
