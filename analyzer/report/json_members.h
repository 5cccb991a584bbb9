// One JSON object appended member by member to a string, byte for byte as
// nlohmann::json's dump(2) lays it out at a given indent (dump(-1)'s with a
// negative indent), for the objects a big report holds millions of (the
// collectives): no tree, no temporary json values, one buffer. Numbers and
// strings come out exactly as dump writes them (doubles through nlohmann's
// own shortest round-trip formatting; strings that need escaping through
// dump itself), so the report stays the same bytes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace osc::report {

class JsonMembers {
public:
    JsonMembers(std::string& out, int indent);

    void integer(std::string_view key, int64_t v);
    void number(std::string_view key, const std::optional<double>& v);  // null when absent or not finite
    void unsignedOrNull(std::string_view key, const std::optional<uint64_t>& v);
    void string(std::string_view key, std::string_view v);
    void stringOrNull(std::string_view key, std::string_view v);  // "" is null
    void boolean(std::string_view key, bool v);
    void null(std::string_view key);
    void integerOrNull(std::string_view key, const std::optional<int64_t>& v);
    // An array of objects of two integer members: [{first: p.first, second: p.second}, ...].
    void pairs(std::string_view key, const std::vector<std::pair<int, int>>& items, std::string_view first,
               std::string_view second);
    // A member whose value is an object, its members added by fill(JsonMembers&).
    template <class Fill>
    void object(std::string_view k, Fill fill) {
        key(k);
        JsonMembers inner(out_, indent_ < 0 ? -1 : indent_ + 2);
        fill(inner);
        inner.close();
    }
    // A member whose value is an array of n objects, item i's members added
    // by fill(i, JsonMembers&).
    template <class Fill>
    void objects(std::string_view k, size_t n, Fill fill) {
        key(k);
        out_ += '[';
        const int item = indent_ < 0 ? -1 : indent_ + 4;
        for (size_t i = 0; i < n; ++i) {
            if (i) out_ += ',';
            if (item >= 0) {
                out_ += '\n';
                out_.append(static_cast<size_t>(item), ' ');
            }
            JsonMembers inner(out_, item);
            fill(i, inner);
            inner.close();
        }
        closeArray(n);
    }
    void close();

private:
    void key(std::string_view k);
    void appendKey(std::string_view k, std::string_view after);
    void closeArray(size_t n);

    std::string& out_;
    int indent_;
    bool first_ = true;
};

// A JSON string as dump() writes it (invalid UTF-8 replaced).
void appendJsonString(std::string& out, std::string_view v);
// A double as dump() writes it: shortest round-trip digits, "1.0" for one,
// null for NaN and infinities.
void appendJsonDouble(std::string& out, double v);

}  // namespace osc::report
