// The handles the plugin gives NCCL (event handles, communicator contexts)
// are tagged numbers, never pointers: NCCL hands them back in later calls,
// sometimes after the event ended (NCCL 2.28 keeps a proxy sub's KernelCh
// handle after stopping it and may stop it again), so every handle must be
// checkable without being followed. A handle packs what it names (its kind),
// the communicator that gave it out (a serial, never reused while the
// process lives short of 2^24 communicators) and an id the communicator
// never gives out twice (37 bits). Ordinary pointers are 8-aligned, so their
// kind bits read 0, which is no kind of ours.
#pragma once

#include <cstdint>
#include <optional>

namespace osc::agent::nccl {

enum class HandleKind : unsigned {
    Group = 1,      // a kernel launch; the id is its place in launch order
    Operation = 2,  // a collective, send or receive
    Channel = 3,    // one kernel channel of an operation
    Context = 4,    // a communicator (`init`'s context); the id is 1
    Link = 5,       // an event shared with a chained plugin (plugin_chain.h)
};

inline constexpr unsigned kKindBits = 3, kCommBits = 24;
inline constexpr uint32_t kMaxCommSerial = (1u << kCommBits) - 1;
inline constexpr uint64_t kMaxHandleId = (uint64_t{1} << (64 - kKindBits - kCommBits)) - 1;

struct HandleFields {
    HandleKind kind;
    uint32_t comm;  // 1 .. kMaxCommSerial
    uint64_t id;    // 1 .. kMaxHandleId
};

inline void* makeHandle(HandleKind kind, uint32_t comm, uint64_t id) {
    const uint64_t v =
        (id << (kKindBits + kCommBits)) | (uint64_t{comm & kMaxCommSerial} << kKindBits) | static_cast<uint64_t>(kind);
    return reinterpret_cast<void*>(static_cast<uintptr_t>(v));
}

// The fields of a handle in our format, or nullopt for anything else (null,
// a pointer, a number with a kind or serial or id we never use). Arithmetic
// only: nothing is read through `handle`.
inline std::optional<HandleFields> readHandle(const void* handle) {
    const auto v = static_cast<uint64_t>(reinterpret_cast<uintptr_t>(handle));
    const unsigned kind = static_cast<unsigned>(v & ((1u << kKindBits) - 1));
    const auto comm = static_cast<uint32_t>((v >> kKindBits) & kMaxCommSerial);
    const uint64_t id = v >> (kKindBits + kCommBits);
    if (kind < static_cast<unsigned>(HandleKind::Group) || kind > static_cast<unsigned>(HandleKind::Link)) return {};
    if (comm == 0 || id == 0) return {};
    return HandleFields{static_cast<HandleKind>(kind), comm, id};
}

}  // namespace osc::agent::nccl
