// Many capture files (one per rank, thousands of them) analysed on worker
// threads with memory bounded by the largest file and the number of
// workers, not by the job: each file is loaded, analysed per device and
// freed on one of `jobs` threads (capture_file.h), and what it leaves (its
// FilePart, in analyzer/partial/device_codec.h's bytes: writing and parsing
// JSON was most of the per-file time) goes to the worker's scratch file. The cross-rank part then merges those sections exactly as
// `overlapscope merge` merges partial files, so a job analysed in one
// process, on several threads, or as partials on many machines gives the
// same report as analyze(loadCaptures(paths)).
#pragma once

#include "analyzer/crossrank/byte_io.h"
#include "analyzer/job/capture_file.h"
#include "analyzer/load/load_capture.h"
#include "analyzer/metrics/analysis.h"
#include "analyzer/partial/device_codec.h"
#include "analyzer/partial/part_set.h"
#include "analyzer/partial/prepared_device.h"

#include <functional>
#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

namespace osc::job {

struct FileWorkerOptions {
    int jobs = 0;                            // worker threads; 0 = the machine's cores (at most the file count)
    CaptureReader reader = readCaptureFile;  // how a file is read
    LoadOptions load;                        // launchDetails and cancel apply; its progress is not called
    // After each file: files done, files in all, the file just done.
    std::function<void(size_t done, size_t total, const std::string& file)> progress;
    // While files are read: the share of all of them read so far, within
    // files too (the readers' fractions summed over the workers), so a line
    // advances while a big file is read. Called from the workers, one at a time.
    std::function<void(double fraction)> reading;
    // The files are file parts (device_codec's bytes, as Dask's tasks send
    // them: overlapscope.distributed), read and decoded here, not analysed.
    bool partsGiven = false;
    // With partsGiven, where the set's caller keeps every device
    // (mergedAnalysis): the set holds them as decoded, not copied into a
    // scratch file and decoded again (1,024 Dask parts' merge: 0.064 ->
    // 0.055 s). Captures' devices are not kept as analysed: 1,024 captures'
    // report went 0.85 -> 0.93 s that way. Only with the constructor that fills a
    // set, after which this object holds no parts (part(), addTo and
    // writePartial are not for it).
    bool keepDevices = false;
};

// The per-file half of the analysis, kept on disk in file order.
class AnalyzedFiles {
public:
    // Throws CaptureError (the first failing file in order) or LoadCancelled.
    AnalyzedFiles(const std::vector<std::string>& paths, const AnalysisSettings& settings,
                  const FileWorkerOptions& options = {});
    // The same, and meanwhile, on this thread, each file's sections added to
    // `set` (as addTo does) in file order as soon as the files up to it are
    // done. This object must outlive `set`.
    AnalyzedFiles(const std::vector<std::string>& paths, const AnalysisSettings& settings,
                  const FileWorkerOptions& options, partial::PartSet& set, const std::vector<std::string>& inputs);
    ~AnalyzedFiles();

    const std::vector<std::string>& files() const { return files_; }
    const AnalysisSettings& settings() const { return settings_; }
    // The files' sections for the merge; `inputs` are what the user named.
    // This object must outlive `set`.
    void addTo(partial::PartSet& set, const std::vector<std::string>& inputs) const;
    // A partial result file (analyzer/partial/partial_format.h).
    void writePartial(std::ostream& out, const std::vector<std::string>& inputs, const std::string& generator) const;
    // One file's part, read back.
    partial::FilePart part(size_t file) const;

private:
    void analyze(const FileWorkerOptions& options, partial::PartSet* set);
    void addTo(partial::PartSet& set, size_t file) const;

    struct Section {
        size_t worker = 0;
        uint64_t offset = 0, length = 0;
        std::vector<partial::DeviceSpan> devices;  // each device's record, from `offset`
        // Made by the worker, taken by the thread filling the set.
        std::unique_ptr<partial::PreparedPart> ready;
    };
    AnalysisSettings settings_;
    std::vector<std::string> files_;
    std::vector<std::unique_ptr<crossrank::ScratchFile>> scratch_;  // one per worker
    std::vector<Section> sections_;                                 // per file
};

}  // namespace osc::job
