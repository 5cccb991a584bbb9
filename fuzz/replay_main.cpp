// A main() for the fuzz targets without libFuzzer, so any compiler with a
// sanitizer (gcc included) can run them: every file named (or found in a
// directory named) is fed once as it is, then as --mutations N variants made
// with a fixed seed (bytes flipped or set to edge values, cut short, spans
// repeated, long digit runs inserted). The same inputs on every run: a
// failure reproduces. Exits non-zero only through the sanitizer.
//   fuzz_replay_<target> [--mutations N] CORPUS_DIR_OR_FILE...
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

struct Random {
    uint64_t state;
    uint64_t next() {  // xorshift64*
        state ^= state >> 12;
        state ^= state << 25;
        state ^= state >> 27;
        return state * 0x2545F4914F6CDD1DULL;
    }
    size_t below(size_t n) { return n == 0 ? 0 : static_cast<size_t>(next() % n); }
};

std::vector<uint8_t> mutate(std::vector<uint8_t> bytes, Random& random) {
    static constexpr uint8_t edges[] = {0x00, 0xff, 0x7f, 0x80, '9', '-', '"', '\\', '{', ']', 0x1b};
    const int edits = 1 + static_cast<int>(random.below(4));
    for (int e = 0; e < edits && !bytes.empty(); ++e) {
        const size_t at = random.below(bytes.size());
        switch (random.below(5)) {
            case 0:
                bytes[at] ^= static_cast<uint8_t>(1u << random.below(8));
                break;
            case 1:
                bytes[at] = edges[random.below(sizeof edges)];
                break;
            case 2:
                bytes.resize(at);
                break;
            case 3: {  // repeat a span (bounded, so inputs stay small)
                const size_t length = std::min<size_t>(random.below(64) + 1, bytes.size() - at);
                std::vector<uint8_t> span(bytes.begin() + static_cast<std::ptrdiff_t>(at),
                                          bytes.begin() + static_cast<std::ptrdiff_t>(at + length));
                bytes.insert(bytes.begin() + static_cast<std::ptrdiff_t>(at), span.begin(), span.end());
                break;
            }
            default:  // a long number: overflows, huge names
                bytes.insert(bytes.begin() + static_cast<std::ptrdiff_t>(at), 20 + random.below(4000), '9');
        }
    }
    return bytes;
}

}  // namespace

int main(int argc, char** argv) {
    int mutations = 0;
    std::vector<std::filesystem::path> files;
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--mutations") == 0 && i + 1 < argc) {
            mutations = std::atoi(argv[++i]);
            continue;
        }
        const std::filesystem::path p(argv[i]);
        if (std::filesystem::is_directory(p)) {
            for (const auto& entry : std::filesystem::directory_iterator(p))
                if (entry.is_regular_file()) files.push_back(entry.path());
        } else {
            files.push_back(p);
        }
    }
    std::sort(files.begin(), files.end());
    size_t runs = 0;
    for (size_t f = 0; f < files.size(); ++f) {
        std::ifstream in(files[f], std::ios::binary);
        const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        LLVMFuzzerTestOneInput(bytes.data(), bytes.size());
        ++runs;
        Random random{0x9E3779B97F4A7C15ULL ^ (f + 1)};
        for (int m = 0; m < mutations; ++m) {
            const auto variant = mutate(bytes, random);
            LLVMFuzzerTestOneInput(variant.data(), variant.size());
            ++runs;
        }
    }
    std::printf("%zu inputs from %zu files, no sanitizer report\n", runs, files.size());
    return files.empty() ? 2 : 0;
}
