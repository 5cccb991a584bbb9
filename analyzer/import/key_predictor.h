// Object keys as a file writes them, learnt per position: the PyTorch
// profiler writes every event's keys in one order, and the args of every
// event of a category in one order, so the key at a position is most often
// the very bytes met there last time. Matching those bytes (quotes, text,
// colon) at once replaces finding the string's end, looking the key up and
// finding the colon: the bytes being equal, the JSON is the same.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#ifdef __SSE2__
#include <emmintrin.h>
#endif

namespace osc::kineto {

class KeyPredictor {
public:
    static constexpr size_t kPositions = 32;
    // A key with its quotes and colon, at most; also what must be readable
    // at p for match().
    static constexpr size_t kBytes = 32;

    // With p at a key's opening quote and kBytes readable from there: where
    // the bytes of the key learnt at `position` come next, its id into
    // `key` and p past its colon.
    [[gnu::always_inline]] bool match(const char*& p, size_t position, uint8_t& key) const {
        if (position >= kPositions) return false;
        const Entry& e = entries_[position];
        if (e.length == 0) return false;
#ifdef __SSE2__
        const __m128i* have = reinterpret_cast<const __m128i*>(p);
        const __m128i* want = reinterpret_cast<const __m128i*>(e.bytes);
        const auto low =
            static_cast<uint32_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_loadu_si128(have), _mm_load_si128(want))));
        const auto high = static_cast<uint32_t>(
            _mm_movemask_epi8(_mm_cmpeq_epi8(_mm_loadu_si128(have + 1), _mm_load_si128(want + 1))));
        if (((low | high << 16) & e.mask) != e.mask) return false;
#else
        if (std::memcmp(p, e.bytes, e.length) != 0) return false;
#endif
        p += e.length;
        key = e.key;
        return true;
    }

    // The key at `position` was [from, to): its opening quote up to and
    // including its colon, holding no escape.
    void learn(size_t position, const char* from, const char* to, uint8_t key) {
        const auto length = static_cast<size_t>(to - from);
        if (position >= kPositions || length > kBytes) return;
        Entry& e = entries_[position];
        std::memset(e.bytes, 0, kBytes);
        std::memcpy(e.bytes, from, length);
        e.length = static_cast<uint8_t>(length);
        e.mask = length == 32 ? ~uint32_t{0} : (uint32_t{1} << length) - 1;
        e.key = key;
    }

private:
    struct Entry {
        alignas(16) char bytes[kBytes] = {};
        uint32_t mask = 0;   // the first `length` bits
        uint8_t length = 0;  // 0: nothing learnt
        uint8_t key = 0;
    };
    Entry entries_[kPositions];
};

}  // namespace osc::kineto
