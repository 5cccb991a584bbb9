// The matching keys of a job's operations, numbered once for all its devices.
// Both sources number them through this one class, so a collective matches
// across ranks by the same rule in memory and over partial results.
#pragma once

#include "analyzer/capture/text_map.h"
#include "analyzer/crossrank/device_source.h"

#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include <tsl/robin_map.h>

namespace osc::crossrank {

class KeyTable {
public:
    // The keys of one device's operations, in its order: call key() for each.
    class Device {
    public:
        // `operations`, where known, makes room for as many new keys at once
        // (a device of 300,000 operations each a key of its own grew the
        // table 19 times). `alone`: the job's only device, whose operations
        // can match no other's: one key per collective name, which is all
        // a pass reads of them then (a PyTorch trace is one device).
        explicit Device(KeyTable& table, size_t operations = 0, bool alone = false);
        // Operations carrying the plugin's (commHash, seqNumber) match on
        // (commHash, collective, seqNumber); the others on (collective, k),
        // k counting that collective on the device. Operations without a
        // collective type, and SendRecv (sends and receives pair by peer,
        // p2p_match.h), get kNoKey.
        uint32_t key(std::string_view collective, std::optional<uint64_t> commHash, std::optional<uint64_t> seqNumber);
        // The same for a collective name already numbered by nameId().
        uint32_t key(uint32_t name, std::optional<uint64_t> commHash, std::optional<uint64_t> seqNumber);

    private:
        KeyTable& table_;
        bool alone_ = false;
        std::vector<uint64_t> ordinal_;  // by collective name id
        // The name numbered last: a device's operations mostly repeat it.
        std::string lastText_;
        uint32_t lastName_ = kNoKey;
    };

    uint32_t nameId(std::string_view collective);
    const std::vector<CollectiveKey>& keys() const { return keys_; }
    const std::vector<std::string>& names() const { return names_; }

private:
    struct KeyHash {
        size_t operator()(const CollectiveKey& k) const;
    };
    // The keys of one (scheme, communicator, collective): their sequence
    // numbers count up by one (NCCL's, and our ordinals), so a key's id is
    // found at ids[seq - base] without hashing every operation of a job; a
    // number before the first one seen, or far beyond the last, goes to
    // keyIndex_ instead.
    struct SeqRun {
        uint64_t base = 0;
        uint32_t filled = 0;
        std::vector<uint32_t> ids;  // kNoKey where that number was not seen
    };
    uint32_t intern(const CollectiveKey& key);
    SeqRun& runOf(const CollectiveKey& key);

    std::vector<CollectiveKey> keys_;
    std::vector<std::string> names_;
    std::vector<SeqRun> runs_;
    CollectiveKey lastStream_;                                   // the run found last (seq 0) ...
    uint32_t lastRun_ = kNoKey;                                  // ... and its index
    tsl::robin_map<CollectiveKey, uint32_t, KeyHash> runIndex_;  // seq ignored: 0
    tsl::robin_map<CollectiveKey, uint32_t, KeyHash> keyIndex_;  // the keys no run holds
    TextMap<uint32_t> nameIndex_;
    uint32_t sendRecv_ = kNoKey, none_ = kNoKey;  // name ids never matched
};

}  // namespace osc::crossrank
