// A hung job shown as hung (issue 40 item 2): what the window takes from the
// analyzer's hang analysis (analyzer/hang, `overlapscope hang`) of the open
// capture, for the banner, the view and the lanes. The one place besides the
// Collective progress panel (hang_progress.h) where the GUI reads
// analyzer/hang, so a change of that API is met here.
//
// When ranks wait in a collective that some rank never entered (a hang), or
// called one call differently (a desync): the verdict's one line, where to
// look (the stuck call: the waiting ranks' entry into it, with the calls
// before it), and per rank what it did: the waiting ranks' wait, from their
// entry to the end of their kernel or of the capture, which is waiting that
// never completed, not transfer; and the ranks that never entered the call.
#pragma once

#include "analyzer/hang/hang.h"
#include "gui/model/event_details.h"
#include "gui/model/time_scale.h"
#include "gui/model/timeline_model.h"

#include <optional>
#include <string>
#include <vector>

namespace osc::gui {

// A rank waiting in a call that never completed.
struct HangWait {
    int group = -1;
    EventRef kernel;            // its kernel on the timeline, when the capture has one
    TimeNs start = 0, end = 0;  // its entry to the kernel's end, or to the end of the capture
    std::string call;           // "AllReduce #6"
    std::string text;           // what the tooltip and Details say of it
};

// A rank that never entered the call the others wait in.
struct HangStuck {
    int group = -1;
    TimeNs at = 0;     // when the others began to wait in the call it never entered
    std::string call;  // "AllReduce #6"
    std::string text;  // "never entered AllReduce #6; last completed AllReduce #5"
};

struct HangFocus {
    hang::Verdict verdict = hang::Verdict::Healthy;
    std::string headline;            // the verdict in one line (hang::hangHeadline)
    std::optional<ViewRange> frame;  // the stuck call, with the calls before it
    std::vector<HangWait> waits;
    std::vector<HangStuck> stuck;

    bool found() const { return verdict != hang::Verdict::Healthy; }
    // The wait of `group` running at `t`, or nullptr.
    const HangWait* waitAt(int group, TimeNs t) const;
    const HangWait* waitOf(EventRef kernel) const;
    // The words a group's title ends with ("waits in AllReduce #6, never
    // completed"), "" for a rank the hang does not concern.
    std::string groupStatus(int group) const;
};

// From an analysis of the model's own capture (hang::analyzeHang).
HangFocus hangFocus(const TimelineModel& model, const hang::HangAnalysis& analysis);

// Puts the hang on the model: each waiting rank's wait shown as exposed
// waiting on its overlap lane (where it is exposed), and each concerned
// rank's title saying what it does instead of "last at …".
void markHang(TimelineModel& model, const HangFocus& focus);

// Details of a kernel that never completed: its transfer and bandwidth rows
// (the kernel's length, which was waiting) give way to what it waited for.
void describeHungKernel(const HangFocus& focus, EventRef kernel, DetailList& details);

}  // namespace osc::gui
