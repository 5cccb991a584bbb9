#include "analyzer/job/file_workers.h"

#include "analyzer/capture/capture_error.h"
#include "analyzer/load/load_capture.h"
#include "analyzer/partial/device_codec.h"
#include "analyzer/partial/partial_format.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <condition_variable>
#include <exception>
#include <fstream>
#include <mutex>
#include <ostream>
#include <stdexcept>
#include <thread>

namespace osc::job {
namespace {

// A file part, whole; in blocks (by the character, istreambuf_iterator, it
// was a fifth of a 64-rank merge on Dask, issue 44).
void readPart(const std::string& path, std::string& bytes) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw CaptureError(path, "cannot open this part");
    std::array<char, 1 << 16> block;
    while (in.read(block.data(), block.size()) || in.gcount() > 0)
        bytes.append(block.data(), static_cast<size_t>(in.gcount()));
    if (in.bad()) throw CaptureError(path, "cannot read this part");
}

}  // namespace

AnalyzedFiles::AnalyzedFiles(const std::vector<std::string>& paths, const AnalysisSettings& settings,
                             const FileWorkerOptions& options)
    : settings_(settings), files_(options.partsGiven ? paths : captureFiles(paths)) {
    analyze(options, nullptr);
}

AnalyzedFiles::AnalyzedFiles(const std::vector<std::string>& paths, const AnalysisSettings& settings,
                             const FileWorkerOptions& options, partial::PartSet& set,
                             const std::vector<std::string>& inputs)
    : settings_(settings), files_(options.partsGiven ? paths : captureFiles(paths)) {
    set.setHeader(settings_, inputs);
    analyze(options, &set);
}

void AnalyzedFiles::analyze(const FileWorkerOptions& options, partial::PartSet* set) {
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
    // Without a set to hold them, the devices would be lost.
    const bool keep = options.keepDevices && options.partsGiven && set;
    std::vector<std::exception_ptr> errors(n);
    std::atomic<size_t> next{0}, done{0};
    std::atomic<bool> failed{false};
    std::mutex progressMutex;
    std::vector<double> readShare(n, 0.0);
    // Which files are done (or failed), and how many workers still run: what
    // the set's filling waits on.
    std::mutex doneMutex;
    std::condition_variable doneChanged;
    std::vector<char> finished(n, 0);
    int running = jobs;
    const auto finish = [&](size_t i) {
        {
            std::lock_guard lock(doneMutex);
            finished[i] = 1;
        }
        doneChanged.notify_all();
    };
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
                Section& s = sections_[i];
                bytes.clear();
                partial::FilePart part;
                if (options.partsGiven) {
                    readPart(files_[i], bytes);
                    part = partial::decodeFilePart(bytes.data(), bytes.size(), files_[i].c_str(),
                                                   keep ? nullptr : &s.devices);
                } else {
                    LoadOptions one = load;
                    if (options.reading)
                        one.progress = [&read, i](double fraction, std::string_view) { read(i, fraction); };
                    part = analyzeCaptureFile(files_[i], settings_, options.reader, one);
                    partial::encodeFilePart(part, bytes, &s.devices);
                }
                if (!keep) {
                    s.worker = worker;
                    s.length = bytes.size();
                    s.offset = scratch.append(bytes.data(), bytes.size());
                }
                // What the set keeps of each device, made here: the thread
                // filling it then reads no device back.
                if (set) s.ready = std::make_unique<partial::PreparedPart>(partial::preparePart(std::move(part), keep));
            } catch (...) {
                errors[i] = std::current_exception();
                failed.store(true);
                finish(i);
                return;
            }
            finish(i);
            const size_t d = done.fetch_add(1) + 1;
            if (options.reading) read(i, 1.0);
            if (options.progress) {
                std::lock_guard lock(progressMutex);
                options.progress(d, n, files_[i]);
            }
        }
    };
    const auto worker = [&](size_t w) {
        work(w);
        {
            std::lock_guard lock(doneMutex);
            --running;
        }
        doneChanged.notify_all();
    };
    // The set is filled in file order on this thread while the workers go
    // on: alone after them, it was a third of a job's time with one core idle.
    std::exception_ptr adding;
    size_t added = 0;
    const auto fill = [&] {
        for (; set && !adding && added < n; ++added) {
            {
                std::unique_lock lock(doneMutex);
                doneChanged.wait(lock, [&] { return finished[added] || running == 0; });
                if (!finished[added]) return;  // cancelled, or a file before it failed
            }
            if (errors[added]) return;
            try {
                Section& s = sections_[added];
                const partial::PartSet::EncodedDevices encoded{s.devices, scratch_[s.worker].get(), s.offset};
                set->addPrepared(s.ready->head, std::move(s.ready->devices), encoded);
                s.ready.reset();
            } catch (...) {
                adding = std::current_exception();  // thrown once every file is read, as before
            }
        }
    };
    if (jobs <= 1) {
        worker(0);
        fill();
    } else {
        std::vector<std::thread> threads;
        for (int t = 0; t < jobs; ++t) threads.emplace_back(worker, static_cast<size_t>(t));
        try {
            fill();
        } catch (...) {
            adding = std::current_exception();
        }
        for (auto& t : threads) t.join();
    }
    // Workers take files in order, so every file before a failing one was
    // read too: the first error in order is the one loadCaptures would throw.
    for (const auto& e : errors)
        if (e) std::rethrow_exception(e);
    if (load.cancelled()) throw LoadCancelled{};
    if (adding) std::rethrow_exception(adding);
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
    for (size_t i = 0; i < sections_.size(); ++i) addTo(set, i);
}

void AnalyzedFiles::addTo(partial::PartSet& set, size_t file) const {
    const Section& s = sections_[file];
    // The devices' records stay where the worker wrote them.
    const partial::PartSet::EncodedDevices encoded{s.devices, scratch_[s.worker].get(), s.offset};
    set.addFilePart(part(file), encoded);
}

void AnalyzedFiles::writePartial(std::ostream& out, const std::vector<std::string>& inputs,
                                 const std::string& generator) const {
    partial::writePartialHeader(out, {settings_, inputs, generator});
    size_t devices = 0;
    for (size_t i = 0; i < sections_.size(); ++i) devices += partial::writeFileSection(out, part(i));
    partial::writePartialTrailer(out, sections_.size(), devices);
}

}  // namespace osc::job
