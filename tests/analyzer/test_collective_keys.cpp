// The job's key table against a brute-force numbering: every distinct
// (communicator, collective, sequence number) gets the next id the first time
// it is seen and the same id after, whatever order the numbers come in:
// counting by one, repeated on another device, before the first one seen,
// far beyond the last, or spread too thin for a run.
#include "analyzer/crossrank/collective_keys.h"

#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <random>
#include <string>
#include <tuple>
#include <vector>

namespace osc::crossrank {
namespace {

using Key = std::tuple<uint64_t, uint32_t, uint64_t>;  // comm hash, name, seq

struct Numbering {
    std::map<Key, uint32_t> ids;
    uint32_t expect(const Key& k) { return ids.emplace(k, static_cast<uint32_t>(ids.size())).first->second; }
};

TEST(KeyTable, NumbersKeysLikeBruteForceWhateverTheirOrder) {
    std::mt19937_64 rng(11);
    for (int round = 0; round < 200; ++round) {
        KeyTable table;
        Numbering truth;
        const uint32_t names[] = {table.nameId("AllReduce"), table.nameId("AllGather")};
        const int devices = 1 + round % 4;
        for (int d = 0; d < devices; ++d) {
            KeyTable::Device device(table);
            uint64_t seq = rng() % 5;
            for (int op = 0; op < 300; ++op) {
                const uint64_t comm = 0x1000 + rng() % 3;
                const uint32_t name = names[rng() % 2];
                switch (rng() % 8) {
                    case 0:
                        seq = rng() % 4;
                        break;  // back before the first
                    case 1:
                        seq += 1 + rng() % 200'000;
                        break;  // far beyond
                    case 2:
                        seq = ~uint64_t{0} - rng() % 3;
                        break;  // the largest numbers
                    case 3:
                        seq += 1 + rng() % 5 * (round % 3 * 40);
                        break;  // thin
                    default:
                        ++seq;  // counting by one
                }
                const uint32_t got = device.key(name, comm, seq);
                ASSERT_EQ(got, truth.expect({comm, name, seq})) << "round " << round << " op " << op;
                const CollectiveKey& k = table.keys().at(got);
                EXPECT_EQ(k.scheme, 0);
                EXPECT_EQ(k.commHash, comm);
                EXPECT_EQ(k.name, name);
                EXPECT_EQ(k.seq, seq);
            }
        }
        EXPECT_EQ(table.keys().size(), truth.ids.size());
    }
}

TEST(KeyTable, OperationsWithoutSequenceNumbersMatchByOrdinalPerCollective) {
    KeyTable table;
    const uint32_t ar = table.nameId("AllReduce"), ag = table.nameId("AllGather");
    const uint32_t none = table.nameId(""), sendRecv = table.nameId("SendRecv");
    KeyTable::Device a(table), b(table);
    const uint32_t a0 = a.key(ar, std::nullopt, std::nullopt), a1 = a.key(ag, std::nullopt, std::nullopt),
                   a2 = a.key(ar, std::nullopt, std::nullopt);
    EXPECT_EQ(a.key(none, std::nullopt, std::nullopt), kNoKey);
    EXPECT_EQ(a.key(sendRecv, uint64_t{5}, uint64_t{1}), kNoKey);
    // The second device's first AllGather is the first's, whatever came before it.
    EXPECT_EQ(b.key(ag, std::nullopt, std::nullopt), a1);
    EXPECT_EQ(b.key(ar, std::nullopt, std::nullopt), a0);
    EXPECT_EQ(b.key(ar, std::nullopt, std::nullopt), a2);
    EXPECT_NE(b.key(ar, std::nullopt, std::nullopt), a2);  // a third AllReduce: new
    // A (hash, seq) key never equals an ordinal one of the same numbers.
    EXPECT_NE(a.key(ar, uint64_t{0}, uint64_t{0}), a0);
    EXPECT_EQ(table.keys().size(), 5u);
}

// The job's only device: its operations can match no other's, so each
// collective name is one key, and every operation's key names the
// collective it names when numbered with the others'.
TEST(KeyTable, TheOnlyDeviceNumbersOneKeyPerCollectiveName) {
    KeyTable shared, alone;
    const std::vector<std::string> names = {"AllReduce", "AllGather", "", "SendRecv", "ReduceScatter"};
    KeyTable::Device many(shared), one(alone, 0, true);
    std::mt19937_64 rng(3);
    for (int op = 0; op < 2000; ++op) {
        const std::string& name = names[rng() % names.size()];
        const bool plugin = rng() % 2;
        const auto hash = plugin ? std::optional<uint64_t>(0x1000 + rng() % 3) : std::nullopt;
        const auto seq = plugin ? std::optional<uint64_t>(rng() % 50) : std::nullopt;
        const uint32_t a = many.key(name, hash, seq), b = one.key(name, hash, seq);
        ASSERT_EQ(a == kNoKey, b == kNoKey) << name;
        if (a == kNoKey) continue;
        EXPECT_EQ(shared.names()[shared.keys()[a].name], name);
        EXPECT_EQ(alone.names()[alone.keys()[b].name], name);
    }
    EXPECT_EQ(alone.keys().size(), 3u);  // AllReduce, AllGather, ReduceScatter
    EXPECT_GT(shared.keys().size(), 100u);
}

}  // namespace
}  // namespace osc::crossrank
