#include "fs/dir_cursor.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace sfs::fs {
namespace {

std::string Name(uint64_t i) { return "n" + std::to_string(i); }

// Sends `count` entries after the anchor at `anchor_off`, named by offset.
void SendRange(DirCursor* cursor, uint64_t anchor_off, size_t count) {
  std::vector<std::string> names;
  for (size_t i = 1; i <= count; ++i) names.push_back(Name(anchor_off + i));
  cursor->Sent(anchor_off, anchor_off <= DirCursor::kDotDotOffset ? "" : Name(anchor_off),
               std::move(names));
}

void ExpectAt(const DirCursor& cursor, uint64_t off, const std::string& after, uint64_t skip) {
  DirCursor::Position at = cursor.Find(off);
  EXPECT_EQ(at.after, after) << "offset " << off;
  EXPECT_EQ(at.skip, skip) << "offset " << off;
}

TEST(DirCursorTest, FreshCursorCountsFromTheStart) {
  DirCursor cursor;
  ExpectAt(cursor, DirCursor::kDotDotOffset, "", 0);
  ExpectAt(cursor, 3, "", 1);  // offset 3 is the first entry: resume after it
  ExpectAt(cursor, 1000, "", 998);
}

TEST(DirCursorTest, WindowResumesByNameAnywhereInTheLastBatch) {
  DirCursor cursor;
  SendRange(&cursor, 2, 10);  // offsets 3..12
  for (uint64_t off = 3; off <= 12; ++off) ExpectAt(cursor, off, Name(off), 0);
  SendRange(&cursor, 7, 10);  // the kernel resumed at 7: offsets 8..17
  for (uint64_t off = 7; off <= 17; ++off) ExpectAt(cursor, off, Name(off), 0);
  // Offsets older than the window are counted from the start (no checkpoint
  // yet) or from the window's last name when they lie beyond it.
  ExpectAt(cursor, 5, "", 3);
  ExpectAt(cursor, 20, Name(17), 3);
}

// The batch the kernel lost (a getdents that failed after the reply) is asked
// for again at the same offset: the anchor is still in the window.
TEST(DirCursorTest, AnchorStaysInTheWindow) {
  DirCursor cursor;
  SendRange(&cursor, 2, 5);
  SendRange(&cursor, 7, 5);
  ExpectAt(cursor, 7, Name(7), 0);
  cursor.Sent(12, Name(12), {});  // the end of the directory
  ExpectAt(cursor, 12, Name(12), 0);
}

TEST(DirCursorTest, CheckpointsAreBoundedAndNearby) {
  DirCursor cursor;
  uint64_t off = DirCursor::kDotDotOffset;
  const uint64_t kEntries = 100000;
  while (off < kEntries) {
    SendRange(&cursor, off, 100);
    off += 100;
  }
  EXPECT_LE(cursor.checkpoints(), DirCursor::kMaxCheckpoints);
  EXPECT_GE(cursor.checkpoints(), DirCursor::kMaxCheckpoints / 2);
  const uint64_t stride = cursor.stride();
  EXPECT_GE(stride * DirCursor::kMaxCheckpoints, kEntries);
  EXPECT_LE(stride * DirCursor::kMaxCheckpoints / 4, kEntries);
  // Any earlier offset is found from a checkpoint at most a stride back.
  for (uint64_t target :
       {uint64_t{3}, uint64_t{300}, uint64_t{4097}, uint64_t{50001}, uint64_t{99000}}) {
    DirCursor::Position at = cursor.Find(target);
    EXPECT_LT(at.skip, stride) << target;
    if (target - at.skip > DirCursor::kDotDotOffset) {
      EXPECT_EQ(at.after, Name(target - at.skip)) << target;
    } else {
      EXPECT_EQ(at.after, "") << target;
    }
  }
}

TEST(DirCursorTest, RestartForgetsEverything) {
  DirCursor cursor;
  SendRange(&cursor, 2, 600);
  EXPECT_GT(cursor.checkpoints(), 0u);
  cursor.Restart();
  EXPECT_EQ(cursor.checkpoints(), 0u);
  EXPECT_EQ(cursor.stride(), DirCursor::kFirstStride);
  ExpectAt(cursor, 10, "", 8);
  ExpectAt(cursor, 300, "", 298);
}

// A listing that seeks back and goes on re-sends offsets it sent before,
// possibly with other names (the directory changed): the newest one counts.
TEST(DirCursorTest, ResentOffsetsTakeTheNewName) {
  DirCursor cursor;
  SendRange(&cursor, 2, 300);  // checkpoint at 256
  cursor.Sent(250, "x250", {"x251", "x252", "x253", "x254", "x255", "x256"});
  SendRange(&cursor, 2, 1);  // the window moves away from 256
  ExpectAt(cursor, 256, "x256", 0);
  ExpectAt(cursor, 260, "x256", 4);
}

}  // namespace
}  // namespace sfs::fs
