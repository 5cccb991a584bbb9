// A plain aligned table for terminals: first column left-aligned, the rest
// right-aligned, columns separated by two spaces.
#pragma once

#include <string>
#include <vector>

namespace osc::report {

class TextTable {
public:
    explicit TextTable(std::vector<std::string> header) : header_(std::move(header)) {}
    void addRow(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
    bool empty() const { return rows_.empty(); }
    // Each line starts with `indent`.
    std::string render(const std::string& indent = "  ") const;
    // The same rows as a GitHub-flavoured Markdown table.
    std::string renderMarkdown() const;

private:
    std::vector<std::string> header_;
    std::vector<std::vector<std::string>> rows_;
};

}  // namespace osc::report
