#include "control/ost_df.h"

#include <gtest/gtest.h>
#include <sys/sysmacros.h>

namespace sfs::control {
namespace {

ost::SpaceInfo Disk(uint64_t device, uint64_t blocks, uint64_t free, uint64_t avail,
                    uint64_t block_size = 4096) {
  ost::SpaceInfo info;
  info.device = device;
  info.block_size = block_size;
  info.total_blocks = blocks;
  info.free_blocks = free;
  info.avail_blocks = avail;
  info.total_files = blocks / 4;
  info.free_files = free / 4;
  return info;
}

TEST(SumOncePerFilesystemTest, CountsASharedDiskOnce) {
  const ost::SpaceInfo disk = Disk(makedev(254, 0), 1000, 400, 300);
  const ost::SpaceInfo other = Disk(makedev(0, 38), 10, 8, 8);
  const SpaceTotal total = SumOncePerFilesystem({disk, disk, disk, other});
  EXPECT_EQ(total.filesystems, 2u);
  EXPECT_EQ(total.size, (1000u + 10u) * 4096);
  EXPECT_EQ(total.free, (400u + 8u) * 4096);
  EXPECT_EQ(total.avail, (300u + 8u) * 4096);
  EXPECT_EQ(total.inodes, 250u + 2u);
  EXPECT_EQ(total.ifree, 100u + 2u);
}

TEST(SumOncePerFilesystemTest, UnknownDevicesCountAloneAndMissingSamplesNot) {
  // Memory backends and samples of unknown origin: device 0, each its own.
  const ost::SpaceInfo unknown = Disk(0, 100, 50, 50, 512);
  const SpaceTotal total = SumOncePerFilesystem({unknown, std::nullopt, unknown});
  EXPECT_EQ(total.filesystems, 2u);
  EXPECT_EQ(total.size, 2u * 100 * 512);
  EXPECT_EQ(SumOncePerFilesystem({std::nullopt}).filesystems, 0u);
}

std::vector<OstDf> Three() {
  ost::SpaceInfo ext4 = Disk(makedev(254, 0), 1000, 400, 300);
  ext4.max_object_size = ((1ull << 32) - 1) * 4096;
  return {{0, ext4, 1, "ok", "/data/ost0"},
          {1, Disk(makedev(254, 0), 1000, 400, 300), 2.5, "read-only", "/data/ost 1"},
          {2, std::nullopt, 0, "unresponsive", "/disk2/ost"}};
}

TEST(OstDfTest, FormatsAndParsesBack) {
  const std::string text = FormatOstDf(Three());
  auto rows = ParseOstDf(text);
  ASSERT_TRUE(rows.ok()) << rows.status().ToString() << "\n" << text;
  ASSERT_EQ(rows->size(), 4u);
  const DfRow& first = (*rows)[0];
  EXPECT_EQ(first.name, "ost0");
  EXPECT_EQ(first.index, 0u);
  EXPECT_TRUE(first.has_space);
  EXPECT_EQ(first.size, 1000u * 4096);
  EXPECT_EQ(first.used, 600u * 4096);  // size - free (root's view)
  EXPECT_EQ(first.avail, 300u * 4096);
  EXPECT_EQ(first.inodes, 250u);
  EXPECT_EQ(first.ifree, 100u);
  EXPECT_EQ(first.state, "ok");
  EXPECT_EQ(first.device, "254:0");
  EXPECT_EQ(first.path, "/data/ost0");
  EXPECT_EQ(first.max_object, ((1ull << 32) - 1) * 4096);
  EXPECT_EQ((*rows)[1].max_object, 0u);  // not known: "-"
  EXPECT_DOUBLE_EQ((*rows)[1].weight, 2.5);
  EXPECT_EQ((*rows)[1].path, "/data/ost 1");  // a blank in the path survives
  EXPECT_EQ((*rows)[1].state, "read-only");
  const DfRow& unsampled = (*rows)[2];
  EXPECT_EQ(unsampled.index, 2u);
  EXPECT_FALSE(unsampled.has_space);
  EXPECT_EQ(unsampled.device, "-");
  const DfRow& total = (*rows)[3];
  EXPECT_EQ(total.name, "total");
  EXPECT_TRUE(total.has_space);
  EXPECT_EQ(total.size, 1000u * 4096);  // the shared disk once
  EXPECT_EQ(total.filesystems, 1u);
  EXPECT_EQ(total.osts, 3u);
}

TEST(OstDfTest, RefusesLinesItCannotRead) {
  for (const char* bad : {"bogus size=1\n", "ost1 size=1 used=2\n", "ostx size=- path=/a\n",
                          "ost1 size=12k used=0 avail=0 inodes=0 ifree=0 path=/a\n",
                          "ost1 weight=heavy path=/a\n", "total filesystems=-1\n",
                          "ost1 size path=/a\n"}) {
    auto rows = ParseOstDf(bad);
    ASSERT_FALSE(rows.ok()) << bad;
    EXPECT_EQ(rows.err(), EINVAL) << bad;
  }
  // Fields a newer daemon adds are skipped.
  auto rows = ParseOstDf("ost4 size=- used=- avail=- inodes=- ifree=- color=blue path=/a\n");
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  EXPECT_EQ((*rows)[0].index, 4u);
}

TEST(OstDfTest, TableInKibiBlocksHumanAndInodes) {
  auto rows = ParseOstDf(FormatOstDf(Three()));
  ASSERT_TRUE(rows.ok());
  const std::string blocks = RenderDfTable(*rows, DfUnits::kKibiBlocks);
  // 1000 blocks of 4 KiB = 4000 1K-blocks; used 2400, available 1200:
  // Use% = 2400 / 3600 rounded up, as df does.
  EXPECT_NE(blocks.find("1K-blocks"), std::string::npos) << blocks;
  EXPECT_NE(blocks.find("4000           2400           1200   67%"), std::string::npos)
      << blocks;
  EXPECT_NE(blocks.find("(1 backing filesystem for 3 OSTs)"), std::string::npos) << blocks;
  EXPECT_NE(blocks.find("/data/ost 1"), std::string::npos) << blocks;
  // The unsampled OST shows dashes, not zeros.
  EXPECT_NE(blocks.find("ost2                  -              -              -     -"),
            std::string::npos)
      << blocks;
  const std::string human = RenderDfTable(*rows, DfUnits::kHuman);
  EXPECT_NE(human.find("3.9M"), std::string::npos) << human;  // 4,096,000 bytes
  const std::string inodes = RenderDfTable(*rows, DfUnits::kInodes);
  EXPECT_NE(inodes.find("IFree"), std::string::npos) << inodes;
  EXPECT_NE(inodes.find("250            150            100   60%"), std::string::npos)
      << inodes;
}

TEST(OstDfTest, JsonEscapesAndLeavesUnknownFiguresNull) {
  std::vector<OstDf> osts = Three();
  osts[0].path = "/odd\"dir\\";
  auto rows = ParseOstDf(FormatOstDf(osts));
  ASSERT_TRUE(rows.ok());
  const std::string json = RenderDfJson(*rows);
  EXPECT_NE(json.find(R"("path": "/odd\"dir\\")"), std::string::npos) << json;
  EXPECT_NE(json.find(R"({"ost": 2, "size": null)"), std::string::npos) << json;
  EXPECT_NE(json.find(R"("max_object": 17592186040320, "path": "/odd)"), std::string::npos) << json;
  EXPECT_NE(json.find(R"("max_object": null, "path": "/data/ost 1")"), std::string::npos) << json;
  EXPECT_NE(json.find(R"("weight": 2.5, "state": "read-only")"), std::string::npos) << json;
  EXPECT_NE(json.find(R"("filesystems": 1, "osts": 3})"), std::string::npos) << json;
}

}  // namespace
}  // namespace sfs::control
