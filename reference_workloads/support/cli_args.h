// A small declarative command-line parser: each program declares its options
// (with defaults and help), then reads typed values. Kept free of CUDA so the
// unit tests exercise exactly the parsing the programs use.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace oscwl {

class CliArgs {
public:
    CliArgs(std::string program, std::string summary);

    // Declares an option that takes a value ("--steps 20" or "--steps=20").
    void add_value(const std::string& name, const std::string& default_value, const std::string& help);
    // Declares a switch without a value ("--verbose").
    void add_flag(const std::string& name, const std::string& help);

    // Throws HelpRequested for --help, UsageError for anything malformed.
    void parse(int argc, const char* const* argv);

    std::string text(const std::string& name) const;
    bool flag(const std::string& name) const;
    // Integer in [min, max]; UsageError names the option otherwise.
    std::int64_t integer(const std::string& name, std::int64_t min, std::int64_t max) const;
    double real(const std::string& name, double min, double max) const;
    // One of the listed words; UsageError lists the allowed words otherwise.
    std::string choice(const std::string& name, const std::vector<std::string>& allowed) const;
    // True when the user gave the option explicitly.
    bool given(const std::string& name) const;

    std::string usage() const;

private:
    struct Option {
        std::string name;
        bool takes_value = true;
        std::string default_value;
        std::string help;
    };
    const Option& find(const std::string& name) const;

    std::string program_, summary_;
    std::vector<Option> options_;
    std::map<std::string, std::string> values_;
};

}  // namespace oscwl
