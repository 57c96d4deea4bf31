// Quota usage as merge operands (meta/keys.h, meta/usage_merge.h): the
// order batches land in does not change the counters, records written
// whole by earlier versions take operands, and damage makes the open
// count again.
#include "meta/usage_merge.h"

#include <gtest/gtest.h>
#include <rocksdb/db.h>

#include <algorithm>
#include <random>
#include <vector>

#include "meta/keys.h"
#include "meta/usage_book.h"
#include "tests/meta/meta_test_util.h"

namespace sfs::meta {
namespace {

constexpr QuotaId kUser{QuotaType::kUser, 1000};
constexpr QuotaId kGroup{QuotaType::kGroup, 100};

TEST(UsageDeltaTest, EncodesAndRefusesWhatIsNotAnOperand) {
  UsageDelta delta{-5, 3, SoftLimit{100, 7}, 1234, 5678};
  auto decoded = DecodeUsageDelta(EncodeUsageDelta(delta));
  ASSERT_TRUE(decoded.ok());
  EXPECT_EQ(*decoded, delta);
  EXPECT_EQ(DecodeUsageDelta(EncodeUsage(QuotaUsage{1, 2, 3, 4})).err(), EIO);
  EXPECT_EQ(DecodeUsage(EncodeUsageDelta(delta)).err(), EIO);
}

TEST(UsageDeltaTest, GraceEndsFollowTheSoftLimitsAsStamps) {
  const SoftLimit soft{10, 0};
  QuotaUsage usage = WithDelta({}, UsageDelta{11, 1, soft, 500, 900});
  EXPECT_EQ(usage, (QuotaUsage{11, 1, 500, 0}));  // over bytes; no inode limit
  usage = WithDelta(usage, UsageDelta{5, 0, soft, 600, 900});
  EXPECT_EQ(usage.block_grace_end, 500);  // still over: the first one runs
  usage = WithDelta(usage, UsageDelta{-6, 0, soft, 700, 900});
  EXPECT_EQ(usage.block_grace_end, 0);    // 10 is not above 10
}

// The counters are sums, and whether a grace end is set follows the
// final counters, so every landing order of the same operands agrees on
// both (only which batch's grace end may differ).
TEST(UsageDeltaTest, AnyLandingOrderGivesTheSameCounters) {
  std::vector<UsageDelta> deltas;
  for (int i = 0; i < 12; ++i) {
    deltas.push_back(UsageDelta{(i % 3 - 1) * 1000, i % 2 ? 1 : -1, SoftLimit{2000, 3}, 100 + i,
                                200 + i});
  }
  QuotaUsage first;
  for (const auto& d : deltas) first = WithDelta(first, d);
  std::mt19937 rng(5);
  for (int round = 0; round < 50; ++round) {
    std::shuffle(deltas.begin(), deltas.end(), rng);
    QuotaUsage usage = QuotaUsage{3000, 5, 0, 0};  // a record stored before
    QuotaUsage expected = QuotaUsage{3000 + first.bytes, 5 + first.inodes, 0, 0};
    for (const auto& d : deltas) usage = WithDelta(usage, d);
    EXPECT_EQ(usage.bytes, expected.bytes);
    EXPECT_EQ(usage.inodes, expected.inodes);
    EXPECT_EQ(usage.block_grace_end != 0, usage.bytes > 2000);
    EXPECT_EQ(usage.inode_grace_end != 0, usage.inodes > 3);
  }
}

TEST(UsageMergeOperatorTest, AddsOperandsToTheRecordAndMarksDamage) {
  auto op = NewUsageMergeOperator();
  const std::string stored = EncodeUsage(QuotaUsage{100, 2, 0, 0});
  const std::string a = EncodeUsageDelta(UsageDelta{50, 1, {}, 0, 0});
  const std::string b = EncodeUsageDelta(UsageDelta{-20, -1, {}, 0, 0});
  const rocksdb::Slice existing(stored);
  std::vector<rocksdb::Slice> operands = {a, b};
  const rocksdb::Slice key("Q");
  using Input = rocksdb::MergeOperator::MergeOperationInput;
  std::string result;
  rocksdb::Slice existing_operand;
  rocksdb::MergeOperator::MergeOperationOutput out(result, existing_operand);
  ASSERT_TRUE(op->FullMergeV2(Input(key, &existing, operands, nullptr), &out));
  EXPECT_EQ(DecodeUsage(result).value(), (QuotaUsage{130, 2, 0, 0}));
  // No record yet: the operands alone.
  result.clear();
  ASSERT_TRUE(op->FullMergeV2(Input(key, nullptr, operands, nullptr), &out));
  EXPECT_EQ(DecodeUsage(result).value(), (QuotaUsage{30, 0, 0, 0}));
  // A damaged operand (or record) never fails the merge, which would stop
  // RocksDB's compactions, but leaves a record no open will trust.
  result.clear();
  operands.push_back(rocksdb::Slice("junk"));
  ASSERT_TRUE(op->FullMergeV2(Input(key, &existing, operands, nullptr), &out));
  EXPECT_EQ(DecodeUsage(result).err(), EIO);
}

class UsageFormatTest : public test_util::StoreTest {
 protected:
  // Opens the database raw, with the store closed, and runs `fn` on it.
  template <typename Fn>
  void Raw(Fn fn) {
    store_.reset();
    rocksdb::DB* raw = nullptr;
    rocksdb::Status s = rocksdb::DB::Open(test_util::RawDbOptions(), db_dir_, &raw);
    ASSERT_TRUE(s.ok()) << s.ToString();
    std::unique_ptr<rocksdb::DB> db(raw);
    fn(db.get());
  }
};

// Before merges, every batch put the records whole (version 1, the same
// encoding). Such a store opens with its usage as stored, and operands
// then add to those records.
TEST_F(UsageFormatTest, RecordsWrittenWholeByAnEarlierVersionTakeOperands) {
  auto f = File(kRootIno, "f");
  SFS_ASSERT_OK(f);
  SFS_ASSERT_OK(store_->NoteWrite(f->ino, 300, false));
  SFS_ASSERT_OK(File(kRootIno, "g"));
  Raw([&](rocksdb::DB* db) {
    // What an earlier version left: whole records only (no operand under
    // them), one with a grace end running.
    ASSERT_TRUE(db->CompactRange(rocksdb::CompactRangeOptions(), nullptr, nullptr).ok());
    rocksdb::WriteBatch batch;
    batch.Put(UsageKey(kUser), EncodeUsage(QuotaUsage{300, 2, 4242, 0}));
    batch.Put(UsageKey(kGroup), EncodeUsage(QuotaUsage{300, 2, 0, 0}));
    ASSERT_TRUE(db->Write(rocksdb::WriteOptions(), &batch).ok());
    ASSERT_TRUE(db->CompactRange(rocksdb::CompactRangeOptions(), nullptr, nullptr).ok());
  });
  Reopen();
  EXPECT_EQ(store_->GetUsage(kUser), (QuotaUsage{300, 2, 4242, 0}));
  EXPECT_EQ(test_util::StoredUsage(*store_), test_util::CountedUsage(*store_));
  SFS_ASSERT_OK(store_->NoteWrite(f->ino, 1000, false));
  SFS_ASSERT_OK(File(kRootIno, "h"));
  SFS_ASSERT_OK(store_->Unlink(kRootIno, "g", [](uint64_t, const std::string&) { return true; }));
  const QuotaUsage expected{1000, 2, 0, 0};  // no soft limit: the grace end clears
  EXPECT_EQ(store_->GetUsage(kUser), expected);
  Reopen();
  EXPECT_EQ(store_->GetUsage(kUser), expected);
  EXPECT_EQ(test_util::StoredUsage(*store_), test_util::CountedUsage(*store_));
  // Stored in the old encoding, whatever RocksDB merged.
  Raw([&](rocksdb::DB* db) {
    std::string value;
    ASSERT_TRUE(db->Get(rocksdb::ReadOptions(), UsageKey(kUser), &value).ok());
    EXPECT_EQ(DecodeUsage(value).value(), expected);
    ASSERT_TRUE(db->CompactRange(rocksdb::CompactRangeOptions(), nullptr, nullptr).ok());
    ASSERT_TRUE(db->Get(rocksdb::ReadOptions(), UsageKey(kUser), &value).ok());
    EXPECT_EQ(value, EncodeUsage(expected));
  });
}

TEST_F(UsageFormatTest, ADamagedOperandMakesTheOpenCountAgain) {
  auto f = File(kRootIno, "f");
  SFS_ASSERT_OK(f);
  SFS_ASSERT_OK(store_->NoteWrite(f->ino, 77, false));
  Raw([&](rocksdb::DB* db) {
    ASSERT_TRUE(db->Merge(rocksdb::WriteOptions(), UsageKey(kUser), "junk").ok());
  });
  Reopen();
  EXPECT_EQ(store_->GetUsage(kUser), (QuotaUsage{77, 1, 0, 0}));
  EXPECT_EQ(test_util::StoredUsage(*store_), test_util::CountedUsage(*store_));
}

// A record that comes back to zero stays stored as zeros (a merge cannot
// delete it) and reads as no record, also after a reopen.
TEST_F(UsageFormatTest, ARecordBackToZeroReadsAsNone) {
  SFS_ASSERT_OK(File(kRootIno, "f"));
  SFS_ASSERT_OK(store_->Unlink(kRootIno, "f", [](uint64_t, const std::string&) { return true; }));
  EXPECT_TRUE(store_->AllUsage().empty());
  Reopen();
  EXPECT_TRUE(store_->AllUsage().empty());
}

}  // namespace
}  // namespace sfs::meta
