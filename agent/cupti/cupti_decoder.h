// Decodes CUPTI activity records into capture rows. Pure: it reads the
// record structs and calls no CUPTI function, so tests feed it records built
// by hand from the real header structs.
//
// State kept across records (writer thread only): the device of each context
// (synchronisation records carry only the context), NVTX ranges whose START
// has been seen but not their END, and marker colours from MARKER_DATA.
#pragma once

#include "agent/core/activity_source.h"
#include "agent/core/kernel_names.h"

#include <cupti.h>

#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>

namespace osc::agent::cupti {

class CuptiDecoder {
public:
    // Name of a runtime/driver API callback id (cuptiGetCallbackName in the agent).
    using ApiNameFn = std::function<std::string(ApiKind, uint32_t cbid)>;
    explicit CuptiDecoder(ApiNameFn apiName = {});

    void decode(const CUpti_Activity* record, const DecodeContext& context, RowSink& rows);
    // Forgets ranges still open and cached state (new capture).
    void reset();

    // Records without timestamps (CUPTI ran out of device buffers) and records of kinds we skip.
    uint64_t recordsWithoutTimestamps() const { return noTimestamp_; }
    uint64_t overheadNs() const { return overheadNs_; }

private:
    struct OpenRange {
        int64_t start = 0;
        std::string text, domain;
        uint64_t globalTid = 0;
        uint32_t color = 0, category = 0;
    };

    std::string_view apiName(ApiKind kind, uint32_t cbid);
    uint32_t deviceOfContext(uint32_t contextId) const;

    ApiNameFn apiNameFn_;
    KernelNameCache kernelNames_;
    std::unordered_map<uint64_t, std::string> apiNames_;
    std::unordered_map<uint32_t, uint32_t> contextDevice_;
    std::unordered_map<uint32_t, OpenRange> openRanges_;
    std::unordered_map<uint32_t, std::pair<uint32_t, uint32_t>> markerStyle_;  // id -> color, category
    uint64_t noTimestamp_ = 0, overheadNs_ = 0;
};

}  // namespace osc::agent::cupti
