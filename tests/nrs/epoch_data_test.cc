// The policy data format and its reduction: defined byte order, and a
// combine that is associative and commutative on random inputs, including
// the cuts to the smallest keys, and that takes any bytes without harm.
#include "nrs/epoch_data.h"

#include <gtest/gtest.h>

#include <random>

#include "nrs/tbf_shares.h"

namespace sfs::nrs {
namespace {

TEST(EpochDataTest, ByteOrderIsLittleEndianWhateverTheMachine) {
  EpochEnvelope envelope;
  envelope.participants = 0x01020304;
  envelope.sections.push_back(EpochSection{EpochKind::kTbfShares, 1, {0xaa, 0xbb}});
  const EpochData data = EncodeEpochData(envelope);
  EXPECT_EQ(data, (EpochData{0x04, 0x03, 0x02, 0x01, 1, 1, 2, 0, 0xaa, 0xbb}));
  const EpochEnvelope back = DecodeEpochData(data);
  EXPECT_EQ(back.participants, 0x01020304u);
  ASSERT_EQ(back.sections.size(), 1u);
  EXPECT_EQ(back.sections[0].payload, (std::vector<uint8_t>{0xaa, 0xbb}));

  std::vector<uint8_t> out;
  PutLe64(&out, 0x0102030405060708ull);
  EXPECT_EQ(out, (std::vector<uint8_t>{8, 7, 6, 5, 4, 3, 2, 1}));
  EXPECT_EQ(GetLe64(out.data()), 0x0102030405060708ull);
}

// Random TBF share data of one OST: `classes` classes out of a small key
// space, so OSTs share keys and cuts happen.
EpochData RandomOst(std::mt19937_64& rng, size_t classes, uint64_t key_space) {
  std::vector<TbfShareEntry> entries;
  for (size_t i = 0; i < classes; i++) {
    TbfShareEntry e;
    e.key = rng() % key_space;
    e.demand = static_cast<uint32_t>(rng() % 1000);
    e.demand_kib = static_cast<uint32_t>(rng() % 100000);
    e.served = static_cast<uint32_t>(rng() % 1000);
    e.served_kib = static_cast<uint32_t>(rng());  // sums saturate
    e.lost_milli = static_cast<uint32_t>(rng() % 5000);
    e.lost_kib = static_cast<uint32_t>(rng() % 500);
    entries.push_back(e);
  }
  EpochEnvelope envelope;
  envelope.participants = 1;
  const uint8_t head = static_cast<uint8_t>(rng() % 2);
  envelope.sections.push_back(
      EpochSection{EpochKind::kTbfShares, head, EncodeTbfShares(1, entries)});
  if (rng() % 3 == 0) {
    // Now and then an unknown kind too, and three kinds in all: a cut.
    envelope.sections.push_back(EpochSection{static_cast<EpochKind>(9), 0,
                                             {static_cast<uint8_t>(rng()), 1, 2}});
  }
  return EncodeEpochData(envelope);
}

TEST(EpochDataTest, CombineIsAssociativeAndCommutativeOnRandomInputs) {
  std::mt19937_64 rng(20261123);
  for (int round = 0; round < 300; round++) {
    const size_t classes = round % 2 == 0 ? 20 : 150;  // over kTbfShareEntries: cut
    const uint64_t key_space = round % 3 == 0 ? 40 : 100000;
    const EpochData a = RandomOst(rng, classes, key_space);
    const EpochData b = RandomOst(rng, classes, key_space);
    const EpochData c = RandomOst(rng, classes, key_space);
    const EpochData ab_c = CombineEpochData(CombineEpochData(a, b), c);
    const EpochData a_bc = CombineEpochData(a, CombineEpochData(b, c));
    const EpochData ca_b = CombineEpochData(CombineEpochData(c, a), b);
    ASSERT_EQ(ab_c, a_bc) << "round " << round;
    ASSERT_EQ(ab_c, ca_b) << "round " << round;
    ASSERT_EQ(CombineEpochData(a, b), CombineEpochData(b, a)) << "round " << round;
    ASSERT_LE(ab_c.size(), kMaxEpochData);
    EXPECT_EQ(DecodeEpochData(ab_c).participants, 3u);
  }
}

TEST(EpochDataTest, TheReductionSumsEachClassAndKeepsTheSmallestKeys) {
  std::vector<TbfShareEntry> one, two;
  for (uint64_t key = 1; key <= kTbfShareEntries + 10; key++) {
    one.push_back(TbfShareEntry{key, 1, 2, 3, 4, 5, 6});
    two.push_back(TbfShareEntry{key + 5, 10, 20, 30, 40, 50, 60});
  }
  const TbfShares both =
      DecodeTbfShares(CombineTbfShares(EncodeTbfShares(1, one), EncodeTbfShares(1, two)));
  EXPECT_EQ(both.reporters, 2u);
  ASSERT_EQ(both.entries.size(), kTbfShareEntries);
  EXPECT_EQ(both.entries.front(), (TbfShareEntry{1, 1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(both.entries[5], (TbfShareEntry{6, 11, 22, 33, 44, 55, 66}));
  EXPECT_EQ(both.entries.back().key, kTbfShareEntries);
  ASSERT_NE(FindTbfShare(both.entries, 6), nullptr);
  EXPECT_EQ(FindTbfShare(both.entries, 6)->demand, 11u);
  EXPECT_EQ(FindTbfShare(both.entries, kTbfShareEntries + 1), nullptr);
  // A section always fits beside another one.
  EXPECT_LE(4 + kTbfShareEntries * kTbfShareEntryBytes, kMaxEpochPayload);
}

TEST(EpochDataTest, AnyBytesDecodeWithoutHarm) {
  std::mt19937_64 rng(7);
  for (int round = 0; round < 2000; round++) {
    EpochData junk(rng() % 64);
    for (auto& byte : junk) byte = static_cast<uint8_t>(rng());
    const EpochData good = RandomOst(rng, 5, 100);
    const EpochData mixed = CombineEpochData(junk, good);
    EXPECT_LE(mixed.size(), kMaxEpochData);
    EXPECT_EQ(CombineEpochData(junk, good), CombineEpochData(good, junk));
    (void)DecodeTbfShares(junk);
  }
}

TEST(TbfSharesTest, ShareArithmetic) {
  EXPECT_EQ(TbfShareOf(1, 4, 4), kShareOne / 4);
  EXPECT_EQ(TbfShareOf(3, 4, 4), kShareOne * 3 / 4);
  EXPECT_EQ(TbfShareOf(4, 4, 4), kShareOne);
  EXPECT_EQ(TbfShareOf(0, 4, 4), 0u) << "idle here, busy elsewhere: none";
  EXPECT_EQ(TbfShareOf(0, 0, 4), kShareOne / 4) << "idle everywhere: equal";
  EXPECT_EQ(TbfShareOf(0, 0, 0), kShareOne);
  EXPECT_EQ(TbfShareOf(1, 1'000'000, 4), 1u) << "never starved by rounding";
  EXPECT_EQ(TbfShareOf(9, 4, 4), kShareOne) << "more than the total is capped";
  // Shares of a class add up to one within rounding.
  const uint64_t demand[] = {7, 13, 1, 29};
  uint32_t sum = 0;
  for (uint64_t d : demand) sum += TbfShareOf(d, 50, 4);
  EXPECT_NEAR(sum, kShareOne, 2);
}

TEST(TbfSharesTest, ClassKeysAreTheSameOnEveryMachine) {
  // FNV-1a over little-endian fields: a fixed value, not std::hash.
  EXPECT_EQ(TbfClassKeyHash(1000, 5, 1, "job.1"), 0xa8ebbddc05ac4f5aull);
  EXPECT_NE(TbfClassKeyHash(1000, 0, 0, ""), TbfClassKeyHash(0, 1000, 0, ""));
  EXPECT_NE(TbfClassKeyHash(0, 0, 0, "a"), TbfClassKeyHash(0, 0, 0, "b"));
  EXPECT_EQ(TbfClassKeyHash(1000, 5, 1, "job.1"), TbfClassKeyHash(1000, 5, 1, "job.1"));
}

}  // namespace
}  // namespace sfs::nrs
