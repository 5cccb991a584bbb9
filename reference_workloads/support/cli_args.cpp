#include "reference_workloads/support/cli_args.h"

#include <cerrno>
#include <cstdlib>
#include <sstream>

#include "reference_workloads/support/workload_error.h"

namespace oscwl {

CliArgs::CliArgs(std::string program, std::string summary)
    : program_(std::move(program)), summary_(std::move(summary)) {}

void CliArgs::add_value(const std::string& name, const std::string& default_value, const std::string& help) {
    options_.push_back({name, true, default_value, help});
}

void CliArgs::add_flag(const std::string& name, const std::string& help) {
    options_.push_back({name, false, "", help});
}

const CliArgs::Option& CliArgs::find(const std::string& name) const {
    for (const Option& o : options_)
        if (o.name == name) return o;
    // A programming error (the program asked for an undeclared option).
    throw std::logic_error("undeclared option --" + name);
}

void CliArgs::parse(int argc, const char* const* argv) {
    for (int i = 1; i < argc; ++i) {
        std::string arg = argv[i];
        if (arg == "--help" || arg == "-h") throw HelpRequested(usage());
        if (arg.rfind("--", 0) != 0 || arg.size() == 2)
            throw UsageError(program_ + ": unexpected argument '" + arg + "' (see --help)");
        std::string name = arg.substr(2);
        std::string value;
        bool inline_value = false;
        if (auto eq = name.find('='); eq != std::string::npos) {
            value = name.substr(eq + 1);
            name = name.substr(0, eq);
            inline_value = true;
        }
        const Option* opt = nullptr;
        for (const Option& o : options_)
            if (o.name == name) opt = &o;
        if (!opt) throw UsageError(program_ + ": unknown option --" + name + " (see --help)");
        if (!opt->takes_value) {
            if (inline_value) throw UsageError(program_ + ": --" + name + " takes no value");
            values_[name] = "1";
            continue;
        }
        if (!inline_value) {
            if (i + 1 >= argc) throw UsageError(program_ + ": --" + name + " needs a value");
            value = argv[++i];
        }
        if (value.empty()) throw UsageError(program_ + ": --" + name + " needs a value");
        values_[name] = value;
    }
}

bool CliArgs::given(const std::string& name) const {
    find(name);
    return values_.count(name) != 0;
}

std::string CliArgs::text(const std::string& name) const {
    const Option& o = find(name);
    auto it = values_.find(name);
    return it == values_.end() ? o.default_value : it->second;
}

bool CliArgs::flag(const std::string& name) const {
    find(name);
    return values_.count(name) != 0;
}

std::int64_t CliArgs::integer(const std::string& name, std::int64_t min, std::int64_t max) const {
    std::string v = text(name);
    errno = 0;
    char* end = nullptr;
    long long parsed = std::strtoll(v.c_str(), &end, 10);
    if (v.empty() || *end != '\0' || errno == ERANGE)
        throw UsageError(program_ + ": --" + name + " expects an integer, got '" + v + "'");
    if (parsed < min || parsed > max)
        throw UsageError(program_ + ": --" + name + " must be between " + std::to_string(min) + " and " +
                         std::to_string(max) + ", got " + v);
    return parsed;
}

double CliArgs::real(const std::string& name, double min, double max) const {
    std::string v = text(name);
    errno = 0;
    char* end = nullptr;
    double parsed = std::strtod(v.c_str(), &end);
    if (v.empty() || *end != '\0' || errno == ERANGE || !(parsed == parsed))
        throw UsageError(program_ + ": --" + name + " expects a number, got '" + v + "'");
    if (parsed < min || parsed > max) {
        std::ostringstream msg;
        msg << program_ << ": --" << name << " must be between " << min << " and " << max << ", got " << v;
        throw UsageError(msg.str());
    }
    return parsed;
}

std::string CliArgs::choice(const std::string& name, const std::vector<std::string>& allowed) const {
    std::string v = text(name);
    for (const std::string& a : allowed)
        if (a == v) return v;
    std::string list;
    for (const std::string& a : allowed) list += (list.empty() ? "" : "|") + a;
    throw UsageError(program_ + ": --" + name + " must be one of " + list + ", got '" + v + "'");
}

std::string CliArgs::usage() const {
    std::ostringstream out;
    out << "usage: " << program_ << " [options]\n" << summary_ << "\n\noptions:\n";
    for (const Option& o : options_) {
        std::string left = "  --" + o.name + (o.takes_value ? " VALUE" : "");
        out << left;
        out << std::string(left.size() < 26 ? 26 - left.size() : 1, ' ') << o.help;
        if (o.takes_value && !o.default_value.empty()) out << " (default " << o.default_value << ")";
        out << "\n";
    }
    out << "  --help                  print this help and exit\n";
    return out.str();
}

}  // namespace oscwl
