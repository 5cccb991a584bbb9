// What the CUPTI decoding tests share: the source clock at capture start,
// the process, and records zeroed the way CUPTI's buffers are.
#pragma once

#include "analyzer/capture/schema.h"

#include <cupti.h>

#include <cstdint>
#include <cstring>

namespace osc::agent::cupti {

constexpr int64_t kOrigin = 1'700'000'000'000'000'000;  // source clock at capture start
constexpr int64_t kPid = 4321;

template <typename T>
T zeroed(CUpti_ActivityKind kind) {
    T r;
    std::memset(&r, 0, sizeof(r));
    r.kind = kind;
    return r;
}

}  // namespace osc::agent::cupti
