#include "mds/squash.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

namespace sfs::mds {
namespace {

std::vector<AddressRange> Ranges(std::initializer_list<const char*> texts) {
  std::vector<AddressRange> ranges;
  for (const char* text : texts) {
    auto range = ParseAddressRange(text);
    EXPECT_TRUE(range.ok()) << text;
    if (range.ok()) ranges.push_back(*range);
  }
  return ranges;
}

TEST(SquashTest, PeersAreMatchedByAddressRange) {
  const auto ranges = Ranges({"127.0.0.0/8", "10.1.2.3", "fd00::/8"});
  EXPECT_TRUE(PeerIn("ipv4:127.0.0.1:5000", ranges));
  EXPECT_TRUE(PeerIn("ipv4:127.200.0.9:1", ranges));
  EXPECT_TRUE(PeerIn("ipv4:10.1.2.3:77", ranges));
  EXPECT_FALSE(PeerIn("ipv4:10.1.2.4:77", ranges));
  EXPECT_TRUE(PeerIn("ipv6:[fd12::1]:5000", ranges));
  EXPECT_TRUE(PeerIn("ipv6:%5Bfd12::1%5D:5000", ranges));
  EXPECT_FALSE(PeerIn("ipv6:[::1]:5000", ranges));
  EXPECT_FALSE(PeerIn("unix:/run/x.sock", ranges));
  EXPECT_FALSE(PeerIn("ipv4:127.0.0.1:5000", {}));
  EXPECT_TRUE(PeerIn("ipv4:192.168.1.1:2", Ranges({"0.0.0.0/0"})));
}

TEST(SquashTest, BadRangesAreRefused) {
  for (const char* bad : {"", "localhost", "127.0.0.1/33", "::1/129", "10.0.0.0/", "10.0.0.0/x",
                          "1.2.3.4.5"}) {
    EXPECT_EQ(ParseAddressRange(bad).err(), EINVAL) << bad;
  }
}

meta::Inode Node(uint32_t mode, uint32_t uid, uint32_t gid) {
  meta::Inode inode;
  inode.ino = 5;
  inode.mode = mode;
  inode.uid = uid;
  inode.gid = gid;
  return inode;
}

TEST(SquashTest, NobodyGetsTheOwnerGroupOrOtherBits) {
  EXPECT_TRUE(MayAccess(Node(S_IFREG | 0600, kSquashedId, 0), R_OK | W_OK, "x").ok());
  EXPECT_EQ(MayAccess(Node(S_IFREG | 0604, 1000, 1000), W_OK, "x").err(), EACCES);
  EXPECT_TRUE(MayAccess(Node(S_IFREG | 0604, 1000, 1000), R_OK, "x").ok());
  // The group's bits for nogroup's files, even when others have more.
  EXPECT_EQ(MayAccess(Node(S_IFREG | 0607, 1000, kSquashedId), R_OK, "x").err(), EACCES);
  EXPECT_TRUE(MayAccess(Node(S_IFDIR | 0711, 0, 0), X_OK, "x").ok());
  EXPECT_EQ(MayAccess(Node(S_IFDIR | 0700, 0, 0), X_OK, "x").err(), EACCES);
}

TEST(SquashTest, RemovalNeedsAWritableDirectoryAndOwnershipWhenSticky) {
  const meta::Inode theirs = Node(S_IFREG | 0644, 1000, 1000);
  const meta::Inode its = Node(S_IFREG | 0644, kSquashedId, kSquashedId);
  EXPECT_EQ(MayRemove(Node(S_IFDIR | 0755, 0, 0), its).err(), EACCES);
  EXPECT_TRUE(MayRemove(Node(S_IFDIR | 0777, 0, 0), theirs).ok());
  EXPECT_EQ(MayRemove(Node(S_IFDIR | 01777, 0, 0), theirs).err(), EPERM);
  EXPECT_TRUE(MayRemove(Node(S_IFDIR | 01777, 0, 0), its).ok());
  EXPECT_TRUE(MayRemove(Node(S_IFDIR | 01700, kSquashedId, 0), theirs).ok());
}

TEST(SquashTest, AttributeChangesFollowOwnership) {
  const meta::Inode theirs = Node(S_IFREG | 0666, 1000, 1000);
  const meta::Inode its = Node(S_IFREG | 0644, kSquashedId, kSquashedId);
  meta::AttrChange chmod;
  chmod.mode = 0600;
  EXPECT_EQ(MaySetAttr(theirs, chmod).err(), EPERM);
  EXPECT_TRUE(MaySetAttr(its, chmod).ok());
  meta::AttrChange chown;
  chown.uid = 0;
  EXPECT_EQ(MaySetAttr(its, chown).err(), EPERM);
  chown.uid = kSquashedId;  // to itself: nothing changes
  EXPECT_TRUE(MaySetAttr(its, chown).ok());
  meta::AttrChange chgrp;
  chgrp.gid = 1000;
  EXPECT_EQ(MaySetAttr(its, chgrp).err(), EPERM);
  meta::AttrChange truncate;
  truncate.size = 0;
  EXPECT_TRUE(MaySetAttr(theirs, truncate).ok());  // 0666: others may write
  EXPECT_EQ(MaySetAttr(Node(S_IFREG | 0644, 1000, 1000), truncate).err(), EACCES);
  meta::AttrChange touch;
  touch.mtime = meta::Timestamp{1, 0};
  EXPECT_TRUE(MaySetAttr(theirs, touch).ok());
  EXPECT_EQ(MaySetAttr(Node(S_IFREG | 0644, 1000, 1000), touch).err(), EACCES);
  meta::AttrChange project;
  project.projid = 7;
  EXPECT_EQ(MaySetAttr(its, project).err(), EPERM);
}

TEST(SquashTest, OnlyUserAttributesAndByPermission) {
  const meta::Inode readable = Node(S_IFREG | 0644, 1000, 1000);
  EXPECT_TRUE(MayUseXattr(readable, "user.k", false).ok());
  EXPECT_EQ(MayUseXattr(readable, "user.k", true).err(), EACCES);
  EXPECT_EQ(MayUseXattr(readable, "trusted.k", false).err(), EPERM);
  EXPECT_TRUE(MayUseXattr(Node(S_IFREG | 0666, 1000, 1000), "user.k", true).ok());
  EXPECT_EQ(MayUseXattr(Node(S_IFDIR | 01777, 1000, 1000), "user.k", true).err(), EPERM);
}

}  // namespace
}  // namespace sfs::mds
