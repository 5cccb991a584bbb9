// The timeline's colours, in one place so tests can look for them.
// Chosen to stay apart for the common colour-vision deficiencies: blue compute,
// purple communication, teal memory, green hidden comm, vermilion exposed.
// One colour, one meaning: amber is exposed waiting for the last rank and
// nothing else (the heat map's 50 % is white, a matched collective cyan);
// kMeanings lists the colours that carry a meaning, and a test keeps them apart.
#pragma once

#include "analyzer/metrics/analysis.h"

#include <cstdint>
#include <string_view>

namespace osc::gui::palette {

inline constexpr uint32_t kBackground = 0xFFFFFF;
inline constexpr uint32_t kLaneStripe = 0xF4F5F7;
inline constexpr uint32_t kHeader = 0xE3E6EA;
inline constexpr uint32_t kHeaderText = 0x20252B;
inline constexpr uint32_t kText = 0x20252B;
inline constexpr uint32_t kTextOnColour = 0xFFFFFF;
inline constexpr uint32_t kGrid = 0xDADDE1;
inline constexpr uint32_t kCompute = 0x2F6DB5;
inline constexpr uint32_t kCommunication = 0x8E44AD;
inline constexpr uint32_t kMemory = 0x00897B;
inline constexpr uint32_t kOverlap = 0x27AE60;      // communication hidden behind compute
inline constexpr uint32_t kExposed = 0xE0451F;      // communication with no compute under it
inline constexpr uint32_t kExposedWait = 0xF0B429;  // of that, waiting for the last rank (docs/design.md 4c)
inline constexpr uint32_t kSelection = 0x1E88E5;    // range selection (drawn translucent)
inline constexpr uint32_t kHighlight = 0x00BCD4;    // the selected event's matches on other ranks
inline constexpr uint32_t kFindHit = 0xFFEB3B;
inline constexpr uint32_t kApiCall = 0x8D7B6A;    // CUDA runtime/driver call on a CPU lane
inline constexpr uint32_t kRangeChip = 0x90A4AE;  // label chip of NVTX / step lanes
inline constexpr uint32_t kFlow = 0xD81B60;       // launch -> GPU work arrows
inline constexpr uint32_t kEmptyText = 0x7A828C;  // hints where there is nothing to draw
// Pipeline bubble (no compute on a stage): diagonal lines on a pale tint, so
// that kernels drawn over it stay as they are.
inline constexpr uint32_t kBubbleTint = 0xEDEAF2;
inline constexpr uint32_t kBubbleHatch = 0xB3ABC2;
inline constexpr int kBubbleHatchPeriod = 6;  // px between diagonal lines
// Whether widget pixel (x, y) of a bubble is on one of its lines: anchored to
// the widget, so neighbouring bubble rectangles continue each other's lines.
inline bool bubbleHatchAt(int x, int y) { return (x + y) % kBubbleHatchPeriod == 0; }
inline constexpr uint32_t kPeerLink = 0x5D4037;  // send -> receive arrow between partner kernels
inline constexpr uint32_t kMarker = 0x111111;    // a pinned timestamp (marker), drawn dashed
// Heat map: overlap ratio vermilion (0) to white (50 %) to green (100 %); no
// communication in a cell is a mid grey, darker than any ratio's tint.
inline constexpr uint32_t kHeatMiddle = 0xFFFFFF;
inline constexpr uint32_t kHeatNoComm = 0xB0B6BD;
// Heat map of lateness (arrival after the median rank): white to indigo; a
// cell where no collective starts stays pale, so a late rank's arrivals read
// as a dark line on white.
inline constexpr uint32_t kLate = 0x2E1A6E;
inline constexpr uint32_t kHeatNoArrival = 0xECEEF1;

// The colours that mean something on screen, each one thing.
inline constexpr uint32_t kMeanings[] = {kCompute,     kCommunication, kMemory,    kOverlap,   kExposed,
                                         kExposedWait, kSelection,     kHighlight, kFindHit,   kApiCall,
                                         kFlow,        kPeerLink,      kMarker,    kHeatNoComm};

uint32_t categoryColour(Category c);
// A stable pastel for a range name, so the same step name keeps its colour.
uint32_t rangeColour(std::string_view name);
// `colour` faded towards the background; share 1 keeps it, 0 gives a pale tint.
uint32_t shaded(uint32_t colour, double share);
// A darker edge for `colour`: the left border that tells back-to-back events apart.
uint32_t edge(uint32_t colour);

}  // namespace osc::gui::palette
