#include "agent/core/kernel_names.h"

#include <cxxabi.h>
#include <cstdlib>
#include <cstring>
#include <functional>

namespace osc::agent {

std::string demangle(std::string_view mangled) {
    if (mangled.size() < 2 || mangled[0] != '_' || mangled[1] != 'Z') return std::string(mangled);
    const std::string input(mangled);
    int status = 0;
    char* out = abi::__cxa_demangle(input.c_str(), nullptr, nullptr, &status);
    if (status != 0 || !out) {
        std::free(out);
        return input;
    }
    std::string result(out);
    std::free(out);
    return result;
}

std::string shortKernelName(std::string_view name) {
    // Cut the parameter list: the last top-level '(' (templates may hold parentheses).
    int depth = 0;
    size_t paramStart = name.size();
    for (size_t i = name.size(); i-- > 0;) {
        const char c = name[i];
        if (c == ')' || c == '>')
            ++depth;
        else if (c == '<')
            --depth;
        else if (c == '(') {
            if (--depth == 0) {
                paramStart = i;
                break;
            }
        }
    }
    if (depth != 0) paramStart = name.size();
    std::string_view head = name.substr(0, paramStart);
    // Drop trailing template arguments.
    if (!head.empty() && head.back() == '>') {
        int d = 0;
        for (size_t i = head.size(); i-- > 0;) {
            if (head[i] == '>')
                ++d;
            else if (head[i] == '<' && --d == 0) {
                head = head.substr(0, i);
                break;
            }
        }
    }
    // Drop the return type and namespaces: keep what follows the last top-level ' ' or "::".
    size_t begin = 0;
    depth = 0;
    for (size_t i = 0; i < head.size(); ++i) {
        const char c = head[i];
        if (c == '<')
            ++depth;
        else if (c == '>')
            --depth;
        else if (depth == 0 && c == ' ')
            begin = i + 1;
        else if (depth == 0 && c == ':' && i + 1 < head.size() && head[i + 1] == ':')
            begin = i + 2;
    }
    head = head.substr(begin);
    return head.empty() ? std::string(name) : std::string(head);
}

const KernelNameCache::Names& KernelNameCache::lookup(std::string_view mangled) {
    auto it = names_.find(mangled);
    if (it != names_.end()) return it->second;
    Names n;
    n.demangled = demangle(mangled);
    n.shortName = shortKernelName(n.demangled);
    return names_.emplace(std::string(mangled), std::move(n)).first->second;
}

const KernelNameCache::Names& KernelNameCache::lookup(const char* mangled) {
    Recent& slot = recent_[(std::hash<const void*>{}(mangled) >> 4) % recent_.size()];
    // The pointer alone is not proof: a module unload could free the text
    // and a later kernel's name could land at the same address.
    if (slot.pointer == mangled && std::strcmp(slot.entry->first.c_str(), mangled) == 0) return slot.entry->second;
    const Names& names = lookup(std::string_view(mangled));
    slot.pointer = mangled;
    slot.entry = &*names_.find(std::string_view(mangled));
    return names;
}

void setKernelNames(KernelRow& row, const KernelNameCache::Names& names, RowSink& sink) {
    row.demangledName = names.demangled;
    row.shortName = names.shortName;
    if (names.sinkSerial != sink.serial()) {
        names.demangledId = sink.stringId(names.demangled);
        names.shortId = sink.stringId(names.shortName);
        names.sinkSerial = sink.serial();
    }
    row.demangledNameId = names.demangledId;
    row.shortNameId = names.shortId;
}

}  // namespace osc::agent
