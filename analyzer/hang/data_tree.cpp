#include "analyzer/hang/data_tree.h"

#include <limits>
#include <stdexcept>

namespace osc::hang {

uint32_t DataTree::push(const DataNode& n) {
    const auto at = static_cast<uint32_t>(nodes_.size());
    // The readers bound a value far below this; a tree this large is a bug.
    if (at >= std::numeric_limits<uint32_t>::max() - 1) [[unlikely]]
        throw std::length_error("data tree too large");
    DataNode& added = nodes_.emplace_back(n);
    added.end = at + 1;
    return at;
}

uint32_t DataTree::addText(std::string_view s, DataKind kind) {
    if (text_.size() + s.size() >= std::numeric_limits<uint32_t>::max()) throw std::length_error("data tree too large");
    DataNode n;
    n.kind = kind;
    n.textAt = static_cast<uint32_t>(text_.size());
    n.textSize = static_cast<uint32_t>(s.size());
    text_.append(s);
    return push(n);
}

uint32_t DataTree::addBigInt(std::string_view digits) {
    const uint32_t at = addText(digits);
    nodes_[at].kind = DataKind::Int;
    nodes_[at].bigInt = true;
    return at;
}

uint32_t DataTree::copy(const DataTree& from, uint32_t at) {
    const uint32_t base = static_cast<uint32_t>(nodes_.size());
    for (uint32_t i = at; i < from.nodes_[at].end; ++i) {
        DataNode n = from.nodes_[i];
        n.end = n.end - at + base;
        if (n.textSize > 0 || n.kind == DataKind::Text || n.kind == DataKind::Bytes || n.bigInt) {
            n.textAt = static_cast<uint32_t>(text_.size());
            text_.append(from.text(i));
        }
        if (nodes_.size() >= std::numeric_limits<uint32_t>::max() - 1 ||
            text_.size() >= std::numeric_limits<uint32_t>::max())
            throw std::length_error("data tree too large");
        nodes_.push_back(n);
    }
    return base;
}

std::optional<uint32_t> DataTree::find(uint32_t dict, std::string_view key) const {
    if (nodes_[dict].kind != DataKind::Dict) return std::nullopt;
    const uint32_t end = nodes_[dict].end;
    for (uint32_t at = dict + 1; at < end;) {
        const uint32_t value = nodes_[at].end;
        if (value >= end) break;  // a key without its value: none is built so
        if (nodes_[at].kind == DataKind::Text && text(at) == key) return value;
        at = nodes_[value].end;
    }
    return std::nullopt;
}

std::vector<uint32_t> DataTree::items(uint32_t list) const {
    std::vector<uint32_t> out;
    if (nodes_[list].kind != DataKind::List) return out;
    out.reserve(nodes_[list].children);
    for (uint32_t at = list + 1; at < nodes_[list].end; at = nodes_[at].end) out.push_back(at);
    return out;
}

}  // namespace osc::hang
