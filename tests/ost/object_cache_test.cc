#include "ost/object_cache.h"

#include <dirent.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <string>
#include <thread>
#include <vector>

#include "ost/backend.h"
#include "test_util.h"

namespace sfs::ost {
namespace {

// The descriptors this process has open now.
size_t OpenDescriptors() {
  size_t n = 0;
  DIR* dir = opendir("/proc/self/fd");
  while (dirent* entry = readdir(dir)) n += entry->d_name[0] != '.';
  closedir(dir);
  return n - 1;  // the one opendir itself holds
}

Status WriteString(ObjectFile& file, const std::string& text, uint64_t offset) {
  iovec v{const_cast<char*>(text.data()), text.size()};
  return file.WriteV(&v, 1, offset);
}

std::string ReadString(ObjectFile& file, size_t n) {
  std::string out(n, '\0');
  iovec v{out.data(), n};
  auto got = file.ReadV(&v, 1, 0);
  if (!got.ok()) return "<" + got.status().ToString() + ">";
  out.resize(*got);
  return out;
}

TEST(ObjectCacheTest, KeepsAtMostCapacityOpenAndReopensOnDemand) {
  testing::TempDir dir;
  auto backend = NewPosixBackend(dir.path());
  ASSERT_TRUE(backend.ok());
  ObjectCache cache(backend->get(), 8);
  const size_t before = OpenDescriptors();
  // Ten times the capacity, each written through the cache...
  for (uint64_t id = 1; id <= 80; ++id) {
    auto file = cache.Get(id, /*create=*/true);
    ASSERT_TRUE(file.ok()) << file.status().ToString();
    ASSERT_TRUE(WriteString(**file, "object " + std::to_string(id), 0).ok());
    EXPECT_LE(cache.size(), 8u);
  }
  EXPECT_EQ(cache.size(), 8u);
  EXPECT_EQ(OpenDescriptors() - before, 8u);
  // ... and every one reads back: evicted ones are opened again.
  for (uint64_t id = 1; id <= 80; ++id) {
    auto file = cache.Get(id, /*create=*/false);
    ASSERT_TRUE(file.ok()) << id;
    EXPECT_EQ(ReadString(**file, 64), "object " + std::to_string(id));
  }
  EXPECT_EQ(OpenDescriptors() - before, 8u);
}

// Cached never opens (it must never wait on a disk): only what Get opened
// and the cache still holds, the same file, with its descriptor.
TEST(ObjectCacheTest, CachedOnlyFindsWhatIsOpenAlready) {
  testing::TempDir dir;
  auto backend = NewPosixBackend(dir.path());
  ASSERT_TRUE(backend.ok());
  ObjectCache cache(backend->get(), 2);
  EXPECT_EQ(cache.Cached(1), nullptr);
  EXPECT_EQ(cache.size(), 0u);
  auto opened = cache.Get(1, /*create=*/true);
  ASSERT_TRUE(opened.ok());
  auto cached = cache.Cached(1);
  EXPECT_EQ(cached, *opened);
  ASSERT_NE(cached, nullptr);
  EXPECT_GE(cached->NativeFd(), 0);
  ASSERT_TRUE(cache.Get(2, /*create=*/true).ok());
  ASSERT_TRUE(cache.Cached(1) != nullptr);  // 1 is now the most recent...
  ASSERT_TRUE(cache.Get(3, /*create=*/true).ok());  // ... so 2 goes
  EXPECT_EQ(cache.Cached(2), nullptr);
  EXPECT_NE(cache.Cached(1), nullptr);
  EXPECT_EQ(cache.size(), 2u);
}

TEST(ObjectCacheTest, ALowerCapacityClosesTheExtraObjectsAtOnce) {
  testing::TempDir dir;
  auto backend = NewPosixBackend(dir.path());
  ASSERT_TRUE(backend.ok());
  ObjectCache cache(backend->get(), 8);
  const size_t before = OpenDescriptors();
  for (uint64_t id = 1; id <= 8; ++id) ASSERT_TRUE(cache.Get(id, /*create=*/true).ok());
  EXPECT_EQ(OpenDescriptors() - before, 8u);
  {
    auto held = cache.Get(8, /*create=*/false);  // the most recent: kept
    ASSERT_TRUE(held.ok());
    auto oldest = cache.Get(1, /*create=*/false);  // now the most recent
    ASSERT_TRUE(oldest.ok());
    cache.SetCapacity(2);
    EXPECT_EQ(cache.capacity(), 2u);
    EXPECT_EQ(cache.size(), 2u);
    EXPECT_EQ(OpenDescriptors() - before, 2u);
  }
  // Raising it again keeps what is open and takes more.
  cache.SetCapacity(5);
  for (uint64_t id = 1; id <= 8; ++id) ASSERT_TRUE(cache.Get(id, /*create=*/false).ok());
  EXPECT_EQ(cache.size(), 5u);
  EXPECT_EQ(OpenDescriptors() - before, 5u);
  cache.SetCapacity(0);  // at least one
  EXPECT_EQ(cache.capacity(), 1u);
  EXPECT_EQ(cache.size(), 1u);
}

TEST(ObjectCacheTest, MissingObjectIsEnoentAndNotCached) {
  auto backend = NewMemBackend();
  ObjectCache cache(backend.get(), 4);
  EXPECT_EQ(cache.Get(5, /*create=*/false).err(), ENOENT);
  EXPECT_EQ(cache.size(), 0u);
}

TEST(ObjectCacheTest, AFileInUseOutlivesItsEviction) {
  auto backend = NewMemBackend();
  ObjectCache cache(backend.get(), 1);
  auto held = cache.Get(1, /*create=*/true);
  ASSERT_TRUE(held.ok());
  std::shared_ptr<ObjectFile> file = *held;
  ASSERT_TRUE(cache.Get(2, /*create=*/true).ok());  // evicts 1
  EXPECT_EQ(cache.size(), 1u);
  EXPECT_TRUE(WriteString(*file, "still usable", 0).ok());
  auto again = cache.Get(1, /*create=*/false);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(ReadString(**again, 64), "still usable");
}

TEST(ObjectCacheTest, ForgetDropsTheEntry) {
  auto backend = NewMemBackend();
  ObjectCache cache(backend.get(), 4);
  ASSERT_TRUE(cache.Get(3, /*create=*/true).ok());
  cache.Forget(3);
  EXPECT_EQ(cache.size(), 0u);
  ASSERT_TRUE(backend->Remove(3).ok());
  EXPECT_EQ(cache.Get(3, /*create=*/false).err(), ENOENT);
  cache.Forget(99);  // unknown: nothing happens
}

TEST(ObjectCacheTest, ConcurrentUseStaysWithinCapacityAndLosesNothing) {
  testing::TempDir dir;
  auto backend = NewPosixBackend(dir.path());
  ASSERT_TRUE(backend.ok());
  ObjectCache cache(backend->get(), 16);
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int round = 0; round < 50; ++round) {
        for (uint64_t id = 1; id <= 40; ++id) {
          auto file = cache.Get(id, /*create=*/true);
          if (!file.ok() || !WriteString(**file, "x", static_cast<uint64_t>(t)).ok()) failures++;
        }
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_LE(cache.size(), 16u);
  for (uint64_t id = 1; id <= 40; ++id) {
    auto file = cache.Get(id, false);
    ASSERT_TRUE(file.ok());
    EXPECT_EQ(ReadString(**file, 16), "xxxx") << id;
  }
}

}  // namespace
}  // namespace sfs::ost
