// fsck over a real RocksDB store and in-memory OSTs: each kind of damage is
// made by hand, found, repaired, and a second run is clean.
#include "fsck/fsck.h"

#include <gtest/gtest.h>
#include <rocksdb/db.h>
#include <sys/stat.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "layout/layout.h"
#include "meta/keys.h"  // to damage the store as no crash can
#include "ost/backend.h"
#include "tests/meta/meta_test_util.h"

namespace sfs::fsck {
namespace {

class FsckTest : public meta::test_util::StoreTest {
 protected:
  void SetUp() override {
    StoreTest::SetUp();
    for (int i = 0; i < 2; ++i) owned_.push_back(ost::NewMemBackend());
    for (auto& backend : owned_) osts_.push_back(backend.get());
  }

  Report Run(bool repair) {
    Options options;
    options.repair = repair;
    lines_.clear();
    auto report = Check(*store_, osts_, options, [this](const Finding& finding) {
      lines_.push_back(FormatFinding(finding));
    });
    EXPECT_TRUE(report.ok()) << report.status().ToString();
    return report.ok() ? std::move(report).value() : Report{};
  }

  // A file of `size` bytes striped over both OSTs (64 KiB stripes) whose
  // objects hold exactly the bytes the size needs and are recorded.
  meta::Inode StripedFile(const std::string& name, uint64_t size) {
    auto first = store_->AllocateObjectIds(2);
    EXPECT_TRUE(first.ok());
    layout::Layout layout;
    layout.stripe_size = 64 * 1024;
    for (uint32_t i = 0; i < 2; ++i) layout.objects.push_back({i, *first + i, true, 0});
    meta::NewNode node;
    node.mode = S_IFREG | 0644;
    node.layout = layout::Encode(layout);
    auto made = store_->Create(meta::kRootIno, name, node);
    EXPECT_TRUE(made.ok());
    meta::AttrChange change;
    change.size = size;
    EXPECT_TRUE(store_->SetAttr(made->ino, change).ok());
    for (uint32_t i = 0; i < 2; ++i) {
      auto object = osts_[i]->Open(*first + i, /*create=*/true);
      EXPECT_TRUE(object.ok());
      EXPECT_TRUE((*object)->Truncate(layout::ObjectSizeFor(layout, i, size)).ok());
    }
    return *store_->GetInode(made->ino);
  }

  layout::Layout LayoutOf(uint64_t ino) {
    auto blob = store_->GetLayout(ino);
    EXPECT_TRUE(blob.ok());
    return *layout::Decode(*blob);
  }

  std::string Lines() const {
    std::string all;
    for (const auto& line : lines_) all += line + "\n";
    return all;
  }

  // Finds, repairs, and checks a second run is clean.
  void ExpectRepaired(size_t problems) {
    Report found = Run(/*repair=*/false);
    EXPECT_EQ(found.found(), problems) << Lines();
    EXPECT_EQ(found.ExitCode(), 4) << Lines();
    Report repaired = Run(/*repair=*/true);
    EXPECT_EQ(repaired.found(), problems) << Lines();
    EXPECT_EQ(repaired.left(), 0u) << Lines();
    EXPECT_EQ(repaired.ExitCode(), 1) << Lines();
    Report again = Run(/*repair=*/false);
    EXPECT_EQ(again.found(), 0u) << Lines();
    EXPECT_EQ(again.ExitCode(), 0);
  }

  std::vector<std::unique_ptr<ost::Backend>> owned_;
  OstBackends osts_;
  std::vector<std::string> lines_;
};

TEST_F(FsckTest, ACleanFilesystemHasNoFindings) {
  StripedFile("a", 300 * 1024);
  ASSERT_TRUE(Dir(meta::kRootIno, "d").ok());
  ASSERT_TRUE(File(InoOf(meta::kRootIno, "d"), "empty").ok());
  Report report = Run(/*repair=*/true);
  EXPECT_EQ(report.found(), 0u) << Lines();
  EXPECT_EQ(report.ExitCode(), 0);
  EXPECT_EQ(report.inodes, 4u);
  EXPECT_EQ(report.entries, 3u);
  EXPECT_EQ(report.objects, 2u);
}

TEST_F(FsckTest, AnObjectOfNoFileIsRemoved) {
  StripedFile("a", 100);
  auto id = store_->AllocateObjectIds(1);
  ASSERT_TRUE(id.ok());
  ASSERT_TRUE(osts_[1]->Open(*id, true).ok());
  ExpectRepaired(1);
  EXPECT_EQ(osts_[1]->Open(*id, false).err(), ENOENT);
  EXPECT_EQ(osts_[1]->ListObjects()->objects.size(), 1u);  // the file's own stays
}

TEST_F(FsckTest, WithoutRepairNothingChanges) {
  auto id = store_->AllocateObjectIds(1);
  ASSERT_TRUE(osts_[0]->Open(*id, true).ok());
  ASSERT_TRUE(store_->RepairDirent(meta::kRootIno, "ghost", meta::DirEntry{"ghost", 777, S_IFREG})
                  .ok());
  EXPECT_EQ(Run(false).found(), 3u) << Lines();  // object, entry, inode mark below 777
  EXPECT_NE(Lines().find("--repair would remove"), std::string::npos) << Lines();
  EXPECT_EQ(Run(false).found(), 3u) << Lines();
  EXPECT_TRUE(osts_[0]->Open(*id, false).ok());
}

TEST_F(FsckTest, ADanglingEntryIsRemoved) {
  // The entry names an inode below the high-water mark that does not exist.
  auto f = File(meta::kRootIno, "real");
  ASSERT_TRUE(f.ok());
  ASSERT_TRUE(store_->RepairDirent(meta::kRootIno, "ghost",
                                   meta::DirEntry{"ghost", f->ino + 1, S_IFREG})
                  .ok());
  ExpectRepaired(1);
  EXPECT_EQ(InoOf(meta::kRootIno, "ghost"), 0u);
  EXPECT_EQ(InoOf(meta::kRootIno, "real"), f->ino);
}

TEST_F(FsckTest, LinkCountsAndDotDotAreRecounted) {
  auto d = Dir(meta::kRootIno, "d");
  auto e = Dir(d->ino, "e");
  auto f = File(d->ino, "f");
  ASSERT_TRUE(store_->Link(f->ino, meta::kRootIno, "f2").ok());
  meta::Inode bad_file = *store_->GetInode(f->ino);
  bad_file.nlink = 7;
  ASSERT_TRUE(store_->RepairInode(bad_file).ok());
  meta::Inode bad_dir = *store_->GetInode(e->ino);
  bad_dir.nlink = 9;
  bad_dir.parent = meta::kRootIno;
  ASSERT_TRUE(store_->RepairInode(bad_dir).ok());
  ExpectRepaired(2);
  EXPECT_EQ(Nlink(f->ino), 2u);
  EXPECT_EQ(Nlink(e->ino), 2u);
  EXPECT_EQ(store_->GetInode(e->ino)->parent, d->ino);
  EXPECT_EQ(Nlink(d->ino), 3u);
}

// Damage no crash can make (the flag and the xattr land in one batch):
// a record that says "never had any" beside xattrs, so deleting the file
// would leave them behind. fsck marks the record.
TEST_F(FsckTest, XattrsOfARecordThatSaysNoneAreCounted) {
  auto f = File(meta::kRootIno, "f");
  ASSERT_TRUE(f.ok());
  ASSERT_TRUE(store_->SetXattr(f->ino, "user.a", "1", 0).ok());
  meta::Inode wrong = *store_->GetInode(f->ino);
  wrong.may_have_xattrs = false;
  ASSERT_TRUE(store_->RepairInode(wrong).ok());
  EXPECT_EQ(Run(/*repair=*/false).found(), 1u) << Lines();
  EXPECT_NE(Lines().find("has extended attributes its record says it never had"),
            std::string::npos)
      << Lines();
  ExpectRepaired(1);
  EXPECT_TRUE(store_->GetInode(f->ino)->may_have_xattrs);
  auto names = store_->ListXattr(f->ino);
  ASSERT_TRUE(names.ok());
  EXPECT_EQ(*names, std::vector<std::string>{"user.a"});
}

TEST_F(FsckTest, AnInodeWithoutANameGoesToLostAndFound) {
  auto f = File(meta::kRootIno, "f");
  auto d = Dir(meta::kRootIno, "d");
  ASSERT_TRUE(store_->RepairDirent(meta::kRootIno, "f", std::nullopt).ok());
  ASSERT_TRUE(store_->RepairDirent(meta::kRootIno, "d", std::nullopt).ok());
  // The root still counts d among its subdirectories: a third finding.
  ExpectRepaired(3);
  const uint64_t found = InoOf(meta::kRootIno, "lost+found");
  ASSERT_NE(found, 0u);
  EXPECT_EQ(InoOf(found, "#" + std::to_string(f->ino)), f->ino);
  EXPECT_EQ(InoOf(found, "#" + std::to_string(d->ino)), d->ino);
  EXPECT_EQ(store_->GetInode(d->ino)->parent, found);
  EXPECT_EQ(Nlink(found), 3u);
  EXPECT_EQ(Nlink(meta::kRootIno), 3u);
}

TEST_F(FsckTest, AnUnlinkedFileHasItsObjectsFreed) {
  meta::Inode file = StripedFile("open-then-unlinked", 200 * 1024);
  auto removed = store_->Unlink(meta::kRootIno, "open-then-unlinked");
  ASSERT_TRUE(removed.ok());
  ASSERT_TRUE(removed->orphaned);
  ExpectRepaired(1);
  EXPECT_EQ(store_->GetInode(file.ino).err(), ENOENT);
  EXPECT_TRUE(osts_[0]->ListObjects()->objects.empty());
  EXPECT_TRUE(osts_[1]->ListObjects()->objects.empty());
  EXPECT_TRUE(store_->Orphans()->empty());
}

TEST_F(FsckTest, AnObjectLongerThanItsFileIsCut) {
  meta::Inode file = StripedFile("f", 100 * 1024);  // stripe 0: 64 KiB, stripe 1: 36 KiB
  layout::Layout layout = LayoutOf(file.ino);
  auto object = osts_[1]->Open(layout.objects[1].object_id, false);
  ASSERT_TRUE((*object)->Truncate(1 << 20).ok());
  ExpectRepaired(1);
  EXPECT_EQ(*(*object)->Size(), 36u * 1024);
}

TEST_F(FsckTest, AWrittenObjectThatIsMissingCannotBeRepaired) {
  meta::Inode file = StripedFile("f", 100 * 1024);
  layout::Layout layout = LayoutOf(file.ino);
  ASSERT_TRUE(osts_[0]->Remove(layout.objects[0].object_id).ok());
  Report report = Run(/*repair=*/true);
  ASSERT_EQ(report.found(), 1u) << Lines();
  EXPECT_EQ(report.findings[0].outcome, Outcome::kUnrepairable);
  EXPECT_NE(Lines().find("written but missing"), std::string::npos) << Lines();
  EXPECT_EQ(report.ExitCode(), 4);
}

TEST_F(FsckTest, AnObjectTheFileNeverRecordedIsRecorded) {
  meta::Inode file = StripedFile("f", 100 * 1024);
  layout::Layout layout = LayoutOf(file.ino);
  layout.objects[1].created = false;  // a crash before the mark was stored
  ASSERT_TRUE(store_->PutLayout(file.ino, layout::Encode(layout), 0).ok());
  ExpectRepaired(1);
  EXPECT_TRUE(LayoutOf(file.ino).objects[1].created);
}

TEST_F(FsckTest, HighWaterMarksBelowIdsInUseAreRaised) {
  auto f = File(meta::kRootIno, "f");
  meta::Inode far = *f;
  far.ino = 1 << 20;
  ASSERT_TRUE(store_->RepairInode(far).ok());
  ASSERT_TRUE(
      store_->RepairDirent(meta::kRootIno, "far", meta::DirEntry{"far", far.ino, S_IFREG}).ok());
  layout::Layout layout;
  layout.objects.push_back({0, 1ull << 40, true, 0});
  ASSERT_TRUE(store_->PutLayout(far.ino, layout::Encode(layout), 0).ok());
  ASSERT_TRUE(osts_[0]->Open(1ull << 40, true).ok());
  // The marks, and the usage of the user and group the inode written by
  // hand (past the store's accounting) counts for.
  ExpectRepaired(4);
  auto marks = store_->StoredIdMarks();
  EXPECT_EQ(marks->next_ino, (1u << 20) + 1);
  EXPECT_EQ(marks->next_obj, (1ull << 40) + 1);
  // The running store hands out ids above them too.
  EXPECT_GT(*store_->AllocateObjectIds(1), 1ull << 40);
  Reopen();
  EXPECT_GT(store_->Create(meta::kRootIno, "next", meta::NewNode{S_IFREG | 0644})->ino, 1u << 20);
}

TEST_F(FsckTest, QuotaUsageIsRecountedFromTheInodes) {
  StripedFile("a", 300 * 1024);
  ASSERT_TRUE(Dir(meta::kRootIno, "d").ok());
  std::map<QuotaId, QuotaUsage> wrong;
  wrong[{QuotaType::kUser, 1000}] = QuotaUsage{5, 5, 0, 0};
  wrong[{QuotaType::kProject, 9}] = QuotaUsage{1, 1, 0, 0};  // nobody's
  ASSERT_TRUE(store_->RepairUsage(wrong).ok());
  // The file is root's, the directory user 1000's and group 100's: user 1000
  // off, users 0, group 0 and group 100 missing, project 9 stale.
  ExpectRepaired(5);
  EXPECT_EQ(store_->GetUsage({QuotaType::kUser, 0}).bytes, 300 * 1024);
  EXPECT_EQ(store_->GetUsage({QuotaType::kGroup, 0}).inodes, 1);
  EXPECT_EQ(store_->GetUsage({QuotaType::kUser, 1000}).bytes, 0);
  EXPECT_EQ(store_->GetUsage({QuotaType::kUser, 1000}).inodes, 1);
  EXPECT_EQ(store_->GetUsage({QuotaType::kGroup, 100}).inodes, 1);
  EXPECT_EQ(store_->AllUsage().count({QuotaType::kProject, 9}), 0u);
}

TEST_F(FsckTest, AnEntryOfTheWrongTypeIsCorrected) {
  auto f = File(meta::kRootIno, "f");
  ASSERT_TRUE(store_->RepairDirent(meta::kRootIno, "f", meta::DirEntry{"f", f->ino, S_IFDIR}).ok());
  ExpectRepaired(1);
  auto entries = store_->ReadDir(meta::kRootIno);
  ASSERT_EQ(entries->size(), 1u);
  EXPECT_EQ((*entries)[0].mode, static_cast<uint32_t>(S_IFREG));
}

TEST_F(FsckTest, ASecondNameOfADirectoryIsRemoved) {
  auto d = Dir(meta::kRootIno, "d");
  auto other = Dir(meta::kRootIno, "other");
  ASSERT_TRUE(store_->RepairDirent(other->ino, "alias", meta::DirEntry{"alias", d->ino, S_IFDIR})
                  .ok());
  ExpectRepaired(1);
  EXPECT_EQ(InoOf(other->ino, "alias"), 0u);
  EXPECT_EQ(InoOf(meta::kRootIno, "d"), d->ino);
}

TEST_F(FsckTest, RecordsOfAMissingInodeAreErased) {
  meta::Inode file = StripedFile("f", 100 * 1024);
  ASSERT_TRUE(store_->SetXattr(file.ino, "user.a", "1", 0).ok());
  ASSERT_TRUE(store_->RepairOrphanMark(file.ino, true).ok());
  // Damage no crash can make: the inode record alone goes (written straight
  // into RocksDB with the store closed).
  store_.reset();
  {
    rocksdb::DB* raw = nullptr;
    ASSERT_TRUE(rocksdb::DB::Open(meta::test_util::RawDbOptions(), db_dir_, &raw).ok());
    std::unique_ptr<rocksdb::DB> db(raw);
    ASSERT_TRUE(db->Delete(rocksdb::WriteOptions(), meta::InodeKey(file.ino)).ok());
  }
  Reopen();
  // The entry naming it, its records, the two objects only they named, and
  // the usage of its user and group (its inode went past the accounting).
  ExpectRepaired(6);
  EXPECT_TRUE(store_->Orphans()->empty());
  EXPECT_EQ(store_->GetLayout(file.ino).err(), ENOENT);
  EXPECT_EQ(InoOf(meta::kRootIno, "f"), 0u);
  EXPECT_TRUE(osts_[0]->ListObjects()->objects.empty());
  EXPECT_TRUE(osts_[1]->ListObjects()->objects.empty());
}

TEST_F(FsckTest, AnUnreadableInodeIsReportedAndWhatHangsOffItKept) {
  auto d = Dir(meta::kRootIno, "d");
  auto f = File(d->ino, "f");
  auto sub = Dir(meta::kRootIno, "sub");
  // Damage no crash can make: two inode records become unreadable.
  store_.reset();
  {
    rocksdb::DB* raw = nullptr;
    ASSERT_TRUE(rocksdb::DB::Open(meta::test_util::RawDbOptions(), db_dir_, &raw).ok());
    std::unique_ptr<rocksdb::DB> db(raw);
    for (uint64_t ino : {d->ino, sub->ino}) {
      ASSERT_TRUE(db->Put(rocksdb::WriteOptions(), meta::InodeKey(ino), "garbage").ok());
    }
  }
  Reopen();
  Report report = Run(/*repair=*/true);
  // Only the two records: f keeps its name in d, the root keeps its links.
  ASSERT_EQ(report.found(), 2u) << Lines();
  EXPECT_EQ(report.left(), 2u);
  EXPECT_EQ(InoOf(d->ino, "f"), f->ino);
  EXPECT_EQ(Nlink(meta::kRootIno), 4u);
  EXPECT_EQ(InoOf(meta::kRootIno, "lost+found"), 0u);
}

TEST_F(FsckTest, AnOstThatCannotBeOpenedIsLeftAlone) {
  StripedFile("f", 100 * 1024);
  osts_[1] = nullptr;
  // Its objects are neither listed nor freed; the other OST is checked.
  Report report = Run(/*repair=*/true);
  EXPECT_EQ(report.found(), 0u) << Lines();
  EXPECT_EQ(report.objects, 1u);
}

TEST_F(FsckTest, FindingsReadAsOneLineEach) {
  EXPECT_EQ(FormatFinding({"x is wrong", Outcome::kFound, "fix x"}),
            "fsck: x is wrong (--repair would fix x)");
  EXPECT_EQ(FormatFinding({"x is wrong", Outcome::kRepaired, "fix x"}),
            "fsck: x is wrong: repaired: fix x");
  EXPECT_EQ(FormatFinding({"x is wrong", Outcome::kUnrepairable, "because"}),
            "fsck: x is wrong: cannot repair: because");
}

}  // namespace
}  // namespace sfs::fsck
