// The in-place, parallel Kineto reader against the streaming one (the
// reference: JsonScanner + SaxHandler, whose readings the other Kineto tests
// check against hand-worked values): on the public real traces, on random
// traces with every kind of field, value and spacing the format allows, with
// cuts that fall inside strings and nested values, on every piece size and
// thread count, and on broken input, where both must fail with the same
// message. Every field of the model is compared (tests/analyzer/capture_dump.h).
#include "analyzer/capture/capture_error.h"
#include "analyzer/import/gz_reader.h"
#include "analyzer/import/kineto_reader.h"
#include "analyzer/import/trace_bytes.h"
#include "tests/analyzer/capture_dump.h"
#include "tests/analyzer/test_kineto_fixture.h"
#include "tests/support/temp_dir.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

using namespace osc;

namespace {

// What a reading gives: the model, or the one-line error.
std::string outcome(const std::function<void(Capture&)>& read) {
    Capture c;
    try {
        read(c);
    } catch (const CaptureError& e) {
        return std::string("error: ") + e.what();
    }
    return osc::testing::dumpCapture(c);
}

std::string streaming(std::string_view text, const LoadOptions& options = {}) {
    kineto::ReadWays ways;
    ways.streamingOnly = true;
    return outcome([&](Capture& c) { kineto::readKinetoText(text, "t.json", options, c, ways); });
}

// `tookInPlace`: whether the in-place reader answered (else it left the
// text to the streaming one).
std::string inPlace(std::string_view text, size_t pieceBytes, int threads, bool* tookInPlace = nullptr,
                    const LoadOptions& options = {}) {
    kineto::ReadWays ways;
    ways.pieceBytes = pieceBytes;
    ways.threads = threads;
    ways.readInPlace = tookInPlace;
    return outcome([&](Capture& c) { kineto::readKinetoText(text, "t.json", options, c, ways); });
}

// Piece sizes from one byte (a cut in every element) up.
void expectAllWaysAgree(const std::string& text, const std::string& what, const LoadOptions& options = {}) {
    const std::string reference = streaming(text, options);
    ASSERT_EQ(reference.rfind("error: ", 0), std::string::npos) << what << ": " << reference;
    for (const size_t piece : {size_t{17}, size_t{61}, size_t{4096}, size_t{1} << 20})
        for (const int threads : {1, 3}) {
            bool tookInPlace = false;
            const std::string got = inPlace(text, piece, threads, &tookInPlace, options);
            ASSERT_EQ(got, reference) << what << ", pieces of " << piece << " bytes, " << threads << " threads";
            EXPECT_TRUE(tookInPlace) << what << ": left to the streaming reader";
        }
}

std::string pick(std::mt19937_64& rng, std::initializer_list<const char*> options) {
    return *(options.begin() + static_cast<std::ptrdiff_t>(rng() % options.size()));
}

// White space as JSON allows it, sometimes none.
std::string ws(std::mt19937_64& rng) {
    switch (rng() % 6) {
        case 0:
            return "";
        case 1:
            return "\n    ";
        case 2:
            return " \t\r\n ";
        default:
            return " ";
    }
}

// A value of any JSON kind for keys the reader skips, nested a few levels,
// with `}, {` inside strings and arrays of objects to mislead the cuts.
std::string anyValue(std::mt19937_64& rng, int depth) {
    switch (rng() % (depth > 3 ? 5 : 8)) {
        case 0:
            return pick(rng, {"\"}, {\\\"ph\\\": 1}, {\"", "\"plain\"", "\"\\u00e9t\\u00E9 \\ud83d\\ude00\"",
                              "\"a\\\\b\\/c\\n\\t\\r\\b\\f\""});
        case 1:
            return pick(rng, {"0", "-0", "12", "-7", "3.25", "1e3", "-2.5E-2", "18446744073709551615",
                              "-9223372036854775808", "123456789012345678901234"});
        case 2:
            return pick(rng, {"true", "false", "null"});
        case 3:
            return "\"" + std::to_string(rng() % 1000) + "\"";
        case 4:
            return "[]";
        case 5: {
            std::string s = "[";
            for (int i = 0, n = static_cast<int>(rng() % 4); i < n; ++i)
                s += (i ? "," + ws(rng) : "") + anyValue(rng, depth + 1);
            return s + "]";
        }
        case 6:
            return "[{\"a\": 1}," + ws(rng) + "{\"ph\": \"X\", \"b\": [1, {}]}]";
        default: {
            std::string s = "{";
            for (int i = 0, n = static_cast<int>(rng() % 4); i < n; ++i)
                s += (i ? "," + ws(rng) : "") + "\"k" + std::to_string(i) + "\":" + ws(rng) + anyValue(rng, depth + 1);
            return s + "}";
        }
    }
}

std::string member(std::mt19937_64& rng, const std::string& key, const std::string& value) {
    return "\"" + key + "\"" + ws(rng) + ":" + ws(rng) + value;
}

std::string timeText(std::mt19937_64& rng, int64_t ns) {
    switch (rng() % 4) {
        case 0:
            return std::to_string(ns / 1000);  // an integer of µs
        case 1:
            return std::to_string(ns / 1000) + "e0";
        default:
            return osc::testing::nsAsMicros(ns);
    }
}

std::string randomEvent(std::mt19937_64& rng, int index) {
    static const char* cats[] = {"kernel",          "gpu_memcpy",          "gpu_memset", "cuda_runtime", "cuda_driver",
                                 "user_annotation", "gpu_user_annotation", "cuda_sync",  "cpu_op",       "ac2g",
                                 "Kernel",          "python_function"};
    std::vector<std::string> members;
    const std::string cat = cats[rng() % (sizeof cats / sizeof *cats)];
    const bool meta = rng() % 15 == 0;
    const std::string ph = meta ? "\"M\"" : pick(rng, {"\"X\"", "\"X\"", "\"X\"", "\"i\"", "\"s\""});
    // Only events the reader drops may lack a time (a kept one without is an error).
    const bool mayLackTimes = ph != "\"X\"" || cat == "ac2g" || cat == "python_function";
    members.push_back(member(rng, "ph", ph));
    members.push_back(member(rng, "cat", "\"" + cat + "\""));
    if (meta) {
        members.push_back(member(rng, "name", "\"thread_name\""));
        members.push_back(member(rng, "args", "{\"name\": \"thread 12 (pt_" + std::to_string(index % 3) + ")\"}"));
    } else {
        members.push_back(member(rng, "name",
                                 pick(rng, {"\"void gemm<128>(Params)\"", "\"Memcpy DtoH (Device -> Pinned)\"",
                                            "\"ncclDevKernel_AllReduce_Sum_f32_RING_LL(x)\"", "\"ProfilerStep#3\"",
                                            "\"n\\u00e4me \\\"quoted\\\"\"", "\"Stream Sync\"", "\"}, {\""})));
    }
    members.push_back(member(rng, "pid", pick(rng, {"0", "1", "7", "\"Spans\"", "3.0", "-1"})));
    members.push_back(member(rng, "tid", pick(rng, {"7", "13", "1234", "\"x\"", "2.5"})));
    const int64_t ts = 1'700'000'000'000'000'000LL + static_cast<int64_t>(rng() % 5'000'000'000ULL);
    if (!mayLackTimes || rng() % 5 != 0) members.push_back(member(rng, "ts", timeText(rng, ts)));
    if (!mayLackTimes || rng() % 5 != 0)
        members.push_back(member(rng, "dur", timeText(rng, static_cast<int64_t>(rng() % 900'000))));
    std::vector<std::string> args;
    args.push_back(member(rng, "External id", std::to_string(index)));
    args.push_back(member(rng, "device", pick(rng, {"0", "1", "0"})));
    if (rng() % 2) args.push_back(member(rng, "stream", pick(rng, {"7", "13", "7.0", "null"})));
    args.push_back(member(rng, "correlation", std::to_string(1000 + index)));
    if (rng() % 3 == 0) args.push_back(member(rng, "bytes", pick(rng, {"4", "1048576", "-3", "5.5"})));
    if (rng() % 2)
        args.push_back(member(
            rng, "grid", pick(rng, {"[130, 1, 1]", "[2,3]", "[[1], 4, {}, 5, 6, 7]", "[]", "[1.5, \"2\", null]"})));
    if (rng() % 2) args.push_back(member(rng, "block", "[128," + ws(rng) + "1, 1]"));
    if (rng() % 3 == 0) args.push_back(member(rng, "registers per thread", "64"));
    if (rng() % 3 == 0) args.push_back(member(rng, "shared memory", "213248"));
    if (rng() % 4 == 0) {
        args.push_back(
            member(rng, "Collective name", pick(rng, {"\"allreduce\"", "\"send\"", "\"recv\"", "\"all_to_all\""})));
        args.push_back(member(rng, "dtype", pick(rng, {"\"Float\"", "\"BFloat16\"", "\"Int\""})));
        args.push_back(member(rng, "In msg nelems", pick(rng, {"6553600", "\"1024\"", "0"})));
        args.push_back(member(rng, "Out msg nelems", "6553600"));
        args.push_back(member(rng, "Group size", pick(rng, {"2", "4", "\"8\""})));
        args.push_back(member(rng, "Process Group Name", pick(rng, {"\"0\"", "\"default_pg\""})));
        args.push_back(member(rng, "Process Group Ranks", "\"[0, 1]\""));
        if (rng() % 2) args.push_back(member(rng, "Seq", std::to_string(index)));
        if (rng() % 3 == 0) args.push_back(member(rng, "Src Rank", pick(rng, {"0", "\"1\""})));
        if (rng() % 3 == 0) args.push_back(member(rng, "Dst Rank", pick(rng, {"1", "\"0\""})));
        if (rng() % 3 == 0) args.push_back(member(rng, "In split size", "\"[1, 2]\""));
    }
    for (int i = 0, n = static_cast<int>(rng() % 3); i < n; ++i)
        args.push_back(member(rng, "x" + std::to_string(i), anyValue(rng, 2)));
    std::shuffle(args.begin(), args.end(), rng);
    std::string argText = "{";
    for (size_t i = 0; i < args.size(); ++i) argText += (i ? "," + ws(rng) : ws(rng)) + args[i];
    members.push_back(member(rng, "args", argText + ws(rng) + "}"));
    if (rng() % 3 == 0) members.push_back(member(rng, "id", anyValue(rng, 1)));
    if (rng() % 10 == 0) members.push_back(member(rng, "ts", timeText(rng, ts + 5)));  // a repeated key: the last wins
    std::shuffle(members.begin() + 1, members.end(), rng);
    std::string s = "{";
    for (size_t i = 0; i < members.size(); ++i) s += (i ? "," + ws(rng) : ws(rng)) + members[i];
    return s + ws(rng) + "}";
}

std::string randomTrace(uint32_t seed, int events) {
    std::mt19937_64 rng(seed);
    std::string events_text;
    for (int i = 0; i < events; ++i) events_text += (i ? "," + ws(rng) : ws(rng)) + randomEvent(rng, i);
    const std::string array = "[" + events_text + ws(rng) + "]";
    if (seed % 7 == 0) return array;  // the "JSON Array Format": only the events
    std::vector<std::string> root;
    root.push_back(member(rng, "schemaVersion", "1"));
    root.push_back(member(rng, "distributedInfo", "{\"backend\": \"nccl\", \"rank\": 1, \"world_size\": 2}"));
    root.push_back(member(rng, "deviceProperties", "[{\"id\": 0, \"name\": \"GPU \\\"A\\\"\", \"numSms\": 132}]"));
    root.push_back(member(rng, "baseTimeNanoseconds", "1700000000000000000"));
    root.push_back(member(rng, "traceName", anyValue(rng, 1)));
    root.push_back(member(rng, "traceEvents", array));
    std::shuffle(root.begin(), root.end(), rng);  // some fields after the events
    std::string s = ws(rng) + "{";
    for (size_t i = 0; i < root.size(); ++i) s += (i ? "," + ws(rng) : ws(rng)) + root[i];
    return s + ws(rng) + "}" + ws(rng);
}

}  // namespace

TEST(KinetoPieces, RandomTracesReadTheSameEveryWay) {
    for (uint32_t seed = 1; seed <= 24; ++seed) {
        const std::string text = randomTrace(seed, 40 + static_cast<int>(seed % 5) * 30);
        expectAllWaysAgree(text, "seed " + std::to_string(seed));
    }
}

TEST(KinetoPieces, EveryNumberSpellingReadsTheSame) {
    // In times (where the in-place reader has a path of its own for plain
    // decimals), ids and args; valid and not, at the edges of each path.
    const std::vector<std::string> spellings = {
        "0", "-0", "7", "12.5", "0.5", "-0.5", "1.000", "1.0005", "1.0004", "12.3456", "1718000000123.456",
        "9999999999999999.999", "2305843009213693.952", "2305843009213693.953", "2305843009213693", "2305843009213694",
        "12345678901234567.5", "99999999999999999999", "18446744073709551615", "-9223372036854775808",
        "-9223372036854775809", "1e3", "1E+3", "2.5e-2", "1e400", "01", "1.", ".5", "-", "--1", "1.2.3", "1-2", "1e",
        "1e+", "0x10", "1.5e3.2", "3.0", "7 ", "7\n",
        // The plain decimals of kernels' args, and the edges of
        // their eight-digit path (fewer than 8 digits a side).
        "0.984848", "-7.878788", "1234567.1234567", "12345678.5", "1.12345678", "00.5", "-01.5", "0.5e3", "0.5E-3",
        "1.5.5", "1.5-", "1.5+", "0.0"};
    int valid = 0;
    for (const auto& n : spellings) {
        // Everywhere, and only in an argument nothing reads (where a number
        // the grammar refuses must still fail the trace).
        const std::string everywhere = "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"pid\": " + n +
                                       ", \"tid\": " + n + ", \"ts\": " + n + ", \"dur\": " + n +
                                       ", \"args\": {\"device\": 0, \"stream\": " + n + ", \"correlation\": " + n +
                                       ", \"grid\": [" + n + ", 1]}}";
        const std::string skipped =
            "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"pid\": 1, \"tid\": 2, \"ts\": 3, \"dur\": 4, "
            "\"args\": {\"device\": 0, \"blocks per SM\": " +
            n + ", \"correlation\": 5}}";
        for (const std::string& event : {everywhere, skipped}) {
            std::string text = "{\"traceEvents\": [";
            for (int i = 0; i < 50; ++i) text += (i ? ",\n" : "") + event;
            text += "]}";
            const std::string reference = streaming(text);
            valid += reference.rfind("error: ", 0) != 0;
            for (const size_t piece : {size_t{13}, size_t{1} << 20})
                ASSERT_EQ(inPlace(text, piece, 2), reference)
                    << "spelled " << n << ", pieces of " << piece << " bytes, in " << event;
        }
    }
    EXPECT_GT(valid, 10);
}

// The in-place reader learns each position's key as the file spells it and
// then matches those bytes: events in one order, now and then a key that
// differs only after the learnt bytes, spelled with an escape or other
// white space, moved, or too long to learn, read as the streaming reader
// reads them.
TEST(KinetoPieces, KeysMetInTheOrderLearntAndOutOfItReadTheSame) {
    std::mt19937_64 rng(5);
    const auto event = [&](int i) {
        std::vector<std::pair<std::string, std::string>> members = {
            {"ph", "\"X\""}, {"cat", "\"kernel\""}, {"name", "\"k" + std::to_string(i % 3) + "\""},
            {"pid", "1"},    {"tid", "7"},          {"ts", std::to_string(1000 + i)},
            {"dur", "5"},    {"args", ""}};
        std::vector<std::pair<std::string, std::string>> args = {
            {"External id", std::to_string(i)},    {"device", "0"},
            {"stream", std::to_string(7 + i % 2)}, {"correlation", std::to_string(100 + i)},
            {"registers per thread", "64"},        {"grid", "[2, 1, 1]"}};
        const auto spell = [&](std::vector<std::pair<std::string, std::string>>& list) {
            if (rng() % 4 != 0) return;
            const size_t at = rng() % list.size();
            switch (rng() % 6) {
                case 0:  // a key that only begins like the one learnt there
                    list.insert(list.begin() + static_cast<std::ptrdiff_t>(at), {list[at].first + "x", "0"});
                    break;
                case 1: {  // the same key, its first letter an escape
                    char escape[8];
                    std::snprintf(escape, sizeof escape, "\\u%04x", static_cast<unsigned>(list[at].first[0]));
                    list[at].first = escape + list[at].first.substr(1);
                    break;
                }
                case 2:  // moved
                    std::swap(list[at], list[rng() % list.size()]);
                    break;
                case 3:  // longer than what is learnt
                    list.insert(list.begin() + static_cast<std::ptrdiff_t>(at),
                                {"an argument whose name runs past thirty-two bytes", "[1, {\"ph\": 2}]"});
                    break;
                default:  // dropped, where the event stays one the reader keeps
                    if (list[at].first == "pid" || list[at].first == "tid" || list[at].first == "External id" ||
                        list[at].first == "stream")
                        list.erase(list.begin() + static_cast<std::ptrdiff_t>(at));
                    break;
            }
        };
        spell(members);
        spell(args);
        std::string a = "{";
        for (size_t k = 0; k < args.size(); ++k)
            a += (k ? ", " : "") + ("\"" + args[k].first + "\"") + (rng() % 9 ? ": " : " :") + args[k].second;
        a += "}";
        std::string e = "{";
        for (size_t k = 0; k < members.size(); ++k) {
            const std::string value = members[k].first == "args" ? a : members[k].second;
            e += (k ? ", " : "") + ("\"" + members[k].first + "\"") + (rng() % 9 ? ": " : ":\n ") +
                 (value.empty() ? "{}" : value);
        }
        return e + "}";
    };
    for (int trace = 0; trace < 6; ++trace) {
        std::string text = "{\"traceEvents\": [";
        for (int i = 0; i < 400; ++i) text += (i ? ",\n  " : "\n  ") + event(i);
        text += "\n]}";
        expectAllWaysAgree(text, "trace " + std::to_string(trace));
    }
}

TEST(KinetoPieces, WithoutLaunchDetailsEveryWayKeepsNoneAndChecksTheSame) {
    // Without launch details the in-place reader skips args.grid and
    // args.block (JSON checked, nothing kept), as the SQLite reader leaves
    // them: the same model as the streaming reader's, no shape in it, and
    // the same error where a grid is broken JSON.
    LoadOptions bare;
    bare.launchDetails = false;
    for (uint32_t seed = 1; seed <= 8; ++seed)
        expectAllWaysAgree(randomTrace(seed, 60), "seed " + std::to_string(seed) + " without details", bare);

    const std::string kernel = R"({"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7,
        "ts": 1, "dur": 2, "args": {"device": 0, "stream": 7, "grid": [130, 2, 1], "block": [128, 1, 1],
        "registers per thread": 32}}]})";
    for (const bool details : {true, false}) {
        LoadOptions options;
        options.launchDetails = details;
        for (const bool inPlaceFirst : {true, false}) {
            kineto::ReadWays ways;
            ways.streamingOnly = !inPlaceFirst;
            Capture c;
            kineto::readKinetoText(kernel, "t.json", options, c, ways);
            const KernelTable& k = c.processes.at(0).devices.at(0).kernels;
            ASSERT_EQ(k.size(), 1u);
            EXPECT_EQ(k.launchShape(0), (details ? LaunchShape{130, 2, 1, 128, 1, 1} : LaunchShape{}));
            EXPECT_EQ(k.gridX.size() + k.blockZ.size() + k.registersPerThread.size(), details ? 3u : 0u);
        }
    }

    std::string broken = kernel;
    broken.replace(broken.find("[130, 2, 1]"), 11, "[130, 02, 1]");
    const std::string reference = streaming(broken, bare);
    ASSERT_EQ(reference.rfind("error: ", 0), 0u) << reference;
    EXPECT_EQ(inPlace(broken, 4096, 2, nullptr, bare), reference);
}

TEST(KinetoPieces, BrokenTracesFailWithTheStreamingReadersMessage) {
    // Cut short, one byte changed or dropped: wherever it falls (a cut, a
    // string, a number), the in-place reader gives what the streaming one
    // gives: the same model, or the same one-line error with its line.
    const std::string text = randomTrace(3, 60);
    std::mt19937_64 rng(99);
    int errors = 0;
    for (int i = 0; i < 120; ++i) {
        std::string bad = text;
        const size_t at = rng() % bad.size();
        switch (i % 3) {
            case 0:
                bad.resize(at);
                break;
            case 1:
                bad[at] = "{}[]\",:x0\\ \x01"[rng() % 13];
                break;
            default:
                bad.erase(at, 1);
                break;
        }
        const std::string reference = streaming(bad);
        errors += reference.rfind("error: ", 0) == 0;
        ASSERT_EQ(inPlace(bad, i % 2 ? 5 : 300, 2), reference) << "mutation " << i << " at byte " << at;
    }
    EXPECT_GT(errors, 40);  // the mutations did break most inputs
}

TEST(KinetoPieces, CutsInsideStringsAndNestedObjectsAreFoundOut) {
    // Every place a cut may fall that is not between two events: a string
    // holding `}, {`, an args array of objects, an element that is `{}`.
    std::string text = "{\"traceEvents\": [\n";
    for (int i = 0; i < 200; ++i) {
        text += i ? ",\n" : "";
        text += "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k}, {\\\"ph\\\": \\\"X\\\"}, {" + std::to_string(i) +
                "\", \"pid\": 0, \"tid\": 7, \"ts\": " + std::to_string(1000 + i) +
                ".5, \"dur\": 1, \"args\": {\"device\": 0, \"stream\": 7, \"correlation\": " + std::to_string(i) +
                ", \"x\": [{\"ph\": \"X\", \"cat\": \"kernel\"}, {\"y\": [{}, {}]}]}}";
        if (i % 10 == 0) text += ", {}";
    }
    text += "\n]}";
    expectAllWaysAgree(text, "misleading cuts");
    Capture c;
    kineto::ReadWays ways;
    ways.pieceBytes = 3;
    ways.threads = 2;
    bool tookInPlace = false;
    ways.readInPlace = &tookInPlace;
    kineto::readKinetoText(text, "t.json", {}, c, ways);
    EXPECT_TRUE(tookInPlace);
    ASSERT_EQ(c.processes.size(), 1u);
    ASSERT_EQ(c.processes[0].devices.size(), 1u);
    EXPECT_EQ(c.processes[0].devices[0].kernels.size(), 200u);  // the objects inside args are no kernels
}

TEST(KinetoPieces, TheRealTracesReadTheSameEveryWay) {
    const std::filesystem::path dir = OSC_REAL_TRACES_DIR;
    if (!std::filesystem::is_directory(dir / "hta"))
        GTEST_SKIP() << "the public real traces are not at " << dir << " (the shared folder beside the checkout)";
    int files = 0;
    for (const auto& entry : std::filesystem::recursive_directory_iterator(dir)) {
        const std::string path = entry.path().string();
        if (path.size() < 8 || path.compare(path.size() - 8, 8, ".json.gz") != 0) continue;
        kineto::ReadWays reference;
        reference.streamingOnly = true;
        const std::string expected = outcome([&](Capture& c) { kineto::readKinetoTrace(path, {}, c, reference); });
        ASSERT_EQ(expected.rfind("error: ", 0), std::string::npos) << expected;
        for (const size_t piece : {size_t{4096}, size_t{1} << 16, size_t{1} << 20})
            for (const int threads : {1, 2}) {
                kineto::ReadWays ways;
                ways.pieceBytes = piece;
                ways.threads = threads;
                bool tookInPlace = false;
                ways.readInPlace = &tookInPlace;
                EXPECT_EQ(outcome([&](Capture& c) { kineto::readKinetoTrace(path, {}, c, ways); }), expected)
                    << path << ", pieces of " << piece << " bytes, " << threads << " threads";
                EXPECT_TRUE(tookInPlace) << path;
            }
        ++files;
    }
    EXPECT_GE(files, 5);
}

TEST(KinetoPieces, FilesReadThroughASmallRingReadTheSame) {
    // Read from a file, the content passes through a ring of a few pieces,
    // many laps over; an element longer than the ring is left to the
    // streaming reader, which reads it all the same.
    const osc::testsupport::TempDir dir;
    for (uint32_t seed = 30; seed < 36; ++seed) {
        std::string text = randomTrace(seed, 400);
        if (seed == 35) {
            const size_t at = text.find("\"name\"");
            text.insert(at, "\"long\": \"" + std::string(300'000, 'x') + "\", ");
        }
        const std::string reference = streaming(text);
        ASSERT_EQ(reference.rfind("error: ", 0), std::string::npos) << reference;
        osc::testing::writeText(dir / "t.json", text);
        for (const size_t piece : {size_t{700}, size_t{5000}}) {
            kineto::ReadWays ways;
            ways.pieceBytes = piece;
            ways.threads = 2;
            bool tookInPlace = false;
            ways.readInPlace = &tookInPlace;
            std::string got = outcome([&](Capture& c) { kineto::readKinetoTrace(dir / "t.json", {}, c, ways); });
            for (size_t at; (at = got.find(dir / "t.json")) != std::string::npos;)
                got.replace(at, std::string(dir / "t.json").size(), "t.json");
            ASSERT_EQ(got, reference) << "seed " << seed << ", pieces of " << piece << " bytes";
            EXPECT_EQ(tookInPlace, seed != 35) << "seed " << seed;  // 35's long element does not fit the ring
        }
    }
}

TEST(KinetoPieces, GzipAndPlainFilesReadTheSame) {
    const osc::testsupport::TempDir dir;
    const std::string text = randomTrace(11, 3000);
    osc::testing::writeText(dir / "t.json", text);
    osc::testing::writeGz(dir / "t.json.gz", text);
    kineto::ReadWays ways;
    ways.pieceBytes = 8192;
    ways.threads = 2;
    const std::string plain = outcome([&](Capture& c) { kineto::readKinetoTrace(dir / "t.json", {}, c, ways); });
    const std::string gz = outcome([&](Capture& c) { kineto::readKinetoTrace(dir / "t.json.gz", {}, c, ways); });
    auto withoutPaths = [&](std::string s) {
        for (const std::string& p : {std::string(dir / "t.json.gz"), std::string(dir / "t.json")})
            for (size_t at; (at = s.find(p)) != std::string::npos;) s.replace(at, p.size(), "PATH");
        return s;
    };
    EXPECT_EQ(plain.rfind("error: ", 0), std::string::npos) << plain;
    EXPECT_EQ(withoutPaths(plain), withoutPaths(gz));
}

TEST(TraceBytes, HoldsTheContentGzReaderReads) {
    // Many laps of a small ring, read in odd steps and released behind.
    const osc::testsupport::TempDir dir;
    std::string text;
    std::mt19937 rng(5);
    while (text.size() < (size_t{5} << 20)) text += std::to_string(rng()) + (rng() % 7 ? " " : "\n");
    osc::testing::writeGz(dir / "t.gz", text);
    TraceBytes bytes(dir / "t.gz", size_t{1} << 20);
    ASSERT_EQ(bytes.span(), size_t{1} << 20);
    size_t at = 0;
    while (at < text.size()) {
        const size_t filled = bytes.waitFor(at + 1);
        ASSERT_GT(filled, at);
        const size_t n = std::min<size_t>(filled - at, 300'007);
        ASSERT_EQ(std::string_view(bytes.at(at), n), std::string_view(text).substr(at, n)) << "at " << at;
        at += n;
        bytes.release(at);  // behind the reader: the filling goes on
    }
    EXPECT_EQ(bytes.waitFor(text.size() + 1), text.size());
}

// How much of the content lies before an offset, which the reader's tables
// make room by: exact for a plain file and for content in memory; for
// gzip, the compressed bytes read, between none and all.
TEST(TraceBytes, KnowsAboutHowMuchOfTheContentLiesBeforeAnOffset) {
    const osc::testsupport::TempDir dir;
    std::string text;
    std::mt19937 rng(8);
    while (text.size() < (size_t{3} << 20)) text += std::to_string(rng()) + " ";
    {
        std::ofstream(dir / "t.json", std::ios::binary) << text;
        TraceBytes plain(dir / "t.json", size_t{1} << 20);
        plain.waitFor(size_t{1} << 19);  // the ring holds 1 MiB past what is released
        const double size = static_cast<double>(text.size());
        EXPECT_DOUBLE_EQ(plain.fractionBefore(text.size() / 4), static_cast<double>(text.size() / 4) / size);
        for (size_t at = 0; at < text.size(); at += size_t{1} << 19) {
            plain.waitFor(at + 1);
            plain.release(at);
        }
        plain.waitFor(text.size() + 1);
        EXPECT_DOUBLE_EQ(plain.fractionBefore(text.size()), 1.0);
    }
    {
        TraceBytes memory(text.data(), text.size());
        EXPECT_DOUBLE_EQ(memory.fractionBefore(text.size() / 8),
                         static_cast<double>(text.size() / 8) / static_cast<double>(text.size()));
    }
    osc::testing::writeGz(dir / "t.gz", text);
    TraceBytes gz(dir / "t.gz", size_t{1} << 20);
    gz.waitFor(size_t{1} << 19);
    const double early = gz.fractionBefore(size_t{1} << 19);
    EXPECT_GT(early, 0.0);
    EXPECT_LT(early, 1.0);
    for (size_t at = 0; at < text.size(); at += size_t{1} << 19) {
        gz.waitFor(at + 1);
        gz.release(at);
    }
    gz.waitFor(text.size() + 1);
    EXPECT_DOUBLE_EQ(gz.fractionBefore(text.size()), 1.0);
}

TEST(TraceBytes, ACorruptStreamThrowsWhereItBreaks) {
    const osc::testsupport::TempDir dir;
    std::string text(3 << 20, 'a');
    for (size_t i = 0; i < text.size(); i += 97) text[i] = static_cast<char>('0' + i % 10);
    osc::testing::writeGz(dir / "t.gz", text);
    std::string gz;
    {
        std::ifstream in(dir / "t.gz", std::ios::binary);
        gz.assign(std::istreambuf_iterator<char>(in), {});
    }
    gz.resize(gz.size() / 2);
    osc::testing::writeText(dir / "cut.gz", gz);
    TraceBytes bytes(dir / "cut.gz", size_t{1} << 20);
    EXPECT_THROW(
        for (size_t at = 0;;) {
            at = bytes.waitFor(at + 1);
            bytes.release(at);
        },
        CaptureError);
}
