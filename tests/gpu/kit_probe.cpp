// overlapscope-kit-probe: the GPU kit's reading of one run's captures (a
// directory with one file per rank), as one JSON object on stdout. Uses the
// analyzer the way `overlapscope report` does, plus the checks of
// capture_facts.h that the replay tests apply to recordings.
//
//   overlapscope-kit-probe [--comm-copies] CAPTURE_DIR_OR_FILE
#include "analyzer/crossrank/analyze.h"
#include "analyzer/load/load_capture.h"
#include "tests/gpu/capture_facts.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <string>

int main(int argc, char** argv) {
    osc::AnalysisSettings settings;
    std::string input;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--help") {
            std::printf(
                "usage: overlapscope-kit-probe [--comm-copies] CAPTURE_DIR_OR_FILE\n"
                "Prints what the GPU kit checks in a capture of a reference workload, as JSON.\n");
            return 0;
        }
        if (a == "--comm-copies")
            settings.commCopies = true;
        else if (input.empty() && a.rfind("--", 0) != 0)
            input = a;
        else {
            std::fprintf(stderr, "overlapscope-kit-probe: unexpected argument %s\n", a.c_str());
            return 2;
        }
    }
    if (input.empty()) {
        std::fprintf(stderr, "overlapscope-kit-probe: give a capture file or directory\n");
        return 2;
    }
    try {
        const osc::Capture cap = osc::loadCapture(input);
        const osc::Analysis analysis = osc::analyze(cap, settings);
        const auto facts = osc::gpukit::captureFacts(cap, analysis);
        nlohmann::json out;
        out["input"] = input;
        out["overlap_ratio_mean"] = facts.overlapMean();
        out["plugin_p2p_rows"] = facts.pluginP2pRows;
        out["p2p_transfers"] = facts.p2pTransfers;
        out["sendrecv_kernels_without_peers"] = facts.sendRecvKernelsWithoutPeers;
        for (const auto& p : facts.processes) {
            size_t missing = 0;
            for (const auto& [name, n] : p.launchesWithoutKernel) missing += n;
            out["processes"].push_back({
                {"rank", p.rank},
                {"pid", p.pid},
                {"kernels", p.kernels},
                {"graph_kernels", p.graphKernels},
                {"nccl_kernels", p.ncclKernels},
                {"nccl_as_communication", p.ncclAsCommunication},
                {"other_as_communication", p.otherAsCommunication},
                {"launch_calls", p.launchCalls},
                {"graph_launch_calls", p.graphLaunchCalls},
                {"launches_without_kernel", missing},
                {"launches_captured_into_graph", p.launchesCapturedIntoGraph},
                {"launches_without_kernel_by_api", p.launchesWithoutKernel},
                {"meta", p.meta},
            });
        }
        for (const auto& d : facts.devices)
            out["devices"].push_back({
                {"rank", d.rank},
                {"device", d.device},
                {"steps", d.steps},
                {"collectives_per_step", d.collectivesPerStep},
                {"step_overlap_median", d.stepOverlapMedian},
                {"exposed_comm_ms_median", d.exposedCommMsMedian},
                {"step_ms_median", d.stepMsMedian},
            });
        std::printf("%s\n", out.dump(1).c_str());
    } catch (const std::exception& e) {
        std::fprintf(stderr, "overlapscope-kit-probe: %s\n", e.what());
        return 2;
    }
    return 0;
}
