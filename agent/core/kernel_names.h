// Kernel names as CUPTI reports them are mangled; the capture stores the
// demangled name and the short name (the bare function name, as nsys's
// shortName). Demangling is slow, so each distinct name is done once.
#pragma once

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
    };
    const Names& lookup(std::string_view mangled);
    size_t size() const { return names_.size(); }

private:
    struct Hash {
        using is_transparent = void;
        size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
    };
    std::unordered_map<std::string, Names, Hash, std::equal_to<>> names_;
};

}  // namespace osc::agent
