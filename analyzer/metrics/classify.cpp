#include "analyzer/metrics/classify.h"

#include "analyzer/metrics/comm_kernel_families.h"

#include <array>
#include <stdexcept>
#include <utility>

namespace osc {
namespace {

constexpr std::string_view kVoid = "void ";

constexpr std::array<std::string_view, 12> kShortTypes = {"i8",  "u8",  "i32", "u32",  "i64",    "u64",
                                                          "f16", "f32", "f64", "bf16", "f8e4m3", "f8e5m2"};

// NCCL <= 2.18 kernel names end in the C type of the reduction.
constexpr std::array<std::pair<std::string_view, std::string_view>, 12> kCTypes = {{
    {"__nv_fp8_e4m3", "f8e4m3"},
    {"__nv_fp8_e5m2", "f8e5m2"},
    {"__nv_bfloat16", "bf16"},
    {"uint8_t", "u8"},
    {"uint32_t", "u32"},
    {"uint64_t", "u64"},
    {"int8_t", "i8"},
    {"int32_t", "i32"},
    {"int64_t", "i64"},
    {"half", "f16"},
    {"float", "f32"},
    {"double", "f64"},
}};

// Collectives whose kernels are compiled without a meaningful element type
// (older NCCL names them with a placeholder Sum/int8_t).
bool typeless(std::string_view coll) {
    return coll == "AllGather" || coll == "AllGatherV" || coll == "Broadcast" || coll == "SendRecv";
}

std::string_view firstToken(std::string_view s) { return s.substr(0, s.find('_')); }

bool endsWith(std::string_view s, std::string_view suffix) {
    return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

std::regex compile(const std::string& pattern, const char* option) {
    try {
        return std::regex(pattern, std::regex::ECMAScript | std::regex::optimize);
    } catch (const std::regex_error& e) {
        throw std::invalid_argument(std::string("invalid ") + option + " pattern '" + pattern + "': " + e.what());
    }
}

}  // namespace

std::string_view bareKernelName(std::string_view name) {
    if (name.starts_with(kVoid)) name.remove_prefix(kVoid.size());
    if (auto paren = name.find('('); paren != std::string_view::npos) name = name.substr(0, paren);
    return name;
}

NcclKernelName parseNcclKernelName(std::string_view full) {
    NcclKernelName out;
    const std::string_view name = bareKernelName(full);
    if (!name.starts_with("nccl")) return out;
    out.isNccl = true;

    std::string_view rest;
    bool legacy = false;
    for (std::string_view prefix : {"ncclDevKernel_", "ncclSymDevKernel_", "ncclSymkDevKernel_"})
        if (name.starts_with(prefix)) rest = name.substr(prefix.size());
    if (rest.empty() && name.starts_with("ncclKernel_")) {
        rest = name.substr(std::string_view("ncclKernel_").size());
        legacy = true;
    }
    if (rest.empty()) return out;

    const std::string_view coll = firstToken(rest);
    // "Generic" runs whatever function the work item asks for: unknown here.
    if (coll == "Generic" || coll.empty()) return out;
    out.collective = std::string(coll);
    if (typeless(coll)) return out;

    if (legacy) {
        for (const auto& [ctype, shortType] : kCTypes)
            if (endsWith(rest, ctype) && rest.size() > ctype.size() && rest[rest.size() - ctype.size() - 1] == '_') {
                out.datatype = std::string(shortType);
                break;
            }
        return out;
    }
    // New scheme: the type is one of the '_'-separated parts.
    size_t pos = 0;
    while (pos <= rest.size()) {
        const size_t next = rest.find('_', pos);
        const std::string_view part =
            rest.substr(pos, next == std::string_view::npos ? std::string_view::npos : next - pos);
        for (auto t : kShortTypes)
            if (part == t) {
                out.datatype = std::string(t);
                return out;
            }
        if (next == std::string_view::npos) break;
        pos = next + 1;
    }
    return out;
}

bool searchName(std::string_view name, const std::regex& pattern) {
    name = name.substr(0, kRegexNameLimit);
    return std::regex_search(name.begin(), name.end(), pattern);
}

ActivityClassifier::ActivityClassifier(const StringTable& strings, const AnalysisSettings& settings)
    : strings_(strings), commCopies_(settings.commCopies) {
    for (const auto& p : settings.commKernelPatterns) patterns_.push_back(compile(p, "--comm-kernel"));
}

Category ActivityClassifier::classifyKernel(uint32_t nameId) {
    if (nameId >= category_.size()) {
        if (nameId == kNoId) return Category::Compute;
        category_.resize(std::max<size_t>(strings_.size(), nameId + 1), kUnclassified);
    }
    uint8_t& c = category_[nameId];
    if (c == kUnclassified) {
        const std::string_view name = strings_.at(nameId);
        bool comm = communicationFamily(name) != nullptr;
        for (size_t i = 0; !comm && i < patterns_.size(); ++i) comm = searchName(name, patterns_[i]);
        c = static_cast<uint8_t>(comm ? Category::Communication : Category::Compute);
    }
    return static_cast<Category>(c);
}

Category ActivityClassifier::copy(CopyKind kind) const {
    switch (kind) {
        case CopyKind::PtoP:
            return Category::Communication;
        case CopyKind::HtoD:
        case CopyKind::DtoH:
        case CopyKind::HtoA:
        case CopyKind::AtoH:
            return commCopies_ ? Category::Communication : Category::Memory;
        default:
            return Category::Memory;
    }
}

const NcclKernelName& ActivityClassifier::ncclName(uint32_t nameId) {
    static const NcclKernelName kNone;
    if (nameId == kNoId) return kNone;
    if (nameId >= parsedIndex_.size()) parsedIndex_.resize(std::max<size_t>(strings_.size(), nameId + 1), -1);
    if (parsedIndex_[nameId] < 0) {
        parsedIndex_[nameId] = static_cast<int32_t>(parsed_.size());
        parsed_.push_back(parseNcclKernelName(strings_.at(nameId)));
    }
    return parsed_[static_cast<size_t>(parsedIndex_[nameId])];
}

}  // namespace osc
