#include "gui/model/view_history.h"

namespace osc::gui {

void ViewHistory::push(ViewRange r) {
    if (!stack_.empty() && stack_.back() == r) return;
    if (stack_.size() == kMaxEntries) stack_.erase(stack_.begin());
    stack_.push_back(r);
}

std::optional<ViewRange> ViewHistory::pop() {
    if (stack_.empty()) return std::nullopt;
    const ViewRange r = stack_.back();
    stack_.pop_back();
    return r;
}

}  // namespace osc::gui
