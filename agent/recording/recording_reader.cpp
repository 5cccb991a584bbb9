// Reading a recording folder; kept apart from the writer so that the agent,
// which only writes, links no zlib.
#include "agent/recording/recording_format.h"

#include "agent/recording/recording_chunks.h"
#include "analyzer/capture/capture_error.h"

#include <zlib.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

namespace osc::agent::recording {
namespace {

namespace fs = std::filesystem;
using namespace chunks;

// Reads one chunk's payload; throws on a chunk that claims more than it has.
class PayloadReader {
public:
    PayloadReader(const char* data, size_t size, const std::string& where)
        : p_(data), end_(data + size), where_(where) {}
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
        if (static_cast<size_t>(end_ - p_) < n) throw CaptureError(where_, "a chunk is shorter than its fields");
    }
    const char* p_;
    const char* end_;
    std::string where_;
};

std::string readWhole(const std::string& path) {
    gzFile gz = ::gzopen(path.c_str(), "rb");  // reads plain files too
    if (!gz) throw CaptureError(path, std::string("cannot open: ") + std::strerror(errno));
    std::string data;
    char chunk[1 << 16];
    for (;;) {
        const int n = ::gzread(gz, chunk, sizeof(chunk));
        if (n < 0) {
            int code = 0;
            const std::string why = ::gzerror(gz, &code);
            ::gzclose(gz);
            throw CaptureError(path, "cannot read: " + why);
        }
        if (n == 0) break;
        data.append(chunk, static_cast<size_t>(n));
    }
    ::gzclose(gz);
    return data;
}

Manifest manifestOf(const nlohmann::json& j, const std::string& where) {
    if (!j.is_object() || j.value("format", "") != kFormatName)
        throw CaptureError(where, "not an overlapscope CUPTI recording manifest");
    Manifest m;
    m.formatVersion = j.value("format_version", 0);
    if (m.formatVersion != kFormatVersion)
        throw CaptureError(where, "recording format " + std::to_string(m.formatVersion) + ", this build reads format " +
                                      std::to_string(kFormatVersion));
    m.fabricated = j.value("fabricated", false);
    m.who.host = j.value("host", "");
    m.who.pid = j.value("pid", int64_t{0});
    m.who.rank = j.value("rank", -1);
    m.who.localRank = j.value("local_rank", -1);
    m.who.worldSize = j.value("world_size", -1);
    m.who.commandLine = j.value("command_line", "");
    m.who.executable = j.value("executable", "");
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
                if (id != r.strings.size()) throw CaptureError(where, "string " + std::to_string(id) + " out of order");
                r.strings.push_back(in.rest());
                break;
            }
            case kApiName: {
                const auto kind = static_cast<ApiKind>(in.get<uint32_t>());
                const uint32_t cbid = in.get<uint32_t>();
                r.apiNames[{kind, cbid}] = in.rest();
                break;
            }
            case kOwnThread:
                r.ownThreads.push_back(in.get<uint32_t>());
                break;
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
                    if (o >= b.validBytes) throw CaptureError(where, "a record offset lies past its buffer");
                for (const auto& p : b.patches)
                    if (p.fieldOffset + sizeof(void*) > b.validBytes || p.stringId >= r.strings.size())
                        throw CaptureError(where, "a string pointer lies past its buffer or names no string");
                r.buffers.push_back(std::move(b));
                break;
            }
            default:
                break;  // a newer writer's chunk: skipped
        }
    }
}

}  // namespace

Recording readRecording(const std::string& directory) {
    Recording r;
    r.directory = directory;
    const std::string manifestPath = directory + "/" + kManifestFile;
    std::ifstream in(manifestPath);
    if (!in) throw CaptureError(manifestPath, "cannot open (not a CUPTI recording folder?)");
    const nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
    if (j.is_discarded()) throw CaptureError(manifestPath, "not valid JSON");
    r.manifest = manifestOf(j, manifestPath);
    std::error_code ec;
    std::string activity = directory + "/" + kActivityFile;
    if (!fs::exists(activity, ec) && fs::exists(activity + ".gz", ec)) activity += ".gz";
    readChunks(readWhole(activity), activity, r);
    if (!r.hasOrigin && !r.buffers.empty()) throw CaptureError(activity, "buffers without the capture's time 0");
    return r;
}

std::vector<std::string> findRecordings(const std::string& directory) {
    std::vector<std::string> found;
    std::error_code ec;
    if (fs::exists(fs::path(directory) / kManifestFile, ec)) return {directory};
    for (const auto& e : fs::directory_iterator(directory, ec))
        if (e.is_directory(ec) && fs::exists(e.path() / kManifestFile, ec)) found.push_back(e.path().string());
    std::sort(found.begin(), found.end());
    return found;
}

}  // namespace osc::agent::recording
