// Previous views, for Backspace ("back to where I was") after zooms and fits.
#pragma once

#include "gui/model/time_scale.h"

#include <optional>
#include <vector>

namespace osc::gui {

class ViewHistory {
public:
    static constexpr size_t kMaxEntries = 100;
    void push(ViewRange r);
    std::optional<ViewRange> pop();
    bool empty() const { return stack_.empty(); }
    void clear() { stack_.clear(); }

private:
    std::vector<ViewRange> stack_;
};

}  // namespace osc::gui
