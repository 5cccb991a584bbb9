// overlapscope-replay: turns raw CUPTI recordings (OVERLAPSCOPE_CUPTI_RECORD)
// into capture files through the agent's real decoder and writer, on any
// machine: no GPU, no CUDA driver, no libcupti.
#include "agent/recording/replay_source.h"

#include <CLI/CLI.hpp>

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

namespace fs = std::filesystem;
using namespace osc::agent::recording;

int main(int argc, char** argv) {
    CLI::App app{
        "Replay raw CUPTI recordings (folders named *.cupti, written by the agent with\n"
        "OVERLAPSCOPE_CUPTI_RECORD=DIR) into capture files, one per recording, through\n"
        "the agent's own decoder and writer. Needs no GPU.",
        "overlapscope-replay"};
    std::vector<std::string> inputs;
    std::string output;
    app.add_option("recording", inputs, "A recording folder, or a folder holding several")->required();
    app.add_option("--output,-o", output, "Directory for the capture files (created; existing files are kept)")
        ->required();
    CLI11_PARSE(app, argc, argv);

    std::vector<std::string> recordings;
    for (const auto& in : inputs) {
        std::error_code ec;
        if (!fs::is_directory(in, ec)) {
            std::fprintf(stderr, "overlapscope-replay: %s: not a directory\n", in.c_str());
            return 2;
        }
        const auto found = findRecordings(in);
        if (found.empty()) {
            std::fprintf(stderr, "overlapscope-replay: %s: no CUPTI recording (recording.json) in it\n", in.c_str());
            return 2;
        }
        recordings.insert(recordings.end(), found.begin(), found.end());
    }
    std::error_code ec;
    fs::create_directories(output, ec);
    if (!fs::is_directory(output, ec)) {
        std::fprintf(stderr, "overlapscope-replay: %s: cannot create the output directory\n", output.c_str());
        return 2;
    }
    for (const auto& dir : recordings) {
        std::string stem = fs::path(dir).filename().string();
        if (stem.size() > 6 && stem.ends_with(kFolderSuffix)) stem.resize(stem.size() - 6);
        const std::string capture = (fs::path(output) / (stem + ".sqlite")).string();
        if (fs::exists(capture, ec)) {
            std::fprintf(stderr, "overlapscope-replay: %s: already exists; not overwritten\n", capture.c_str());
            return 2;
        }
        try {
            const Recording r = readRecording(dir);
            size_t records = 0;
            for (const auto& b : r.buffers) records += b.recordOffsets.size();
            replayToCapture(r, capture);
            std::printf("%s: %zu buffers, %zu records%s -> %s\n", dir.c_str(), r.buffers.size(), records,
                        r.truncated ? " (the last chunk was cut short: the process was killed)" : "", capture.c_str());
        } catch (const std::exception& e) {
            std::fprintf(stderr, "overlapscope-replay: %s\n", e.what());
            return 2;
        }
    }
    return 0;
}
