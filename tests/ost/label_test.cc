#include "ost/label.h"

#include <gtest/gtest.h>

#include <fstream>
#include <regex>

#include "tests/ost/test_util.h"

namespace sfs::ost {
namespace {

using testing::TempDir;

void WriteRaw(const std::string& dir, const std::string& text) {
  std::ofstream(dir + "/" + kLabelFile) << text;
}

TEST(LabelTest, RoundTrip) {
  TempDir dir;
  Label label{NewUuid(), 7, NewUuid()};
  Status s = WriteLabel(dir.path(), label);
  ASSERT_TRUE(s.ok()) << s.ToString();
  auto read = ReadLabel(dir.path());
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ(read->fs_uuid, label.fs_uuid);
  EXPECT_EQ(read->index, 7u);
  EXPECT_EQ(read->ost_uuid, label.ost_uuid);

  // Rewriting replaces it whole.
  label.index = 8;
  ASSERT_TRUE(WriteLabel(dir.path(), label).ok());
  EXPECT_EQ(ReadLabel(dir.path())->index, 8u);
}

TEST(LabelTest, MissingIsEnoent) {
  TempDir dir;
  EXPECT_EQ(ReadLabel(dir.path()).err(), ENOENT);
  EXPECT_EQ(ReadLabel(dir.path() + "/nope").err(), ENOENT);
}

TEST(LabelTest, MalformedIsEinval) {
  TempDir dir;
  const char* bad[] = {
      "",
      "garbage\n",
      "fs_uuid=a\nindex=1\n",                        // no ost_uuid
      "fs_uuid=a\nindex=x1\nost_uuid=b\n",           // index not a number
      "fs_uuid=a\nindex=1\nost_uuid=b",              // cut short
      "fs_uuid=a\nindex=1\nost_uuid=b\nindex=2\n",   // twice
      "fs_uuid=a\nindex=99999999999\nost_uuid=b\n",  // overflows
  };
  for (const char* text : bad) {
    WriteRaw(dir.path(), text);
    EXPECT_EQ(ReadLabel(dir.path()).err(), EINVAL) << "label text: " << text;
  }
  WriteRaw(dir.path(), "fs_uuid=a\nindex=3\nost_uuid=b\nfuture=1\n");
  EXPECT_TRUE(ReadLabel(dir.path()).ok());
}

TEST(LabelTest, ParseAndFormatArePure) {
  const Label label{"f-1", 12, "o-2"};
  EXPECT_EQ(FormatLabel(label), "fs_uuid=f-1\nindex=12\nost_uuid=o-2\n");
  auto parsed = ParseLabel(FormatLabel(label));
  ASSERT_TRUE(parsed.ok()) << parsed.status().message();
  EXPECT_EQ(parsed->fs_uuid, "f-1");
  EXPECT_EQ(parsed->index, 12u);
  EXPECT_EQ(parsed->ost_uuid, "o-2");
  EXPECT_EQ(ParseLabel(std::string(5000, 'x')).err(), EINVAL);
  EXPECT_NE(ParseLabel("index=1\n").status().message().find("missing a key"), std::string::npos);
}

TEST(LabelTest, RefusesUuidsThatWouldNotReadBack) {
  TempDir dir;
  EXPECT_EQ(WriteLabel(dir.path(), Label{"a\nb", 0, "c"}).err(), EINVAL);
  EXPECT_EQ(WriteLabel(dir.path(), Label{"a", 0, ""}).err(), EINVAL);
}

TEST(LabelTest, UuidsAreRandomV4) {
  std::string a = NewUuid(), b = NewUuid();
  EXPECT_NE(a, b);
  std::regex shape("[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}");
  EXPECT_TRUE(std::regex_match(a, shape)) << a;
  EXPECT_TRUE(std::regex_match(b, shape)) << b;
}

}  // namespace
}  // namespace sfs::ost
