// A private temporary directory for one test (mkdtemp: mode 0700, a name no
// one else can have planted), removed with everything in it at the end.
#pragma once

#include <stdlib.h>

#include <cerrno>
#include <filesystem>
#include <string>
#include <system_error>

namespace osc::testsupport {

class TempDir {
public:
    // Throws when the directory cannot be made, so that a test fails (gtest
    // reports the exception) rather than writing "/name" at the root.
    TempDir() {
        std::string tmpl = (std::filesystem::temp_directory_path() / "osc-test-XXXXXX").string();
        if (!::mkdtemp(tmpl.data())) throw std::system_error(errno, std::generic_category(), "mkdtemp " + tmpl);
        path_ = tmpl;
    }
    ~TempDir() {
        std::error_code ec;
        std::filesystem::remove_all(path_, ec);
    }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    const std::string& path() const { return path_; }
    std::string operator/(const std::string& name) const { return path_ + "/" + name; }

private:
    std::string path_;
};

}  // namespace osc::testsupport
