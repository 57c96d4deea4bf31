// The pieces of a read replied from pipes (fs/io.h PipedReadParts) and the
// pool of those pipes (fs/pipe_pool.h).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "fs/io.h"
#include "fs/pipe_pool.h"

namespace sfs::fs {
namespace {

// Byte `i` of a file whose bytes are their own offsets, mod 251.
char FileByte(uint64_t i) { return static_cast<char>(i % 251); }

// Plays the read through: each part's pipe (here a string) gets its object
// bytes in object order, as the OST would splice them; the reply takes
// pieces from the pipes in the order PipedReadParts gave. The result must
// be the file's bytes [offset, offset+length).
void ChecksReplyOrder(uint64_t stripe_size, uint32_t stripes, uint64_t offset, uint64_t length) {
  layout::Layout layout;
  layout.stripe_size = stripe_size;
  std::vector<std::shared_ptr<ost::ObjectHandle>> handles;
  for (uint32_t i = 0; i < stripes; ++i) {
    layout.objects.push_back(layout::StripeObject{i, 100 + i});
    handles.push_back(std::make_shared<ost::ObjectHandle>(nullptr, 100 + i));
  }
  Target target{&layout, &handles, 7};
  std::vector<ReplyPiece> pieces;
  auto parts = PipedReadParts(target, offset, length, nrs::RequestInfo{}, nullptr, &pieces);
  std::vector<std::string> pipes;
  for (const auto& part : parts) {
    EXPECT_EQ(part->info.op, nrs::Op::kRead);
    EXPECT_TRUE(part->iov.empty());
    // The object bytes [info.offset, +length) of stripe `tag`, as file bytes.
    std::string bytes;
    const uint32_t stripe = static_cast<uint32_t>(part->tag);
    for (uint64_t o = part->info.offset; o < part->info.offset + part->info.length; ++o) {
      const uint64_t row = o / stripe_size;
      const uint64_t file_offset = (row * stripes + stripe) * stripe_size + o % stripe_size;
      bytes.push_back(FileByte(file_offset));
    }
    pipes.push_back(bytes);
  }
  std::string reply;
  std::vector<size_t> taken(pipes.size(), 0);
  for (const ReplyPiece& piece : pieces) {
    ASSERT_LT(piece.part, pipes.size());
    reply += pipes[piece.part].substr(taken[piece.part], piece.length);
    taken[piece.part] += piece.length;
  }
  for (size_t i = 0; i < pipes.size(); ++i) EXPECT_EQ(taken[i], pipes[i].size()) << i;
  std::string expected;
  for (uint64_t i = offset; i < offset + length; ++i) expected.push_back(FileByte(i));
  EXPECT_EQ(reply, expected);
}

TEST(PipedReadPartsTest, OnePieceWithinAStripe) {
  ChecksReplyOrder(1 << 20, 4, 4096, 512 << 10);
}

TEST(PipedReadPartsTest, PiecesInFileOrderAcrossStripes) {
  ChecksReplyOrder(1 << 20, 4, (1 << 20) - 4096, 512 << 10);
}

TEST(PipedReadPartsTest, AReadThatWrapsTheStripeSetTakesEachPipeInTurn) {
  // 64 KiB stripes over 3 objects: a 500 KiB read from an odd offset wraps
  // the set more than twice, so each pipe holds several pieces.
  ChecksReplyOrder(64 << 10, 3, 12345, 500 << 10);
}

TEST(PipePoolTest, TakesGivesBackAndReusesEmptyPipes) {
  PipePool pool(1 << 20, /*keep=*/2, /*max_pipes=*/8);
  EXPECT_EQ(pool.made_capacity(), 0u);  // nothing made yet
  std::unique_ptr<Pipe> pipe = pool.Take();
  ASSERT_NE(pipe, nullptr);
  EXPECT_GE(pipe->capacity(), 65536u);
  EXPECT_EQ(pool.made_capacity(), pipe->capacity());
  EXPECT_TRUE(pipe->Empty());
  const int fd = pipe->read_fd();
  pool.Give(std::move(pipe));
  std::unique_ptr<Pipe> again = pool.Take();
  ASSERT_NE(again, nullptr);
  EXPECT_EQ(again->read_fd(), fd);  // the pooled one
}

TEST(PipePoolTest, APipeWithBytesLeftIsClosedNotPooled) {
  PipePool pool(1 << 20, /*keep=*/2, /*max_pipes=*/8);
  std::unique_ptr<Pipe> pipe = pool.Take();
  ASSERT_NE(pipe, nullptr);
  ASSERT_EQ(write(pipe->write_fd(), "left", 4), 4);
  EXPECT_FALSE(pipe->Empty());
  const int fd = pipe->read_fd();
  pool.Give(std::move(pipe));
  EXPECT_EQ(fcntl(fd, F_GETFD), -1);  // closed
  std::unique_ptr<Pipe> fresh = pool.Take();
  ASSERT_NE(fresh, nullptr);
  EXPECT_TRUE(fresh->Empty());
}

TEST(PipePoolTest, KeepsAtMostKeepIdlePipes) {
  PipePool pool(65536, /*keep=*/1, /*max_pipes=*/8);
  std::unique_ptr<Pipe> a = pool.Take();
  std::unique_ptr<Pipe> b = pool.Take();
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  const int b_fd = b->read_fd();
  pool.Give(std::move(a));
  pool.Give(std::move(b));  // no room: closed
  EXPECT_EQ(fcntl(b_fd, F_GETFD), -1);
}

TEST(PipePoolTest, NoMoreThanMaxPipesExistAtOnce) {
  PipePool pool(65536, /*keep=*/4, /*max_pipes=*/2);
  std::unique_ptr<Pipe> a = pool.Take();
  std::unique_ptr<Pipe> b = pool.Take();
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(pool.Take(), nullptr);  // the caller copies instead
  ASSERT_EQ(write(a->write_fd(), "x", 1), 1);
  pool.Give(std::move(a));  // not empty: closed, which frees a place
  std::unique_ptr<Pipe> c = pool.Take();
  EXPECT_NE(c, nullptr);
  pool.Give(std::move(b));  // idle now, still counted
  std::unique_ptr<Pipe> d = pool.Take();  // the idle one
  EXPECT_NE(d, nullptr);
  EXPECT_EQ(pool.Take(), nullptr);
}

}  // namespace
}  // namespace sfs::fs
