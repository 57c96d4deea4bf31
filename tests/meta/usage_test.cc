// Quota usage: kept exact in the same batch as every change it counts,
// grace ends from the soft limits, the observer, and the count of a store
// made before quotas.
#include <gtest/gtest.h>
#include <rocksdb/db.h>
#include <sys/stat.h>

#include <map>
#include <vector>

#include "meta/keys.h"
#include "meta/meta_store.h"
#include "tests/meta/meta_test_util.h"

namespace sfs::meta {
namespace {

constexpr QuotaId kUser{QuotaType::kUser, 1000};
constexpr QuotaId kGroup{QuotaType::kGroup, 100};
constexpr QuotaId kProject{QuotaType::kProject, 42};

class UsageTest : public test_util::StoreTest {
 protected:
  QuotaUsage Usage(const QuotaId& id) { return store_->GetUsage(id); }
  std::pair<int64_t, int64_t> BytesInodes(const QuotaId& id) {
    const QuotaUsage u = Usage(id);
    return {u.bytes, u.inodes};
  }
  // Usage as fsck would count it: ChargesOf over every inode.
  std::map<QuotaId, std::pair<int64_t, int64_t>> Recount() {
    std::map<QuotaId, std::pair<int64_t, int64_t>> counted;
    Status s = store_->ScanInodes([&](uint64_t, const Result<Inode>& inode) {
      if (!inode.ok()) return;  // counts for nobody
      for (const Charge& charge : ChargesOf(*inode)) {
        counted[charge.id].first += charge.bytes;
        counted[charge.id].second += charge.inodes;
      }
    });
    EXPECT_TRUE(s.ok());
    std::erase_if(counted, [](const auto& kv) { return kv.second == std::make_pair(0L, 0L); });
    return counted;
  }
  std::map<QuotaId, std::pair<int64_t, int64_t>> Stored() {
    std::map<QuotaId, std::pair<int64_t, int64_t>> stored;
    for (const auto& [id, usage] : store_->AllUsage()) stored[id] = {usage.bytes, usage.inodes};
    return stored;
  }
  Result<Inode> ProjectDir(const std::string& name, uint32_t projid) {
    auto dir = Dir(kRootIno, name);
    if (!dir.ok()) return dir;
    AttrChange change;
    change.projid = projid;
    return store_->SetAttr(dir->ino, change);
  }
};

TEST_F(UsageTest, EveryChangeMovesUsageAndAReopenedStoreAgrees) {
  EXPECT_TRUE(store_->AllUsage().empty());  // the root counts for nobody
  auto f = File(kRootIno, "f");
  SFS_ASSERT_OK(f);
  EXPECT_EQ(BytesInodes(kUser), std::make_pair(0L, 1L));
  EXPECT_EQ(BytesInodes(kGroup), std::make_pair(0L, 1L));
  SFS_ASSERT_OK(store_->NoteWrite(f->ino, 4096, false));
  EXPECT_EQ(BytesInodes(kUser), std::make_pair(4096L, 1L));
  SFS_ASSERT_OK(store_->NoteWrite(f->ino, 100, false));  // inside: no change
  EXPECT_EQ(BytesInodes(kUser).first, 4096);
  AttrChange truncate;
  truncate.size = 10000;
  SFS_ASSERT_OK(store_->SetAttr(f->ino, truncate));
  EXPECT_EQ(BytesInodes(kGroup).first, 10000);
  auto d = Dir(kRootIno, "d");
  SFS_ASSERT_OK(d);
  SFS_ASSERT_OK(Make(d->ino, "l", S_IFLNK | 0777, "target"));  // an inode, no bytes
  EXPECT_EQ(BytesInodes(kUser), std::make_pair(10000L, 3L));
  // chown and chgrp move a file's bytes and inode to its new ids.
  AttrChange chown;
  chown.uid = 2000;
  chown.gid = 200;
  SFS_ASSERT_OK(store_->SetAttr(f->ino, chown));
  EXPECT_EQ(BytesInodes(kUser), std::make_pair(0L, 2L));
  EXPECT_EQ(BytesInodes({QuotaType::kUser, 2000}), std::make_pair(10000L, 1L));
  EXPECT_EQ(BytesInodes({QuotaType::kGroup, 200}), std::make_pair(10000L, 1L));
  // A hard link adds nothing; the last unlink leaves an orphan that still
  // counts until its objects are gone and it is purged.
  SFS_ASSERT_OK(store_->Link(f->ino, d->ino, "f2"));
  SFS_ASSERT_OK(store_->Unlink(kRootIno, "f"));
  SFS_ASSERT_OK(store_->Unlink(d->ino, "f2"));
  EXPECT_EQ(BytesInodes({QuotaType::kUser, 2000}), std::make_pair(10000L, 1L));
  SFS_ASSERT_OK(store_->Purge(f->ino));
  EXPECT_EQ(BytesInodes({QuotaType::kUser, 2000}), std::make_pair(0L, 0L));
  SFS_ASSERT_OK(store_->Unlink(d->ino, "l"));
  SFS_ASSERT_OK(store_->Rmdir(kRootIno, "d"));
  EXPECT_TRUE(store_->AllUsage().empty());
  // What was stored is what a count of the inodes says, also after a reopen.
  SFS_ASSERT_OK(File(kRootIno, "g"));
  SFS_ASSERT_OK(store_->NoteWrite(InoOf(kRootIno, "g"), 777, false));
  EXPECT_EQ(Stored(), Recount());
  Reopen();
  EXPECT_EQ(Stored(), Recount());
  EXPECT_EQ(BytesInodes(kUser), std::make_pair(777L, 1L));
}

TEST_F(UsageTest, APurgeInTheUnlinkBatchAndARenameOverAFileTakeTheirUsage) {
  auto a = File(kRootIno, "a");
  SFS_ASSERT_OK(a);
  SFS_ASSERT_OK(store_->NoteWrite(a->ino, 50, false));
  SFS_ASSERT_OK(store_->Unlink(kRootIno, "a", [](uint64_t, const std::string&) { return true; }));
  EXPECT_EQ(BytesInodes(kUser), std::make_pair(0L, 0L));
  auto b = File(kRootIno, "b");
  auto c = File(kRootIno, "c");
  SFS_ASSERT_OK(c);
  SFS_ASSERT_OK(store_->NoteWrite(c->ino, 60, false));
  auto replaced = store_->Rename(kRootIno, "b", kRootIno, "c", RenameMode::kReplace);
  SFS_ASSERT_OK(replaced);
  // c is an orphan now: it counts until purged.
  EXPECT_EQ(BytesInodes(kUser), std::make_pair(60L, 2L));
  SFS_ASSERT_OK(store_->Purge(c->ino));
  EXPECT_EQ(BytesInodes(kUser), std::make_pair(0L, 1L));
  SFS_ASSERT_OK(Dir(kRootIno, "e"));
  SFS_ASSERT_OK(Dir(kRootIno, "victim"));
  SFS_ASSERT_OK(store_->Rename(kRootIno, "e", kRootIno, "victim", RenameMode::kReplace));
  EXPECT_EQ(BytesInodes(kUser), std::make_pair(0L, 2L));
  EXPECT_EQ(Stored(), Recount());
}

TEST_F(UsageTest, ProjectsAreInheritedAndNothingMovesBetweenThemByRename) {
  auto p = ProjectDir("p", 42);
  SFS_ASSERT_OK(p);
  EXPECT_EQ(p->projid, 42u);
  EXPECT_EQ(BytesInodes(kProject), std::make_pair(0L, 1L));  // the directory itself
  auto sub = Dir(p->ino, "sub");
  SFS_ASSERT_OK(sub);
  EXPECT_EQ(sub->projid, 42u);
  auto f = File(sub->ino, "f");
  SFS_ASSERT_OK(f);
  EXPECT_EQ(f->projid, 42u);
  SFS_ASSERT_OK(store_->NoteWrite(f->ino, 1 << 20, false));
  EXPECT_EQ(BytesInodes(kProject), std::make_pair(1L << 20, 3L));
  // Into the project from outside, or out to another project: EXDEV, as
  // ext4 and Lustre; mv then copies. Within one directory, and out to a
  // directory of no project, a rename is free.
  auto outside = File(kRootIno, "outside");
  SFS_ASSERT_OK(outside);
  SFS_EXPECT_ERR(store_->Rename(kRootIno, "outside", p->ino, "in", RenameMode::kReplace), EXDEV);
  auto q = ProjectDir("q", 43);
  SFS_ASSERT_OK(q);
  SFS_EXPECT_ERR(store_->Rename(sub->ino, "f", q->ino, "f", RenameMode::kReplace), EXDEV);
  SFS_EXPECT_ERR(store_->Rename(kRootIno, "outside", sub->ino, "f", RenameMode::kExchange), EXDEV);
  // A hard link would do the same rename in two steps (ln, rm).
  SFS_EXPECT_ERR(store_->Link(outside->ino, p->ino, "linked"), EXDEV);
  SFS_EXPECT_ERR(store_->Link(f->ino, q->ino, "linked"), EXDEV);
  SFS_ASSERT_OK(store_->Link(f->ino, sub->ino, "f-too"));
  SFS_ASSERT_OK(store_->Unlink(sub->ino, "f-too"));
  SFS_ASSERT_OK(store_->Rename(sub->ino, "f", sub->ino, "g", RenameMode::kReplace));
  SFS_ASSERT_OK(store_->Rename(sub->ino, "g", kRootIno, "g", RenameMode::kReplace));
  EXPECT_EQ(BytesInodes(kProject), std::make_pair(1L << 20, 3L));  // it keeps its project
  // Only directories take a project id.
  AttrChange change;
  change.projid = 7;
  SFS_EXPECT_ERR(store_->SetAttr(f->ino, change), EINVAL);
  EXPECT_EQ(Stored(), Recount());
}

TEST_F(UsageTest, GraceEndsStartAboveTheSoftLimitAndClearBelowIt) {
  auto f = File(kRootIno, "f");
  SFS_ASSERT_OK(f);
  const QuotaGrace grace{3600, 60};
  SFS_ASSERT_OK(store_->SetSoftLimits({{kUser, SoftLimit{1000, 1}}}, grace));
  EXPECT_EQ(Usage(kUser).block_grace_end, 0);
  EXPECT_EQ(Usage(kUser).inode_grace_end, 0);  // 1 inode is not above 1
  const int64_t before = Timestamp::Now().sec;
  SFS_ASSERT_OK(store_->NoteWrite(f->ino, 1001, false));
  const int64_t started = Usage(kUser).block_grace_end;
  EXPECT_GE(started, before + 3600);
  EXPECT_LE(started, Timestamp::Now().sec + 3600);
  SFS_ASSERT_OK(File(kRootIno, "g"));
  EXPECT_GE(Usage(kUser).inode_grace_end, before + 60);
  // It keeps running while usage stays above, also across a reopen.
  SFS_ASSERT_OK(store_->NoteWrite(f->ino, 5000, false));
  EXPECT_EQ(Usage(kUser).block_grace_end, started);
  Reopen();
  EXPECT_EQ(Usage(kUser).block_grace_end, started);
  // After a reopen the table is the filesystem's to give again; given, a
  // change to the table restamps what it contradicts.
  SFS_ASSERT_OK(store_->SetSoftLimits({{kUser, SoftLimit{1000, 0}}}, grace));
  EXPECT_EQ(Usage(kUser).block_grace_end, started);
  EXPECT_EQ(Usage(kUser).inode_grace_end, 0);  // no inode soft limit any more
  AttrChange truncate;
  truncate.size = 10;
  SFS_ASSERT_OK(store_->SetAttr(f->ino, truncate));
  EXPECT_EQ(Usage(kUser).block_grace_end, 0);
  SFS_ASSERT_OK(store_->SetSoftLimits({{kUser, SoftLimit{5, 0}}}, grace));
  EXPECT_GE(Usage(kUser).block_grace_end, before + 3600);  // restamped: 10 > 5
}

TEST_F(UsageTest, TheObserverSeesEveryRecordThenEveryChangeInOrder) {
  SFS_ASSERT_OK(File(kRootIno, "f"));
  std::vector<std::pair<QuotaId, QuotaUsage>> seen;
  store_->SetUsageObserver([&](const QuotaId& id, const QuotaUsage& usage) {
    seen.emplace_back(id, usage);
  });
  ASSERT_EQ(seen.size(), 2u);  // user and group of f
  seen.clear();
  SFS_ASSERT_OK(store_->NoteWrite(InoOf(kRootIno, "f"), 9, false));
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0].second.bytes, 9);
  seen.clear();
  SFS_ASSERT_OK(store_->Unlink(kRootIno, "f", [](uint64_t, const std::string&) { return true; }));
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[1].second, QuotaUsage{});  // gone to zero
  seen.clear();
  // A failed change tells nothing.
  SFS_EXPECT_ERR(store_->Unlink(kRootIno, "f"), ENOENT);
  EXPECT_TRUE(seen.empty());
  store_->SetUsageObserver(nullptr);
  SFS_ASSERT_OK(File(kRootIno, "g"));
  EXPECT_TRUE(seen.empty());
}

TEST_F(UsageTest, RepairKeepsAStoredGraceEnd) {
  auto f = File(kRootIno, "f");
  SFS_ASSERT_OK(f);
  SFS_ASSERT_OK(store_->SetSoftLimits({{kUser, SoftLimit{10, 0}}}, QuotaGrace{3600, 3600}));
  SFS_ASSERT_OK(store_->NoteWrite(f->ino, 100, false));
  const int64_t grace_end = Usage(kUser).block_grace_end;
  ASSERT_GT(grace_end, 0);
  Reopen();  // as fsck opens it: no soft limits known
  std::map<QuotaId, QuotaUsage> counted{{kUser, QuotaUsage{200, 1, 0, 0}},
                                        {kGroup, QuotaUsage{100, 1, 0, 0}}};
  SFS_ASSERT_OK(store_->RepairUsage(counted));
  EXPECT_EQ(Usage(kUser).bytes, 200);
  EXPECT_EQ(Usage(kUser).block_grace_end, grace_end);
}

TEST_F(UsageTest, RepairReplacesEveryRecordWithACount) {
  SFS_ASSERT_OK(File(kRootIno, "f"));
  std::map<QuotaId, QuotaUsage> counted;
  counted[{QuotaType::kUser, 5}] = QuotaUsage{10, 1, 0, 0};
  SFS_ASSERT_OK(store_->RepairUsage(counted));
  ASSERT_EQ(store_->AllUsage().size(), 1u);
  EXPECT_EQ(BytesInodes({QuotaType::kUser, 5}), std::make_pair(10L, 1L));
  EXPECT_EQ(BytesInodes(kUser), std::make_pair(0L, 0L));
  Reopen();
  EXPECT_EQ(store_->AllUsage().size(), 1u);
}

// A store from before quotas has no usage records and keeps a directory's
// project id as an xattr: its first open counts every inode and moves the
// project ids into the inodes (a directory's from its xattr, anything
// else's from the directory naming it), in one batch; an inode record
// that does not decode counts for nobody and does not stop the open; an
// open that may not count (fsck without --repair) writes nothing.
TEST_F(UsageTest, AStoreFromBeforeQuotasIsCountedAtOpen) {
  auto d = Dir(kRootIno, "d");
  SFS_ASSERT_OK(d);
  auto f = File(d->ino, "f");
  SFS_ASSERT_OK(f);
  SFS_ASSERT_OK(store_->NoteWrite(f->ino, 123, false));
  store_.reset();
  {
    rocksdb::DB* raw = nullptr;
    ASSERT_TRUE(rocksdb::DB::Open(test_util::RawDbOptions(), db_dir_, &raw).ok());
    std::unique_ptr<rocksdb::DB> db(raw);
    rocksdb::WriteBatch batch;
    batch.Delete(std::string(kUsageCountedKey));
    for (const QuotaId& id : {kUser, kGroup}) batch.Delete(UsageKey(id));
    batch.Put(XattrKey(d->ino, "user.stripefs.projid"), "42");
    batch.Put(InodeKey(999999), "junk");
    ASSERT_TRUE(db->Write(rocksdb::WriteOptions(), &batch).ok());
  }
  {
    StoreOptions check_only;
    check_only.count_usage = false;
    auto untouched = MetaStore::Open(db_dir_, check_only);
    SFS_ASSERT_OK(untouched);
    EXPECT_TRUE((*untouched)->AllUsage().empty());
  }
  Reopen();
  EXPECT_EQ(BytesInodes(kUser), std::make_pair(123L, 2L));
  EXPECT_EQ(BytesInodes(kProject), std::make_pair(123L, 2L));  // the directory and its file
  EXPECT_EQ(store_->GetInode(f->ino)->projid, 42u);
  auto dir = store_->GetInode(d->ino);
  SFS_ASSERT_OK(dir);
  EXPECT_EQ(dir->projid, 42u);
  SFS_EXPECT_ERR(store_->GetXattr(d->ino, "user.stripefs.projid"), ENODATA);
  auto g = File(d->ino, "g");
  SFS_ASSERT_OK(g);
  EXPECT_EQ(g->projid, 42u);
  EXPECT_EQ(Stored(), Recount());
}

}  // namespace
}  // namespace sfs::meta
