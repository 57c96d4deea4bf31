// Striping on a real mount: where the bytes of a file land.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "mounted_fs.h"

namespace sfs::test {
namespace {

std::vector<char> RandomBytes(size_t n, uint64_t seed) {
  std::vector<char> bytes(n);
  std::mt19937_64 rng(seed);
  for (size_t i = 0; i < n; i += 8) {
    uint64_t v = rng();
    std::memcpy(bytes.data() + i, &v, std::min<size_t>(8, n - i));
  }
  return bytes;
}

TEST(StripingTest, LargeFileRoundTripsAndFillsFourObjects) {
  MountedFs fs;
  ASSERT_TRUE(fs.mounted());
  const size_t kSize = 256u << 20;
  const auto data = RandomBytes(kSize, 7);
  const std::string path = fs.Path("big");
  {
    int fd = open(path.c_str(), O_CREAT | O_WRONLY, 0644);
    ASSERT_GE(fd, 0);
    for (size_t off = 0; off < kSize; off += 1 << 20) {
      ASSERT_EQ(pwrite(fd, data.data() + off, 1 << 20, static_cast<off_t>(off)), 1 << 20);
    }
    ASSERT_EQ(close(fd), 0);
  }
  {
    std::vector<char> back(kSize);
    int fd = open(path.c_str(), O_RDONLY);
    ASSERT_GE(fd, 0);
    size_t got = 0;
    while (got < kSize) {
      ssize_t n = read(fd, back.data() + got, kSize - got);
      ASSERT_GT(n, 0);
      got += static_cast<size_t>(n);
    }
    close(fd);
    ASSERT_TRUE(back == data);
  }
  // 4 stripes of 1 MiB: each object holds exactly a quarter.
  for (int ost = 0; ost < 4; ++ost) {
    auto objects = fs.Objects(ost);
    ASSERT_EQ(objects.size(), 1u) << "ost " << ost;
    struct stat st;
    ASSERT_EQ(stat(objects[0].c_str(), &st), 0);
    EXPECT_EQ(static_cast<size_t>(st.st_size), kSize / 4);
  }
  CommandResult layout = Shell("getfattr --only-values -n user.stripefs.layout " + path);
  ASSERT_EQ(layout.exit_code, 0) << layout.output;
  EXPECT_NE(layout.output.find("stripe_count=4 stripe_size=1048576"), std::string::npos)
      << layout.output;
}

}  // namespace
}  // namespace sfs::test
