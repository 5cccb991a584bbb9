#include "agent/recording/recording_format.h"

#include <nlohmann/json.hpp>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>

namespace osc::agent::recording {
namespace {

namespace fs = std::filesystem;

enum Tag : uint32_t { kOrigin = 1, kGpu = 2, kString = 3, kApiName = 4, kOwnThread = 5, kBuffer = 6 };

struct ChunkHeader {
    uint32_t tag = 0;
    uint32_t reserved = 0;
    uint64_t bytes = 0;
};

template <typename T>
void put(std::string& out, T value) {
    out.append(reinterpret_cast<const char*>(&value), sizeof(value));
}

void putText(std::string& out, const std::string& text) {
    put(out, static_cast<uint32_t>(text.size()));
    out += text;
}

// Reads one chunk's payload; throws on a chunk that claims more than it has.
class PayloadReader {
public:
    PayloadReader(const char* data, size_t size, const std::string& where) : p_(data), end_(data + size), where_(where) {}
    template <typename T>
    T get() {
        T v;
        need(sizeof(T));
        std::memcpy(&v, p_, sizeof(T));
        p_ += sizeof(T);
        return v;
    }
    std::string text() { return bytes(get<uint32_t>()); }
    std::string bytes(size_t n) {
        need(n);
        std::string s(p_, n);
        p_ += n;
        return s;
    }
    const char* take(size_t n) {
        need(n);
        const char* at = p_;
        p_ += n;
        return at;
    }
    std::string rest() { return bytes(static_cast<size_t>(end_ - p_)); }

private:
    void need(size_t n) const {
        if (static_cast<size_t>(end_ - p_) < n) throw std::runtime_error(where_ + ": a chunk is shorter than its fields");
    }
    const char* p_;
    const char* end_;
    std::string where_;
};

std::string readWhole(const std::string& path) {
    gzFile gz = ::gzopen(path.c_str(), "rb");  // reads plain files too
    if (!gz) throw std::runtime_error(path + ": cannot open: " + std::strerror(errno));
    std::string data;
    char chunk[1 << 16];
    for (;;) {
        const int n = ::gzread(gz, chunk, sizeof(chunk));
        if (n < 0) {
            int code = 0;
            const std::string why = ::gzerror(gz, &code);
            ::gzclose(gz);
            throw std::runtime_error(path + ": cannot read: " + why);
        }
        if (n == 0) break;
        data.append(chunk, static_cast<size_t>(n));
    }
    ::gzclose(gz);
    return data;
}

nlohmann::json manifestJson(const Manifest& m) {
    nlohmann::json j;
    j["format"] = "overlapscope-cupti-recording";
    j["format_version"] = m.formatVersion;
    j["fabricated"] = m.fabricated;
    j["host"] = m.host;
    j["pid"] = m.pid;
    j["rank"] = m.rank;
    j["local_rank"] = m.localRank;
    j["world_size"] = m.worldSize;
    j["command_line"] = m.commandLine;
    j["executable"] = m.executable;
    j["metadata"] = m.metadata;
    j["layout"] = m.layout;
    return j;
}

Manifest manifestOf(const nlohmann::json& j, const std::string& where) {
    if (!j.is_object() || j.value("format", "") != "overlapscope-cupti-recording")
        throw std::runtime_error(where + ": not an overlapscope CUPTI recording manifest");
    Manifest m;
    m.formatVersion = j.value("format_version", 0);
    if (m.formatVersion != kFormatVersion)
        throw std::runtime_error(where + ": recording format " + std::to_string(m.formatVersion) +
                                 ", this build reads format " + std::to_string(kFormatVersion));
    m.fabricated = j.value("fabricated", false);
    m.host = j.value("host", "");
    m.pid = j.value("pid", int64_t{0});
    m.rank = j.value("rank", -1);
    m.localRank = j.value("local_rank", -1);
    m.worldSize = j.value("world_size", -1);
    m.commandLine = j.value("command_line", "");
    m.executable = j.value("executable", "");
    if (j.contains("metadata")) m.metadata = j.at("metadata").get<std::map<std::string, std::string>>();
    if (j.contains("layout")) m.layout = j.at("layout").get<std::map<std::string, int64_t>>();
    return m;
}

void readChunks(const std::string& data, const std::string& where, Recording& r) {
    size_t pos = 0;
    while (pos < data.size()) {
        ChunkHeader h;
        if (data.size() - pos < sizeof(h) ||
            (std::memcpy(&h, data.data() + pos, sizeof(h)), data.size() - pos - sizeof(h) < h.bytes)) {
            r.truncated = true;  // the writer was killed mid-chunk
            return;
        }
        PayloadReader in(data.data() + pos + sizeof(h), static_cast<size_t>(h.bytes), where);
        pos += sizeof(h) + static_cast<size_t>(h.bytes);
        switch (h.tag) {
            case kOrigin:
                r.hasOrigin = true;
                r.originSourceNs = in.get<int64_t>();
                r.originUtcNs = in.get<int64_t>();
                break;
            case kGpu: {
                GpuInfo g;
                g.id = in.get<uint32_t>();
                g.smCount = in.get<int32_t>();
                g.computeMajor = in.get<int32_t>();
                g.computeMinor = in.get<int32_t>();
                g.totalMemory = in.get<uint64_t>();
                g.name = in.text();
                g.busLocation = in.text();
                g.uuid = in.text();
                r.gpus.push_back(std::move(g));
                break;
            }
            case kString: {
                const uint32_t id = in.get<uint32_t>();
                if (id != r.strings.size())
                    throw std::runtime_error(where + ": string " + std::to_string(id) + " out of order");
                r.strings.push_back(in.rest());
                break;
            }
            case kApiName: {
                const auto kind = static_cast<ApiKind>(in.get<uint32_t>());
                const uint32_t cbid = in.get<uint32_t>();
                r.apiNames[{kind, cbid}] = in.rest();
                break;
            }
            case kOwnThread: r.ownThreads.push_back(in.get<uint32_t>()); break;
            case kBuffer: {
                RecordedBuffer b;
                b.validBytes = static_cast<size_t>(in.get<uint64_t>());
                const uint32_t records = in.get<uint32_t>(), patches = in.get<uint32_t>();
                b.recordOffsets.resize(records);
                for (auto& o : b.recordOffsets) o = in.get<uint32_t>();
                b.patches.resize(patches);
                for (auto& p : b.patches) {
                    p.fieldOffset = in.get<uint32_t>();
                    p.stringId = in.get<uint32_t>();
                }
                b.words.assign((b.validBytes + 7) / 8, 0);
                std::memcpy(b.words.data(), in.take(b.validBytes), b.validBytes);
                for (uint32_t o : b.recordOffsets)
                    if (o >= b.validBytes) throw std::runtime_error(where + ": a record offset lies past its buffer");
                for (const auto& p : b.patches)
                    if (p.fieldOffset + sizeof(void*) > b.validBytes || p.stringId >= r.strings.size())
                        throw std::runtime_error(where + ": a string pointer lies past its buffer or names no string");
                r.buffers.push_back(std::move(b));
                break;
            }
            default: break;  // a newer writer's chunk: skipped
        }
    }
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

Recording readRecording(const std::string& directory) {
    Recording r;
    r.directory = directory;
    const std::string manifestPath = directory + "/" + kManifestFile;
    std::ifstream in(manifestPath);
    if (!in) throw std::runtime_error(manifestPath + ": cannot open (not a CUPTI recording folder?)");
    const nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
    if (j.is_discarded()) throw std::runtime_error(manifestPath + ": not valid JSON");
    r.manifest = manifestOf(j, manifestPath);
    std::error_code ec;
    std::string activity = directory + "/" + kActivityFile;
    if (!fs::exists(activity, ec) && fs::exists(activity + ".gz", ec)) activity += ".gz";
    readChunks(readWhole(activity), activity, r);
    if (!r.hasOrigin && !r.buffers.empty())
        throw std::runtime_error(activity + ": buffers without the capture's time 0");
    return r;
}

std::vector<std::string> findRecordings(const std::string& directory) {
    std::vector<std::string> found;
    std::error_code ec;
    if (fs::exists(fs::path(directory) / kManifestFile, ec)) return {directory};
    for (const auto& e : fs::directory_iterator(directory, ec))
        if (e.is_directory() && fs::exists(e.path() / kManifestFile, ec)) found.push_back(e.path().string());
    std::sort(found.begin(), found.end());
    return found;
}

}  // namespace osc::agent::recording
