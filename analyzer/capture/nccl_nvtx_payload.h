// What NCCL says about each of its calls in NVTX (docs/formats.md, "NCCL
// NVTX payloads in Nsight Systems exports"): NCCL pushes a range per API call
// (ncclAllReduce, ncclSend, ncclCommInitRank, ...) in its "NCCL" domain with
// an extended payload whose schema it registers (NCCL's src/include/
// nvtx_payload_schemas.h; before 2.25 in collectives.cc and init.cc). Nsight
// Systems exports the schemas (NVTX_PAYLOAD_SCHEMAS, NVTX_PAYLOAD_SCHEMA_
// ENTRIES) and each range's payload as bytes (NVTX_EVENTS.binaryData) or as
// JSON (NVTX_EVENTS.jsonText). This file turns one payload into the values
// NCCL named; no SQLite here, so the decoding is tested on bytes alone.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace osc::ncclnvtx {

// NVTX's numbering of schema ids NCCL picks statically (nvToolsExtPayload.h).
inline constexpr uint64_t kSchemaIdStaticStart = uint64_t{1} << 24;

// One entry of a registered schema, as NVTX_PAYLOAD_SCHEMA_ENTRIES holds it.
struct SchemaEntry {
    std::string name;                // "Message size [bytes]"
    uint64_t type = 0;               // NVTX_PAYLOAD_ENTRY_TYPE_* or a schema/enum id
    std::optional<uint64_t> offset;  // NULL in the table: by natural alignment
};

struct Schema {
    std::vector<SchemaEntry> entries;  // by idx
    std::optional<uint64_t> payloadSize;
};

// Schemas by (domainId, schemaId) as the file registered them.
using Schemas = std::map<std::pair<uint64_t, uint64_t>, Schema>;

// The values of one NCCL call that matter here, each absent when the
// payload does not carry it (NCCL before 2.25 sends no communicator).
struct CallValues {
    std::optional<uint64_t> comm;    // "NCCL communicator ID" (ncclComm::commHash)
    std::optional<uint64_t> bytes;   // "Message size [bytes]"
    std::optional<int64_t> peer;     // "Peer rank" (ncclSend, ncclRecv)
    std::optional<int64_t> root;     // "Root" (broadcast, reduce, gather, scatter)
    std::optional<int64_t> rank;     // "Rank" (communicator creation)
    std::optional<int64_t> nranks;   // "No. of ranks"
    std::optional<int64_t> cudaDev;  // "CUDA device"
    bool any() const { return comm || bytes || peer || root || rank || nranks || cudaDev; }
};

// From binaryData: a 32-byte header (domain id, schema id, payload size and
// a fourth 8-byte field, little-endian) then the payload, or, when no
// header names a schema of `domain`, the bare payload of the schema NCCL
// uses for `function` ("ncclAllReduce"). Absent when neither fits.
std::optional<CallValues> decodeBinary(std::string_view blob, uint64_t domain, std::string_view function,
                                       const Schemas& schemas);

// From jsonText: the entry names as keys anywhere in the object (values as
// numbers, or numbers in strings, decimal or 0x hex). Absent when it is not
// JSON or names none of them.
std::optional<CallValues> decodeJson(std::string_view text);

// The NCCL call a range name is, as the NCCL profiler plugin names the
// function ("AllReduce", "Send", "AllToAll"), "" for other ranges.
std::string_view collectiveOf(std::string_view rangeName);
// Whether the range creates (or names) a communicator and its ranks:
// ncclCommInitRank, ncclCommInitRankConfig, ncclCommSplit, ...
bool createsCommunicator(std::string_view rangeName);

// NCCL's static schema id for a call (nvtx.h NVTX_SID_*), or 0.
uint64_t staticSchemaId(std::string_view rangeName);

}  // namespace osc::ncclnvtx
