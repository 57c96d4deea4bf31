// Reply records (ReplyRecordScope): written in the batch of the first
// mutation a thread commits under its scope, holding what a resent call
// is answered from; dropped per client below a request id or whole.
#include <gtest/gtest.h>

#include <thread>

#include "meta/keys.h"
#include "meta/meta_store.h"
#include "tests/meta/meta_test_util.h"

namespace sfs::meta {
namespace {

using ReplyRecordsTest = test_util::StoreTest;

constexpr uint64_t kClient = 0xfeedface12345678ull;

TEST_F(ReplyRecordsTest, ACreateUnderAScopeRecordsItsInodeAndSurvivesAReopen) {
  uint64_t made = 0;
  {
    ReplyRecordScope scope(kClient, 7);
    auto f = File(kRootIno, "f");
    SFS_ASSERT_OK(f);
    made = f->ino;
    EXPECT_TRUE(scope.written());
    // A second commit under the same scope writes no second record.
    SFS_ASSERT_OK(store_->SetXattr(made, "user.a", "1", 0));
  }
  Reopen();
  auto record = store_->GetReplyRecord(kClient, 7);
  SFS_ASSERT_OK(record);
  ASSERT_TRUE(record->has_value());
  EXPECT_EQ((*record)->created_ino, made);
  EXPECT_FALSE((*record)->removed.has_value());
  auto other = store_->GetReplyRecord(kClient, 8);
  SFS_ASSERT_OK(other);
  EXPECT_FALSE(other->has_value());
}

TEST_F(ReplyRecordsTest, AnUnlinkRecordsTheLinkItDropped) {
  auto f = File(kRootIno, "f");
  SFS_ASSERT_OK(f);
  {
    ReplyRecordScope scope(kClient, 1);
    SFS_ASSERT_OK(store_->Unlink(kRootIno, "f"));
  }
  auto record = store_->GetReplyRecord(kClient, 1);
  SFS_ASSERT_OK(record);
  ASSERT_TRUE(record->has_value());
  ASSERT_TRUE((*record)->removed.has_value());
  EXPECT_EQ((*record)->removed->ino, f->ino);
  EXPECT_EQ((*record)->removed->nlink_left, 0u);
  EXPECT_TRUE((*record)->removed->orphaned);
  EXPECT_EQ((*record)->created_ino, 0u);
}

// A failed operation commits nothing, so it leaves no record (a resend is
// applied, and fails, again); nor does a commit on another thread or
// after the scope.
TEST_F(ReplyRecordsTest, OnlyACommittedMutationOfTheScopesThreadRecords) {
  SFS_ASSERT_OK(File(kRootIno, "f"));
  {
    ReplyRecordScope scope(kClient, 1);
    SFS_EXPECT_ERR(File(kRootIno, "f"), EEXIST);
    EXPECT_FALSE(scope.written());
    std::thread other([&] { SFS_ASSERT_OK(File(kRootIno, "g")); });
    other.join();
    EXPECT_FALSE(scope.written());
  }
  SFS_ASSERT_OK(File(kRootIno, "h"));
  auto clients = store_->ReplyRecordClients();
  SFS_ASSERT_OK(clients);
  EXPECT_TRUE(clients->empty());
}

TEST_F(ReplyRecordsTest, RecordsAreDroppedBelowARequestOrWhole) {
  for (uint64_t request = 1; request <= 5; ++request) {
    for (uint64_t client : {kClient, uint64_t{3}}) {
      ReplyRecordScope scope(client, request);
      SFS_ASSERT_OK(File(kRootIno, "f" + std::to_string(client) + "-" + std::to_string(request)));
    }
  }
  auto clients = store_->ReplyRecordClients();
  SFS_ASSERT_OK(clients);
  EXPECT_EQ(*clients, (std::vector<uint64_t>{3, kClient}));
  SFS_ASSERT_OK(store_->DropReplyRecords(kClient, 4));
  for (uint64_t request = 1; request <= 5; ++request) {
    auto record = store_->GetReplyRecord(kClient, request);
    SFS_ASSERT_OK(record);
    EXPECT_EQ(record->has_value(), request >= 4) << request;
    auto kept = store_->GetReplyRecord(3, request);
    SFS_ASSERT_OK(kept);
    EXPECT_TRUE(kept->has_value()) << request;
  }
  SFS_ASSERT_OK(store_->DropReplyRecords(3, UINT64_MAX));
  clients = store_->ReplyRecordClients();
  SFS_ASSERT_OK(clients);
  EXPECT_EQ(*clients, (std::vector<uint64_t>{kClient}));
}

TEST(ReplyRecordCodingTest, RoundTripsAndRefusesDamage) {
  ReplyRecord record;
  record.created_ino = 42;
  Removed removed;
  removed.ino = 9;
  removed.mode = S_IFREG | 0600;
  removed.nlink_left = 2;
  removed.purged = true;
  record.removed = removed;
  const std::string bytes = EncodeReplyRecord(record);
  auto back = DecodeReplyRecord(bytes);
  SFS_ASSERT_OK(back);
  EXPECT_EQ(*back, record);
  SFS_EXPECT_ERR(DecodeReplyRecord(bytes.substr(1)), EIO);
  std::string wrong = bytes;
  wrong[0] = 2;
  SFS_EXPECT_ERR(DecodeReplyRecord(wrong), EIO);
}

}  // namespace
}  // namespace sfs::meta
