#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "fs/stripefs.h"

namespace sfs::fs {
namespace {

TEST(MountOptionsTest, TakesOurKeysAndKeepsTheRestForFuse) {
  MountOptions options;
  Status s = ParseMountOption(
      "log_level=debug,ro,admin_uid=1000,ost_threads=4,attr_timeout=0.5,ost_timeout=2.5,"
      "log_file=/tmp/x.log,max_read=131072",
      &options);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(options.log_level, "debug");
  EXPECT_EQ(options.log_file, "/tmp/x.log");
  EXPECT_EQ(options.admin_uid, 1000u);
  EXPECT_EQ(options.ost_threads, 4);
  EXPECT_EQ(options.attr_timeout, 0.5);
  EXPECT_EQ(options.ost_timeout, 2.5);
  EXPECT_EQ(options.max_read, 131072u);  // checked here, passed on by fs/mount.cc
  EXPECT_EQ(options.fuse_options, (std::vector<std::string>{"ro"}));
}

TEST(MountOptionsTest, MetricsTakesAnIpAddressAndAPort) {
  MountOptions options;
  ASSERT_TRUE(ParseMountOption("metrics=127.0.0.1:9100", &options).ok());
  EXPECT_EQ(options.metrics_address, "127.0.0.1");
  EXPECT_EQ(options.metrics_port, 9100);
  ASSERT_TRUE(ParseMountOption("metrics=[::1]:0", &options).ok());  // 0: any free port
  EXPECT_EQ(options.metrics_address, "::1");
  EXPECT_EQ(options.metrics_port, 0);
  EXPECT_TRUE(options.fuse_options.empty());
  EXPECT_TRUE(MountOptions().metrics_address.empty());  // off by default
}

TEST(MountOptionsTest, Defaults) {
  MountOptions options;
  EXPECT_EQ(options.admin_uid, 0u);
  EXPECT_EQ(options.ost_threads, 2);
  EXPECT_EQ(options.attr_timeout, 60.0);
  EXPECT_EQ(options.ost_timeout, 30.0);
  EXPECT_EQ(options.max_read, 0u);  // the daemon picks
  EXPECT_FALSE(options.writeback);
  EXPECT_TRUE(options.direct_writes);  // cache=writearound
  ASSERT_TRUE(ParseMountOption(",,", &options).ok());
  EXPECT_TRUE(options.fuse_options.empty());
}

TEST(MountOptionsTest, MaxRequestIsASizeFrom1MTo16MInWholePages) {
  MountOptions options;
  EXPECT_EQ(options.max_request, 0u);  // FUSE's own 1 MiB
  ASSERT_TRUE(ParseMountOption("max_request=4M", &options).ok());
  EXPECT_EQ(options.max_request, 4u << 20);
  EXPECT_EQ(options.max_read, 0u);  // the daemon then reads up to max_request
  EXPECT_TRUE(options.fuse_options.empty());
  ASSERT_TRUE(ParseMountOption("max_request=1048576", &options).ok());
  EXPECT_EQ(options.max_request, 1u << 20);
  ASSERT_TRUE(ParseMountOption("max_request=16M,max_read=131072", &options).ok());
  EXPECT_EQ(options.max_request, 16u << 20);
  EXPECT_EQ(options.max_read, 131072u);
  ASSERT_TRUE(ParseMountOption("max_request=2052K", &options).ok());
  EXPECT_EQ(options.max_request, 2052u << 10);
  for (const char* bad :
       {"max_request=512K", "max_request=1048575", "max_request=17M", "max_request=4G",
        "max_request=2050K", "max_request=4x", "max_request=-4M", "max_request=", "max_request"}) {
    MountOptions unchanged;
    Status s = ParseMountOption(bad, &unchanged);
    EXPECT_EQ(s.err(), EINVAL) << bad;
    EXPECT_NE(s.message().find("max_request"), std::string::npos) << bad << ": " << s.message();
    EXPECT_EQ(unchanged.max_request, 0u) << bad;
  }
}

TEST(MountOptionsTest, IoUringIsAutoOnOrOffAndItsDepthBounded) {
  MountOptions options;
  EXPECT_EQ(options.io_uring, MountOptions::Uring::kAuto);
  EXPECT_EQ(options.uring_depth, 0u);  // the daemon picks
  ASSERT_TRUE(ParseMountOption("io_uring=on,uring_depth=8", &options).ok());
  EXPECT_EQ(options.io_uring, MountOptions::Uring::kOn);
  EXPECT_EQ(options.uring_depth, 8u);
  ASSERT_TRUE(ParseMountOption("io_uring=off,uring_depth=1024", &options).ok());
  EXPECT_EQ(options.io_uring, MountOptions::Uring::kOff);
  EXPECT_EQ(options.uring_depth, 1024u);
  ASSERT_TRUE(ParseMountOption("io_uring=auto", &options).ok());
  EXPECT_EQ(options.io_uring, MountOptions::Uring::kAuto);
  EXPECT_TRUE(options.fuse_options.empty());
  for (const char* bad : {"io_uring=yes", "io_uring=", "io_uring", "uring_depth=7",
                          "uring_depth=1025", "uring_depth=x", "uring_depth=-8"}) {
    MountOptions unchanged;
    Status s = ParseMountOption(bad, &unchanged);
    EXPECT_EQ(s.err(), EINVAL) << bad;
    EXPECT_EQ(unchanged.io_uring, MountOptions::Uring::kAuto) << bad;
    EXPECT_EQ(unchanged.uring_depth, 0u) << bad;
  }
}

TEST(MountOptionsTest, UringNiceIsANiceValue) {
  MountOptions options;
  EXPECT_EQ(options.uring_nice, -20);  // queue threads first on their CPU
  ASSERT_TRUE(ParseMountOption("uring_nice=0", &options).ok());
  EXPECT_EQ(options.uring_nice, 0);
  ASSERT_TRUE(ParseMountOption("uring_nice=19", &options).ok());
  EXPECT_EQ(options.uring_nice, 19);
  ASSERT_TRUE(ParseMountOption("uring_nice=-7", &options).ok());
  EXPECT_EQ(options.uring_nice, -7);
  EXPECT_TRUE(options.fuse_options.empty());
  for (const char* bad : {"uring_nice=-21", "uring_nice=20", "uring_nice=", "uring_nice",
                          "uring_nice=-", "uring_nice=--1", "uring_nice=+1", "uring_nice=1x"}) {
    MountOptions unchanged;
    Status s = ParseMountOption(bad, &unchanged);
    EXPECT_EQ(s.err(), EINVAL) << bad;
    EXPECT_NE(s.message().find("uring_nice"), std::string::npos) << bad << ": " << s.message();
    EXPECT_EQ(unchanged.uring_nice, -20) << bad;
  }
}

TEST(MountOptionsTest, MdtNrsIsOnOrOff) {
  MountOptions options;
  EXPECT_TRUE(options.mdt_nrs);
  ASSERT_TRUE(ParseMountOption("mdt_nrs=off", &options).ok());
  EXPECT_FALSE(options.mdt_nrs);
  EXPECT_TRUE(options.fuse_options.empty());
  ASSERT_TRUE(ParseMountOption("mdt_nrs=on", &options).ok());
  EXPECT_TRUE(options.mdt_nrs);
  for (const char* bad : {"mdt_nrs=0", "mdt_nrs", "mdt_nrs=", "mdt_nrs=yes"}) {
    Status s = ParseMountOption(bad, &options);
    EXPECT_EQ(s.err(), EINVAL) << bad;
    EXPECT_TRUE(options.mdt_nrs) << bad;
  }
}

TEST(MountOptionsTest, ExtentCreditsAreOnOrOff) {
  MountOptions options;
  EXPECT_TRUE(options.extent_credits);
  ASSERT_TRUE(ParseMountOption("extent_credits=off", &options).ok());
  EXPECT_FALSE(options.extent_credits);
  EXPECT_TRUE(options.fuse_options.empty());
  for (const char* bad : {"extent_credits=1", "extent_credits", "extent_credits="}) {
    Status s = ParseMountOption(bad, &options);
    EXPECT_EQ(s.err(), EINVAL) << bad;
    EXPECT_FALSE(options.extent_credits) << bad;
  }
  ASSERT_TRUE(ParseMountOption("extent_credits=on", &options).ok());
  EXPECT_TRUE(options.extent_credits);
}

TEST(MountOptionsTest, CacheModes) {
  MountOptions options;
  ASSERT_TRUE(ParseMountOption("cache=writeback", &options).ok());
  EXPECT_TRUE(options.writeback);
  EXPECT_FALSE(options.direct_writes);
  ASSERT_TRUE(ParseMountOption("cache=writethrough", &options).ok());
  EXPECT_FALSE(options.writeback);
  EXPECT_FALSE(options.direct_writes);
  ASSERT_TRUE(ParseMountOption("cache=writearound", &options).ok());
  EXPECT_FALSE(options.writeback);
  EXPECT_TRUE(options.direct_writes);
  EXPECT_EQ(ParseMountOption("cache=direct", &options).err(), EINVAL);
  EXPECT_TRUE(options.direct_writes);
  EXPECT_FALSE(options.writeback);
  EXPECT_TRUE(options.fuse_options.empty());
}

TEST(MountOptionsTest, BoundsAreIncluded) {
  MountOptions options;
  ASSERT_TRUE(ParseMountOption("admin_uid=4294967294,ost_threads=64,attr_timeout=86400,"
                               "ost_timeout=3600",
                               &options)
                  .ok());
  EXPECT_EQ(options.admin_uid, 4294967294u);
  EXPECT_EQ(options.ost_threads, 64);
  EXPECT_EQ(options.attr_timeout, 86400.0);
  EXPECT_EQ(options.ost_timeout, 3600.0);
  ASSERT_TRUE(
      ParseMountOption("admin_uid=0,ost_threads=1,attr_timeout=0,ost_timeout=0.001", &options)
          .ok());
  EXPECT_EQ(options.admin_uid, 0u);
  EXPECT_EQ(options.ost_threads, 1);
  EXPECT_EQ(options.attr_timeout, 0.0);
  EXPECT_EQ(options.ost_timeout, 0.001);
}

TEST(MountOptionsTest, RefusesWhatItCannotUseAndChangesNothing) {
  for (const char* bad : {
           "admin_uid=4295032830",  // wrapped to 65534 (nobody) before
           "admin_uid=4294967295",  // (uid_t)-1
           "admin_uid=65534junk",
           "admin_uid=-1",
           "admin_uid=+5",
           "admin_uid= 5",
           "admin_uid=",
           "admin_uid",
           "admin_uid=0x10",
           "ost_threads=0",
           "ost_threads=65",
           "ost_threads=2.5",
           "ost_threads=99999999999999999999",
           "attr_timeout=nan",
           "attr_timeout=inf",
           "attr_timeout=-1",
           "attr_timeout=86401",
           "attr_timeout=1s",
           "attr_timeout=1e300",
           "ost_timeout=0",
           "ost_timeout=-0",
           "ost_timeout=3601",
           "ost_timeout=nan",
           "ost_timeout=inf",
           "ost_timeout=",
           "max_read=100",
           "max_read=2097152",
           "max_read=",
           "max_read=64k",
           "metrics=localhost:9100",
           "metrics=127.0.0.1",
           "metrics=127.0.0.1:65536",
           "metrics=127.0.0.1:-1",
           "metrics=::1:9100",
           "metrics=[::1]",
           "metrics=",
           "metrics=300.1.1.1:80",
           "cache=none",
           "cache=",
           "cache",
           "cache=Writeback",
           "log_level=verbose",
           "log_level=",
           "log_file=",
           "ro,admin_uid=7,ost_threads=0",  // the good items before it are not applied either
       }) {
    MountOptions options;
    options.admin_uid = 3;
    Status s = ParseMountOption(bad, &options);
    EXPECT_EQ(s.err(), EINVAL) << bad;
    EXPECT_FALSE(s.message().empty()) << bad;
    EXPECT_EQ(options.admin_uid, 3u) << bad;
    EXPECT_EQ(options.ost_threads, 2) << bad;
    EXPECT_EQ(options.attr_timeout, 60.0) << bad;
    EXPECT_EQ(options.ost_timeout, 30.0) << bad;
    EXPECT_EQ(options.log_level, "") << bad;
    EXPECT_EQ(options.log_file, "") << bad;
    EXPECT_TRUE(options.fuse_options.empty()) << bad;
  }
}

TEST(MountOptionsTest, MessageNamesTheItem) {
  MountOptions options;
  Status s = ParseMountOption("ro,admin_uid=65534junk", &options);
  EXPECT_NE(s.message().find("admin_uid=65534junk"), std::string::npos) << s.message();
}

TEST(MountOptionsTest, LaterItemsOverrideEarlierOnes) {
  MountOptions options;
  ASSERT_TRUE(ParseMountOption("admin_uid=5,admin_uid=6", &options).ok());
  ASSERT_TRUE(ParseMountOption("ost_threads=3", &options).ok());
  EXPECT_EQ(options.admin_uid, 6u);
  EXPECT_EQ(options.ost_threads, 3);
}

}  // namespace
}  // namespace sfs::fs
