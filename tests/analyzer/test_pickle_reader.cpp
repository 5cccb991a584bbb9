// Our data-only pickle machine (analyzer/hang/pickle_reader.cpp): every
// value Python's pickle module writes with protocols 2 to 5 reads back as
// Python wrote it (Python renders the expectation), opcodes Python no longer
// writes but a pickle may hold are built byte by byte, every opcode that
// would import or call something or build an object is refused by name (and
// a pickle Python made to run a command runs nothing), and the limits hold:
// a value that contains itself, shared references that expand beyond any
// dump, a length past the file, a pickle cut short. The top-level
// "entries" list is streamed: its items arrive one by one and are dropped.
#include "analyzer/capture/capture_error.h"
#include "analyzer/hang/dump_readers.h"
#include "tests/support/temp_dir.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace osc::hang {
namespace {

using json = nlohmann::json;
using namespace std::string_literals;

json render(const DataTree& t, uint32_t at) {
    const DataNode& n = t[at];
    switch (n.kind) {
        case DataKind::None:
            return nullptr;
        case DataKind::Bool:
            return n.boolean;
        case DataKind::Int:
            return n.bigInt ? json{{"big", true}} : json(n.integer);
        case DataKind::Float:
            return n.real;
        case DataKind::Text:
            return std::string(t.text(at));
        case DataKind::Bytes: {
            std::string hex;
            for (unsigned char c : t.text(at)) {
                char b[3];
                std::snprintf(b, sizeof b, "%02x", c);
                hex += b;
            }
            return json{{"bytes", hex}};
        }
        case DataKind::List: {
            json out = json::array();
            for (uint32_t i : t.items(at)) out.push_back(render(t, i));
            return out;
        }
        case DataKind::Dict: {
            json out = json::object();
            for (uint32_t k = at + 1; k < n.end; k = t[t[k].end].end)
                out[t[k].kind == DataKind::Text ? std::string(t.text(k)) : render(t, k).dump()] = render(t, t[k].end);
            return out;
        }
    }
    return nullptr;
}

struct Collect : DumpSink {
    json fields = json::object();
    std::vector<json> entries;
    size_t entriesBeforeFirstField = SIZE_MAX;
    void field(std::string_view key, const DataTree& value) override {
        if (entriesBeforeFirstField == SIZE_MAX) entriesBeforeFirstField = entries.size();
        fields[std::string(key)] = render(value, 0);
    }
    void entry(const DataTree& value) override { entries.push_back(render(value, 0)); }
};

Collect readPickle(const std::string& bytes) {
    Collect c;
    MemorySource in(bytes, 5);  // small pieces: values straddle reads
    readPickleDump(in, "test.pkl", c);
    return c;
}

std::string refusal(const std::string& bytes) {
    try {
        readPickle(bytes);
    } catch (const CaptureError& e) {
        return e.what();
    }
    return "(read)";
}

std::string slurp(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

void python(const std::string& script, const std::string& dir) {
    const std::string file = dir + "/script.py";
    std::ofstream(file) << script;
    const std::string cmd = std::string(OSC_PYTHON3) + " " + file + " " + dir;
    ASSERT_EQ(std::system(cmd.c_str()), 0) << script;
}

// Python writes a dump-shaped dict with every kind of value, in every
// protocol from 2 on, and renders what it holds; we must read the same.
TEST(PickleReader, ReadsWhatPythonWritesInProtocols2To5) {
    testsupport::TempDir dir;
    python(R"(import json, math, pickle, sys
d = sys.argv[1]
shared = [1, 2, 3]
def value(proto):
    other = [0, 1, 255, 256, 65535, 65536, -1, -2**31, 2**31, 2**40, -2**63, 2**63 - 1, 2**70, -2**70,
             0.5, -1e300, float("inf"), True, False, None, "", "ascii", "\u00fc\u4e2d\U0001f600", "x" * 300,
             (1, "two"), (), (1,), (1, 2, 3), (1, 2, 3, 4), [], {}, {"k": {"n": [None]}}, shared, shared,
             {1: "int key", None: "none key", 2.5: "float key", True: "bool key"}]
    if proto >= 3:  # protocol 2 writes bytes through a call to _codecs.encode
        other += [b"", b"\x00\xff", b"y" * 300]
    if proto >= 5:  # and bytearray through a call before protocol 5's BYTEARRAY8
        other += [bytearray(b"ba")]
    entries = [{"record_id": i, "process_group": ("0", "default_pg"), "frames": [{"name": "f", "line": i % 3}]}
               for i in range(2500)]
    return {"version": "2.10", "pg_config": {"0": {"ranks": "[0, 1]"}}, "other": other, "entries": entries}
def conv(x):
    if isinstance(x, (bytes, bytearray)): return {"bytes": bytes(x).hex()}
    if isinstance(x, float) and math.isinf(x): return "inf"  # JSON has no infinity
    if isinstance(x, bool) or x is None or isinstance(x, (float, str)): return x
    if isinstance(x, int): return x if -2**63 <= x < 2**63 else {"big": True}
    if isinstance(x, (list, tuple)): return [conv(i) for i in x]
    return {(k if isinstance(k, str) else json.dumps(conv(k))): conv(v) for k, v in x.items()}
for proto in (2, 3, 4, 5):
    v = value(proto)
    open(f"{d}/p{proto}.pkl", "wb").write(pickle.dumps(v, protocol=proto))
    open(f"{d}/p{proto}.json", "w").write(json.dumps(conv(v), allow_nan=True))
)",
           dir.path());
    for (int proto = 2; proto <= 5; ++proto) {
        SCOPED_TRACE("protocol " + std::to_string(proto));
        const Collect c = readPickle(slurp(dir / ("p" + std::to_string(proto) + ".pkl")));
        const json expected = json::parse(slurp(dir / ("p" + std::to_string(proto) + ".json")), nullptr, true, true);
        EXPECT_EQ(c.fields["version"], expected["version"]);
        EXPECT_EQ(c.fields["pg_config"], expected["pg_config"]);
        ASSERT_EQ(c.fields["other"].size(), expected["other"].size());
        for (size_t i = 0; i < expected["other"].size(); ++i) {
            const json& want = expected["other"][i];
            if (want == "inf") {
                EXPECT_TRUE(std::isinf(c.fields["other"][i].get<double>())) << i;
                continue;
            }
            EXPECT_EQ(c.fields["other"][i], want) << i;
        }
        ASSERT_EQ(c.entries.size(), 2500u);  // streamed, not a field
        EXPECT_FALSE(c.fields.contains("entries"));
        for (size_t i = 0; i < 2500; i += 499) EXPECT_EQ(c.entries[i], expected["entries"][i]);
    }
}

// Opcodes Python 3 does not write for these values, but a pickle may hold.
TEST(PickleReader, ReadsTheOtherDataOpcodesBuiltByHand) {
    // {"a": [1, 2**64 (LONG4), "t" (BINSTRING), "u" (SHORT_BINSTRING), 7 (INT), 8 (LONG text),
    //        1.5 (FLOAT text), True (INT 01), b"s" (SHORT_BINBYTES), b"8" (BINBYTES8)],
    //  "b": (DICT {"x": [LIST 1 2]}), "c": TUPLE of 4, "d": DUP'd and POP'd, "e": POP_MARK'd}
    std::string p = "\x80\x02}(";
    p += std::string(
             "X\x01\x00\x00\x00"
             "a",
             6) +
         "(";
    p += std::string("K\x01") + "K\x02";
    p += std::string("\x8b\x09\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01", 14);
    p += std::string("T\x01\x00\x00\x00t", 6) + std::string("U\x01u", 3) + "I7\n" + "L8L\n" + "F1.5\n" + "I01\n";
    p += std::string("C\x01s", 3) + std::string(
                                        "\x8e\x01\x00\x00\x00\x00\x00\x00\x00"
                                        "8",
                                        10);
    p += "l";  // LIST of the values since the MARK
    p += std::string(
             "X\x01\x00\x00\x00"
             "b",
             6) +
         "(" + std::string("X\x01\x00\x00\x00x", 6) + "(K\x01K\x02l" + "d";
    p += std::string(
             "X\x01\x00\x00\x00"
             "c",
             6) +
         "(K\x01K\x02K\x03K\x04t";
    p += std::string(
             "X\x01\x00\x00\x00"
             "d",
             6) +
         "K\x09"
         "2"
         "0";  // DUP then POP: one 9 left
    p += std::string(
             "X\x01\x00\x00\x00"
             "e",
             6) +
         "N(K\x05K\x06"
         "1";  // POP_MARK drops 5 and 6: None left
    p += "u.";
    const Collect c = readPickle(p);
    EXPECT_EQ(c.fields["a"], json::parse(R"([1, 2, {"big": true}, "t", "u", 7, 8, 1.5, true, {"bytes": "73"},
                                             {"bytes": "38"}])"));
    EXPECT_EQ(c.fields["b"], json::parse(R"({"x": [1, 2]})"));
    EXPECT_EQ(c.fields["c"], json::parse("[1, 2, 3, 4]"));
    EXPECT_EQ(c.fields["d"], 9);
    EXPECT_EQ(c.fields["e"], nullptr);
    // A top dict built by DICT from its MARK, entries within it not streamed.
    const Collect d = readPickle(std::string("\x80\x02(X\x07\x00\x00\x00"
                                             "entries",
                                             15) +
                                 "](K\x01K\x02"
                                 "e" +
                                 "d.");
    ASSERT_EQ(d.fields.size(), 1u);
    EXPECT_EQ(d.fields["entries"], json::parse("[1, 2]"));
}

// Everything that would import, call or build: refused by name.
TEST(PickleReader, RefusesEveryOpcodeThatRunsCodeByName) {
    const std::string start = "\x80\x02}";
    const std::vector<std::pair<std::string, std::string>> cases = {
        {"cos\nsystem\n", "GLOBAL"},
        {std::string("X\x02\x00\x00\x00osX\x06\x00\x00\x00system\x93", 19), "STACK_GLOBAL"},
        {"NN\x85R", "REDUCE"},
        {"}NR", "REDUCE"},
        {"}}b", "BUILD"},
        {"(ios\nsystem\n", "INST"},
        {"(No", "OBJ"},
        {")N\x81", "NEWOBJ"},
        {"))}\x92", "NEWOBJ_EX"},
        {std::string("\x82\x01", 2), "EXT1"},
        {std::string("\x83\x01\x00", 3), "EXT2"},
        {std::string("\x84\x01\x00\x00\x00", 5), "EXT4"},
        {"Pid\n", "PERSID"},
        {"NQ", "BINPERSID"},
        {"\x97", "NEXT_BUFFER"},
        {"N\x98", "READONLY_BUFFER"},
    };
    for (const auto& [body, name] : cases) {
        const std::string why = refusal(start + body + ".");
        EXPECT_NE(why.find("refused: opcode " + name + " "), std::string::npos) << name << ": " << why;
        EXPECT_NE(why.find("test.pkl"), std::string::npos) << why;
    }
    // Data opcodes this reader does not take say so by name too; stray bytes are no opcode.
    EXPECT_NE(refusal(start + "S'x'\n.").find("opcode STRING"), std::string::npos);
    EXPECT_NE(refusal(start + "\x8f.").find("opcode EMPTY_SET"), std::string::npos);
    EXPECT_NE(refusal(start + "\xff.").find("byte 0xff is no pickle opcode"), std::string::npos);
    EXPECT_NE(refusal("(}.").find("no PROTO"), std::string::npos);
    EXPECT_NE(refusal("\x80\x01}.").find("protocol 1"), std::string::npos);
}

// A pickle Python wrote to run a command: refused, and nothing ran.
TEST(PickleReader, APickleThatWouldRunACommandRunsNothing) {
    testsupport::TempDir dir;
    const std::string marker = dir / "ran";
    python(R"(import os, pickle, sys
class Evil:
    def __reduce__(self):
        return (os.system, ("touch " + sys.argv[1] + "/ran",))
for proto in (2, 3, 4, 5):
    dump = {"version": "2.10", "pg_config": {}, "entries": [{"record_id": 0, "x": Evil()}]}
    open(sys.argv[1] + f"/evil{proto}.pkl", "wb").write(pickle.dumps(dump, protocol=proto))
)",
           dir.path());
    for (int proto = 2; proto <= 5; ++proto) {
        const std::string why = refusal(slurp(dir / ("evil" + std::to_string(proto) + ".pkl")));
        EXPECT_NE(why.find("refused: opcode"), std::string::npos) << why;
        EXPECT_TRUE(why.find("GLOBAL") != std::string::npos) << why;  // protocol 4 on: STACK_GLOBAL
    }
    EXPECT_FALSE(std::filesystem::exists(marker));
}

TEST(PickleReader, KeepsItsLimits) {
    const std::string top = std::string("\x80\x02}(X\x01\x00\x00\x00k", 10);
    // A list that contains itself.
    EXPECT_NE(refusal(top + "]q\x00h\x00"
                            "a"
                            "u."s)
                  .find("nested more than 512 deep"),
              std::string::npos);
    // 48 levels of a list holding the level below twice: 2^48 values once expanded.
    std::string bomb = top +
                       "]q\x00"
                       "0"s;  // POP: only the memo keeps it
    for (int i = 1; i <= 48; ++i) {
        bomb += "(h" + std::string(1, static_cast<char>(i - 1)) + "h" + std::string(1, static_cast<char>(i - 1)) +
                "lq" + std::string(1, static_cast<char>(i));
        bomb += "0";  // POP: only the memo keeps it
    }
    bomb += "h" + std::string(1, static_cast<char>(48)) + "u.";
    EXPECT_NE(refusal(bomb).find("shared references expand"), std::string::npos) << refusal(bomb);
    // Lengths past anything a dump holds, and a pickle cut short.
    EXPECT_NE(refusal(top + std::string("\x8d\xff\xff\xff\xff\xff\xff\xff\x7f", 9)).find("more than 64 MiB"),
              std::string::npos);
    EXPECT_NE(refusal(top + std::string("X\x10\x00\x00\x00short", 10)).find("cut short"), std::string::npos);
    EXPECT_NE(refusal(top + "h\x07"
                            "u.")
                  .find("never stored"),
              std::string::npos);
    EXPECT_NE(refusal(top + "K\x01"
                            "K\x02"
                            "u.")
                  .find("a key and no value"),
              std::string::npos);
    EXPECT_NE(refusal("\x80\x02"
                      "e.")
                  .find("MARK"),
              std::string::npos);
    EXPECT_NE(refusal("\x80\x02"
                      "K\x01K\x02"
                      "a.")
                  .find("not a list"),
              std::string::npos);
}

// The entries list is never built: each item arrives while the rest of the
// dump is still to be read, and an entry the memo would keep is dropped, so
// a later reference back to it is refused rather than kept alive.
TEST(PickleReader, StreamsTheEntriesListAndDropsWhatItHandedOver) {
    testsupport::TempDir dir;
    python(R"(import pickle, sys
d = sys.argv[1]
entries = [{"record_id": i} for i in range(5000)]
open(d + "/stream.pkl", "wb").write(pickle.dumps({"entries": entries, "version": "2.10"}, protocol=4))
first = {"record_id": 0}
open(d + "/back.pkl", "wb").write(pickle.dumps({"entries": [first, {"record_id": 1}], "again": first}, protocol=2))
)",
           dir.path());
    const Collect c = readPickle(slurp(dir / "stream.pkl"));
    ASSERT_EQ(c.entries.size(), 5000u);
    EXPECT_EQ(c.entries[4999]["record_id"], 4999);
    EXPECT_EQ(c.entriesBeforeFirstField, 5000u);  // all handed over before the top dict's SETITEMS
    EXPECT_NE(refusal(slurp(dir / "back.pkl")).find("refers back to a Flight Recorder entry already read"),
              std::string::npos);
}

}  // namespace
}  // namespace osc::hang
