// Format, Open, Destroy and settings.
#include <gtest/gtest.h>

#include <filesystem>

#include "meta/meta_store.h"
#include "tests/meta/meta_test_util.h"

namespace sfs::meta {
namespace {

using test_util::StoreTest;
using test_util::T;
using test_util::TempDir;

TEST(StoreOpenTest, FormatWritesRootAndSettings) {
  TempDir tmp;
  const std::string dir = tmp.path() + "/a/b/db";  // mkdir -p
  std::map<std::string, std::string> settings = {{"fs_uuid", "1234"}, {"osts", "a,b"}};
  Timestamp before = Timestamp::Now();
  auto store = MetaStore::Format(dir, settings);
  SFS_ASSERT_OK(store);
  auto root = (*store)->GetInode(kRootIno);
  SFS_ASSERT_OK(root);
  EXPECT_EQ(root->ino, kRootIno);
  EXPECT_EQ(root->mode, static_cast<uint32_t>(S_IFDIR | 0755));
  EXPECT_EQ(root->nlink, 2u);
  EXPECT_EQ(root->uid, 0u);
  EXPECT_EQ(root->gid, 0u);
  EXPECT_EQ(root->parent, kRootIno);
  EXPECT_EQ(root->size, 0u);
  EXPECT_LE(T(before), T(root->mtime));
  EXPECT_EQ(T(root->mtime), T(root->ctime));
  auto all = (*store)->AllSettings();
  SFS_ASSERT_OK(all);
  EXPECT_EQ(*all, settings);
  auto entries = (*store)->ReadDir(kRootIno);
  SFS_ASSERT_OK(entries);
  EXPECT_TRUE(entries->empty());
}

TEST(StoreOpenTest, FormatRefusesAnExistingStore) {
  TempDir tmp;
  const std::string dir = tmp.path() + "/db";
  {
    auto store = MetaStore::Format(dir, {});
    SFS_ASSERT_OK(store);
    // Also while the first store is still open.
    SFS_EXPECT_ERR(MetaStore::Format(dir, {}), EEXIST);
  }
  SFS_EXPECT_ERR(MetaStore::Format(dir, {}), EEXIST);
}

TEST(StoreOpenTest, AStoreInUseIsBusy) {
  TempDir tmp;
  const std::string dir = tmp.path() + "/db";
  auto store = MetaStore::Format(dir, {});
  SFS_ASSERT_OK(store);
  auto again = MetaStore::Open(dir);
  SFS_EXPECT_ERR(again, EBUSY);
  EXPECT_NE(again.status().message().find("mounted"), std::string::npos) << again.status().message();
}

TEST(StoreOpenTest, OpenNeedsAStore) {
  TempDir tmp;
  SFS_EXPECT_ERR(MetaStore::Open(tmp.path()), ENOENT);  // empty dir
  SFS_EXPECT_ERR(MetaStore::Open(tmp.path() + "/missing"), ENOENT);
  EXPECT_FALSE(std::filesystem::exists(tmp.path() + "/missing"));  // Open creates nothing
}

TEST(StoreOpenTest, DestroyThenFormatAgain) {
  TempDir tmp;
  const std::string dir = tmp.path() + "/db";
  {
    auto store = MetaStore::Format(dir, {{"k", "old"}});
    SFS_ASSERT_OK(store);
  }
  SFS_ASSERT_OK(MetaStore::Destroy(dir));
  SFS_EXPECT_ERR(MetaStore::Open(dir), ENOENT);
  auto store = MetaStore::Format(dir, {{"k", "new"}});
  SFS_ASSERT_OK(store);
  auto value = (*store)->GetSetting("k");
  SFS_ASSERT_OK(value);
  EXPECT_EQ(*value, "new");
}

TEST_F(StoreTest, SettingsRoundTripAndSurviveReopen) {
  SFS_EXPECT_ERR(store_->GetSetting("missing"), ENOENT);
  SFS_ASSERT_OK(store_->PutSetting("b", "2"));
  SFS_ASSERT_OK(store_->PutSetting("a", "1"));
  SFS_ASSERT_OK(store_->PutSetting("a", "one"));
  SFS_ASSERT_OK(store_->PutSetting("empty", ""));
  auto a = store_->GetSetting("a");
  SFS_ASSERT_OK(a);
  EXPECT_EQ(*a, "one");
  Reopen();
  auto all = store_->AllSettings();
  SFS_ASSERT_OK(all);
  std::map<std::string, std::string> want = {{"a", "one"}, {"b", "2"}, {"empty", ""}};
  EXPECT_EQ(*all, want);
}

TEST_F(StoreTest, PutSettingsWritesAndErasesTogether) {
  SFS_ASSERT_OK(store_->PutSettings({{"x", "1"}, {"y", "2"}, {"z", "3"}}));
  SFS_ASSERT_OK(store_->PutSettings({{"x", "10"}, {"w", "4"}}, {"y", "missing-is-fine"}));
  Reopen();
  auto all = store_->AllSettings();
  SFS_ASSERT_OK(all);
  std::map<std::string, std::string> want = {{"w", "4"}, {"x", "10"}, {"z", "3"}};
  EXPECT_EQ(*all, want);
}

TEST_F(StoreTest, NamespaceSurvivesReopen) {
  auto d = Dir(kRootIno, "d");
  SFS_ASSERT_OK(d);
  auto f = File(d->ino, "f");
  SFS_ASSERT_OK(f);
  SFS_ASSERT_OK(store_->Sync());
  Reopen();
  EXPECT_EQ(InoOf(kRootIno, "d"), d->ino);
  auto again = store_->Lookup(d->ino, "f");
  SFS_ASSERT_OK(again);
  EXPECT_EQ(again->ino, f->ino);
  EXPECT_EQ(again->mode, f->mode);
  EXPECT_EQ(again->uid, 1000u);
  EXPECT_EQ(Nlink(kRootIno), 3u);
}

}  // namespace
}  // namespace sfs::meta
