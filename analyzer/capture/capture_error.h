// The one exception type for bad input. Its message is the single line the
// user sees: "<file>: <what is wrong>". Command-line tools print it and exit 2.
#pragma once

#include <stdexcept>
#include <string>

namespace osc {

class CaptureError : public std::runtime_error {
public:
    CaptureError(const std::string& path, const std::string& problem)
        : std::runtime_error(path + ": " + problem), path_(path), problem_(problem) {}
    const std::string& path() const { return path_; }
    const std::string& problem() const { return problem_; }

private:
    std::string path_, problem_;
};

}  // namespace osc
