#include "analyzer/job/file_workers.h"

#include "analyzer/load/load_capture.h"
#include "analyzer/partial/device_codec.h"
#include "analyzer/partial/partial_format.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <ostream>
#include <stdexcept>
#include <thread>

namespace osc::job {

AnalyzedFiles::AnalyzedFiles(const std::vector<std::string>& paths, const AnalysisSettings& settings,
                             const FileWorkerOptions& options)
    : settings_(settings), files_(captureFiles(paths)) {
    const size_t n = files_.size();
    sections_.resize(n);
    int jobs = options.jobs > 0 ? options.jobs : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    jobs = std::max(1, std::min<int>(jobs, static_cast<int>(n)));
    for (int w = 0; w < jobs; ++w) scratch_.push_back(std::make_unique<crossrank::ScratchFile>());
    LoadOptions load = options.load;
    load.progress = nullptr;  // a file's fraction alone means nothing among several: `reading` sums them
    // The cores are the workers': a reader that could use several for one
    // file (a PyTorch trace) gets its share of them.
    if (load.threads <= 0)
        load.threads = std::max(1, static_cast<int>(std::max(1u, std::thread::hardware_concurrency())) / jobs);
    std::vector<std::exception_ptr> errors(n);
    std::atomic<size_t> next{0}, done{0};
    std::atomic<bool> failed{false};
    std::mutex progressMutex;
    std::vector<double> readShare(n, 0.0);
    auto read = [&](size_t i, double fraction) {
        std::lock_guard lock(progressMutex);
        readShare[i] = fraction;
        double sum = 0;
        for (double x : readShare) sum += x;
        options.reading(sum / static_cast<double>(n));
    };
    auto work = [&](size_t worker) {
        crossrank::ScratchFile& scratch = *scratch_[worker];
        std::string bytes;
        for (;;) {
            if (failed.load() || load.cancelled()) return;
            const size_t i = next.fetch_add(1);
            if (i >= n) return;
            try {
                LoadOptions one = load;
                if (options.reading)
                    one.progress = [&read, i](double fraction, std::string_view) { read(i, fraction); };
                const partial::FilePart part = analyzeCaptureFile(files_[i], settings_, options.reader, one);
                bytes.clear();
                partial::encodeFilePart(part, bytes);
                Section& s = sections_[i];
                s.worker = worker;
                s.devices = part.analysis.devices.size();
                s.length = bytes.size();
                s.offset = scratch.append(bytes.data(), bytes.size());
            } catch (...) {
                errors[i] = std::current_exception();
                failed.store(true);
                return;
            }
            const size_t d = done.fetch_add(1) + 1;
            if (options.reading) read(i, 1.0);
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

partial::FilePart AnalyzedFiles::part(size_t file) const {
    const Section& s = sections_[file];
    std::string bytes(s.length, '\0');
    scratch_[s.worker]->read(s.offset, bytes.data(), bytes.size());
    return partial::decodeFilePart(bytes.data(), bytes.size(), files_[file].c_str());
}

void AnalyzedFiles::addTo(partial::PartSet& set, const std::vector<std::string>& inputs) const {
    set.setHeader(settings_, inputs);
    for (size_t i = 0; i < sections_.size(); ++i) set.addFilePart(part(i));
}

void AnalyzedFiles::writePartial(std::ostream& out, const std::vector<std::string>& inputs,
                                 const std::string& generator) const {
    partial::writePartialHeader(out, {settings_, inputs, generator});
    size_t devices = 0;
    for (size_t i = 0; i < sections_.size(); ++i) devices += partial::writeFileSection(out, part(i));
    partial::writePartialTrailer(out, sections_.size(), devices);
}

}  // namespace osc::job
