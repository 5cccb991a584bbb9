#include "agent/recording/recording_format.h"

#include "agent/recording/recording_chunks.h"

#include <nlohmann/json.hpp>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>

namespace osc::agent::recording {
namespace {

namespace fs = std::filesystem;
using namespace chunks;

template <typename T>
void put(std::string& out, T value) {
    out.append(reinterpret_cast<const char*>(&value), sizeof(value));
}

void putText(std::string& out, const std::string& text) {
    put(out, static_cast<uint32_t>(text.size()));
    out += text;
}

nlohmann::json manifestJson(const Manifest& m) {
    nlohmann::json j;
    j["format"] = kFormatName;
    j["format_version"] = m.formatVersion;
    j["fabricated"] = m.fabricated;
    j["host"] = m.who.host;
    j["pid"] = m.who.pid;
    j["rank"] = m.who.rank;
    j["local_rank"] = m.who.localRank;
    j["world_size"] = m.who.worldSize;
    j["command_line"] = m.who.commandLine;
    j["executable"] = m.who.executable;
    j["metadata"] = m.metadata;
    j["layout"] = m.layout;
    return j;
}

}  // namespace

RecordingWriter::RecordingWriter(const std::string& directory, const Manifest& manifest) : directory_(directory) {
    std::error_code ec;
    if (fs::exists(directory_, ec)) throw std::runtime_error(directory_ + ": already exists");
    fs::create_directories(directory_, ec);
    if (ec) throw std::runtime_error(directory_ + ": cannot create: " + ec.message());
    {
        std::ofstream out(directory_ + "/" + kManifestFile);
        out << manifestJson(manifest).dump(1) << "\n";
        if (!out) throw std::runtime_error(directory_ + "/" + kManifestFile + ": cannot write");
    }
    const std::string path = directory_ + "/" + kActivityFile;
    file_ = std::fopen(path.c_str(), "wbx");
    if (!file_) throw std::runtime_error(path + ": cannot create: " + std::strerror(errno));
}

RecordingWriter::~RecordingWriter() {
    if (file_) std::fclose(file_);
}

void RecordingWriter::chunk(uint32_t tag, const std::string& payload) {
    ChunkHeader h{tag, 0, payload.size()};
    if (std::fwrite(&h, sizeof(h), 1, file_) != 1 ||
        (!payload.empty() && std::fwrite(payload.data(), payload.size(), 1, file_) != 1))
        throw std::runtime_error(directory_ + "/" + kActivityFile + ": write failed: " + std::strerror(errno));
}

void RecordingWriter::writeOrigin(int64_t sourceNs, int64_t utcNs) {
    std::string p;
    put(p, sourceNs);
    put(p, utcNs);
    chunk(kOrigin, p);
}

void RecordingWriter::writeGpu(const GpuInfo& g) {
    std::string p;
    put(p, g.id);
    put(p, static_cast<int32_t>(g.smCount));
    put(p, static_cast<int32_t>(g.computeMajor));
    put(p, static_cast<int32_t>(g.computeMinor));
    put(p, g.totalMemory);
    putText(p, g.name);
    putText(p, g.busLocation);
    putText(p, g.uuid);
    chunk(kGpu, p);
}

void RecordingWriter::writeOwnThread(uint32_t threadId) {
    std::string p;
    put(p, threadId);
    chunk(kOwnThread, p);
}

uint32_t RecordingWriter::stringId(const char* text) {
    auto [it, added] = strings_.try_emplace(text, static_cast<uint32_t>(strings_.size()));
    if (added) {
        std::string p;
        put(p, it->second);
        p += it->first;
        chunk(kString, p);
    }
    return it->second;
}

void RecordingWriter::writeApiName(ApiKind kind, uint32_t cbid, const std::string& name) {
    if (!apiNames_.try_emplace(apiKey(kind, cbid), true).second) return;
    std::string p;
    put(p, static_cast<uint32_t>(kind));
    put(p, cbid);
    p += name;
    chunk(kApiName, p);
}

void RecordingWriter::writeBuffer(const uint8_t* bytes, size_t validBytes, const std::vector<uint32_t>& recordOffsets,
                                  const std::vector<StringPatch>& patches) {
    std::string p;
    p.reserve(16 + 4 * recordOffsets.size() + 8 * patches.size() + validBytes);
    put(p, static_cast<uint64_t>(validBytes));
    put(p, static_cast<uint32_t>(recordOffsets.size()));
    put(p, static_cast<uint32_t>(patches.size()));
    for (uint32_t o : recordOffsets) put(p, o);
    for (const auto& s : patches) {
        put(p, s.fieldOffset);
        put(p, s.stringId);
    }
    p.append(reinterpret_cast<const char*>(bytes), validBytes);
    chunk(kBuffer, p);
    // Buffers come a few per second at most: each reaches the disk whole.
    std::fflush(file_);
}

}  // namespace osc::agent::recording
