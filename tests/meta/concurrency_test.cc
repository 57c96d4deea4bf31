// Atomicity under concurrency: readers never see half a mutation, and
// racing writers leave a namespace whose links all add up.
#include <gtest/gtest.h>
#include <rocksdb/db.h>
#include <sys/stat.h>

#include <atomic>
#include <map>
#include <random>
#include <set>
#include <thread>
#include <vector>

#include "meta/keys.h"
#include "meta/meta_store.h"
#include "tests/meta/meta_test_util.h"

namespace sfs::meta {
namespace {

class ConcurrencyTest : public test_util::StoreTest {
 protected:
  // Walks the tree from the root and checks that every dirent names an
  // existing inode of the right type, that each non-directory's nlink is its
  // dirent count and each directory's is 2 + its subdirectories, and that
  // every directory's `parent` is the directory naming it.
  void CheckTree(std::set<uint64_t>* reachable) {
    std::map<uint64_t, uint32_t> refs;
    std::vector<uint64_t> dirs = {kRootIno};
    reachable->insert(kRootIno);
    while (!dirs.empty()) {
      uint64_t dir = dirs.back();
      dirs.pop_back();
      auto entries = store_->ReadDir(dir);
      SFS_ASSERT_OK(entries);
      uint32_t subdirs = 0;
      for (const auto& e : *entries) {
        auto child = store_->GetInode(e.ino);
        SFS_ASSERT_OK(child);
        ASSERT_EQ(child->mode & S_IFMT, e.mode) << e.name;
        if (S_ISDIR(e.mode)) {
          ++subdirs;
          ASSERT_EQ(child->parent, dir) << e.name;
          ASSERT_TRUE(reachable->insert(e.ino).second) << "directory named twice: " << e.name;
          dirs.push_back(e.ino);
        } else {
          ++refs[e.ino];
          reachable->insert(e.ino);
        }
      }
      EXPECT_EQ(Nlink(dir), 2 + subdirs) << "directory " << dir;
    }
    for (const auto& [ino, count] : refs) EXPECT_EQ(Nlink(ino), count) << "inode " << ino;
    auto orphans = store_->Orphans();
    SFS_ASSERT_OK(orphans);
    for (uint64_t ino : *orphans) {
      EXPECT_EQ(reachable->count(ino), 0u) << "orphan still named: " << ino;
      EXPECT_EQ(Nlink(ino), 0u);
    }
  }
};

TEST_F(ConcurrencyTest, ReadDirSeesARenameWhole) {
  auto d = Dir(kRootIno, "d");
  SFS_ASSERT_OK(d);
  auto f = File(d->ino, "a");
  SFS_ASSERT_OK(f);
  SFS_ASSERT_OK(File(d->ino, "m"));  // a bystander between "a" and "z"
  std::atomic<bool> done{false};
  std::atomic<int> bad{0};
  std::thread reader([&] {
    while (!done.load()) {
      auto entries = store_->ReadDir(d->ino);
      if (!entries.ok() || entries->size() != 2) {
        ++bad;
        continue;
      }
      int moving = 0;
      for (const auto& e : *entries) {
        if ((e.name == "a" || e.name == "z") && e.ino == f->ino) ++moving;
      }
      if (moving != 1) ++bad;
    }
  });
  for (int i = 0; i < 300; ++i) {
    const bool even = i % 2 == 0;
    auto r =
        store_->Rename(d->ino, even ? "a" : "z", d->ino, even ? "z" : "a", RenameMode::kReplace);
    if (!r.ok()) {  // not ASSERT: the reader must still be joined
      ADD_FAILURE() << r.status().ToString();
      break;
    }
  }
  done = true;
  reader.join();
  EXPECT_EQ(bad.load(), 0);
  EXPECT_EQ(InoOf(d->ino, "a"), f->ino);
}

TEST_F(ConcurrencyTest, RacingWritersKeepLinksConsistent) {
  // Three fixed directories; names come from a small shared pool so threads
  // collide on the same dirents all the time.
  std::vector<uint64_t> parents = {kRootIno};
  for (const char* name : {"p1", "p2"}) {
    auto d = Dir(kRootIno, name);
    SFS_ASSERT_OK(d);
    parents.push_back(d->ino);
  }
  const std::vector<std::string> pool = {"n0", "n1", "n2", "n3", "n4", "n5"};
  const std::set<int> allowed = {ENOENT, EEXIST, ENOTDIR, EISDIR, ENOTEMPTY, EPERM, EINVAL};
  std::atomic<int> unexpected{0};
  auto worker = [&](unsigned seed) {
    std::mt19937 rng(seed);
    auto pick = [&](size_t n) { return static_cast<size_t>(rng() % n); };
    // A fixed directory, or now and then one made by the pool so that trees
    // nest and rename meets ENOTEMPTY and the subtree check.
    auto parent = [&]() -> uint64_t {
      uint64_t fixed = parents[pick(parents.size())];
      if (pick(3) != 0) return fixed;
      auto made = store_->Lookup(fixed, pool[pick(pool.size())]);
      return made.ok() && S_ISDIR(made->mode) ? made->ino : fixed;
    };
    for (int i = 0; i < 300; ++i) {
      uint64_t p = parent();
      uint64_t q = parent();
      const std::string& a = pool[pick(pool.size())];
      const std::string& b = pool[pick(pool.size())];
      Status s;
      switch (pick(9)) {
        case 0:
          s = StatusOf(File(p, a));
          break;
        case 1:
          s = StatusOf(Dir(p, a));
          break;
        case 2:
          s = StatusOf(Make(p, a, S_IFLNK | 0777, "t"));
          break;
        case 3: {
          auto target = store_->Lookup(p, a);
          s = target.ok() ? StatusOf(store_->Link(target->ino, q, b)) : target.status();
          break;
        }
        case 4: {
          auto r = store_->Unlink(p, a);
          s = StatusOf(r);
          if (r.ok() && r->orphaned) s = store_->Purge(r->ino);
          break;
        }
        case 5:
          s = store_->Rmdir(p, a);
          break;
        case 6:
          s = StatusOf(store_->Rename(p, a, q, b, RenameMode::kReplace));
          break;
        case 7:
          s = StatusOf(store_->Rename(p, a, q, b, RenameMode::kNoReplace));
          break;
        default:
          s = StatusOf(store_->Rename(p, a, q, b, RenameMode::kExchange));
          break;
      }
      if (!s.ok() && !allowed.count(s.err())) ++unexpected;
    }
  };
  std::vector<std::thread> threads;
  for (unsigned t = 0; t < 4; ++t) threads.emplace_back(worker, 1234 + t);
  for (auto& t : threads) t.join();
  EXPECT_EQ(unexpected.load(), 0);

  std::set<uint64_t> reachable;
  CheckTree(&reachable);
  auto orphans = store_->Orphans();
  SFS_ASSERT_OK(orphans);
  std::set<uint64_t> known = reachable;
  known.insert(orphans->begin(), orphans->end());

  // No leaks: every stored inode is named or an orphan, and no dirent or
  // xattr lives under an inode that is gone.
  store_.reset();
  rocksdb::DB* raw = nullptr;
  rocksdb::Status rs = rocksdb::DB::OpenForReadOnly(rocksdb::Options(), db_dir_, &raw);
  ASSERT_TRUE(rs.ok()) << rs.ToString();
  std::unique_ptr<rocksdb::DB> db(raw);
  std::unique_ptr<rocksdb::Iterator> it(db->NewIterator(rocksdb::ReadOptions()));
  size_t inodes = 0;
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    std::string key = it->key().ToString();
    if (key[0] == kInodePrefix || key[0] == kDirentPrefix || key[0] == kXattrPrefix ||
        key[0] == kLayoutPrefix) {
      uint64_t ino = DecodeU64BE(key.substr(1, 8));
      EXPECT_EQ(known.count(ino), 1u) << "key for unknown inode " << ino << " prefix " << key[0];
      if (key[0] == kInodePrefix) ++inodes;
    }
  }
  ASSERT_TRUE(it->status().ok());
  EXPECT_EQ(inodes, known.size());
}

}  // namespace
}  // namespace sfs::meta
