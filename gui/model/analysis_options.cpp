#include "gui/model/analysis_options.h"

#include "analyzer/metrics/classify.h"
#include "analyzer/metrics/microbatches.h"
#include "gui/model/time_ticks.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <map>
#include <regex>
#include <set>
#include <stdexcept>

namespace osc::gui {
namespace {

using json = nlohmann::json;

std::string plural(size_t n, const std::string& one, const std::string& many) {
    return formatCount(n) + " " + (n == 1 ? one : many);
}

// Distinct range names of the capture that `pattern` finds.
std::set<uint32_t> rangeNamesMatching(const Capture& capture, const std::regex& pattern) {
    std::set<uint32_t> names, matching;
    for (const Process& p : capture.processes) names.insert(p.ranges.name.begin(), p.ranges.name.end());
    for (uint32_t id : names)
        if (id != kNoId && id < capture.strings.size() && searchName(capture.strings.at(id), pattern))
            matching.insert(id);
    return matching;
}

std::string gbpsText(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.0f GB/s", v);
    return buf;
}

std::string microbatchFindings(const Capture* capture, const Analysis& a, bool changed, std::string& note) {
    if (!a.pipeline.empty()) {
        const PipelineStep& p = a.pipeline.front();
        return "pipeline bubbles in " + plural(a.pipeline.size(), "step", "steps") + " (" +
               (a.pipeline.size() > 1 ? "the first: " : "") + plural(static_cast<size_t>(p.stages), "stage", "stages") +
               ", " + plural(static_cast<size_t>(p.microbatches), "micro-batch", "micro-batches") + ")";
    }
    std::string why;
    if (capture) {
        size_t ranges = 0;
        try {
            ranges = rangeNamesMatching(*capture, compileMicrobatchPattern(a.settings.microbatchPattern)).size();
        } catch (const std::invalid_argument&) {}
        why = ranges == 0 ? "no NVTX or profiler range matches the micro-batch pattern, so no stage has "
                            "micro-batches (ranges such as 'fwd mb 3' / 'bwd mb 3' mark them)"
                          : plural(ranges, "range name matches", "range names match") +
                                " the micro-batch pattern, but no step has micro-batch compute on two or more "
                                "devices (a pipeline needs two stages)";
    } else {
        why = "the results hold no micro-batch steps";
    }
    if (changed) note = "No pipeline bubbles: " + why + ".";
    return "no pipeline bubbles: " + why;
}

std::string commKernelFindings(const Capture* capture, const AnalysisSettings& s) {
    if (s.commKernelPatterns.empty()) return {};
    if (!capture) return "the results were made with these patterns";
    std::vector<std::string> parts;
    for (const std::string& pattern : s.commKernelPatterns) {
        std::regex re;
        try {
            re = std::regex(pattern, std::regex::ECMAScript);
        } catch (const std::regex_error&) {
            continue;
        }
        std::map<uint32_t, bool> seen;  // name id -> matches
        size_t names = 0, kernels = 0;
        for (const Process& p : capture->processes)
            for (const Device& d : p.devices)
                for (uint32_t id : d.kernels.name) {
                    auto [it, fresh] = seen.try_emplace(id, false);
                    if (fresh) {
                        it->second = id < capture->strings.size() && searchName(capture->strings.at(id), re);
                        names += it->second;
                    }
                    kernels += it->second;
                }
        parts.push_back("'" + pattern + "' " +
                        (names == 0 ? std::string("matches no kernel")
                                    : "matches " + plural(names, "kernel name", "kernel names") + " (" +
                                          plural(kernels, "kernel", "kernels") + ")"));
    }
    std::string out;
    for (size_t i = 0; i < parts.size(); ++i) out += (i ? "; " : "") + parts[i];
    return out;
}

std::string peakFindings(const Analysis& a) {
    if (a.settings.peakBusBwGbps) return gbpsText(*a.settings.peakBusBwGbps) + " for every link (set)";
    std::map<std::string, size_t> links;    // "NVLink 4 (H100 SXM), 450 GB/s" -> devices
    std::map<std::string, size_t> unknown;  // GPU model -> devices
    for (const DeviceAnalysis& d : a.devices) {
        if (d.busbw && d.busbw->peak_busbw_gbps)
            ++links[d.busbw->link + ", " + gbpsText(*d.busbw->peak_busbw_gbps)];
        else if (d.busbw || !d.collectives.empty())
            ++unknown[d.gpu.empty() ? std::string("GPU model not recorded") : "'" + d.gpu + "'"];
    }
    std::string out;
    for (const auto& [link, n] : links)
        out += (out.empty() ? "" : "; ") + link + " (" + plural(n, "device", "devices") + ")";
    if (!unknown.empty()) {
        std::string which;
        for (const auto& [gpu, n] : unknown) which += (which.empty() ? "" : ", ") + gpu;
        out += (out.empty() ? "" : "; ") + std::string("no peak known for ") + which +
               ": bus bandwidth has no share of a peak until one is set (a shared GPU or an unknown model)";
    }
    return out.empty() ? "no collectives to measure" : out;
}

}  // namespace

std::string analysisOptionsJson(const AnalysisSettings& s) {
    const AnalysisSettings d;
    json j = json::object();
    if (s.stepPattern != d.stepPattern) j["step_pattern"] = s.stepPattern;
    if (s.microbatchPattern != d.microbatchPattern) j["microbatch_pattern"] = s.microbatchPattern;
    if (!s.commKernelPatterns.empty()) j["comm_kernels"] = s.commKernelPatterns;
    if (s.commCopies) j["comm_copies"] = true;
    if (s.pipelineStages != d.pipelineStages) j["pipeline_stages"] = s.pipelineStages;
    if (s.peakBusBwGbps) j["peak_busbw_gbps"] = *s.peakBusBwGbps;
    return j.dump();
}

bool applyAnalysisOptionsJson(const std::string& text, AnalysisSettings& into) {
    const json j = json::parse(text, nullptr, false);
    if (!j.is_object()) return false;
    AnalysisSettings s = into;
    try {
        if (j.contains("step_pattern")) s.stepPattern = j.at("step_pattern").get<std::string>();
        if (j.contains("microbatch_pattern")) s.microbatchPattern = j.at("microbatch_pattern").get<std::string>();
        if (j.contains("comm_kernels")) s.commKernelPatterns = j.at("comm_kernels").get<std::vector<std::string>>();
        if (j.contains("comm_copies")) s.commCopies = j.at("comm_copies").get<bool>();
        if (j.contains("pipeline_stages")) s.pipelineStages = j.at("pipeline_stages").get<int>();
        if (j.contains("peak_busbw_gbps")) s.peakBusBwGbps = j.at("peak_busbw_gbps").get<double>();
    } catch (const json::exception&) {
        return false;
    }
    if (s.pipelineStages < 0 || (s.peakBusBwGbps && !(*s.peakBusBwGbps > 0))) return false;
    into = std::move(s);
    return true;
}

std::optional<std::string> analysisOptionsError(const AnalysisSettings& s) {
    try {
        std::regex(s.stepPattern, std::regex::ECMAScript);
    } catch (const std::regex_error& e) {
        return "invalid --step-pattern pattern '" + s.stepPattern + "': " + e.what();
    }
    try {
        compileMicrobatchPattern(s.microbatchPattern);
        const StringTable none;
        ActivityClassifier check(none, s);  // compiles the --comm-kernel patterns as the analysis does
    } catch (const std::invalid_argument& e) {
        return std::string(e.what());
    }
    if (s.pipelineStages < 0) return "--pipeline-stages: expected 0 (from the capture) or more";
    if (s.peakBusBwGbps && !(*s.peakBusBwGbps > 0)) return "--peak-busbw-gbps: expected a positive number of GB/s";
    return std::nullopt;
}

AnalysisFindings analysisFindings(const Capture* capture, const Analysis& a) {
    AnalysisFindings f;
    const AnalysisSettings defaults;
    size_t steps = 0, devices = 0;
    for (const DeviceAnalysis& d : a.devices) {
        steps += d.steps.size();
        devices += !d.steps.empty();
    }
    if (steps > 0) {
        f.steps = plural(steps, "step", "steps") + " on " + plural(devices, "device", "devices");
    } else {
        f.steps = "no NVTX or profiler range matches the step pattern: metrics cover each device's whole span";
        f.stepsNote = "No steps: " + f.steps + ".";
    }
    const bool pipelineChanged =
        a.settings.microbatchPattern != defaults.microbatchPattern || a.settings.pipelineStages != 0;
    std::string bubbles;
    f.microbatches = microbatchFindings(capture, a, pipelineChanged, bubbles);
    if (!bubbles.empty()) f.stepsNote += (f.stepsNote.empty() ? "" : " ") + bubbles;
    f.commKernels = commKernelFindings(capture, a.settings);
    f.stages = a.settings.pipelineStages > 0 ? std::to_string(a.settings.pipelineStages) + " (set)"
               : a.pipeline.empty()
                   ? std::string("from the capture: no pipeline")
                   : "from the capture: " + plural(static_cast<size_t>(a.pipeline.front().stages), "stage", "stages");
    f.peak = peakFindings(a);
    return f;
}

}  // namespace osc::gui
