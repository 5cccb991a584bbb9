#include "analyzer/job/file_workers.h"

#include "analyzer/load/load_capture.h"

#include "analyzer/partial/partial_format.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <ostream>
#include <stdexcept>
#include <thread>

namespace osc::job {
namespace {

// Copies bytes [offset, offset + length) of a scratch file to `out`.
void copyRange(const crossrank::ScratchFile& from, uint64_t offset, uint64_t length, std::ostream& out) {
    std::vector<char> buffer(1 << 16);
    while (length > 0) {
        const auto n = static_cast<size_t>(std::min<uint64_t>(length, buffer.size()));
        from.read(offset, buffer.data(), n);
        out.write(buffer.data(), static_cast<std::streamsize>(n));
        offset += n;
        length -= n;
    }
}

}  // namespace

AnalyzedFiles::AnalyzedFiles(const std::vector<std::string>& paths, const AnalysisSettings& settings,
                             const FileWorkerOptions& options)
    : settings_(settings), files_(captureFiles(paths)) {
    const size_t n = files_.size();
    sections_.resize(n);
    int jobs = options.jobs > 0 ? options.jobs : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    jobs = std::max(1, std::min<int>(jobs, static_cast<int>(n)));
    for (int w = 0; w < jobs; ++w) scratch_.push_back(std::make_unique<crossrank::ScratchFile>());
    LoadOptions load = options.load;
    load.progress = nullptr;  // per-file fractions from several threads mean nothing together
    std::vector<std::exception_ptr> errors(n);
    std::atomic<size_t> next{0}, done{0};
    std::atomic<bool> failed{false};
    std::mutex progressMutex;
    auto work = [&](size_t worker) {
        crossrank::ScratchFile& scratch = *scratch_[worker];
        for (;;) {
            if (failed.load() || load.cancelled()) return;
            const size_t i = next.fetch_add(1);
            if (i >= n) return;
            try {
                const partial::FilePart part = analyzeCaptureFile(files_[i], settings_, options.reader, load);
                Section& s = sections_[i];
                s.worker = worker;
                s.offset = scratch.size();
                {
                    crossrank::ScratchWriteBuf buf(scratch);
                    std::ostream out(&buf);
                    s.devices = partial::writeFileSection(out, part);
                    out.flush();
                    buf.pubsync();
                }
                s.length = scratch.size() - s.offset;
            } catch (...) {
                errors[i] = std::current_exception();
                failed.store(true);
                return;
            }
            const size_t d = done.fetch_add(1) + 1;
            if (options.progress) {
                std::lock_guard lock(progressMutex);
                options.progress(d, n, files_[i]);
            }
        }
    };
    if (jobs <= 1) {
        work(0);
    } else {
        std::vector<std::thread> threads;
        for (int t = 0; t < jobs; ++t) threads.emplace_back(work, static_cast<size_t>(t));
        for (auto& t : threads) t.join();
    }
    // Workers take files in order, so every file before a failing one was
    // read too: the first error in order is the one loadCaptures would throw.
    for (const auto& e : errors)
        if (e) std::rethrow_exception(e);
    if (load.cancelled()) throw LoadCancelled{};
}

AnalyzedFiles::~AnalyzedFiles() = default;

void AnalyzedFiles::addTo(partial::PartSet& set, const std::vector<std::string>& inputs) const {
    set.setHeader(settings_, inputs);
    for (size_t i = 0; i < sections_.size(); ++i) {
        const Section& s = sections_[i];
        set.addSections(*scratch_[s.worker], s.offset, s.length, files_[i]);
    }
}

void AnalyzedFiles::writePartial(std::ostream& out, const std::vector<std::string>& inputs,
                                 const std::string& generator) const {
    partial::writePartialHeader(out, {settings_, inputs, generator});
    size_t devices = 0;
    for (const Section& s : sections_) {
        copyRange(*scratch_[s.worker], s.offset, s.length, out);
        devices += s.devices;
    }
    partial::writePartialTrailer(out, sections_.size(), devices);
}

}  // namespace osc::job
