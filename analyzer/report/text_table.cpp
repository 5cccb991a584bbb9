#include "analyzer/report/text_table.h"

#include <algorithm>

namespace osc::report {
namespace {

// Display width, counting each UTF-8 code point once.
size_t width(const std::string& s) {
    size_t n = 0;
    for (unsigned char c : s)
        if ((c & 0xC0) != 0x80) ++n;
    return n;
}

std::string escapeCell(const std::string& s) {
    std::string out;
    for (char c : s) {
        if (c == '|')
            out += "\\|";
        else if (c == '\n')
            out += ' ';
        else
            out += c;
    }
    return out;
}

}  // namespace

std::string TextTable::render(const std::string& indent) const {
    std::vector<size_t> w(header_.size(), 0);
    auto measure = [&](const std::vector<std::string>& row) {
        for (size_t i = 0; i < row.size() && i < w.size(); ++i) w[i] = std::max(w[i], width(row[i]));
    };
    measure(header_);
    for (const auto& r : rows_) measure(r);
    auto line = [&](const std::vector<std::string>& row) {
        std::string out = indent;
        for (size_t i = 0; i < w.size(); ++i) {
            const std::string cell = i < row.size() ? row[i] : "";
            const std::string pad(w[i] - width(cell), ' ');
            if (i > 0) out += "  ";
            out += i == 0 ? cell + (i + 1 < w.size() ? pad : "") : pad + cell;
        }
        return out + "\n";
    };
    std::string out = line(header_);
    for (const auto& r : rows_) out += line(r);
    return out;
}

std::string TextTable::renderMarkdown() const {
    auto line = [&](const std::vector<std::string>& row) {
        std::string out = "|";
        for (size_t i = 0; i < header_.size(); ++i) out += " " + escapeCell(i < row.size() ? row[i] : "") + " |";
        return out + "\n";
    };
    std::string out = line(header_) + "|";
    for (size_t i = 0; i < header_.size(); ++i) out += i == 0 ? " :--- |" : " ---: |";
    out += "\n";
    for (const auto& r : rows_) out += line(r);
    return out;
}

}  // namespace osc::report
