#include "cli/help_format.h"

#include <memory>
#include <sstream>

namespace osc::cli {

std::string HelpFormatter::make_subcommand(const CLI::App* sub) const {
    const std::string& description = sub->get_description();
    std::ostringstream out;
    CLI::detail::format_help(out, sub->get_display_name(true), description.substr(0, description.find('\n')),
                             column_width_);
    return out.str();
}

std::string HelpFormatter::make_help(const CLI::App* app, std::string name, CLI::AppFormatMode mode) const {
    std::string help = CLI::Formatter::make_help(app, std::move(name), mode);
    if (example_.empty() || mode == CLI::AppFormatMode::Sub) return help;
    return "Example: " + example_ + "\n\n" + help;
}

void describe(CLI::App* cmd, const std::string& summary, const std::string& example, const std::string& details) {
    cmd->description(details.empty() ? summary : summary + "\n" + details);
    cmd->formatter(std::make_shared<HelpFormatter>(example));
}

}  // namespace osc::cli
