#include "analyzer/capture/nccl_nvtx_payload.h"

#include <nlohmann/json.hpp>

#include <array>
#include <charconv>

namespace osc::ncclnvtx {
namespace {

// The entry names NCCL gives the values read here (nvtx_payload_schemas.h
// since 2.25; the same strings in collectives.cc and init.cc since 2.16).
enum class Field { None, Comm, Bytes, Peer, Root, Rank, Nranks, CudaDev };

Field fieldOf(std::string_view name) {
    if (name == "NCCL communicator ID") return Field::Comm;
    if (name == "Message size [bytes]") return Field::Bytes;
    if (name == "Peer rank") return Field::Peer;
    if (name == "Root") return Field::Root;
    if (name == "Rank") return Field::Rank;
    if (name == "No. of ranks") return Field::Nranks;
    if (name == "CUDA device") return Field::CudaDev;
    return Field::None;
}

void store(CallValues& v, Field f, uint64_t raw, bool isSigned, size_t size) {
    // Sign-extend signed entries narrower than 64 bits (ranks are ints).
    int64_t s = static_cast<int64_t>(raw);
    if (isSigned && size < 8 && (raw >> (size * 8 - 1)) & 1)
        s = static_cast<int64_t>(raw | (~uint64_t{0} << (size * 8)));
    switch (f) {
        case Field::Comm:
            v.comm = raw;
            break;
        case Field::Bytes:
            v.bytes = raw;
            break;
        case Field::Peer:
            v.peer = s;
            break;
        case Field::Root:
            v.root = s;
            break;
        case Field::Rank:
            v.rank = s;
            break;
        case Field::Nranks:
            v.nranks = s;
            break;
        case Field::CudaDev:
            v.cudaDev = s;
            break;
        case Field::None:
            break;
    }
}

struct TypeInfo {
    size_t size = 0;  // 0: not a fixed-size scalar this reader knows
    bool isSigned = false;
};

// NVTX_PAYLOAD_ENTRY_TYPE_* (nvToolsExtPayload.h) on a 64-bit Linux host;
// an enum registered as a static schema (NCCL's reduction operation) is an int.
TypeInfo typeInfo(uint64_t type) {
    switch (type) {
        case 1:  // char
        case 11:
            return {1, true};
        case 2:  // unsigned char
        case 12:
            return {1, false};
        case 3:
        case 13:
            return {2, true};
        case 4:
        case 14:
            return {2, false};
        case 5:  // int
        case 15:
            return {4, true};
        case 6:
        case 16:
            return {4, false};
        case 7:  // long
        case 9:  // long long
        case 17:
            return {8, true};
        case 8:
        case 10:
        case 18:
        case 22:  // size_t
        case 23:  // address
            return {8, false};
        default:
            return type >= kSchemaIdStaticStart ? TypeInfo{4, true} : TypeInfo{};
    }
}

uint64_t readLittleEndian(std::string_view bytes, size_t at, size_t size) {
    uint64_t v = 0;
    for (size_t i = 0; i < size; ++i) v |= static_cast<uint64_t>(static_cast<unsigned char>(bytes[at + i])) << (8 * i);
    return v;
}

const Schema* find(const Schemas& schemas, uint64_t domain, uint64_t id) {
    if (auto it = schemas.find({domain, id}); it != schemas.end()) return &it->second;
    // Domain ids of the schema table and of the events may be numbered
    // apart; a schema id registered once in the file still names it.
    const Schema* only = nullptr;
    for (const auto& [key, schema] : schemas)
        if (key.second == id) {
            if (only) return nullptr;
            only = &schema;
        }
    return only;
}

std::optional<CallValues> decodePayload(std::string_view payload, const Schema& schema) {
    CallValues v;
    size_t end = 0;  // where the previous entry ended, for entries without an offset
    for (size_t i = 0; i < schema.entries.size(); ++i) {
        const SchemaEntry& e = schema.entries[i];
        const TypeInfo t = typeInfo(e.type);
        size_t at = 0;
        if (e.offset && (*e.offset != 0 || i == 0)) {
            at = static_cast<size_t>(*e.offset);
        } else {
            // No offset given: naturally aligned after the previous entry,
            // which needs every earlier entry's size.
            if (t.size == 0 || (i > 0 && end == 0)) break;
            at = (end + t.size - 1) / t.size * t.size;
        }
        end = t.size == 0 ? 0 : at + t.size;
        const Field f = fieldOf(e.name);
        if (f == Field::None || t.size == 0 || at > payload.size() || payload.size() - at < t.size) continue;
        store(v, f, readLittleEndian(payload, at, t.size), t.isSigned, t.size);
    }
    if (!v.any()) return std::nullopt;
    return v;
}

std::optional<uint64_t> numberOf(const nlohmann::json& j) {
    if (j.is_number_unsigned()) return j.get<uint64_t>();
    if (j.is_number_integer()) return static_cast<uint64_t>(j.get<int64_t>());
    if (!j.is_string()) return std::nullopt;
    std::string_view s = j.get_ref<const std::string&>();
    int base = 10;
    if (s.starts_with("0x") || s.starts_with("0X")) {
        s.remove_prefix(2);
        base = 16;
    }
    const bool negative = base == 10 && s.starts_with('-');
    if (negative) s.remove_prefix(1);
    uint64_t v = 0;
    const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v, base);
    if (ec != std::errc() || p != s.data() + s.size() || s.empty()) return std::nullopt;
    return negative ? static_cast<uint64_t>(-static_cast<int64_t>(v)) : v;
}

void collect(const nlohmann::json& j, CallValues& v, int depth) {
    if (depth > 16) return;
    if (j.is_object()) {
        for (auto it = j.begin(); it != j.end(); ++it) {
            const Field f = fieldOf(it.key());
            if (f != Field::None)
                if (const auto n = numberOf(it.value())) store(v, f, *n, true, 8);
            collect(it.value(), v, depth + 1);
        }
    } else if (j.is_array()) {
        for (const auto& item : j) collect(item, v, depth + 1);
    }
}

struct Call {
    std::string_view range, collective;
    uint64_t staticId;  // NVTX_SID_* in NCCL's nvtx.h
};

constexpr std::array<Call, 20> kCalls = {{
    {"ncclCommInitRank", "", 0},
    {"ncclCommInitAll", "", 1},
    {"ncclCommDestroy", "", 2},
    {"ncclCommAbort", "", 3},
    {"ncclAllGather", "AllGather", 4},
    {"ncclAllReduce", "AllReduce", 5},
    {"ncclBroadcast", "Broadcast", 6},
    {"ncclReduceScatter", "ReduceScatter", 7},
    {"ncclReduce", "Reduce", 8},
    {"ncclSend", "Send", 9},
    {"ncclRecv", "Recv", 10},
    {"ncclCommInitRankConfig", "", 11},
    {"ncclCommInitRankScalable", "", 12},
    {"ncclCommSplit", "", 13},
    {"ncclCommFinalize", "", 14},
    {"ncclCommShrink", "", 15},
    {"ncclAlltoAll", "AllToAll", 16},
    {"ncclGather", "Gather", 17},
    {"ncclScatter", "Scatter", 18},
    {"ncclCommGrow", "", 20},
}};

const Call* callOf(std::string_view range) {
    for (const Call& c : kCalls)
        if (c.range == range) return &c;
    return nullptr;
}

}  // namespace

std::string_view collectiveOf(std::string_view rangeName) {
    const Call* c = callOf(rangeName);
    return c ? c->collective : std::string_view();
}

bool createsCommunicator(std::string_view rangeName) {
    return rangeName.starts_with("ncclCommInit") || rangeName == "ncclCommSplit" || rangeName == "ncclCommShrink" ||
           rangeName == "ncclCommGrow";
}

uint64_t staticSchemaId(std::string_view rangeName) {
    const Call* c = callOf(rangeName);
    return c ? kSchemaIdStaticStart + c->staticId : 0;
}

std::optional<CallValues> decodeBinary(std::string_view blob, uint64_t domain, std::string_view function,
                                       const Schemas& schemas) {
    constexpr size_t kHeader = 32;
    if (blob.size() >= kHeader) {
        const uint64_t headerDomain = readLittleEndian(blob, 0, 8);
        const uint64_t id = readLittleEndian(blob, 8, 8);
        const uint64_t size = readLittleEndian(blob, 16, 8);
        const Schema* s = find(schemas, headerDomain, id);
        if (!s) s = find(schemas, domain, id);
        if (s && size <= blob.size() - kHeader) return decodePayload(blob.substr(kHeader, size), *s);
    }
    const uint64_t id = staticSchemaId(function);
    if (id == 0) return std::nullopt;
    const Schema* s = find(schemas, domain, id);
    if (!s || (s->payloadSize && blob.size() != *s->payloadSize)) return std::nullopt;
    return decodePayload(blob, *s);
}

std::optional<CallValues> decodeJson(std::string_view text) {
    const nlohmann::json j = nlohmann::json::parse(text.begin(), text.end(), nullptr, false);
    if (j.is_discarded()) return std::nullopt;
    CallValues v;
    collect(j, v, 0);
    if (!v.any()) return std::nullopt;
    return v;
}

}  // namespace osc::ncclnvtx
