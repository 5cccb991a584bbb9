// The Collective progress panel without Qt: per communicator, a row per rank
// and a column per collective call (its sequence number), each cell saying
// whether the rank completed the call, entered it and waits, or never
// entered it; the hung call's column marked, the stuck ranks' rows marked.
// From the analyzer's hang analysis (analyzer/hang), so the panel and
// `overlapscope hang` cannot disagree; widgets/hang_panel.h only paints it.
#pragma once

#include "analyzer/hang/hang.h"

#include <string>
#include <vector>

namespace osc::gui {

enum class ProgressState : uint8_t { Completed, Waiting, NotEntered };

struct ProgressColumn {
    std::string label;    // "#17"
    std::string tooltip;  // "AllReduce #17"
    bool hung = false;    // the call the others wait in
    bool desync = false;  // ranks called it differently
};

struct ProgressRow {
    std::string label;  // "rank 3 (host:pid)"
    bool stuck = false;
    std::vector<ProgressState> cells;  // one per column
    std::string summary;               // "last completed AllReduce #16"
};

struct ProgressBlock {
    std::string title;        // "communicator 0x5e1f… (nccl-plugin, 4 ranks): 3 wait in AllReduce #17 for 5.01 s"
    size_t hiddenBefore = 0;  // calls left of the first column shown
    std::vector<ProgressColumn> columns;
    std::vector<ProgressRow> rows;
};

struct HangProgress {
    std::string verdict;    // "hang", "desync", "healthy"
    std::string paragraph;  // what `overlapscope hang` says
    std::vector<ProgressBlock> blocks;
};

// At most `maxColumns` calls per communicator: the latest ones, up to the
// hung call and a few after it. Columns are in the order the calls were
// made: by sequence number, and where each type is numbered apart, by when
// the ranks entered them.
HangProgress hangProgress(const hang::HangAnalysis& analysis, size_t maxColumns = 32);

}  // namespace osc::gui
