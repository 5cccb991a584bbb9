#include "gui/render/palette.h"

#include <algorithm>

namespace osc::gui::palette {

uint32_t categoryColour(Category c) {
    switch (c) {
        case Category::Compute:
            return kCompute;
        case Category::Communication:
            return kCommunication;
        case Category::Memory:
            return kMemory;
    }
    return kCompute;
}

uint32_t rangeColour(std::string_view name) {
    // FNV-1a picks one of a few muted hues that read well with dark text.
    uint32_t h = 2166136261u;
    for (char ch : name) h = (h ^ static_cast<uint8_t>(ch)) * 16777619u;
    static constexpr uint32_t kHues[] = {0xF6D186, 0xB5D99C, 0xA0CED9, 0xD7B5E8,
                                         0xF4B6A6, 0xCFD8DC, 0xFFE0A3, 0xB8E0D2};
    return kHues[h % (sizeof kHues / sizeof kHues[0])];
}

uint32_t shaded(uint32_t colour, double share) {
    // Even a nearly empty block stays visible: 30% of the colour at least.
    const double f = 0.3 + 0.7 * std::clamp(share, 0.0, 1.0);
    auto mix = [&](int shift) {
        const double c = (colour >> shift) & 0xFF, bg = (kBackground >> shift) & 0xFF;
        return static_cast<uint32_t>(bg + (c - bg) * f + 0.5) << shift;
    };
    return mix(16) | mix(8) | mix(0);
}

uint32_t edge(uint32_t colour) {
    auto dim = [&](int shift) { return static_cast<uint32_t>(((colour >> shift) & 0xFF) * 55 / 100) << shift; };
    return dim(16) | dim(8) | dim(0);
}

}  // namespace osc::gui::palette
