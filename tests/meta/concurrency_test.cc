// Atomicity under concurrency: readers never see half a mutation, and
// racing writers leave a namespace whose links all add up.
#include <gtest/gtest.h>
#include <rocksdb/db.h>
#include <sys/stat.h>

#include <atomic>
#include <future>
#include <chrono>
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
  rocksdb::Status rs = rocksdb::DB::OpenForReadOnly(test_util::RawDbOptions(), db_dir_, &raw);
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
  it.reset();
  db.reset();
  Reopen();
  EXPECT_EQ(test_util::StoredUsage(*store_), test_util::CountedUsage(*store_));
}

// Threads in directories of their own (the mdtest and scaling_bench shape)
// share no inode lock, but charge the same users and group: their batches
// land in any order, and usage stays exact, in memory, as stored, and as
// the observer last told it.
TEST_F(ConcurrencyTest, ThreadsInTheirOwnDirectoriesKeepUsageExact) {
  std::mutex observed_mu;
  std::map<QuotaId, QuotaUsage> observed;
  std::map<QuotaId, std::pair<int64_t, int64_t>> observed_sum;  // as the enforcer sums
  store_->SetUsageObserver([&](const QuotaId& id, const QuotaUsage& usage) {
    std::lock_guard<std::mutex> lock(observed_mu);
    QuotaUsage& last = observed[id];
    observed_sum[id].first += usage.bytes - last.bytes;
    observed_sum[id].second += usage.inodes - last.inodes;
    last = usage;
  });
  constexpr unsigned kThreads = 6;
  std::vector<uint64_t> dirs;
  for (unsigned t = 0; t < kThreads; ++t) {
    auto d = Dir(kRootIno, "d" + std::to_string(t));
    SFS_ASSERT_OK(d);
    dirs.push_back(d->ino);
  }
  std::atomic<int> failures{0};
  auto worker = [&](unsigned t) {
    std::mt19937 rng(99 + t);
    const uint64_t dir = dirs[t];
    auto check = [&](const Status& s) {
      if (!s.ok()) ++failures;
    };
    for (int i = 0; i < 200; ++i) {
      const std::string name = "f" + std::to_string(i);
      NewNode node;
      node.mode = S_IFREG | 0644;
      node.uid = 1000 + t % 3;  // two threads per user
      node.gid = 100;           // one group for all
      auto f = store_->Create(dir, name, node);
      check(StatusOf(f));
      if (!f.ok()) continue;
      check(StatusOf(store_->NoteWrite(f->ino, 1 + rng() % 100000, false)));
      switch (rng() % 5) {
        case 0: {  // truncate
          AttrChange change;
          change.size = rng() % 5000;
          check(StatusOf(store_->SetAttr(f->ino, change)));
          break;
        }
        case 1:  // purged in the unlink's batch
          check(StatusOf(store_->Unlink(dir, name, [](uint64_t, const std::string&) {
            return true;
          })));
          break;
        case 2: {  // orphaned, then purged
          auto removed = store_->Unlink(dir, name);
          check(StatusOf(removed));
          if (removed.ok()) check(store_->Purge(removed->ino));
          break;
        }
        case 3: {  // a second name, renamed over the first
          check(StatusOf(store_->Link(f->ino, dir, name + "-l")));
          check(StatusOf(store_->Rename(dir, name + "-l", dir, name, RenameMode::kReplace)));
          break;
        }
        default: {  // chown to the next thread's user
          AttrChange change;
          change.uid = 1000 + (t + 1) % 3;
          check(StatusOf(store_->SetAttr(f->ino, change)));
          break;
        }
      }
      if (i % 50 == 0) {
        auto sub = Dir(dir, "s" + std::to_string(i));
        check(StatusOf(sub));
        check(store_->Rmdir(dir, "s" + std::to_string(i)));
      }
    }
  };
  std::vector<std::thread> threads;
  for (unsigned t = 0; t < kThreads; ++t) threads.emplace_back(worker, t);
  // The exclusive mode meets the mutations in flight now and then.
  for (int i = 0; i < 5; ++i) {
    Status s = store_->SetSoftLimits({{QuotaId{QuotaType::kGroup, 100}, SoftLimit{1, 0}}},
                                     QuotaGrace{60, 60});
    if (!s.ok()) ++failures;
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(failures.load(), 0);

  const test_util::UsageCounts stored = test_util::StoredUsage(*store_);
  EXPECT_EQ(stored, test_util::CountedUsage(*store_));
  {
    std::lock_guard<std::mutex> lock(observed_mu);
    test_util::UsageCounts seen;
    for (const auto& [id, usage] : observed) {
      if (!(usage == QuotaUsage{})) seen[id] = {usage.bytes, usage.inodes};
      EXPECT_EQ(observed_sum[id], std::make_pair(usage.bytes, usage.inodes)) << ToString(id);
    }
    EXPECT_EQ(seen, stored);
  }
  const std::map<QuotaId, QuotaUsage> in_memory = store_->AllUsage();
  store_->SetUsageObserver(nullptr);
  Reopen();
  EXPECT_EQ(test_util::StoredUsage(*store_), stored);
  // Whether a grace end runs follows the counters, stored or in memory.
  for (const auto& [id, usage] : store_->AllUsage()) {
    ASSERT_TRUE(in_memory.count(id)) << ToString(id);
    EXPECT_EQ(usage.block_grace_end != 0, in_memory.at(id).block_grace_end != 0) << ToString(id);
  }
  std::set<uint64_t> reachable;
  CheckTree(&reachable);
}

// Renames within a directory race creates, links and unlinks of the same
// names in it, and exchanges with another directory: every name always
// names one live inode of the right type, links add up, usage is exact.
TEST_F(ConcurrencyTest, RenamesRaceCreatesInOneDirectory) {
  auto d = Dir(kRootIno, "d");
  SFS_ASSERT_OK(d);
  auto e = Dir(kRootIno, "e");
  SFS_ASSERT_OK(e);
  const std::vector<std::string> names = {"a", "b", "c"};
  const std::set<int> allowed = {ENOENT, EEXIST};
  std::atomic<int> unexpected{0};
  auto note = [&](const Status& s) {
    if (!s.ok() && !allowed.count(s.err())) ++unexpected;
  };
  std::thread renamer([&] {
    std::mt19937 rng(1);
    for (int i = 0; i < 600; ++i) {
      const std::string& from = names[rng() % names.size()];
      const std::string& to = names[rng() % names.size()];
      if (i % 7 == 0) {
        note(StatusOf(store_->Rename(d->ino, from, e->ino, to, RenameMode::kExchange)));
      } else {
        note(StatusOf(store_->Rename(d->ino, from, d->ino, to, RenameMode::kReplace)));
      }
    }
  });
  std::thread creator([&] {
    std::mt19937 rng(2);
    for (int i = 0; i < 600; ++i) {
      const std::string& name = names[rng() % names.size()];
      switch (rng() % 4) {
        case 0:
        case 1:
          note(StatusOf(File(rng() % 2 ? d->ino : e->ino, name)));
          break;
        case 2: {
          auto target = store_->Lookup(d->ino, name);
          if (target.ok()) note(StatusOf(store_->Link(target->ino, e->ino, name)));
          break;
        }
        default: {
          auto removed = store_->Unlink(d->ino, name);
          note(StatusOf(removed));
          if (removed.ok() && removed->orphaned) note(store_->Purge(removed->ino));
          break;
        }
      }
    }
  });
  renamer.join();
  creator.join();
  EXPECT_EQ(unexpected.load(), 0);
  std::set<uint64_t> reachable;
  CheckTree(&reachable);
  EXPECT_EQ(test_util::StoredUsage(*store_), test_util::CountedUsage(*store_));
}

// Two directories moved each below the other at once, p/a into q/b/c and
// q/b into p/a/d: the two renames share no inode, so only the store-wide
// rename lock makes the ancestor check of one see the other's move.
// Exactly one succeeds; no loop cuts both off the tree.
TEST_F(ConcurrencyTest, CrossRenamesBelowEachOtherNeverMakeALoop) {
  auto p = Dir(kRootIno, "p");
  SFS_ASSERT_OK(p);
  auto q = Dir(kRootIno, "q");
  SFS_ASSERT_OK(q);
  for (int round = 0; round < 300; ++round) {
    auto a = Dir(p->ino, "a");
    SFS_ASSERT_OK(a);
    auto d = Dir(a->ino, "d");
    SFS_ASSERT_OK(d);
    auto b = Dir(q->ino, "b");
    SFS_ASSERT_OK(b);
    auto c = Dir(b->ino, "c");
    SFS_ASSERT_OK(c);
    Status a_moved;
    Status b_moved;
    std::atomic<int> ready{0};
    auto together = [&] {  // both renames start at once
      ++ready;
      while (ready.load() < 2) {
      }
    };
    std::thread one([&] {
      together();
      a_moved = StatusOf(store_->Rename(p->ino, "a", c->ino, "a", RenameMode::kReplace));
    });
    std::thread two([&] {
      together();
      b_moved = StatusOf(store_->Rename(q->ino, "b", d->ino, "b", RenameMode::kReplace));
    });
    one.join();
    two.join();
    ASSERT_NE(a_moved.ok(), b_moved.ok()) << a_moved.ToString() << " / " << b_moved.ToString();
    const Status& failed = a_moved.ok() ? b_moved : a_moved;
    EXPECT_EQ(failed.err(), EINVAL) << failed.ToString();  // below itself
    std::set<uint64_t> reachable;
    CheckTree(&reachable);
    for (uint64_t ino : {a->ino, b->ino, c->ino, d->ino}) {
      ASSERT_TRUE(reachable.count(ino)) << "round " << round << ": " << ino << " cut off";
    }
    // Back to empty p and q: the inner pair first.
    if (a_moved.ok()) {  // q/b/c/a/d
      SFS_ASSERT_OK(store_->Rmdir(a->ino, "d"));
      SFS_ASSERT_OK(store_->Rmdir(c->ino, "a"));
      SFS_ASSERT_OK(store_->Rmdir(b->ino, "c"));
      SFS_ASSERT_OK(store_->Rmdir(q->ino, "b"));
    } else {  // p/a/d/b/c
      SFS_ASSERT_OK(store_->Rmdir(b->ino, "c"));
      SFS_ASSERT_OK(store_->Rmdir(d->ino, "b"));
      SFS_ASSERT_OK(store_->Rmdir(a->ino, "d"));
      SFS_ASSERT_OK(store_->Rmdir(p->ino, "a"));
    }
  }
}

// An unlink holds its inodes' locks while it asks PurgeNow; a create in
// another directory, which shares no lock with it, finishes meanwhile
// (with one store-wide mutation lock it waited for the unlink).
TEST_F(ConcurrencyTest, AMutationHoldingItsLocksDoesNotHoldUpOneElsewhere) {
  auto d = Dir(kRootIno, "d");
  SFS_ASSERT_OK(d);
  SFS_ASSERT_OK(File(d->ino, "f"));
  auto elsewhere = Dir(kRootIno, "elsewhere");
  SFS_ASSERT_OK(elsewhere);
  bool created = false;
  auto removed = store_->Unlink(d->ino, "f", [&](uint64_t, const std::string&) {
    auto create = std::async(std::launch::async, [&] { return File(elsewhere->ino, "g"); });
    // Only a guard against a hang when this fails: a create takes micro-
    // seconds, and one that waits for the unlink never ends by itself.
    if (create.wait_for(std::chrono::seconds(60)) != std::future_status::ready) {
      ADD_FAILURE() << "the create waited for the unlink's locks";
      return true;  // ends the unlink, so the create can finish
    }
    created = create.get().ok();
    return true;
  });
  SFS_ASSERT_OK(removed);
  EXPECT_TRUE(created);
  EXPECT_NE(InoOf(elsewhere->ino, "g"), 0u);
}

// An unlink whose child's lock lies below its parent's and is busy lets
// go and starts again holding both in order (inode_locks.h): here F's
// lock is held by an unlink of G, an inode of the same stripe, which waits
// inside its PurgeNow while another thread unlinks F's second name from a
// directory above F's stripe. Both end, and F keeps its other name.
TEST_F(ConcurrencyTest, AChildBelowItsParentsLockIsTakenAfterStartingAgain) {
  auto a = Dir(kRootIno, "a");
  SFS_ASSERT_OK(a);
  auto f = File(a->ino, "x");
  SFS_ASSERT_OK(f);
  auto b = Dir(kRootIno, "b");
  SFS_ASSERT_OK(b);
  ASSERT_GT(b->ino % 1024, f->ino % 1024);  // InodeLocks::kStripes
  SFS_ASSERT_OK(store_->Link(f->ino, b->ino, "y"));
  // G: the next inode of F's stripe.
  std::string g_name;
  for (int i = 0; g_name.empty(); ++i) {
    auto g = File(a->ino, "g" + std::to_string(i));
    SFS_ASSERT_OK(g);
    if (g->ino % 1024 == f->ino % 1024) g_name = "g" + std::to_string(i);
  }
  std::promise<void> holding;
  std::thread holder([&] {
    auto removed = store_->Unlink(a->ino, g_name, [&](uint64_t, const std::string&) {
      holding.set_value();
      // Long enough for the other unlink to find the stripe busy (if it
      // does not, the test passes without having shown the restart).
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      return true;
    });
    EXPECT_TRUE(removed.ok() && removed->purged);
  });
  holding.get_future().wait();
  auto removed = store_->Unlink(b->ino, "y");
  holder.join();
  SFS_ASSERT_OK(removed);
  EXPECT_EQ(removed->ino, f->ino);
  EXPECT_EQ(removed->nlink_left, 1u);
  EXPECT_EQ(InoOf(a->ino, "x"), f->ino);
  std::set<uint64_t> reachable;
  CheckTree(&reachable);
  EXPECT_EQ(test_util::StoredUsage(*store_), test_util::CountedUsage(*store_));
}

}  // namespace
}  // namespace sfs::meta
