// Kernel names as CUPTI reports them are mangled; the capture stores the
// demangled name and the short name (the bare function name, as nsys's
// shortName). Demangling is slow, so each distinct name is done once.
#pragma once

#include "analyzer/capture/row_sink.h"

#include <array>
#include <string>
#include <string_view>
#include <unordered_map>

namespace osc::agent {

// "_Z3fooPfi" -> "foo(float*, int)"; names that are not mangled come back unchanged.
std::string demangle(std::string_view mangled);
// "void ns::kernel<float, 4>(float*, int)" -> "kernel".
std::string shortKernelName(std::string_view demangled);

class KernelNameCache {
public:
    struct Names {
        std::string demangled, shortName;
        // Both names' ids in the sink that last wrote them (RowSink::serial()).
        mutable uint64_t sinkSerial = 0;
        mutable uint32_t demangledId = kNoId, shortId = kNoId;
    };
    const Names& lookup(std::string_view mangled);
    // CUPTI hands every record of a kernel the same name pointer: a hit on
    // the pointer (confirmed by the text) skips hashing a long mangled name.
    const Names& lookup(const char* mangled);
    size_t size() const { return names_.size(); }

private:
    struct Hash {
        using is_transparent = void;
        size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
    };
    using Map = std::unordered_map<std::string, Names, Hash, std::equal_to<>>;
    Map names_;
    struct Recent {
        const char* pointer = nullptr;
        const Map::value_type* entry = nullptr;
    };
    std::array<Recent, 64> recent_{};
};

// Fills the row's names, with the sink's ids looked up once per sink.
void setKernelNames(KernelRow& row, const KernelNameCache::Names& names, RowSink& sink);

}  // namespace osc::agent
