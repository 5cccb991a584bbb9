// Which GPU activity is computation, communication or memory traffic
// (docs/design.md section 3), and what NCCL kernel names say about the collective.
#pragma once

#include "analyzer/metrics/analysis.h"

#include <regex>
#include <string>
#include <string_view>
#include <vector>

namespace osc {

// What an NCCL kernel name tells: the collective and, for reductions, the
// element type. Algorithm and protocol in the name are the compiled
// specialisation, not what ran, so they are deliberately not parsed.
struct NcclKernelName {
    bool isNccl = false;     // the name (without "void ") starts with "nccl"
    std::string collective;  // AllReduce, AllGather, ReduceScatter, Broadcast, Reduce,
                             // AllGatherV, SendRecv, ... ; "" when unknown (Generic)
    std::string datatype;    // i8 u8 i32 u32 i64 u64 f16 f32 f64 bf16 f8e4m3 f8e5m2, or ""
};

// Parses both naming schemes: ncclDevKernel_<coll>[_<op>_<type>]_<algo>_<proto>
// (NCCL >= 2.19, also ncclSymDevKernel_/ncclSymkDevKernel_) and
// ncclKernel_<coll>_<ALGO>_<PROTO>_<op>_<ctype> (NCCL <= 2.18, C type names).
// Accepts a leading "void " and a trailing argument list.
NcclKernelName parseNcclKernelName(std::string_view name);

// The name without a leading "void " and without its argument list.
std::string_view bareKernelName(std::string_view name);

// The longest prefix of a name a user regex (--comm-kernel, --step-pattern)
// is matched against. std::regex recurses once per character it consumes, so
// an unbounded name from a file (30,000 digits) overflows the stack; 2,048
// bytes stays under 2 MB of stack and is longer than any real step name, and
// a kernel name's first 2,048 bytes hold its namespace and function name.
inline constexpr size_t kRegexNameLimit = 2048;

// regex_search over at most the first kRegexNameLimit bytes of `name`.
bool searchName(std::string_view name, const std::regex& pattern);

// Classifies per unique name id (a capture holds far fewer distinct kernel
// names than kernels), caching each answer; the regexes run once per name.
class ActivityClassifier {
public:
    // Throws std::invalid_argument naming the pattern when a regex is invalid.
    ActivityClassifier(const StringTable& strings, const AnalysisSettings& settings);

    // Inline where the answer is cached: every pass of a device's analysis
    // asks it once per kernel.
    Category kernel(uint32_t nameId) {
        if (nameId < category_.size() && category_[nameId] != kUnclassified)
            return static_cast<Category>(category_[nameId]);
        return classifyKernel(nameId);
    }
    Category copy(CopyKind kind) const;
    static Category memset() { return Category::Memory; }
    // Parsed NCCL name for a kernel name id (cached like the category).
    const NcclKernelName& ncclName(uint32_t nameId);

private:
    static constexpr uint8_t kUnclassified = 0xFF;
    Category classifyKernel(uint32_t nameId);

    const StringTable& strings_;
    std::vector<std::regex> patterns_;
    bool commCopies_ = false;
    std::vector<uint8_t> category_;     // by name id, or kUnclassified
    std::vector<int32_t> parsedIndex_;  // by name id; -1 = not yet parsed
    std::vector<NcclKernelName> parsed_;
};

}  // namespace osc
