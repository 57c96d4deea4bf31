// SetAttr, NoteWrite and extended attributes.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/xattr.h>

#include "meta/meta_store.h"
#include "tests/meta/meta_test_util.h"

namespace sfs::meta {
namespace {

using AttrTest = test_util::StoreTest;
using test_util::T;

TEST_F(AttrTest, SetAttrKeepsTypeBits) {
  auto f = File(kRootIno, "f");
  SFS_ASSERT_OK(f);
  AttrChange change;
  change.mode = S_IFDIR | 04700;  // a type in the request is ignored
  change.uid = 7;
  change.gid = 8;
  Timestamp before = Timestamp::Now();
  auto out = store_->SetAttr(f->ino, change);
  SFS_ASSERT_OK(out);
  EXPECT_EQ(out->mode, static_cast<uint32_t>(S_IFREG | 04700));
  EXPECT_EQ(out->uid, 7u);
  EXPECT_EQ(out->gid, 8u);
  EXPECT_LE(T(before), T(out->ctime));
  EXPECT_EQ(T(out->mtime), T(f->mtime));  // no size change: mtime stays
  auto stored = store_->GetInode(f->ino);
  SFS_ASSERT_OK(stored);
  EXPECT_EQ(stored->mode, out->mode);
  EXPECT_EQ(T(stored->ctime), T(out->ctime));
}

TEST_F(AttrTest, SetAttrTimes) {
  auto f = File(kRootIno, "f");
  SFS_ASSERT_OK(f);
  AttrChange change;
  change.atime = Timestamp{100, 1};
  change.mtime = Timestamp{200, 2};
  auto out = store_->SetAttr(f->ino, change);
  SFS_ASSERT_OK(out);
  EXPECT_EQ(T(out->atime), T(Timestamp{100, 1}));
  EXPECT_EQ(T(out->mtime), T(Timestamp{200, 2}));
  EXPECT_EQ(out->mode, f->mode);
}

TEST_F(AttrTest, TruncateSetsSizeAndMtime) {
  auto f = File(kRootIno, "f");
  SFS_ASSERT_OK(f);
  AttrChange change;
  change.size = 100;
  auto out = store_->SetAttr(f->ino, change);
  SFS_ASSERT_OK(out);
  EXPECT_EQ(out->size, 100u);
  EXPECT_EQ(T(out->mtime), T(out->ctime));
  change.mtime = Timestamp{5, 6};
  change.size = 7;
  out = store_->SetAttr(f->ino, change);
  SFS_ASSERT_OK(out);
  EXPECT_EQ(out->size, 7u);
  EXPECT_EQ(T(out->mtime), T(Timestamp{5, 6}));
}

TEST_F(AttrTest, SetAttrErrors) {
  auto d = Dir(kRootIno, "d");
  auto s = Make(kRootIno, "s", S_IFLNK | 0777, "t");
  SFS_ASSERT_OK(d);
  SFS_ASSERT_OK(s);
  AttrChange change;
  change.size = 0;
  SFS_EXPECT_ERR(store_->SetAttr(d->ino, change), EISDIR);
  SFS_EXPECT_ERR(store_->SetAttr(s->ino, change), EINVAL);
  SFS_EXPECT_ERR(store_->SetAttr(999, AttrChange{}), ENOENT);
  auto same = store_->GetInode(s->ino);
  SFS_ASSERT_OK(same);
  EXPECT_EQ(same->size, 1u);
}

TEST_F(AttrTest, NoteWriteGrowsOnly) {
  auto f = File(kRootIno, "f");
  SFS_ASSERT_OK(f);
  auto out = store_->NoteWrite(f->ino, 100, false);
  SFS_ASSERT_OK(out);
  EXPECT_EQ(out->size, 100u);
  EXPECT_EQ(T(out->mtime), T(out->ctime));
  out = store_->NoteWrite(f->ino, 50, false);
  SFS_ASSERT_OK(out);
  EXPECT_EQ(out->size, 100u);
  SFS_EXPECT_ERR(store_->NoteWrite(999, 1, false), ENOENT);
  // The times are left alone when asked (writeback cache: the kernel's).
  const auto before = T(out->mtime);
  out = store_->NoteWrite(f->ino, 200, false, /*touch_times=*/false);
  SFS_ASSERT_OK(out);
  EXPECT_EQ(out->size, 200u);
  EXPECT_EQ(T(out->mtime), before);
}

TEST_F(AttrTest, NoteWriteKillsSuid) {
  auto f = Make(kRootIno, "f", S_IFREG | 06755);
  auto g = Make(kRootIno, "g", S_IFREG | 06745);  // no group-execute
  SFS_ASSERT_OK(f);
  SFS_ASSERT_OK(g);
  auto kept = store_->NoteWrite(f->ino, 1, false);
  SFS_ASSERT_OK(kept);
  EXPECT_EQ(kept->mode, static_cast<uint32_t>(S_IFREG | 06755));
  auto killed = store_->NoteWrite(f->ino, 1, true);
  SFS_ASSERT_OK(killed);
  EXPECT_EQ(killed->mode, static_cast<uint32_t>(S_IFREG | 0755));
  auto locking = store_->NoteWrite(g->ino, 1, true);
  SFS_ASSERT_OK(locking);
  EXPECT_EQ(locking->mode, static_cast<uint32_t>(S_IFREG | 02745));
}

TEST_F(AttrTest, SetAttrKillsSetIdAfterTheModeChange) {
  auto f = Make(kRootIno, "f", S_IFREG | 06755);
  auto g = Make(kRootIno, "g", S_IFREG | 06745);  // no group-execute
  SFS_ASSERT_OK(f);
  SFS_ASSERT_OK(g);
  AttrChange kill;
  kill.kill_setid = true;
  auto killed = store_->SetAttr(f->ino, kill);
  SFS_ASSERT_OK(killed);
  EXPECT_EQ(killed->mode, static_cast<uint32_t>(S_IFREG | 0755));
  auto locking = store_->SetAttr(g->ino, kill);
  SFS_ASSERT_OK(locking);
  EXPECT_EQ(locking->mode, static_cast<uint32_t>(S_IFREG | 02745));
  kill.mode = 04711;  // a chmod in the same change is applied first
  auto both = store_->SetAttr(f->ino, kill);
  SFS_ASSERT_OK(both);
  EXPECT_EQ(both->mode, static_cast<uint32_t>(S_IFREG | 0711));
}

TEST_F(AttrTest, XattrSetGetListRemove) {
  auto f = File(kRootIno, "f");
  SFS_ASSERT_OK(f);
  SFS_ASSERT_OK(store_->SetXattr(f->ino, "user.b", "2", 0));
  SFS_ASSERT_OK(store_->SetXattr(f->ino, "user.a", std::string("\0bin", 4), 0));
  SFS_ASSERT_OK(store_->SetXattr(f->ino, "user.empty", "", 0));
  auto a = store_->GetXattr(f->ino, "user.a");
  SFS_ASSERT_OK(a);
  EXPECT_EQ(*a, std::string("\0bin", 4));
  auto names = store_->ListXattr(f->ino);
  SFS_ASSERT_OK(names);
  EXPECT_EQ(*names, (std::vector<std::string>{"user.a", "user.b", "user.empty"}));
  SFS_ASSERT_OK(store_->SetXattr(f->ino, "user.b", "two", 0));
  auto b = store_->GetXattr(f->ino, "user.b");
  SFS_ASSERT_OK(b);
  EXPECT_EQ(*b, "two");
  SFS_ASSERT_OK(store_->RemoveXattr(f->ino, "user.b"));
  SFS_EXPECT_ERR(store_->GetXattr(f->ino, "user.b"), ENODATA);
  SFS_EXPECT_ERR(store_->RemoveXattr(f->ino, "user.b"), ENODATA);
  names = store_->ListXattr(f->ino);
  SFS_ASSERT_OK(names);
  EXPECT_EQ(names->size(), 2u);
}

TEST_F(AttrTest, XattrsBelongToOneInode) {
  auto f = File(kRootIno, "f");
  auto g = File(kRootIno, "g");  // the next ino: adjacent keys
  SFS_ASSERT_OK(f);
  SFS_ASSERT_OK(g);
  SFS_ASSERT_OK(store_->SetXattr(f->ino, "user.f", "1", 0));
  SFS_ASSERT_OK(store_->SetXattr(g->ino, "user.g", "1", 0));
  auto names = store_->ListXattr(f->ino);
  SFS_ASSERT_OK(names);
  EXPECT_EQ(*names, std::vector<std::string>{"user.f"});
  SFS_EXPECT_ERR(store_->GetXattr(f->ino, "user.g"), ENODATA);
  auto empty = store_->ListXattr(kRootIno);
  SFS_ASSERT_OK(empty);
  EXPECT_TRUE(empty->empty());
}

// The inode record says whether an extended attribute was ever set, so
// that deleting one that never had any skips the scan for them; whichever
// way a file got them, none outlives it.
TEST_F(AttrTest, DeletedInodesLeaveNoXattrsWhateverTheirRecordSays) {
  auto plain = File(kRootIno, "plain");
  auto set = File(kRootIno, "set");
  NewNode with;
  with.mode = S_IFREG | 0644;
  with.xattrs = {{"user.inherited", "1"}};
  auto made = store_->Create(kRootIno, "made", with);
  SFS_ASSERT_OK(plain);
  SFS_ASSERT_OK(set);
  SFS_ASSERT_OK(made);
  EXPECT_FALSE(plain->may_have_xattrs);
  EXPECT_TRUE(made->may_have_xattrs);
  SFS_ASSERT_OK(store_->SetXattr(set->ino, "user.a", "1", 0));
  SFS_ASSERT_OK(store_->SetXattr(set->ino, "user.b", "2", 0));
  SFS_ASSERT_OK(store_->RemoveXattr(set->ino, "user.b"));
  auto after = store_->GetInode(set->ino);
  SFS_ASSERT_OK(after);
  EXPECT_TRUE(after->may_have_xattrs);  // removing one does not clear it
  auto none = store_->ListXattr(plain->ino);
  SFS_ASSERT_OK(none);
  EXPECT_TRUE(none->empty());

  auto purge = [](uint64_t, const std::string&) { return true; };
  for (const char* name : {"plain", "set", "made"}) {
    auto removed = store_->Unlink(kRootIno, name, purge);
    SFS_ASSERT_OK(removed);
    EXPECT_TRUE(removed->purged) << name;
  }
  std::vector<uint64_t> owners;
  SFS_ASSERT_OK(store_->ScanRecords(MetaStore::Record::kXattr,
                                    [&](uint64_t ino, std::string_view) { owners.push_back(ino); }));
  EXPECT_TRUE(owners.empty()) << owners.size() << " xattr records left";
}

TEST_F(AttrTest, XattrFlags) {
  auto f = File(kRootIno, "f");
  SFS_ASSERT_OK(f);
  SFS_EXPECT_ERR(store_->SetXattr(f->ino, "user.a", "1", XATTR_REPLACE), ENODATA);
  SFS_ASSERT_OK(store_->SetXattr(f->ino, "user.a", "1", XATTR_CREATE));
  SFS_EXPECT_ERR(store_->SetXattr(f->ino, "user.a", "2", XATTR_CREATE), EEXIST);
  SFS_ASSERT_OK(store_->SetXattr(f->ino, "user.a", "3", XATTR_REPLACE));
  auto a = store_->GetXattr(f->ino, "user.a");
  SFS_ASSERT_OK(a);
  EXPECT_EQ(*a, "3");
  SFS_EXPECT_ERR(store_->SetXattr(f->ino, "user.a", "4", 0x100), EINVAL);
}

TEST_F(AttrTest, XattrLimits) {
  auto f = File(kRootIno, "f");
  SFS_ASSERT_OK(f);
  SFS_ASSERT_OK(store_->SetXattr(f->ino, "user.big", std::string(kMaxXattrValue, 'v'), 0));
  SFS_EXPECT_ERR(store_->SetXattr(f->ino, "user.big", std::string(kMaxXattrValue + 1, 'v'), 0),
                 E2BIG);
  auto big = store_->GetXattr(f->ino, "user.big");
  SFS_ASSERT_OK(big);
  EXPECT_EQ(big->size(), kMaxXattrValue);
  const std::string longest = "user." + std::string(kMaxNameLen - 5, 'n');
  SFS_ASSERT_OK(store_->SetXattr(f->ino, longest, "v", 0));
  SFS_EXPECT_ERR(store_->SetXattr(f->ino, longest + "n", "v", 0), ERANGE);
  SFS_EXPECT_ERR(store_->GetXattr(f->ino, longest + "n"), ERANGE);
  SFS_EXPECT_ERR(store_->RemoveXattr(f->ino, longest + "n"), ERANGE);
}

TEST_F(AttrTest, XattrOnMissingInode) {
  SFS_EXPECT_ERR(store_->SetXattr(999, "user.a", "1", 0), ENOENT);
  SFS_EXPECT_ERR(store_->GetXattr(999, "user.a"), ENOENT);
  SFS_EXPECT_ERR(store_->ListXattr(999), ENOENT);
  SFS_EXPECT_ERR(store_->RemoveXattr(999, "user.a"), ENOENT);
}

TEST_F(AttrTest, XattrChangesBumpCtime) {
  auto f = File(kRootIno, "f");
  SFS_ASSERT_OK(f);
  AttrChange old_times;
  old_times.mtime = Timestamp{1, 0};
  SFS_ASSERT_OK(store_->SetAttr(f->ino, old_times));
  Timestamp before = Timestamp::Now();
  SFS_ASSERT_OK(store_->SetXattr(f->ino, "user.a", "1", 0));
  auto after_set = store_->GetInode(f->ino);
  SFS_ASSERT_OK(after_set);
  EXPECT_LE(T(before), T(after_set->ctime));
  EXPECT_EQ(T(after_set->mtime), T(Timestamp{1, 0}));
  Timestamp before_remove = Timestamp::Now();
  SFS_ASSERT_OK(store_->RemoveXattr(f->ino, "user.a"));
  auto after_remove = store_->GetInode(f->ino);
  SFS_ASSERT_OK(after_remove);
  EXPECT_LE(T(before_remove), T(after_remove->ctime));
}

}  // namespace
}  // namespace sfs::meta
