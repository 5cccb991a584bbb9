// NCCL's NVTX payloads as an Nsight Systems export holds them, for tests
// that write exports by hand (test_nsys_nccl_payloads.cpp) or from a capture
// (nsys_shaped.h). The schemas follow NCCL's documented layouts
// (src/include/nvtx_payload_schemas.h since NCCL 2.25; collectives.cc and
// init.cc in 2.16-2.24); the payload is stored as nsys exports it: bytes
// after a 32-byte header, bare bytes, or JSON.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace osc::test::ncclpayload {

inline constexpr uint64_t kStatic = uint64_t{1} << 24;  // NVTX_PAYLOAD_ENTRY_TYPE_SCHEMA_ID_STATIC_START
inline constexpr int kDomain = 7;
inline constexpr uint64_t kNone = ~uint64_t{0};  // a range without payload

enum class Nccl { V2_25, V2_16 };                      // schema layouts
enum class Encoding { HeaderedBlob, BareBlob, Json };  // how nsys holds the payload

inline std::string le(uint64_t v, int bytes) {
    std::string out;
    for (int i = 0; i < bytes; ++i) out += static_cast<char>((v >> (8 * i)) & 0xFF);
    return out;
}

inline std::string hexLiteral(const std::string& bytes) {
    std::string out = "X'";
    char buf[3];
    for (unsigned char c : bytes) {
        std::snprintf(buf, sizeof buf, "%02x", c);
        out += buf;
    }
    return out + "'";
}

struct Entry {
    const char* name;
    uint64_t type;
    int offset;  // -1: NULL in the table
};

struct SchemaDef {
    uint64_t sid;  // NVTX_SID_* of NCCL's nvtx.h
    int size;
    std::vector<Entry> entries;
};

// NCCL >= 2.25: the communicator first.
inline const std::vector<SchemaDef> kSchemas225 = {
    {11, 24, {{"NCCL communicator ID", 18, -1}, {"No. of ranks", 5, 8}, {"Rank", 5, 12}, {"CUDA device", 5, 16}}},
    {4, 16, {{"NCCL communicator ID", 18, -1}, {"Message size [bytes]", 22, 8}}},
    {5,
     24,
     {{"NCCL communicator ID", 18, -1}, {"Message size [bytes]", 22, 8}, {"Reduction operation", kStatic + 24, 16}}},
    {6, 24, {{"NCCL communicator ID", 18, -1}, {"Message size [bytes]", 22, 8}, {"Root", 5, 16}}},
    {7,
     24,
     {{"NCCL communicator ID", 18, -1}, {"Message size [bytes]", 22, 8}, {"Reduction operation", kStatic + 24, 16}}},
    {9, 24, {{"NCCL communicator ID", 18, -1}, {"Message size [bytes]", 22, 8}, {"Peer rank", 5, 16}}},
    {10, 24, {{"NCCL communicator ID", 18, -1}, {"Message size [bytes]", 22, 8}, {"Peer rank", 5, 16}}},
};
// NCCL 2.16-2.24: no communicator.
inline const std::vector<SchemaDef> kSchemas216 = {
    {0, 12, {{"Rank", 5, 0}, {"No. of ranks", 5, 4}, {"CUDA device", 5, 8}}},
    {4, 8, {{"Message size [bytes]", 22, 0}}},
    {5, 16, {{"Message size [bytes]", 22, 0}, {"Reduction operation", kStatic + 11, 8}}},
    {6, 16, {{"Message size [bytes]", 22, 0}, {"Root", 5, 8}}},
    {7, 16, {{"Message size [bytes]", 22, 0}, {"Reduction operation", kStatic + 11, 8}}},
    {9, 16, {{"Message size [bytes]", 22, 0}, {"Peer rank", 5, 8}}},
    {10, 16, {{"Message size [bytes]", 22, 0}, {"Peer rank", 5, 8}}},
};

inline const std::vector<SchemaDef>& schemasOf(Nccl nccl) { return nccl == Nccl::V2_25 ? kSchemas225 : kSchemas216; }

inline const SchemaDef& schemaOf(Nccl nccl, uint64_t sid) {
    for (const auto& s : schemasOf(nccl))
        if (s.sid == sid) return s;
    ADD_FAILURE() << "no schema " << sid;
    return kSchemas225.front();
}

// The export's schema tables (NVTX_EVENTS also needs jsonText and binaryData).
inline std::string schemaTablesSql() {
    return R"(
CREATE TABLE NVTX_PAYLOAD_SCHEMAS (domainId INTEGER, schemaId INTEGER, name TEXT, type INTEGER, flags INTEGER,
  numEntries INTEGER, payloadSize INTEGER, alignTo INTEGER);
CREATE TABLE NVTX_PAYLOAD_SCHEMA_ENTRIES (domainId INTEGER NOT NULL, schemaId INTEGER NOT NULL, idx INTEGER NOT NULL,
  flags INTEGER, type INTEGER, name TEXT, description TEXT, arrayOrUnionDetail INTEGER, offset INTEGER);
)";
}

// Every schema of `nccl`'s layout, registered in NCCL's domain.
inline std::string schemaRowsSql(Nccl nccl) {
    std::string sql;
    for (const auto& s : schemasOf(nccl)) {
        sql += "INSERT INTO NVTX_PAYLOAD_SCHEMAS VALUES (" + std::to_string(kDomain) + ", " +
               std::to_string(kStatic + s.sid) + ", NULL, 1, 0, " + std::to_string(s.entries.size()) + ", " +
               std::to_string(s.size) + ", NULL);";
        for (size_t i = 0; i < s.entries.size(); ++i) {
            const Entry& e = s.entries[i];
            sql += "INSERT INTO NVTX_PAYLOAD_SCHEMA_ENTRIES VALUES (" + std::to_string(kDomain) + ", " +
                   std::to_string(kStatic + s.sid) + ", " + std::to_string(i) + ", 0, " + std::to_string(e.type) +
                   ", '" + e.name + "', NULL, 0, " + (e.offset < 0 ? "NULL" : std::to_string(e.offset)) + ");";
        }
    }
    return sql;
}

// SQL literals for a range's jsonText and binaryData columns ("NULL" where
// the encoding leaves one empty); `fields` in schema order.
struct Literals {
    std::string json = "NULL", binary = "NULL";
};

inline Literals payloadLiterals(Nccl nccl, Encoding encoding, uint64_t sid, const std::vector<uint64_t>& fields) {
    Literals out;
    if (sid == kNone) return out;
    const SchemaDef& s = schemaOf(nccl, sid);
    std::string bytes(static_cast<size_t>(s.size), '\0');
    std::string doc = "{";
    for (size_t i = 0; i < fields.size(); ++i) {
        const Entry& e = s.entries[i];
        const int width = e.type == 18 || e.type == 22 ? 8 : 4;
        bytes.replace(static_cast<size_t>(e.offset < 0 ? 0 : e.offset), static_cast<size_t>(width),
                      le(fields[i], width));
        // JSON as a tool would write it: the communicator as hex text.
        doc += std::string(i ? ", " : "") + "\"" + e.name + "\": ";
        if (e.type == 18) {
            char hex[24];
            std::snprintf(hex, sizeof hex, "\"0x%016llx\"", static_cast<unsigned long long>(fields[i]));
            doc += hex;
        } else {
            doc += std::to_string(static_cast<int64_t>(fields[i]));
        }
    }
    doc += "}";
    if (encoding == Encoding::Json)
        out.json = "'" + doc + "'";
    else if (encoding == Encoding::BareBlob)
        out.binary = hexLiteral(bytes);
    else
        out.binary = hexLiteral(le(kDomain, 8) + le(kStatic + sid, 8) + le(bytes.size(), 8) + le(32, 8) + bytes);
    return out;
}

}  // namespace osc::test::ncclpayload
