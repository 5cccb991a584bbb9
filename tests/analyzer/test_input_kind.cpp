// sniff(): what an input is, by content alone. Each kind is written here by
// hand (the bytes each writer puts first), under names that lie about it.
#include "analyzer/capture/capture_error.h"
#include "analyzer/load/input_kind.h"
#include "tests/support/temp_dir.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

using namespace osc;
namespace fs = std::filesystem;

namespace {

class InputKindTest : public ::testing::Test {
protected:
    std::string write(const std::string& name, const std::string& bytes) {
        const std::string path = (dir_ / name).string();
        fs::create_directories(fs::path(path).parent_path());
        std::ofstream(path, std::ios::binary) << bytes;
        return path;
    }
    std::string sqliteHeader() { return std::string("SQLite format 3\0", 16) + std::string(84, '\0'); }

    const testsupport::TempDir tmp_;
    const fs::path dir_{tmp_.path()};
};

TEST_F(InputKindTest, EachKindByItsFirstBytesWhateverItsName) {
    EXPECT_EQ(sniff(write("a.json", sqliteHeader())), InputKind::SqliteCapture);
    EXPECT_EQ(sniff(write("b.sqlite", "\x1f\x8b\x08")), InputKind::KinetoTrace);  // gzip
    EXPECT_EQ(sniff(write("c.txt", R"(  {"traceEvents": []})")), InputKind::KinetoTrace);
    EXPECT_EQ(sniff(write("d.json", "[{\"ph\":\"X\"}]")), InputKind::KinetoTrace);
    EXPECT_EQ(sniff(write("e.sqlite", R"({"format":"overlapscope-partial","version":3})"
                                      "\n")),
              InputKind::PartialResult);
    EXPECT_EQ(sniff(write("f.db", "{\"format\": \"overlapscope-report\",\n  \"version\": 1}")), InputKind::SavedReport);
    EXPECT_EQ(sniff(write("g.txt", "not a trace")), InputKind::Unknown);
    EXPECT_EQ(sniff(write("h.sqlite", "")), InputKind::Unknown);
}

TEST_F(InputKindTest, PrettyPrintedResultsAreStillTheirKind) {
    // A partial or report someone reformatted (python -m json.tool): the
    // reader then says what is wrong with it, not "a PyTorch trace".
    EXPECT_EQ(sniff(write("p.json", "{\n    \"format\": \"overlapscope-partial\",\n    \"version\": 4\n}\n")),
              InputKind::PartialResult);
    EXPECT_EQ(sniff(write("r.json", "\n\n{ \"format\" : \"overlapscope-report\" }")), InputKind::SavedReport);
}

TEST_F(InputKindTest, OurFormatNamedAnywhereButFirstIsAnotherToolsTrace) {
    EXPECT_EQ(sniff(write("k.json", R"({"traceEvents": [], "format": "overlapscope-report"})")),
              InputKind::KinetoTrace);
    EXPECT_EQ(sniff(write("o.json", R"({"format": "something-else"})")), InputKind::KinetoTrace);
    EXPECT_EQ(sniff(write("q.json", R"({"format": "overlapscope-reports"})")), InputKind::KinetoTrace);
}

TEST_F(InputKindTest, DirectoriesAreJobsOfCapturesOrOfPartials) {
    write("caps/rank0.sqlite", sqliteHeader());
    write("caps/rank0.partial.json", "{\"format\":\"overlapscope-partial\"}\n");  // the agent's, beside it
    write("caps/rank0.sqlite-wal", "");
    write("parts/a.partial.json", "{\"format\":\"overlapscope-partial\"}\n");
    write("parts/notes.txt", "kept");
    write("empty/README", "nothing to read");
    EXPECT_EQ(sniff((dir_ / "caps").string()), InputKind::CaptureDirectory);
    EXPECT_EQ(sniff((dir_ / "parts").string()), InputKind::PartialDirectory);
    EXPECT_EQ(sniff((dir_ / "empty").string()), InputKind::Unknown);
    EXPECT_EQ(captureFilesIn((dir_ / "caps").string()),
              std::vector<std::string>{(dir_ / "caps/rank0.sqlite").string()});
    EXPECT_EQ(partialFilesIn((dir_ / "caps").string()),
              std::vector<std::string>{(dir_ / "caps/rank0.partial.json").string()});
}

TEST_F(InputKindTest, WhatCannotBeReadIsOneLineNamingIt) {
    const auto message = [](const std::string& path) {
        try {
            sniff(path);
        } catch (const CaptureError& e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    const std::string missing = (dir_ / "missing.sqlite").string();
    EXPECT_EQ(message(missing), missing + ": no such file or directory");
    const std::string fifo = (dir_ / "fifo").string();
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    // Never waits for a writer.
    EXPECT_NE(message(fifo).find("not a regular file (a pipe)"), std::string::npos) << message(fifo);
    const std::string loop = (dir_ / "loop").string();
    fs::create_symlink(loop, loop);
    EXPECT_NE(message(loop).find("symbolic links"), std::string::npos) << message(loop);
}

TEST_F(InputKindTest, ALinkLoopInADirectoryIsBadInputAndADanglingLinkIsSkipped) {
    write("job/rank0.sqlite", sqliteHeader());
    fs::create_symlink(dir_ / "job/nowhere", dir_ / "job/rank1.sqlite");
    EXPECT_EQ(captureFilesIn((dir_ / "job").string()).size(), 1u);
    fs::create_symlink(dir_ / "job/rank2.sqlite", dir_ / "job/rank2.sqlite");
    try {
        captureFilesIn((dir_ / "job").string());
        FAIL() << "a link loop was skipped";
    } catch (const CaptureError& e) {
        EXPECT_NE(std::string(e.what()).find("rank2.sqlite: too many levels of symbolic links (a link loop?)"),
                  std::string::npos)
            << e.what();
    }
}

}  // namespace
