// What a frame paints, as plain data: rectangles and text boxes in widget
// pixels. Built by FrameBuilder from the model and the view, painted by
// TimelineWidget; tests and the bench look at it without a window.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace osc::gui {

struct DrawRect {
    float x = 0, y = 0, w = 0, h = 0;
    uint32_t rgb = 0;
};

struct DrawText {
    float x = 0, y = 0, w = 0, h = 0;  // box to elide the text into
    uint32_t rgb = 0;
    std::string text;
};

struct DrawList {
    // Pipeline bubbles: a pale tint crossed by diagonal lines of `rgb`,
    // painted under `rects` so that no kernel is hidden.
    std::vector<DrawRect> hatches;
    std::vector<DrawRect> rects;
    std::vector<DrawText> texts;
    size_t eventsDrawn = 0, foldedBlocks = 0;  // for the bench and tests
    void clear() {
        hatches.clear();
        rects.clear();
        texts.clear();
        eventsDrawn = foldedBlocks = 0;
    }
};

}  // namespace osc::gui
