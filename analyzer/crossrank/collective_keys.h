// The matching keys of a job's operations, numbered once for all its devices.
// Both sources number them through this one class, so a collective matches
// across ranks by the same rule in memory and over partial results.
#pragma once

#include "analyzer/crossrank/device_source.h"

#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace osc::crossrank {

class KeyTable {
public:
    // The keys of one device's operations, in its order: call key() for each.
    class Device {
    public:
        explicit Device(KeyTable& table) : table_(table) {}
        // Operations carrying the plugin's (commHash, seqNumber) match on
        // (commHash, collective, seqNumber); the others on (collective, k),
        // k counting that collective on the device. Operations without a
        // collective type, and SendRecv (sends and receives pair by peer,
        // p2p_match.h), get kNoKey.
        uint32_t key(const std::string& collective, std::optional<uint64_t> commHash,
                     std::optional<uint64_t> seqNumber);
        // The same for a collective name already numbered by nameId().
        uint32_t key(uint32_t name, std::optional<uint64_t> commHash, std::optional<uint64_t> seqNumber);

    private:
        KeyTable& table_;
        std::unordered_map<uint32_t, uint64_t> ordinal_;  // per collective name
    };

    uint32_t nameId(const std::string& collective);
    const std::vector<CollectiveKey>& keys() const { return keys_; }
    const std::vector<std::string>& names() const { return names_; }

private:
    struct KeyHash {
        size_t operator()(const CollectiveKey& k) const;
    };
    uint32_t intern(const CollectiveKey& key);

    std::vector<CollectiveKey> keys_;
    std::vector<std::string> names_;
    std::unordered_map<CollectiveKey, uint32_t, KeyHash> keyIndex_;
    std::unordered_map<std::string, uint32_t> nameIndex_;
    uint32_t sendRecv_ = kNoKey, none_ = kNoKey;  // name ids never matched
};

}  // namespace osc::crossrank
