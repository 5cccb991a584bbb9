// Writing a model's ranks to files (one file, or a directory of one file per
// rank), apart from the models so that users of the in-memory generators
// (tests, the GUI) do not link the SQLite writer.
#include "analyzer/capture/capture_error.h"
#include "analyzer/synth/rank_files.h"
#include "analyzer/synth/workload_synth.h"

#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_set>

namespace fs = std::filesystem;

namespace osc::synth {
namespace {

// Ranks up to this many are streamed into open files as they are generated.
constexpr int kStreamedRanksMax = 64;

// Rows of one rank, kept in generation order per kind; replaying them keeps
// each kind's order, which is all a capture file records. Rows carry names as
// views into the generator's temporaries, so the buffer keeps its own copies.
class BufferedRows final : public RowSink {
public:
    void addKernel(const KernelRow& row) override {
        auto r = row;
        r.demangledName = own(r.demangledName);
        r.shortName = own(r.shortName);
        kernels_.push_back(r);
    }
    void addCopy(const CopyRow& row) override { copies_.push_back(row); }
    void addMemset(const MemsetRow& row) override { memsets_.push_back(row); }
    void addSync(const SyncRow& row) override { syncs_.push_back(row); }
    void addApiCall(const ApiCallRow& row) override {
        auto r = row;
        r.name = own(r.name);
        apiCalls_.push_back(r);
    }
    void addRange(const RangeRow& row) override {
        auto r = row;
        r.text = own(r.text);
        r.domain = own(r.domain);
        ranges_.push_back(r);
    }
    void addCollective(const CollectiveRow& row) override {
        auto r = row;
        r.func = own(r.func);
        r.datatype = own(r.datatype);
        r.algo = own(r.algo);
        r.proto = own(r.proto);
        collectives_.push_back(r);
    }
    void replayInto(RowSink& sink) const {
        for (const auto& r : kernels_) sink.addKernel(r);
        for (const auto& r : copies_) sink.addCopy(r);
        for (const auto& r : memsets_) sink.addMemset(r);
        for (const auto& r : syncs_) sink.addSync(r);
        for (const auto& r : apiCalls_) sink.addApiCall(r);
        for (const auto& r : ranges_) sink.addRange(r);
        for (const auto& r : collectives_) sink.addCollective(r);
    }

private:
    std::string_view own(std::string_view s) { return *names_.emplace(s).first; }
    std::unordered_set<std::string> names_;  // node-based: views stay valid
    std::vector<KernelRow> kernels_;
    std::vector<CopyRow> copies_;
    std::vector<MemsetRow> memsets_;
    std::vector<SyncRow> syncs_;
    std::vector<ApiCallRow> apiCalls_;
    std::vector<RangeRow> ranges_;
    std::vector<CollectiveRow> collectives_;
};

}  // namespace

std::vector<std::string> writeRankFiles(int ranks, const std::string& host, int64_t basePid, const std::string& out,
                                        bool overwrite, const IdentityOf& identity, const Generator& generate) {
    std::vector<std::string> paths;
    std::error_code ec;
    if (ranks == 1) {
        if (fs::is_directory(out, ec))
            throw CaptureError(out, "is a directory; give a file name for a one-rank capture");
        paths.push_back(out);
    } else {
        if (fs::exists(out, ec) && !fs::is_directory(out, ec))
            throw CaptureError(out, "exists and is not a directory; " + std::to_string(ranks) +
                                        " ranks are written as one file per rank in a directory");
        fs::create_directories(out, ec);
        if (ec) throw CaptureError(out, "cannot create directory: " + ec.message());
        for (int r = 0; r < ranks; ++r) paths.push_back((fs::path(out) / rankFileName(host, basePid + r, r)).string());
    }
    // Check every target first so a refusal leaves nothing half-written.
    if (!overwrite)
        for (const auto& p : paths)
            if (fs::exists(p, ec)) throw CaptureError(p, "already exists (use --force to replace it)");

    if (ranks <= kStreamedRanksMax) {
        std::vector<std::unique_ptr<ProcessFile>> files;
        std::vector<RowSink*> sinks;
        for (int r = 0; r < ranks; ++r) {
            files.push_back(std::make_unique<ProcessFile>(paths[static_cast<size_t>(r)], identity(r), overwrite));
            sinks.push_back(&files.back()->rows());
        }
        generate(sinks);
        for (auto& f : files) f->close();
        return paths;
    }
    // Many ranks: an open writer costs megabytes (SQLite cache, WAL), so
    // thousands at once exhaust memory. Keep the rows instead (small per rank
    // at these scales) and write the files one at a time.
    std::vector<BufferedRows> buffered(static_cast<size_t>(ranks));
    std::vector<RowSink*> sinks;
    for (auto& b : buffered) sinks.push_back(&b);
    generate(sinks);
    for (int r = 0; r < ranks; ++r) {
        ProcessFile file(paths[static_cast<size_t>(r)], identity(r), overwrite);
        buffered[static_cast<size_t>(r)].replayInto(file.rows());
        file.close();
        buffered[static_cast<size_t>(r)] = BufferedRows{};
    }
    return paths;
}

std::vector<std::string> writeWorkload(const WorkloadSpec& spec, const std::string& out, bool overwrite) {
    spec.validate();
    return writeRankFiles(
        spec.ranks, spec.host, spec.basePid, out, overwrite, [&](int r) { return workloadIdentity(spec, r); },
        [&](const std::vector<RowSink*>& sinks) { generateWorkload(spec, sinks); });
}

}  // namespace osc::synth
