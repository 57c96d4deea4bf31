// Shared fixtures for the meta tests: a fresh temporary directory per test
// and a store formatted in it.
#pragma once

#include <gtest/gtest.h>
#include <rocksdb/options.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <utility>

#include "meta/meta_store.h"
#include "meta/usage_merge.h"

// Binds the Status or Result first: StatusOf of a temporary would dangle.
#define SFS_ASSERT_OK(expr)                                         \
  do {                                                              \
    const auto& sfs_r_ = (expr);                                    \
    const ::sfs::Status& sfs_s_ = ::sfs::StatusOf(sfs_r_);          \
    ASSERT_TRUE(sfs_s_.ok()) << #expr << ": " << sfs_s_.ToString(); \
  } while (0)

#define SFS_EXPECT_ERR(expr, errno_value) \
  EXPECT_EQ(::sfs::StatusOf(expr).err(), errno_value) << #expr

namespace sfs::meta::test_util {

// A mkdtemp directory, removed with everything in it when destroyed. On
// tmpfs when there is one: every Format and Open fsyncs several times, and
// these tests check behaviour, not survival of a power cut.
class TempDir {
 public:
  TempDir() {
    std::error_code ec;
    std::string tmpl = std::filesystem::is_directory("/dev/shm", ec) ? "/dev/shm" : "/tmp";
    tmpl += "/sfs-meta-test-XXXXXX";
    char* made = mkdtemp(tmpl.data());
    if (made != nullptr) path_ = made;
  }
  ~TempDir() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Options for opening a store's database raw (to damage it, or read it
// whole): usage records need the store's merge operator to be read,
// flushed or compacted.
inline rocksdb::Options RawDbOptions() {
  rocksdb::Options options;
  options.merge_operator = NewUsageMergeOperator();
  return options;
}

// Bytes and inodes per id: as the store keeps them (AllUsage), and as
// fsck counts them (ChargesOf over every inode, zeros left out).
using UsageCounts = std::map<QuotaId, std::pair<int64_t, int64_t>>;
inline UsageCounts StoredUsage(MetaStore& store) {
  UsageCounts stored;
  for (const auto& [id, usage] : store.AllUsage()) stored[id] = {usage.bytes, usage.inodes};
  return stored;
}
inline UsageCounts CountedUsage(MetaStore& store) {
  UsageCounts counted;
  Status s = store.ScanInodes([&](uint64_t, const Result<Inode>& inode) {
    if (!inode.ok()) return;  // counts for nobody
    for (const Charge& charge : ChargesOf(*inode)) {
      counted[charge.id].first += charge.bytes;
      counted[charge.id].second += charge.inodes;
    }
  });
  EXPECT_TRUE(s.ok()) << s.ToString();
  std::erase_if(counted, [](const auto& kv) { return kv.second == std::make_pair(0L, 0L); });
  return counted;
}

// Timestamps as comparable, printable pairs: EXPECT_EQ(T(a), T(b)).
inline std::pair<int64_t, int64_t> T(const Timestamp& t) { return {t.sec, t.nsec}; }

// A store formatted in a fresh directory for each test.
class StoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(tmp_.path().empty());
    db_dir_ = tmp_.path() + "/db";
    auto store = MetaStore::Format(db_dir_, {});
    SFS_ASSERT_OK(store);
    store_ = std::move(*store);
  }

  void Reopen() {
    store_.reset();
    auto store = MetaStore::Open(db_dir_);
    SFS_ASSERT_OK(store);
    store_ = std::move(*store);
  }

  Result<Inode> Make(uint64_t parent, const std::string& name, uint32_t mode,
                     const std::string& symlink = "") {
    NewNode node;
    node.mode = mode;
    node.uid = 1000;
    node.gid = 100;
    node.symlink = symlink;
    return store_->Create(parent, name, node);
  }
  Result<Inode> File(uint64_t parent, const std::string& name) {
    return Make(parent, name, S_IFREG | 0644);
  }
  Result<Inode> Dir(uint64_t parent, const std::string& name) {
    return Make(parent, name, S_IFDIR | 0755);
  }

  uint32_t Nlink(uint64_t ino) {
    auto inode = store_->GetInode(ino);
    return inode.ok() ? inode->nlink : 0xffffffff;
  }
  // The ino `name` resolves to, or 0 when the lookup fails.
  uint64_t InoOf(uint64_t parent, const std::string& name) {
    auto inode = store_->Lookup(parent, name);
    return inode.ok() ? inode->ino : 0;
  }

  TempDir tmp_;  // declared first: outlives the store
  std::string db_dir_;
  std::unique_ptr<MetaStore> store_;
};

}  // namespace sfs::meta::test_util
