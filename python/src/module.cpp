// overlapscope._core: the analyzer behind the Python package. Everything here
// takes plain values (paths, a settings dict) and returns handles whose
// tables overlapscope/_frames.py turns into DataFrames; the package's
// public API and its docstrings are in overlapscope/*.py.
#include "analyzer/capture/capture_error.h"
#include "analyzer/crossrank/analyze.h"
#include "analyzer/hang/hang.h"
#include "analyzer/hang/hang_inputs.h"
#include "analyzer/hang/hang_output.h"
#include "analyzer/job/arriving_parts.h"
#include "analyzer/job/job.h"
#include "analyzer/load/load_capture.h"
#include "analyzer/output/safe_output.h"
#include "analyzer/partial/device_codec.h"
#include "analyzer/report/diff.h"
#include "analyzer/report/report_json.h"
#include "analyzer/report/report_markdown.h"
#include "analyzer/report/report_text.h"
#include "analyzer/whatif/whatif.h"
#include "analyzer/whatif/whatif_report.h"
#include "python/src/background_job.h"
#include "python/src/capture_tables.h"
#include "python/src/columns.h"
#include "python/src/hta_engine.h"
#include "python/src/hta_head.h"
#include "python/src/import_gate.h"
#include "python/src/python_text.h"
#include "python/src/report_tables.h"

#include <pybind11/stl.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <regex>
#include <thread>
#include <unordered_set>

namespace osc::python {
namespace {

// The analysis settings of overlapscope/_options.py (already checked there).
AnalysisSettings settingsFrom(const py::dict& d) {
    AnalysisSettings s;
    if (d.contains("comm_kernel")) s.commKernelPatterns = d["comm_kernel"].cast<std::vector<std::string>>();
    if (d.contains("comm_copies")) s.commCopies = d["comm_copies"].cast<bool>();
    if (d.contains("step_pattern") && !d["step_pattern"].is_none())
        s.stepPattern = d["step_pattern"].cast<std::string>();
    if (d.contains("align")) s.alignCollectives = d["align"].cast<std::string>() == "collectives";
    if (d.contains("microbatch_pattern") && !d["microbatch_pattern"].is_none())
        s.microbatchPattern = d["microbatch_pattern"].cast<std::string>();
    if (d.contains("pipeline_stages")) s.pipelineStages = d["pipeline_stages"].cast<int>();
    if (d.contains("peak_busbw_gbps") && !d["peak_busbw_gbps"].is_none())
        s.peakBusBwGbps = d["peak_busbw_gbps"].cast<double>();
    return s;
}

// A finished analysis and what it was made from.
struct AnalysisHandle {
    Analysis analysis;
    std::vector<std::string> inputs;  // as the report JSON names them
    std::vector<std::string> warnings;

    report::ReportOptions options() const {
        report::ReportOptions o;
        o.inputs = inputs;
        o.toolVersion = OSC_VERSION;
        return o;
    }
};

struct CaptureHandle {
    Capture capture;
    std::vector<std::string> paths;
    std::vector<std::string> warnings;
};

// An analysis made by `make` on a background thread (the GIL released, the
// progress shown), for a request of these settings.
std::shared_ptr<AnalysisHandle> analysed(
    const py::dict& settings, int jobs, std::optional<bool> align, const py::object& progress,
    const std::function<void(const job::JobRequest&, const job::JobProgress&, AnalysisHandle&)>& make) {
    auto out = std::make_shared<AnalysisHandle>();
    job::JobRequest request;
    request.settings = settingsFrom(settings);
    request.jobs = jobs;
    request.align = align;
    BackgroundJob work;
    work.run([&] { make(request, work.progress(), *out); }, progress);
    out->warnings = work.warnings();
    return out;
}

std::shared_ptr<AnalysisHandle> analyzeJob(const std::vector<std::string>& paths, const py::dict& settings, int jobs,
                                           std::optional<bool> align, const py::object& progress) {
    return analysed(settings, jobs, align, progress,
                    [&](const job::JobRequest& request, const job::JobProgress& p, AnalysisHandle& out) {
                        out.analysis = job::analyzeJob(job::classifyJob(paths), request, p, &out.inputs);
                    });
}

// overlapscope.distributed's parts merged as they come (job::ArrivingParts);
// the lock keeps two Python threads from filling it at once.
struct ArrivingPartsHandle {
    ArrivingPartsHandle(const py::dict& settings, std::vector<std::string> inputs)
        : parts(settingsFrom(settings), std::move(inputs)) {}
    job::ArrivingParts parts;
    std::mutex lock;
};

// `named`: the inputs the user gave, for the report.
std::shared_ptr<AnalysisHandle> arrivedAnalysis(ArrivingPartsHandle& h, size_t count, const py::dict& settings,
                                                int jobs, std::optional<bool> align, const py::object& progress,
                                                const std::vector<std::string>& named) {
    return analysed(settings, jobs, align, progress,
                    [&](const job::JobRequest& request, const job::JobProgress& p, AnalysisHandle& out) {
                        std::lock_guard hold(h.lock);
                        out.analysis = h.parts.analysis(count, request, p);
                        out.inputs = named;
                    });
}

std::shared_ptr<CaptureHandle> loadTrace(const std::vector<std::string>& paths, bool launchDetails,
                                         const py::object& progress) {
    auto out = std::make_shared<CaptureHandle>();
    out->paths = paths;
    BackgroundJob work;
    work.run(
        [&] {
            LoadOptions options;
            options.launchDetails = launchDetails;
            options.cancel = work.cancelFlag();
            options.progress = [&work](double fraction, std::string_view stage) { work.loading(fraction, stage); };
            out->capture = loadCaptures(paths, options);
        },
        progress);
    out->warnings = out->capture.warnings;
    return out;
}

std::shared_ptr<AnalysisHandle> analyzeCapture(const CaptureHandle& c, const py::dict& settings,
                                               const py::object& progress) {
    auto out = std::make_shared<AnalysisHandle>();
    out->inputs = c.paths;
    const AnalysisSettings s = settingsFrom(settings);
    BackgroundJob work;
    work.run(
        [&] {
            work.status("analyzing");
            out->analysis = analyze(c.capture, s);
        },
        progress);
    out->warnings = out->analysis.warnings;
    return out;
}

whatif::WhatIfSettings whatIfSettingsFrom(const py::dict& d) {
    whatif::WhatIfSettings s;
    s.bucketMb = d["bucket_mb"].cast<std::vector<double>>();
    s.rule =
        d["bucket_rule"].cast<std::string>() == "at-most" ? whatif::BucketRule::AtMost : whatif::BucketRule::AtLeast;
    s.readiness =
        d["readiness"].cast<std::string>() == "time" ? whatif::ReadinessMode::Time : whatif::ReadinessMode::Kernels;
    s.latencies = d["latencies"].cast<bool>();
    s.jointRanks = d["joint_ranks"].cast<bool>();
    s.observedMb = d["observed_mb"].cast<std::optional<double>>();
    s.alphaNs = d["alpha_ns"].cast<std::optional<double>>();
    s.gradMb = d["grad_mb"].cast<std::optional<double>>();
    s.backwardPattern = d["backward_pattern"].cast<std::string>();
    return s;
}

// `overlapscope whatif`: the JSON and text documents, as the CLI writes them.
py::dict whatIf(const CaptureHandle& c, const py::dict& settings, const py::dict& whatifSettings, bool summary,
                const std::vector<std::string>& inputs, const py::object& progress) {
    const AnalysisSettings s = settingsFrom(settings);
    const whatif::WhatIfSettings w = whatIfSettingsFrom(whatifSettings);
    w.validate();
    whatif::WhatIfResult result;
    BackgroundJob work;
    work.run(
        [&] {
            work.status("analyzing");
            const Analysis analysis = analyze(c.capture, s);
            work.addWarnings(analysis.warnings);
            work.status("replaying " + std::to_string(w.bucketMb.size()) + " bucket sizes");
            result = whatif::runWhatIf(c.capture, analysis, w);
        },
        progress);
    whatif::ReportOptions options;
    options.inputs = inputs;
    options.summary = summary;
    py::dict out;
    out["json"] = whatif::formatWhatIfJson(result, options);
    out["text"] = text(whatif::formatWhatIfText(result, options));
    std::vector<std::string> warnings = work.warnings();
    for (const auto& warning : result.warnings) warnings.push_back(warning);
    out["warnings"] = warnings;
    return out;
}

// overlapscope.hta.TraceAnalysis: the job's files read on `jobs` threads (a
// capture each: HTA, too, parses ranks on a process pool), each seen as HTA
// sees it on the thread that read it, and freed then (its rows are the
// peak's bulk); the views are joined at the end.
py::tuple htaLoad(const std::vector<std::string>& paths, int jobs, const HtaOptions& options,
                  const std::shared_ptr<ImportGate>& gate, const py::object& progress) {
    const std::vector<std::string> files = captureFiles(paths);
    std::shared_ptr<HtaTrace> trace;
    BackgroundJob work;
    work.run(
        [&] {
            const size_t threads = std::min<size_t>(
                files.size(), jobs > 0 ? static_cast<size_t>(jobs) : std::max(1u, std::thread::hardware_concurrency()));
            std::atomic<size_t> next{0};
            std::vector<std::exception_ptr> errors(files.size());
            std::vector<std::vector<std::string>> warnings(files.size()), stepNames(files.size());
            std::vector<HtaCaptureView> views(files.size());
            // A file's view depends on whether the job holds two or more
            // ProfilerStep names: a file that holds two decides it alone;
            // one holding fewer waits for the others (kept until then).
            std::vector<std::optional<Capture>> waiting(files.size());
            // One fraction over all files, advancing within each.
            std::mutex partsMutex;
            std::vector<double> parts(files.size(), 0.0);
            auto advance = [&](size_t i, double fraction, std::string_view stage) {
                const std::lock_guard lock(partsMutex);
                parts[i] = fraction;
                double sum = 0;
                for (double x : parts) sum += x;
                const std::string label = files.size() == 1
                                              ? std::string(stage)
                                              : std::to_string(files.size()) + " files, " + std::string(stage);
                work.loading(sum / static_cast<double>(files.size()), label);
            };
            auto worker = [&] {
                for (size_t i; (i = next.fetch_add(1)) < files.size();) {
                    try {
                        LoadOptions o;
                        o.launchDetails = false;
                        o.cancel = work.cancelFlag();
                        o.progress = [&, i](double fraction, std::string_view stage) { advance(i, fraction, stage); };
                        Capture capture = loadCaptures({files[i]}, o);
                        warnings[i] = capture.warnings;
                        stepNames[i] = profilerStepNames(capture);
                        if (!options.filterSteps || stepNames[i].size() >= 2)
                            views[i] = seeAsHta(capture, options, options.filterSteps);
                        else
                            waiting[i] = std::move(capture);
                    } catch (...) {
                        errors[i] = std::current_exception();
                    }
                    advance(i, 1.0, "read");
                }
            };
            std::vector<std::thread> pool;
            // One thread waits for the pandas import to end (ImportGate), or for the files to run out.
            const size_t started = gate && !gate->isOpen() && threads > 1 ? threads - 1 : threads;
            for (size_t t = 1; t < started; ++t) pool.emplace_back(worker);
            if (started < threads)
                pool.emplace_back([&] {
                    while (!gate->isOpen() && next.load() < files.size() && !work.cancelFlag()->load())
                        std::this_thread::sleep_for(std::chrono::milliseconds(2));
                    worker();
                });
            worker();
            for (auto& t : pool) t.join();
            for (const auto& e : errors)  // the first bad file in order, as loadCaptures reports it
                if (e) std::rethrow_exception(e);
            for (const auto& w : warnings) work.addWarnings(w);
            std::unordered_set<std::string> jobStepNames;
            for (const auto& names : stepNames) jobStepNames.insert(names.begin(), names.end());
            const bool filter = options.filterSteps && jobStepNames.size() >= 2;
            work.status("seeing the trace as HTA does");
            for (size_t i = 0; i < files.size(); ++i)
                if (waiting[i]) views[i] = seeAsHta(*waiting[i], options, filter);
            trace = std::make_shared<HtaTrace>(std::move(views), options);
        },
        progress);
    return py::make_tuple(trace, work.warnings());
}

// `report -o FILE [--force]`: a file the user named is written as the
// command line writes it (analyzer/output/safe_output.h); the signals are
// Python's, so no handler of ours removes the temporary.
void writeUserFile(const std::string& path, const std::string& content, bool force) {
    py::gil_scoped_release release;
    output::writeFileSafely(
        path, [&](std::ostream& out) { out << content; },
        output::WriteOptions{.overwrite = force, .removeOnSignal = false});
}

// `report --partial -o FILE`: the captures analysed file by file, written as one partial result.
void writePartial(const std::vector<std::string>& paths, const std::string& path, bool force, const py::dict& settings,
                  int jobs, const py::object& progress) {
    output::checkOutputPath(path, force);
    job::JobRequest request;
    request.settings = settingsFrom(settings);
    request.jobs = jobs;
    std::unique_ptr<job::AnalyzedFiles> files;
    BackgroundJob work;
    work.run([&] { files = job::analyzeFiles(paths, request, work.progress()); }, progress);
    py::gil_scoped_release release;
    output::writeFileSafely(
        path, [&](std::ostream& out) { files->writePartial(out, paths, std::string("overlapscope ") + OSC_VERSION); },
        output::WriteOptions{.overwrite = force, .removeOnSignal = false});
}

// overlapscope.distributed's task on a worker: one capture file analysed as
// `report --jobs N` analyses each of its files, its part in device_codec.h's
// bytes (no JSON: writing and parsing it was most of a small file's cost).
// Only a build of the same version reads them back (the caller checks).
py::bytes filePart(const std::string& path, const py::dict& settings) {
    const AnalysisSettings s = settingsFrom(settings);
    std::string bytes;
    {
        py::gil_scoped_release release;
        LoadOptions options;
        options.launchShapeOnly = true;  // all the analysis reads of a launch
        options.threads = 1;             // a task is one of a worker's threads
        partial::encodeFilePart(job::analyzeCaptureFile(path, s, readCaptureFile, options), bytes);
    }
    return py::bytes(bytes);
}

// The files `overlapscope hang` reads of these inputs: (captures, dumps).
py::tuple hangFiles(const std::vector<std::string>& paths) {
    hang::HangInputs in;
    {
        py::gil_scoped_release release;
        in = hang::sortHangInputs(paths);
    }
    return py::make_tuple(in.captures, in.dumps);
}

// `overlapscope hang`: the JSON and text documents, as the CLI writes them.
py::dict hangOf(const std::vector<std::string>& paths, double minWaitMs, const py::object& progress) {
    hang::HangSettings settings;
    settings.minWaitNs = static_cast<TimeNs>(std::min(minWaitMs, 9e12) * 1e6);  // within int64 ns
    hang::HangAnalysis analysis;
    BackgroundJob work;
    work.run(
        [&] {
            const hang::HangInputs in = hang::sortHangInputs(paths);
            std::optional<Capture> capture;
            if (!in.captures.empty()) {
                LoadOptions options;
                options.cancel = work.cancelFlag();
                options.progress = [&work](double fraction, std::string_view stage) { work.loading(fraction, stage); };
                capture = loadCaptures(in.captures, options);
                work.addWarnings(capture->warnings);
            }
            if (!in.dumps.empty()) work.status("reading Flight Recorder dumps");
            std::optional<hang::JobSequences> dumps = hang::readDumpSequences(
                in.dumps, capture ? std::optional<int64_t>(capture->originUtcNs) : std::nullopt);
            work.status("analyzing");
            analysis = hang::analyzeCaptureAndDumps(capture ? &*capture : nullptr, std::move(dumps), settings);
            analysis.inputs = paths;
            work.addWarnings(analysis.warnings);
        },
        progress);
    py::dict out;
    out["json"] = text(hang::formatHangJson(analysis));
    out["text"] = text(hang::formatHangText(analysis));
    out["warnings"] = work.warnings();
    return out;
}

// `overlapscope diff BASE CANDIDATE`: both sides analysed as the CLI does,
// compared by the library's diff; its JSON, text and Markdown.
py::dict diffOf(const std::string& base, const std::string& candidate, const py::dict& settings, int jobs,
                std::optional<double> failPercent, const py::object& progress) {
    job::JobRequest request;
    request.settings = settingsFrom(settings);
    request.jobs = jobs;
    request.collectives = true;  // the per-step comparison sums each collective's time per step, as the CLI does
    report::DiffResult diff;
    BackgroundJob work;
    work.run(
        [&] {
            const Analysis b = job::analyzeJob(job::classifyJob({base}), request, work.progress());
            const Analysis c = job::analyzeJob(job::classifyJob({candidate}), request, work.progress());
            diff = report::diffAnalyses(b, c);
        },
        progress);
    diff.basePath = base;
    diff.candidatePath = candidate;
    py::dict out;
    out["json"] = text(report::formatDiffJson(diff, failPercent));
    out["text"] = text(report::formatDiffText(diff, failPercent));
    out["markdown"] = text(report::formatDiffMarkdown(diff, failPercent));
    out["regressed"] = failPercent ? report::exceedsRegression(diff, *failPercent) : false;
    out["warnings"] = work.warnings();
    return out;
}

py::list texts(const std::vector<std::string>& v) {
    py::list out;
    for (const auto& s : v) out.append(text(s));
    return out;
}

}  // namespace
}  // namespace osc::python

PYBIND11_MODULE(_core, m) {
    using namespace osc;
    using namespace osc::python;
    m.doc() = "overlapscope's analyzer (C++); use the overlapscope package, not this module.";
    m.attr("__version__") = OSC_VERSION;

    static py::exception<CaptureError> captureError(m, "CaptureError", PyExc_ValueError);
    py::register_exception_translator([](std::exception_ptr p) {
        try {
            if (p) std::rethrow_exception(p);
        } catch (const CaptureError& e) {
            // Messages quote files (SQLite's own text, names): a byte that is
            // not UTF-8 would leave Python with no message at all.
            PyErr_SetObject(captureError.ptr(), text(e.what()).ptr());
        }
    });

    py::class_<AnalysisHandle, std::shared_ptr<AnalysisHandle>>(m, "Analysis")
        .def("tables", [](const AnalysisHandle& h) { return reportTables(h.analysis); })
        .def("summary", [](const AnalysisHandle& h) { return reportSummary(h.analysis); })
        .def("total_skew_ns",
             [](const AnalysisHandle& h) -> py::object {
                 // Unknown (None) when nothing was matched across ranks, as the JSON's null.
                 if (h.analysis.matched.empty()) return py::none();
                 return py::cast(h.analysis.total_skew_ns);
             })
        .def("json",
             [](const AnalysisHandle& h) {
                 PythonTextBuf text;
                 {
                     // Seconds for a job of hundreds of ranks: other Python threads go on.
                     py::gil_scoped_release released;
                     std::ostream out(&text);
                     // A str that cannot grow is an error, not a report cut short.
                     out.exceptions(std::ios::badbit);
                     report::writeJsonReportOnThreads(
                         out, h.analysis, h.options(),
                         static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
                 }
                 return text.take();
             })
        .def("head",
             [](const AnalysisHandle& h) {
                 // The report JSON of no devices but this job's settings,
                 // skew and spread: its top-level fields, cheaply.
                 Analysis head;
                 head.settings = h.analysis.settings;
                 head.total_skew_ns = h.analysis.total_skew_ns;
                 head.spread = h.analysis.spread;
                 return py::bytes(report::formatJsonReport(head, h.options()));
             })
        .def(
            "text",
            [](const AnalysisHandle& h, bool steps, bool collectives, bool interference, size_t top, bool markdown) {
                report::ReportOptions o = h.options();
                o.steps = steps;
                o.collectives = collectives;
                o.interference = interference;
                o.topCollectives = top;
                return text(markdown ? report::formatMarkdownReport(h.analysis, o)
                                     : report::formatTextReport(h.analysis, o));
            },
            py::arg("steps"), py::arg("collectives"), py::arg("interference"), py::arg("top"), py::arg("markdown"))
        .def_property_readonly("inputs", [](const AnalysisHandle& h) { return texts(h.inputs); })
        .def_property_readonly("warnings", [](const AnalysisHandle& h) { return texts(h.analysis.warnings); })
        .def_property_readonly("job_warnings", [](const AnalysisHandle& h) { return texts(h.warnings); });

    py::class_<HtaTrace, std::shared_ptr<HtaTrace>>(m, "HtaTrace")
        .def("ranks", &HtaTrace::ranks)
        .def("warnings", &HtaTrace::warnings)
        .def("overlap", &HtaTrace::overlap)
        .def("temporal", &HtaTrace::temporal)
        .def("kernel_breakdown", &HtaTrace::kernelBreakdown, py::arg("include_memory"), py::arg("num_kernels"))
        .def("idle_intervals", &HtaTrace::idleIntervals, py::arg("rank"), py::arg("consecutive_kernel_delay"))
        .def("idle_sums", &HtaTrace::idleSums, py::arg("ranks"), py::arg("consecutive_kernel_delay"))
        .def("launch_stats", &HtaTrace::launchStats, py::arg("rank"), py::arg("include_memory_events"))
        .def("frame", &HtaTrace::frame, py::arg("rank"))
        .def("dtypes", &HtaTrace::dtypes, py::arg("rank"))
        .def("path", &HtaTrace::path, py::arg("rank"))
        .def("gpu_event_count", &HtaTrace::gpuEventCount, py::arg("rank"))
        .def("trace_offset_us", &HtaTrace::traceOffsetUs, py::arg("rank"));

    py::class_<CaptureHandle, std::shared_ptr<CaptureHandle>>(m, "Capture")
        .def("table", [](const CaptureHandle& c, const std::string& name,
                         const py::dict& settings) { return captureTable(c.capture, name, settingsFrom(settings)); })
        .def("analyze", &analyzeCapture, py::arg("settings"), py::arg("progress"))
        .def("whatif", &whatIf, py::arg("settings"), py::arg("whatif_settings"), py::arg("summary"), py::arg("inputs"),
             py::arg("progress"))
        .def_property_readonly("paths", [](const CaptureHandle& c) { return c.paths; })
        .def_property_readonly("origin_utc_ns", [](const CaptureHandle& c) { return c.capture.originUtcNs; })
        .def_property_readonly("warnings", [](const CaptureHandle& c) { return texts(c.warnings); });

    m.def("device_object_fields", &deviceObjectFields);
    m.def("trace_file_kind", &traceFileKind, py::arg("path"));
    m.def(
        "hta_load",
        [](const std::vector<std::string>& paths, int jobs, bool includeLastProfilerStep, bool round,
           const std::unordered_map<std::string, int>& rankOfFile, bool filterSteps,
           const std::shared_ptr<ImportGate>& gate, const py::object& progress) {
            HtaOptions o;
            o.includeLastProfilerStep = includeLastProfilerStep;
            o.roundToMicroseconds = round;
            o.rankOfFile = rankOfFile;
            o.filterSteps = filterSteps;
            return htaLoad(paths, jobs, o, gate, progress);
        },
        py::arg("paths"), py::arg("jobs"), py::arg("include_last_profiler_step"), py::arg("round_to_us"),
        py::arg("rank_of_file"), py::arg("filter_steps"), py::arg("import_gate"), py::arg("progress"));
    py::class_<ImportGate, std::shared_ptr<ImportGate>>(m, "ImportGate")
        .def(py::init<>())
        .def("open", &ImportGate::open)
        .def("is_open", &ImportGate::isOpen);
    m.def("holds_mtia_events", &holdsMtiaEvents, py::arg("path"));
    m.def("write_file", &writeUserFile, py::arg("path"), py::arg("content"), py::arg("force"));
    m.def("write_partial", &writePartial, py::arg("paths"), py::arg("path"), py::arg("force"), py::arg("settings"),
          py::arg("jobs"), py::arg("progress"));
    m.def("hang", &hangOf, py::arg("paths"), py::arg("min_wait_ms"), py::arg("progress"));
    m.def("diff", &diffOf, py::arg("base"), py::arg("candidate"), py::arg("settings"), py::arg("jobs"),
          py::arg("fail_percent"), py::arg("progress"));
    m.def("analyze_job", &analyzeJob, py::arg("paths"), py::arg("settings"), py::arg("jobs"), py::arg("align"),
          py::arg("progress"));
    m.def("file_part", &filePart, py::arg("path"), py::arg("settings"));
    py::class_<ArrivingPartsHandle, std::shared_ptr<ArrivingPartsHandle>>(m, "ArrivingParts")
        .def(py::init<const py::dict&, std::vector<std::string>>(), py::arg("settings"), py::arg("inputs"))
        .def(
            "add",
            [](ArrivingPartsHandle& h, size_t index, const py::bytes& part, const std::string& origin) {
                char* data = nullptr;
                Py_ssize_t size = 0;
                if (PyBytes_AsStringAndSize(part.ptr(), &data, &size) != 0) throw py::error_already_set();
                // Decoded without the GIL: the client's other threads (Dask's
                // event loop, receiving the next parts) go on.
                py::gil_scoped_release released;
                std::lock_guard hold(h.lock);
                h.parts.add(index, std::string_view(data, static_cast<size_t>(size)), origin);
            },
            py::arg("index"), py::arg("part"), py::arg("origin"))
        .def("analysis", &arrivedAnalysis, py::arg("count"), py::arg("settings"), py::arg("jobs"), py::arg("align"),
             py::arg("progress"), py::arg("named"));
    m.def("hang_files", &hangFiles, py::arg("paths"));
    m.def("capture_files", &captureFiles, py::arg("paths"));
    m.def(
        "valid_regex",
        [](const std::string& pattern) {
            try {
                std::regex compiled(pattern, std::regex::ECMAScript);
                return true;
            } catch (const std::regex_error&) {
                return false;
            }
        },
        py::arg("pattern"));
    m.def(
        "validate_whatif", [](const py::dict& settings) { whatIfSettingsFrom(settings).validate(); },
        py::arg("whatif_settings"));
    m.def("load", &loadTrace, py::arg("paths"), py::arg("launch_details"), py::arg("progress"));
}
