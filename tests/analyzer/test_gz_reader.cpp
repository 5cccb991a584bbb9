// GzReader against zlib (an independent implementation) writing the input:
// several members, trailing bytes, corruption, early destruction, progress.
#include "analyzer/capture/capture_error.h"
#include "analyzer/import/gz_reader.h"
#include "tests/support/temp_dir.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <fstream>
#include <random>
#include <string>

using osc::CaptureError;
using osc::GzReader;

namespace {

class GzReaderTest : public ::testing::Test {
protected:
    std::string path(const std::string& name) const { return dir_ / name; }

    // One gzip member of `text`, as zlib writes it.
    static std::string gzMember(const std::string& text) {
        z_stream z{};
        deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
        std::string out(deflateBound(&z, text.size()) + 64, '\0');
        z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
        z.avail_in = static_cast<uInt>(text.size());
        z.next_out = reinterpret_cast<Bytef*>(out.data());
        z.avail_out = static_cast<uInt>(out.size());
        EXPECT_EQ(deflate(&z, Z_FINISH), Z_STREAM_END);
        out.resize(z.total_out);
        deflateEnd(&z);
        return out;
    }
    void write(const std::string& name, const std::string& bytes) const {
        std::ofstream(path(name), std::ios::binary) << bytes;
    }
    static std::string readAll(GzReader& r, size_t step = 4096) {
        std::string out, buf(step, '\0');
        while (const size_t n = r.read(buf.data(), buf.size())) out.append(buf.data(), n);
        return out;
    }
    // Text that compresses like a trace: repetitive keys, varying numbers,
    // several MiB so that it spans many of the reader's chunks.
    static std::string traceLike(size_t events, uint32_t seed) {
        std::mt19937 rng(seed);
        std::string s = "{\"traceEvents\": [";
        for (size_t i = 0; i < events; ++i)
            s += "{\"ph\": \"X\", \"ts\": " + std::to_string(rng()) + ", \"dur\": " + std::to_string(rng() % 1000) +
                 ", \"name\": \"k" + std::to_string(rng() % 50) + "\"},\n";
        return s + "{}]}";
    }

    const osc::testsupport::TempDir dir_;
};

}  // namespace

TEST_F(GzReaderTest, PlainAndGzipGiveTheSameBytes) {
    const auto text = traceLike(100'000, 1);
    write("t.json", text);
    write("t.json.gz", gzMember(text));
    GzReader plain(path("t.json")), gz(path("t.json.gz"));
    EXPECT_EQ(readAll(plain), text);
    EXPECT_EQ(readAll(gz, 777), text);  // odd read sizes cross chunk edges
    EXPECT_EQ(gz.fileBytesRead(), gz.fileSize());
}

TEST_F(GzReaderTest, ConcatenatedMembersAreOneStream) {
    const auto a = traceLike(50'000, 2), b = traceLike(30'000, 3), c = std::string("tail");
    write("cat.gz", gzMember(a) + gzMember(b) + gzMember(c));
    GzReader r(path("cat.gz"));
    EXPECT_EQ(readAll(r), a + b + c);
}

TEST_F(GzReaderTest, BytesAfterTheLastMemberAreIgnored) {
    const auto a = traceLike(1'000, 4);
    write("pad.gz", gzMember(a) + std::string(100, '\0'));
    GzReader r(path("pad.gz"));
    EXPECT_EQ(readAll(r), a);
}

TEST_F(GzReaderTest, CorruptDataIsOneLineNamingTheFile) {
    auto bytes = gzMember(traceLike(20'000, 5));
    for (size_t i = bytes.size() / 2; i < bytes.size() / 2 + 64; ++i) bytes[i] = static_cast<char>(~bytes[i]);
    write("bad.gz", bytes);
    GzReader r(path("bad.gz"));
    try {
        readAll(r);
        FAIL() << "corruption was not noticed";
    } catch (const CaptureError& e) {
        const std::string what = e.what();
        EXPECT_NE(what.find("bad.gz: "), std::string::npos) << what;
        EXPECT_NE(what.find("corrupt gzip data"), std::string::npos) << what;
        EXPECT_EQ(what.find('\n'), std::string::npos);
    }
}

TEST_F(GzReaderTest, CutShortIsTruncated) {
    const auto bytes = gzMember(traceLike(20'000, 6));
    write("cut.gz", bytes.substr(0, bytes.size() - 9));  // inside the trailer
    GzReader r(path("cut.gz"));
    try {
        readAll(r);
        FAIL() << "a cut-short stream was accepted";
    } catch (const CaptureError& e) {
        EXPECT_NE(std::string(e.what()).find("truncated gzip data"), std::string::npos) << e.what();
    }
}

TEST_F(GzReaderTest, DestroyedBeforeTheEndStopsTheInflater) {
    // The parser gives up early on bad input: the reader must not wait for
    // the producer to finish a large file (it would block on a full queue).
    write("big.gz", gzMember(traceLike(400'000, 7)));
    for (int i = 0; i < 20; ++i) {
        GzReader r(path("big.gz"));
        char buf[16];
        EXPECT_EQ(r.read(buf, sizeof buf), sizeof buf);
    }
}

TEST_F(GzReaderTest, MissingFileIsRefusedAtOpen) { EXPECT_THROW(GzReader(path("none.gz")), CaptureError); }
