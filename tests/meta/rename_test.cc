// Rename in all three modes, with POSIX's error cases and link bookkeeping.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include "meta/meta_store.h"
#include "tests/meta/meta_test_util.h"

namespace sfs::meta {
namespace {

using test_util::T;

class RenameTest : public test_util::StoreTest {
 protected:
  Result<std::optional<Removed>> Mv(uint64_t from, const std::string& name, uint64_t to,
                                    const std::string& new_name,
                                    RenameMode mode = RenameMode::kReplace) {
    return store_->Rename(from, name, to, new_name, mode);
  }
};

TEST_F(RenameTest, WithinADirectory) {
  auto f = File(kRootIno, "a");
  SFS_ASSERT_OK(f);
  auto r = Mv(kRootIno, "a", kRootIno, "b");
  SFS_ASSERT_OK(r);
  EXPECT_FALSE(r->has_value());
  SFS_EXPECT_ERR(store_->Lookup(kRootIno, "a"), ENOENT);
  auto moved = store_->Lookup(kRootIno, "b");
  SFS_ASSERT_OK(moved);
  EXPECT_EQ(moved->ino, f->ino);
  EXPECT_EQ(moved->nlink, 1u);
  auto root = store_->GetInode(kRootIno);
  SFS_ASSERT_OK(root);
  EXPECT_EQ(T(root->mtime), T(moved->ctime));
  EXPECT_EQ(root->nlink, 2u);
}

TEST_F(RenameTest, ReplacingAFileOrphansIt) {
  auto a = File(kRootIno, "a");
  auto b = File(kRootIno, "b");
  SFS_ASSERT_OK(a);
  SFS_ASSERT_OK(b);
  auto r = Mv(kRootIno, "a", kRootIno, "b");
  SFS_ASSERT_OK(r);
  ASSERT_TRUE(r->has_value());
  EXPECT_EQ((*r)->ino, b->ino);
  EXPECT_EQ((*r)->mode, b->mode);
  EXPECT_EQ((*r)->nlink_left, 0u);
  EXPECT_TRUE((*r)->orphaned);
  EXPECT_EQ(InoOf(kRootIno, "b"), a->ino);
  auto orphans = store_->Orphans();
  SFS_ASSERT_OK(orphans);
  EXPECT_EQ(*orphans, std::vector<uint64_t>{b->ino});
  EXPECT_EQ(Nlink(b->ino), 0u);
}

TEST_F(RenameTest, ReplacingALinkedFileOnlyDropsALink) {
  auto a = File(kRootIno, "a");
  auto b = File(kRootIno, "b");
  SFS_ASSERT_OK(a);
  SFS_ASSERT_OK(b);
  SFS_ASSERT_OK(store_->Link(b->ino, kRootIno, "b2"));
  auto r = Mv(kRootIno, "a", kRootIno, "b");
  SFS_ASSERT_OK(r);
  ASSERT_TRUE(r->has_value());
  EXPECT_EQ((*r)->nlink_left, 1u);
  EXPECT_FALSE((*r)->orphaned);
  EXPECT_EQ(Nlink(b->ino), 1u);
  EXPECT_EQ(InoOf(kRootIno, "b2"), b->ino);
}

TEST_F(RenameTest, ReplacingASymlinkDeletesIt) {
  auto a = File(kRootIno, "a");
  auto s = Make(kRootIno, "s", S_IFLNK | 0777, "t");
  SFS_ASSERT_OK(a);
  SFS_ASSERT_OK(s);
  auto r = Mv(kRootIno, "a", kRootIno, "s");
  SFS_ASSERT_OK(r);
  ASSERT_TRUE(r->has_value());
  EXPECT_FALSE((*r)->orphaned);
  SFS_EXPECT_ERR(store_->GetInode(s->ino), ENOENT);
}

TEST_F(RenameTest, DirectoryAcrossParentsMovesDotDot) {
  auto d1 = Dir(kRootIno, "d1");
  auto d2 = Dir(kRootIno, "d2");
  SFS_ASSERT_OK(d1);
  SFS_ASSERT_OK(d2);
  auto sub = Dir(d1->ino, "sub");
  SFS_ASSERT_OK(sub);
  EXPECT_EQ(Nlink(d1->ino), 3u);
  SFS_ASSERT_OK(Mv(d1->ino, "sub", d2->ino, "moved"));
  EXPECT_EQ(Nlink(d1->ino), 2u);
  EXPECT_EQ(Nlink(d2->ino), 3u);
  EXPECT_EQ(Nlink(kRootIno), 4u);
  auto moved = store_->Lookup(d2->ino, "moved");
  SFS_ASSERT_OK(moved);
  EXPECT_EQ(moved->ino, sub->ino);
  EXPECT_EQ(moved->parent, d2->ino);
  EXPECT_EQ(moved->nlink, 2u);
  auto p1 = store_->GetInode(d1->ino);
  auto p2 = store_->GetInode(d2->ino);
  SFS_ASSERT_OK(p1);
  SFS_ASSERT_OK(p2);
  EXPECT_EQ(T(p1->mtime), T(moved->ctime));
  EXPECT_EQ(T(p2->ctime), T(moved->ctime));
}

TEST_F(RenameTest, DirectoryOverEmptyDirectory) {
  auto d1 = Dir(kRootIno, "d1");
  auto d2 = Dir(kRootIno, "d2");
  SFS_ASSERT_OK(d1);
  SFS_ASSERT_OK(d2);
  auto a = Dir(d1->ino, "a");
  auto b = Dir(d2->ino, "b");
  SFS_ASSERT_OK(a);
  SFS_ASSERT_OK(b);
  auto r = Mv(d1->ino, "a", d2->ino, "b");
  SFS_ASSERT_OK(r);
  ASSERT_TRUE(r->has_value());
  EXPECT_EQ((*r)->ino, b->ino);
  EXPECT_EQ((*r)->mode, static_cast<uint32_t>(S_IFDIR | 0755));
  EXPECT_EQ((*r)->nlink_left, 0u);
  EXPECT_FALSE((*r)->orphaned);
  SFS_EXPECT_ERR(store_->GetInode(b->ino), ENOENT);
  EXPECT_EQ(Nlink(d1->ino), 2u);
  EXPECT_EQ(Nlink(d2->ino), 3u);  // lost b, gained a
  EXPECT_EQ(InoOf(d2->ino, "b"), a->ino);
  // Within one directory: the parent loses the victim's "..".
  SFS_ASSERT_OK(Dir(d2->ino, "c"));
  EXPECT_EQ(Nlink(d2->ino), 4u);
  SFS_ASSERT_OK(Mv(d2->ino, "b", d2->ino, "c"));
  EXPECT_EQ(Nlink(d2->ino), 3u);
}

TEST_F(RenameTest, TypeAndEmptinessErrors) {
  auto d = Dir(kRootIno, "d");
  auto full = Dir(kRootIno, "full");
  auto f = File(kRootIno, "f");
  SFS_ASSERT_OK(d);
  SFS_ASSERT_OK(full);
  SFS_ASSERT_OK(f);
  SFS_ASSERT_OK(File(full->ino, "x"));
  SFS_EXPECT_ERR(Mv(kRootIno, "d", kRootIno, "f"), ENOTDIR);
  SFS_EXPECT_ERR(Mv(kRootIno, "f", kRootIno, "d"), EISDIR);
  SFS_EXPECT_ERR(Mv(kRootIno, "d", kRootIno, "full"), ENOTEMPTY);
  SFS_EXPECT_ERR(Mv(kRootIno, "nope", kRootIno, "x"), ENOENT);
  SFS_EXPECT_ERR(Mv(999, "f", kRootIno, "x"), ENOENT);
  SFS_EXPECT_ERR(Mv(kRootIno, "f", 999, "x"), ENOENT);
  SFS_EXPECT_ERR(Mv(kRootIno, "f", f->ino, "x"), ENOTDIR);
  SFS_EXPECT_ERR(Mv(kRootIno, "f", kRootIno, ".."), EINVAL);
  SFS_EXPECT_ERR(Mv(kRootIno, "f", kRootIno, "a/b"), EINVAL);
  SFS_EXPECT_ERR(Mv(kRootIno, "f", kRootIno, std::string(256, 'n')), ENAMETOOLONG);
  // Nothing moved.
  EXPECT_EQ(InoOf(kRootIno, "d"), d->ino);
  EXPECT_EQ(InoOf(kRootIno, "f"), f->ino);
  EXPECT_EQ(Nlink(kRootIno), 4u);
}

TEST_F(RenameTest, SameInodeIsANoOp) {
  auto f = File(kRootIno, "f");
  SFS_ASSERT_OK(f);
  SFS_ASSERT_OK(store_->Link(f->ino, kRootIno, "g"));
  auto r = Mv(kRootIno, "f", kRootIno, "g");
  SFS_ASSERT_OK(r);
  EXPECT_FALSE(r->has_value());
  EXPECT_EQ(InoOf(kRootIno, "f"), f->ino);
  EXPECT_EQ(InoOf(kRootIno, "g"), f->ino);
  EXPECT_EQ(Nlink(f->ino), 2u);
  SFS_ASSERT_OK(Mv(kRootIno, "f", kRootIno, "f"));
  EXPECT_EQ(InoOf(kRootIno, "f"), f->ino);
  SFS_ASSERT_OK(Mv(kRootIno, "f", kRootIno, "g", RenameMode::kExchange));
  EXPECT_EQ(Nlink(f->ino), 2u);
}

TEST_F(RenameTest, NoReplace) {
  auto a = File(kRootIno, "a");
  auto b = File(kRootIno, "b");
  SFS_ASSERT_OK(a);
  SFS_ASSERT_OK(b);
  SFS_EXPECT_ERR(Mv(kRootIno, "a", kRootIno, "b", RenameMode::kNoReplace), EEXIST);
  EXPECT_EQ(InoOf(kRootIno, "a"), a->ino);
  EXPECT_EQ(InoOf(kRootIno, "b"), b->ino);
  auto r = Mv(kRootIno, "a", kRootIno, "c", RenameMode::kNoReplace);
  SFS_ASSERT_OK(r);
  EXPECT_FALSE(r->has_value());
  EXPECT_EQ(InoOf(kRootIno, "c"), a->ino);
}

TEST_F(RenameTest, ExchangeFilesInOneDirectory) {
  auto a = File(kRootIno, "a");
  auto b = Make(kRootIno, "b", S_IFLNK | 0777, "t");
  SFS_ASSERT_OK(a);
  SFS_ASSERT_OK(b);
  SFS_EXPECT_ERR(Mv(kRootIno, "a", kRootIno, "missing", RenameMode::kExchange), ENOENT);
  auto r = Mv(kRootIno, "a", kRootIno, "b", RenameMode::kExchange);
  SFS_ASSERT_OK(r);
  EXPECT_FALSE(r->has_value());
  EXPECT_EQ(InoOf(kRootIno, "a"), b->ino);
  EXPECT_EQ(InoOf(kRootIno, "b"), a->ino);
  auto entries = store_->ReadDir(kRootIno);
  SFS_ASSERT_OK(entries);
  ASSERT_EQ(entries->size(), 2u);
  EXPECT_EQ((*entries)[0].mode, static_cast<uint32_t>(S_IFLNK));  // "a" is now the symlink
  EXPECT_EQ((*entries)[1].mode, static_cast<uint32_t>(S_IFREG));
  EXPECT_EQ(Nlink(a->ino), 1u);
  EXPECT_EQ(Nlink(b->ino), 1u);
}

TEST_F(RenameTest, ExchangeDirectoryWithFileAcrossParents) {
  auto d1 = Dir(kRootIno, "d1");
  auto d2 = Dir(kRootIno, "d2");
  SFS_ASSERT_OK(d1);
  SFS_ASSERT_OK(d2);
  auto sub = Dir(d1->ino, "sub");
  auto f = File(d2->ino, "f");
  SFS_ASSERT_OK(sub);
  SFS_ASSERT_OK(f);
  SFS_ASSERT_OK(Mv(d1->ino, "sub", d2->ino, "f", RenameMode::kExchange));
  EXPECT_EQ(InoOf(d1->ino, "sub"), f->ino);
  EXPECT_EQ(InoOf(d2->ino, "f"), sub->ino);
  auto moved = store_->GetInode(sub->ino);
  SFS_ASSERT_OK(moved);
  EXPECT_EQ(moved->parent, d2->ino);
  EXPECT_EQ(Nlink(d1->ino), 2u);
  EXPECT_EQ(Nlink(d2->ino), 3u);
  // Two directories swapping parents keep both counts.
  auto sub2 = Dir(d1->ino, "sub2");
  SFS_ASSERT_OK(sub2);
  SFS_ASSERT_OK(Mv(d1->ino, "sub2", d2->ino, "f", RenameMode::kExchange));
  EXPECT_EQ(Nlink(d1->ino), 3u);
  EXPECT_EQ(Nlink(d2->ino), 3u);
  auto back = store_->GetInode(sub->ino);
  SFS_ASSERT_OK(back);
  EXPECT_EQ(back->parent, d1->ino);
  auto there = store_->GetInode(sub2->ino);
  SFS_ASSERT_OK(there);
  EXPECT_EQ(there->parent, d2->ino);
}

TEST_F(RenameTest, DirectoryIntoItsOwnSubtreeIsEinval) {
  auto a = Dir(kRootIno, "a");
  SFS_ASSERT_OK(a);
  auto b = Dir(a->ino, "b");
  SFS_ASSERT_OK(b);
  auto c = Dir(b->ino, "c");
  SFS_ASSERT_OK(c);
  SFS_EXPECT_ERR(Mv(kRootIno, "a", c->ino, "a"), EINVAL);
  SFS_EXPECT_ERR(Mv(kRootIno, "a", a->ino, "x"), EINVAL);
  SFS_EXPECT_ERR(Mv(kRootIno, "a", b->ino, "c", RenameMode::kExchange), EINVAL);
  SFS_EXPECT_ERR(Mv(b->ino, "c", kRootIno, "a", RenameMode::kExchange), EINVAL);
  // Moving up is fine.
  SFS_ASSERT_OK(Mv(b->ino, "c", kRootIno, "c"));
  EXPECT_EQ(Nlink(b->ino), 2u);
  EXPECT_EQ(Nlink(kRootIno), 4u);
}

}  // namespace
}  // namespace sfs::meta
