// Create, Lookup, Link, Unlink, Rmdir, ReadDir, orphans and Purge.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include "meta/meta_store.h"
#include "tests/meta/meta_test_util.h"

namespace sfs::meta {
namespace {

using NamespaceTest = test_util::StoreTest;
using test_util::T;

TEST_F(NamespaceTest, CreateFile) {
  auto f = File(kRootIno, "f");
  SFS_ASSERT_OK(f);
  EXPECT_EQ(f->ino, 2u);  // the first inode after the root
  EXPECT_EQ(f->mode, static_cast<uint32_t>(S_IFREG | 0644));
  EXPECT_EQ(f->uid, 1000u);
  EXPECT_EQ(f->gid, 100u);
  EXPECT_EQ(f->nlink, 1u);
  EXPECT_EQ(f->size, 0u);
  EXPECT_EQ(f->parent, 0u);
  EXPECT_EQ(T(f->mtime), T(f->ctime));
  EXPECT_EQ(T(f->atime), T(f->ctime));
  auto looked = store_->Lookup(kRootIno, "f");
  SFS_ASSERT_OK(looked);
  EXPECT_EQ(looked->ino, f->ino);
  EXPECT_EQ(looked->mode, f->mode);
  EXPECT_EQ(T(looked->ctime), T(f->ctime));
  auto root = store_->GetInode(kRootIno);
  SFS_ASSERT_OK(root);
  EXPECT_EQ(root->nlink, 2u);  // a file adds no link to its parent
  EXPECT_EQ(T(root->mtime), T(f->ctime));
  EXPECT_EQ(T(root->ctime), T(f->ctime));
  SFS_EXPECT_ERR(store_->GetLayout(f->ino), ENOENT);  // created without a layout
}

TEST_F(NamespaceTest, InodeNumbersAreSequential) {
  for (uint64_t want = 2; want < 7; ++want) {
    auto f = File(kRootIno, "f" + std::to_string(want));
    SFS_ASSERT_OK(f);
    EXPECT_EQ(f->ino, want);
  }
}

TEST_F(NamespaceTest, CreateDirectoryLinksParent) {
  auto d = Dir(kRootIno, "d");
  SFS_ASSERT_OK(d);
  EXPECT_EQ(d->nlink, 2u);
  EXPECT_EQ(d->parent, kRootIno);
  auto e = Dir(d->ino, "e");
  SFS_ASSERT_OK(e);
  EXPECT_EQ(e->parent, d->ino);
  EXPECT_EQ(Nlink(kRootIno), 3u);
  EXPECT_EQ(Nlink(d->ino), 3u);
  SFS_ASSERT_OK(Dir(kRootIno, "d2"));
  EXPECT_EQ(Nlink(kRootIno), 4u);
}

TEST_F(NamespaceTest, CreateSymlinkAndSpecialFiles) {
  auto s = Make(kRootIno, "s", S_IFLNK | 0777, "../some/target");
  SFS_ASSERT_OK(s);
  EXPECT_EQ(s->symlink, "../some/target");
  EXPECT_EQ(s->size, 14u);
  auto again = store_->GetInode(s->ino);
  SFS_ASSERT_OK(again);
  EXPECT_EQ(again->symlink, "../some/target");
  NewNode dev;
  dev.mode = S_IFCHR | 0600;
  dev.rdev = 0x0103;
  auto c = store_->Create(kRootIno, "null", dev);
  SFS_ASSERT_OK(c);
  EXPECT_EQ(c->rdev, 0x0103u);
  // Only symlinks keep a target.
  auto fifo = Make(kRootIno, "fifo", S_IFIFO | 0600, "ignored");
  SFS_ASSERT_OK(fifo);
  EXPECT_EQ(fifo->symlink, "");
  EXPECT_EQ(fifo->size, 0u);
}

TEST_F(NamespaceTest, CreateStoresLayout) {
  NewNode node;
  node.mode = S_IFREG | 0600;
  node.layout = std::string("layout\0blob", 11);
  auto f = store_->Create(kRootIno, "f", node);
  SFS_ASSERT_OK(f);
  auto blob = store_->GetLayout(f->ino);
  SFS_ASSERT_OK(blob);
  EXPECT_EQ(*blob, node.layout);
  const Timestamp ctime = f->ctime;
  SFS_ASSERT_OK(store_->PutLayout(f->ino, "v2", 4096));
  blob = store_->GetLayout(f->ino);
  SFS_ASSERT_OK(blob);
  EXPECT_EQ(*blob, "v2");
  auto after = store_->GetInode(f->ino);
  SFS_ASSERT_OK(after);
  EXPECT_EQ(after->allocated, 4096u);
  EXPECT_EQ(after->ctime.sec, ctime.sec);
  EXPECT_EQ(after->ctime.nsec, ctime.nsec);
  SFS_EXPECT_ERR(store_->PutLayout(999, "x", 0), ENOENT);
}

TEST_F(NamespaceTest, CreateErrors) {
  auto f = File(kRootIno, "f");
  SFS_ASSERT_OK(f);
  SFS_EXPECT_ERR(File(kRootIno, std::string(256, 'a')), ENAMETOOLONG);
  SFS_ASSERT_OK(File(kRootIno, std::string(255, 'a')));
  SFS_EXPECT_ERR(File(kRootIno, ""), EINVAL);
  SFS_EXPECT_ERR(File(kRootIno, "."), EINVAL);
  SFS_EXPECT_ERR(File(kRootIno, ".."), EINVAL);
  SFS_EXPECT_ERR(File(kRootIno, "a/b"), EINVAL);
  SFS_EXPECT_ERR(File(999, "x"), ENOENT);
  SFS_EXPECT_ERR(File(f->ino, "x"), ENOTDIR);
  SFS_EXPECT_ERR(File(kRootIno, "f"), EEXIST);
  SFS_EXPECT_ERR(Dir(kRootIno, "f"), EEXIST);
  SFS_EXPECT_ERR(Make(kRootIno, "notype", 0644), EINVAL);
  // Failed creates changed nothing.
  EXPECT_EQ(Nlink(kRootIno), 2u);
  auto entries = store_->ReadDir(kRootIno);
  SFS_ASSERT_OK(entries);
  EXPECT_EQ(entries->size(), 2u);
}

TEST_F(NamespaceTest, LookupErrors) {
  SFS_EXPECT_ERR(store_->Lookup(kRootIno, "nope"), ENOENT);
  SFS_EXPECT_ERR(store_->Lookup(999, "nope"), ENOENT);
  SFS_EXPECT_ERR(store_->Lookup(kRootIno, std::string(256, 'a')), ENAMETOOLONG);
  SFS_EXPECT_ERR(store_->GetInode(999), ENOENT);
}

TEST_F(NamespaceTest, ReadDirIsNameOrderedWithTypes) {
  auto b = File(kRootIno, "b");
  auto a = Dir(kRootIno, "a");
  auto c = Make(kRootIno, "c", S_IFLNK | 0777, "t");
  SFS_ASSERT_OK(b);
  SFS_ASSERT_OK(a);
  SFS_ASSERT_OK(c);
  SFS_ASSERT_OK(File(a->ino, "inside"));  // not listed in the root
  auto entries = store_->ReadDir(kRootIno);
  SFS_ASSERT_OK(entries);
  ASSERT_EQ(entries->size(), 3u);
  EXPECT_EQ((*entries)[0].name, "a");
  EXPECT_EQ((*entries)[0].ino, a->ino);
  EXPECT_EQ((*entries)[0].mode, static_cast<uint32_t>(S_IFDIR));
  EXPECT_EQ((*entries)[1].name, "b");
  EXPECT_EQ((*entries)[1].ino, b->ino);
  EXPECT_EQ((*entries)[1].mode, static_cast<uint32_t>(S_IFREG));
  EXPECT_EQ((*entries)[2].name, "c");
  EXPECT_EQ((*entries)[2].mode, static_cast<uint32_t>(S_IFLNK));
  SFS_EXPECT_ERR(store_->ReadDir(b->ino), ENOTDIR);
  SFS_EXPECT_ERR(store_->ReadDir(999), ENOENT);
}

TEST_F(NamespaceTest, LinkAddsANameAndALink) {
  auto f = File(kRootIno, "f");
  auto d = Dir(kRootIno, "d");
  SFS_ASSERT_OK(f);
  SFS_ASSERT_OK(d);
  auto linked = store_->Link(f->ino, d->ino, "g");
  SFS_ASSERT_OK(linked);
  EXPECT_EQ(linked->ino, f->ino);
  EXPECT_EQ(linked->nlink, 2u);
  EXPECT_EQ(InoOf(d->ino, "g"), f->ino);
  EXPECT_EQ(InoOf(kRootIno, "f"), f->ino);
  auto dir = store_->GetInode(d->ino);
  SFS_ASSERT_OK(dir);
  EXPECT_EQ(T(dir->mtime), T(linked->ctime));
  EXPECT_EQ(dir->nlink, 2u);

  SFS_EXPECT_ERR(store_->Link(d->ino, kRootIno, "dlink"), EPERM);
  SFS_EXPECT_ERR(store_->Link(f->ino, d->ino, "g"), EEXIST);
  SFS_EXPECT_ERR(store_->Link(999, d->ino, "h"), ENOENT);
  SFS_EXPECT_ERR(store_->Link(f->ino, 999, "h"), ENOENT);
  SFS_EXPECT_ERR(store_->Link(f->ino, f->ino, "h"), ENOTDIR);
  SFS_EXPECT_ERR(store_->Link(f->ino, d->ino, "a/b"), EINVAL);
  SFS_EXPECT_ERR(store_->Link(f->ino, d->ino, std::string(256, 'x')), ENAMETOOLONG);
  EXPECT_EQ(Nlink(f->ino), 2u);
}

TEST_F(NamespaceTest, UnlinkDropsLinksThenOrphans) {
  auto f = File(kRootIno, "f");
  SFS_ASSERT_OK(f);
  SFS_ASSERT_OK(store_->Link(f->ino, kRootIno, "g"));
  auto r1 = store_->Unlink(kRootIno, "f");
  SFS_ASSERT_OK(r1);
  EXPECT_EQ(r1->ino, f->ino);
  EXPECT_EQ(r1->mode, f->mode);
  EXPECT_EQ(r1->nlink_left, 1u);
  EXPECT_FALSE(r1->orphaned);
  SFS_EXPECT_ERR(store_->Lookup(kRootIno, "f"), ENOENT);
  auto orphans = store_->Orphans();
  SFS_ASSERT_OK(orphans);
  EXPECT_TRUE(orphans->empty());

  auto r2 = store_->Unlink(kRootIno, "g");
  SFS_ASSERT_OK(r2);
  EXPECT_EQ(r2->nlink_left, 0u);
  EXPECT_TRUE(r2->orphaned);
  auto kept = store_->GetInode(f->ino);  // kept until its objects are freed
  SFS_ASSERT_OK(kept);
  EXPECT_EQ(kept->nlink, 0u);
  orphans = store_->Orphans();
  SFS_ASSERT_OK(orphans);
  EXPECT_EQ(*orphans, std::vector<uint64_t>{f->ino});
  SFS_EXPECT_ERR(store_->Link(f->ino, kRootIno, "back"), ENOENT);
  auto root = store_->GetInode(kRootIno);
  SFS_ASSERT_OK(root);
  EXPECT_EQ(T(root->mtime), T(kept->ctime));
}

// A regular file "name" in the root with layout "blob" and xattr user.a=1:
// everything a purge must take with it.
Result<Inode> FileWithLayoutAndXattr(MetaStore& store, const std::string& name) {
  NewNode node;
  node.mode = S_IFREG | 0600;
  node.layout = "blob";
  auto f = store.Create(kRootIno, name, node);
  if (!f.ok()) return f;
  Status set = store.SetXattr(f->ino, "user.a", "1", 0);
  if (!set.ok()) return set;
  return f;
}

TEST_F(NamespaceTest, UnlinkPurgesInItsOwnBatchWhenAsked) {
  auto f = FileWithLayoutAndXattr(*store_, "f");
  SFS_ASSERT_OK(f);
  SFS_ASSERT_OK(store_->Link(f->ino, kRootIno, "g"));
  int asked = 0;
  auto yes = [&](uint64_t ino, const std::string& layout) {
    ++asked;
    EXPECT_EQ(ino, f->ino);
    EXPECT_EQ(layout, "blob");
    return true;
  };
  auto r1 = store_->Unlink(kRootIno, "f", yes);  // a link is left: not asked
  SFS_ASSERT_OK(r1);
  EXPECT_EQ(asked, 0);
  EXPECT_FALSE(r1->purged);
  SFS_ASSERT_OK(store_->GetInode(f->ino));

  auto r2 = store_->Unlink(kRootIno, "g", yes);
  SFS_ASSERT_OK(r2);
  EXPECT_EQ(asked, 1);
  EXPECT_TRUE(r2->purged);
  EXPECT_FALSE(r2->orphaned);
  EXPECT_EQ(r2->nlink_left, 0u);
  Reopen();  // what was committed, not a cache
  SFS_EXPECT_ERR(store_->GetInode(f->ino), ENOENT);
  SFS_EXPECT_ERR(store_->GetLayout(f->ino), ENOENT);
  SFS_EXPECT_ERR(store_->GetXattr(f->ino, "user.a"), ENOENT);
  SFS_EXPECT_ERR(store_->Lookup(kRootIno, "g"), ENOENT);
  auto orphans = store_->Orphans();
  SFS_ASSERT_OK(orphans);
  EXPECT_TRUE(orphans->empty());
}

TEST_F(NamespaceTest, UnlinkKeepsTheOrphanWhenPurgeIsRefused) {
  auto f = File(kRootIno, "f");
  SFS_ASSERT_OK(f);
  auto r = store_->Unlink(kRootIno, "f", [](uint64_t, const std::string&) { return false; });
  SFS_ASSERT_OK(r);
  EXPECT_TRUE(r->orphaned);
  EXPECT_FALSE(r->purged);
  auto orphans = store_->Orphans();
  SFS_ASSERT_OK(orphans);
  EXPECT_EQ(*orphans, std::vector<uint64_t>{f->ino});
  SFS_ASSERT_OK(store_->GetInode(f->ino));
}

TEST_F(NamespaceTest, OrphansSurviveReopenAndPurge) {
  auto f = FileWithLayoutAndXattr(*store_, "f");
  SFS_ASSERT_OK(f);
  SFS_ASSERT_OK(store_->Unlink(kRootIno, "f"));
  Reopen();
  auto orphans = store_->Orphans();
  SFS_ASSERT_OK(orphans);
  EXPECT_EQ(*orphans, std::vector<uint64_t>{f->ino});
  SFS_ASSERT_OK(store_->Purge(f->ino));
  SFS_EXPECT_ERR(store_->GetInode(f->ino), ENOENT);
  SFS_EXPECT_ERR(store_->GetLayout(f->ino), ENOENT);
  SFS_EXPECT_ERR(store_->GetXattr(f->ino, "user.a"), ENOENT);
  orphans = store_->Orphans();
  SFS_ASSERT_OK(orphans);
  EXPECT_TRUE(orphans->empty());
  SFS_ASSERT_OK(store_->Purge(f->ino));  // again: harmless
  SFS_ASSERT_OK(store_->Purge(999));
}

TEST_F(NamespaceTest, PurgeRefusesALinkedInode) {
  auto f = File(kRootIno, "f");
  SFS_ASSERT_OK(f);
  SFS_EXPECT_ERR(store_->Purge(f->ino), EBUSY);
  EXPECT_EQ(InoOf(kRootIno, "f"), f->ino);
  EXPECT_EQ(Nlink(f->ino), 1u);
}

TEST_F(NamespaceTest, UnlinkDeletesNonRegularFilesAtOnce) {
  auto s = Make(kRootIno, "s", S_IFLNK | 0777, "t");
  auto p = Make(kRootIno, "p", S_IFIFO | 0600);
  SFS_ASSERT_OK(s);
  SFS_ASSERT_OK(p);
  SFS_ASSERT_OK(store_->SetXattr(p->ino, "user.x", "v", 0));
  for (const auto& [name, ino] : {std::pair{"s", s->ino}, std::pair{"p", p->ino}}) {
    auto r = store_->Unlink(kRootIno, name);
    SFS_ASSERT_OK(r);
    EXPECT_EQ(r->nlink_left, 0u);
    EXPECT_FALSE(r->orphaned);
    SFS_EXPECT_ERR(store_->GetInode(ino), ENOENT);
  }
  SFS_EXPECT_ERR(store_->GetXattr(p->ino, "user.x"), ENOENT);
  auto orphans = store_->Orphans();
  SFS_ASSERT_OK(orphans);
  EXPECT_TRUE(orphans->empty());
}

TEST_F(NamespaceTest, UnlinkErrors) {
  auto d = Dir(kRootIno, "d");
  auto f = File(kRootIno, "f");
  SFS_ASSERT_OK(d);
  SFS_ASSERT_OK(f);
  SFS_EXPECT_ERR(store_->Unlink(kRootIno, "d"), EISDIR);
  SFS_EXPECT_ERR(store_->Unlink(kRootIno, "nope"), ENOENT);
  SFS_EXPECT_ERR(store_->Unlink(999, "f"), ENOENT);
  SFS_EXPECT_ERR(store_->Unlink(f->ino, "x"), ENOTDIR);
  SFS_EXPECT_ERR(store_->Unlink(kRootIno, std::string(256, 'f')), ENAMETOOLONG);
  EXPECT_EQ(InoOf(kRootIno, "d"), d->ino);
  EXPECT_EQ(Nlink(f->ino), 1u);
}

TEST_F(NamespaceTest, RmdirRemovesEmptyDirectories) {
  auto d = Dir(kRootIno, "d");
  SFS_ASSERT_OK(d);
  auto e = Dir(d->ino, "e");
  SFS_ASSERT_OK(e);
  auto f = File(kRootIno, "f");
  SFS_ASSERT_OK(f);
  SFS_ASSERT_OK(store_->SetXattr(e->ino, "user.x", "v", 0));
  EXPECT_EQ(Nlink(kRootIno), 3u);
  SFS_EXPECT_ERR(store_->Rmdir(kRootIno, "d"), ENOTEMPTY);
  SFS_EXPECT_ERR(store_->Rmdir(kRootIno, "f"), ENOTDIR);
  SFS_EXPECT_ERR(store_->Rmdir(kRootIno, "nope"), ENOENT);
  SFS_EXPECT_ERR(store_->Rmdir(999, "d"), ENOENT);

  SFS_ASSERT_OK(store_->Rmdir(d->ino, "e"));
  EXPECT_EQ(Nlink(d->ino), 2u);
  SFS_EXPECT_ERR(store_->GetInode(e->ino), ENOENT);
  SFS_EXPECT_ERR(store_->GetXattr(e->ino, "user.x"), ENOENT);
  SFS_ASSERT_OK(store_->Rmdir(kRootIno, "d"));
  EXPECT_EQ(Nlink(kRootIno), 2u);
  SFS_EXPECT_ERR(store_->Lookup(kRootIno, "d"), ENOENT);
  auto entries = store_->ReadDir(kRootIno);
  SFS_ASSERT_OK(entries);
  ASSERT_EQ(entries->size(), 1u);
  EXPECT_EQ((*entries)[0].name, "f");
}

TEST_F(NamespaceTest, RmdirNotEmptyBecauseOfAFileOnly) {
  auto d = Dir(kRootIno, "d");
  SFS_ASSERT_OK(d);
  SFS_ASSERT_OK(File(d->ino, "f"));
  SFS_EXPECT_ERR(store_->Rmdir(kRootIno, "d"), ENOTEMPTY);
  SFS_ASSERT_OK(store_->Unlink(d->ino, "f"));
  SFS_ASSERT_OK(store_->Rmdir(kRootIno, "d"));
}

}  // namespace
}  // namespace sfs::meta
