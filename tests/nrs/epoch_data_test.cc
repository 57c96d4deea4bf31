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
// space, so OSTs share keys and cuts happen, reported in one of two epochs
// and with one of two windows (one wrapping past 2^64), so stale data
// meets current data.
EpochData RandomOst(std::mt19937_64& rng, size_t classes, uint64_t key_space) {
  TbfShares shares;
  shares.reporters = 1;
  shares.epoch = static_cast<Epoch>(5 + rng() % 2);
  shares.window = rng() % 2 == 0 ? key_space / 2 : ~uint64_t{0} - 3;
  std::vector<TbfShareEntry>& entries = shares.entries;
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
      EpochSection{EpochKind::kTbfShares, head, EncodeTbfShares(std::move(shares))});
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

TEST(EpochDataTest, TheReductionSumsEachClassAndKeepsTheFirstKeysOfTheWindow) {
  std::vector<TbfShareEntry> one, two;
  for (uint64_t key = 1; key <= kTbfShareEntries + 10; key++) {
    one.push_back(TbfShareEntry{key, 1, 2, 3, 4, 5, 6});
    two.push_back(TbfShareEntry{key + 5, 10, 20, 30, 40, 50, 60});
  }
  auto report = [](Epoch epoch, uint64_t window, std::vector<TbfShareEntry> entries) {
    return EncodeTbfShares(TbfShares{1, epoch, window, std::move(entries)});
  };
  const TbfShares both = DecodeTbfShares(CombineTbfShares(report(3, 0, one), report(3, 0, two)));
  EXPECT_EQ(both.reporters, 2u);
  ASSERT_EQ(both.entries.size(), kTbfShareEntries);
  EXPECT_EQ(both.entries.front(), (TbfShareEntry{1, 1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(both.entries[5], (TbfShareEntry{6, 11, 22, 33, 44, 55, 66}));
  EXPECT_EQ(both.entries.back().key, kTbfShareEntries);
  ASSERT_NE(FindTbfShare(both, 6), nullptr);
  EXPECT_EQ(FindTbfShare(both, 6)->demand, 11u);
  EXPECT_EQ(FindTbfShare(both, kTbfShareEntries + 1), nullptr);
  // Full: it speaks for the keys up to its last, and the next window
  // starts past it.
  EXPECT_TRUE(TbfSharesCover(both, kTbfShareEntries));
  EXPECT_FALSE(TbfSharesCover(both, kTbfShareEntries + 1));
  EXPECT_EQ(NextTbfShareWindow(both), kTbfShareEntries + 1);
  // A section always fits beside another one.
  EXPECT_LE(kTbfSharesHeaderBytes + kTbfShareEntries * kTbfShareEntryBytes, kMaxEpochPayload);

  // From a window near the top the order wraps: 2^64 - 2, 2^64 - 1, 0, 1...
  std::vector<TbfShareEntry> wrapped = one;
  wrapped.push_back(TbfShareEntry{~uint64_t{0} - 1, 7, 7, 7, 7, 7, 7});
  wrapped.push_back(TbfShareEntry{~uint64_t{0}, 8, 8, 8, 8, 8, 8});
  const TbfShares top = DecodeTbfShares(report(3, ~uint64_t{0} - 1, wrapped));
  ASSERT_EQ(top.entries.size(), kTbfShareEntries);
  EXPECT_EQ(top.entries[0].key, ~uint64_t{0} - 1);
  EXPECT_EQ(top.entries[2].key, 1u);
  EXPECT_EQ(FindTbfShare(top, ~uint64_t{0})->demand, 8u);
  EXPECT_EQ(NextTbfShareWindow(top), kTbfShareEntries - 1);
  EXPECT_TRUE(TbfSharesCover(top, 0));
  EXPECT_FALSE(TbfSharesCover(top, ~uint64_t{0} - 2)) << "just before the window: the last place";

  // Not full: it speaks for every key, and the window stays.
  const TbfShares few = DecodeTbfShares(report(3, 40, {TbfShareEntry{50, 1}, TbfShareEntry{2, 1}}));
  EXPECT_EQ(few.entries[0].key, 50u) << "sorted by place in the window";
  EXPECT_TRUE(TbfSharesCover(few, 7));
  EXPECT_EQ(NextTbfShareWindow(few), 40u);

  // Data of an older epoch or another window is dropped; its reporter counts.
  const TbfShares latest =
      DecodeTbfShares(CombineTbfShares(report(2, 0, one), report(3, 0, {TbfShareEntry{1, 9}})));
  EXPECT_EQ(latest.reporters, 2u);
  EXPECT_EQ(latest.epoch, 3);
  ASSERT_EQ(latest.entries.size(), 1u);
  EXPECT_EQ(latest.entries[0].demand, 9u);
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
