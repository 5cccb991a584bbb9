// How the output code reports what the operating system refused: one
// CaptureError naming the path, with errno's words, the same from every file.
#pragma once

#include "analyzer/capture/capture_error.h"

#include <cstring>
#include <string>

namespace osc::output {

[[noreturn]] inline void fail(const std::string& path, const std::string& problem) {
    throw CaptureError(path, problem);
}

inline std::string errorText(int error) { return std::strerror(error); }

}  // namespace osc::output
