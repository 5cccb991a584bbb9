// JsonMembers writes the report's hottest objects by hand; the report must
// stay the same bytes, so every value kind is checked against nlohmann's own
// dump(), the writer of every other object in the report.
#include "analyzer/report/json_members.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

namespace osc::report {
namespace {

using nlohmann::ordered_json;

std::string dumped(const ordered_json& j, int indent) {
    return j.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

TEST(JsonMembers, DoublesAsDumpWritesThem) {
    std::mt19937_64 rng(11);
    std::vector<double> values = {0.0,
                                  -0.0,
                                  1.0,
                                  -1.0,
                                  0.1,
                                  1e-7,
                                  1e21,
                                  1e22,
                                  123456789012345680.0,
                                  std::numeric_limits<double>::min(),
                                  std::numeric_limits<double>::denorm_min(),
                                  std::numeric_limits<double>::max(),
                                  23.593726796120873};
    for (int i = 0; i < 20000; ++i) {
        uint64_t bits = rng();
        double v;
        std::memcpy(&v, &bits, sizeof v);
        values.push_back(v);
        values.push_back(std::ldexp(static_cast<double>(rng() % 1000000), static_cast<int>(rng() % 80) - 40));
    }
    for (double v : values) {
        std::string out;
        appendJsonDouble(out, v);
        ASSERT_EQ(out, dumped(ordered_json(v), -1)) << v;
    }
    std::string out;
    appendJsonDouble(out, std::nan(""));
    appendJsonDouble(out, -std::numeric_limits<double>::infinity());
    EXPECT_EQ(out, "nullnull");
}

TEST(JsonMembers, StringsAsDumpWritesThem) {
    std::mt19937 rng(5);
    std::vector<std::string> values = {"",     "AllReduce", "a\"b",   "back\\slash",        "tab\there",
                                       "nl\n", "\x7f",      "é ü 中", "bad \xff\xfe utf-8", std::string("nul\0in", 6)};
    for (int i = 0; i < 5000; ++i) {
        std::string s(rng() % 12, ' ');
        for (char& c : s) c = static_cast<char>(rng() % 256);
        values.push_back(s);
    }
    // Kernel names are long: printable ASCII with at most one byte dump()
    // writes otherwise, anywhere in sixteen-byte blocks or after them.
    for (int i = 0; i < 5000; ++i) {
        std::string s(rng() % 80, ' ');
        for (char& c : s) c = static_cast<char>(0x20 + rng() % 95);
        if (!s.empty() && i % 2) s[rng() % s.size()] = "\"\\\x1f\x7f\x80\xff\n\x00"[rng() % 8];
        values.push_back(s);
    }
    for (const std::string& v : values) {
        std::string out;
        appendJsonString(out, v);
        ASSERT_EQ(out, dumped(ordered_json(v), -1));
    }
}

// Every member kind, pretty at two indents and compact, against the same
// object built as json and dumped (reindented as the report's writer does).
TEST(JsonMembers, ObjectsAsDumpLaysThemOut) {
    const std::vector<std::pair<int, int>> some = {{0, 3}, {12, -1}}, none;
    for (const auto* pairs : {&some, &none}) {
        ordered_json expect;
        expect["name"] = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(x)";
        expect["collective"] = nullptr;
        expect["start_ns"] = int64_t{-5};
        expect["bytes"] = uint64_t{18446744073709551615u};
        expect["seq_number"] = nullptr;
        expect["bandwidth_gbps"] = 1.5;
        expect["busbw_gbps"] = nullptr;
        expect["point_to_point"] = true;
        ordered_json inst = ordered_json::array();
        for (const auto& [a, b] : *pairs) inst.push_back({{"device", a}, {"collective", b}});
        expect["instances"] = inst;
        expect["last"] = false;
        for (int indent : {-1, 0, 4}) {
            std::string out;
            JsonMembers m(out, indent);
            m.string("name", "ncclDevKernel_AllReduce_Sum_f32_RING_LL(x)");
            m.stringOrNull("collective", "");
            m.integer("start_ns", -5);
            m.unsignedOrNull("bytes", uint64_t{18446744073709551615u});
            m.unsignedOrNull("seq_number", std::nullopt);
            m.number("bandwidth_gbps", 1.5);
            m.number("busbw_gbps", std::nullopt);
            m.boolean("point_to_point", true);
            m.pairs("instances", *pairs, "device", "collective");
            m.boolean("last", false);
            m.close();
            std::string want = dumped(expect, indent < 0 ? -1 : 2);
            if (indent > 0) {  // dump(2) at column 0, moved right as the report's writer moves it
                std::string moved;
                for (char c : want) {
                    moved += c;
                    if (c == '\n') moved.append(static_cast<size_t>(indent), ' ');
                }
                want = moved;
            }
            EXPECT_EQ(out, want) << indent;
        }
    }
    std::string empty;
    JsonMembers(empty, 2).close();
    EXPECT_EQ(empty, "{}");
}

// Nested objects and arrays of objects (a step's bottleneck and findings),
// empty and not, and integers that may be null, against json's dump.
TEST(JsonMembers, NestedObjectsAndArraysAsDumpLaysThemOut) {
    for (size_t findings : {0u, 1u, 3u}) {
        ordered_json expect;
        expect["name"] = "ProfilerStep#7";
        expect["wait_ns"] = nullptr;
        expect["count"] = int64_t{-12};
        ordered_json bottleneck;
        bottleneck["collective"] = 4;
        bottleneck["inner"] = ordered_json::object();
        ordered_json list = ordered_json::array();
        for (size_t i = 0; i < findings; ++i) list.push_back({{"kind", "idle-gap"}, {"exposed_ns", i}});
        bottleneck["findings"] = list;
        expect["bottleneck"] = bottleneck;
        expect["after"] = true;
        for (int indent : {-1, 0, 6}) {
            std::string out;
            JsonMembers m(out, indent);
            m.string("name", "ProfilerStep#7");
            m.integerOrNull("wait_ns", std::nullopt);
            m.integerOrNull("count", -12);
            m.object("bottleneck", [&](JsonMembers& b) {
                b.integer("collective", 4);
                b.object("inner", [](JsonMembers&) {});
                b.objects("findings", findings, [](size_t i, JsonMembers& f) {
                    f.string("kind", "idle-gap");
                    f.integer("exposed_ns", static_cast<int64_t>(i));
                });
            });
            m.boolean("after", true);
            m.close();
            std::string want = dumped(expect, indent < 0 ? -1 : 2);
            if (indent > 0) {
                std::string moved;
                for (char c : want) {
                    moved += c;
                    if (c == '\n') moved.append(static_cast<size_t>(indent), ' ');
                }
                want = moved;
            }
            EXPECT_EQ(out, want) << indent << " with " << findings << " findings";
        }
    }
}

}  // namespace
}  // namespace osc::report
