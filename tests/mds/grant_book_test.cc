#include "mds/grant_book.h"

#include <gtest/gtest.h>

namespace sfs::mds {
namespace {

// A reservation that counts its end.
struct CountedHold {
  explicit CountedHold(int* ended) : ended(ended) {}
  ~CountedHold() { ++*ended; }
  int* const ended;
};

const std::vector<GrantBook::Key> kUser1000 = GrantBook::KeysOf({1000, 100, 0});

TEST(GrantBookTest, ASessionFreesOnlyItsOwnGrants) {
  GrantBook book;
  int ended = 0;
  const uint64_t a = book.Add(1, 1, kUser1000, std::make_shared<CountedHold>(&ended));
  const uint64_t b = book.Add(2, 1, kUser1000, std::make_shared<CountedHold>(&ended));
  book.Free(2, {a});  // not session 2's
  EXPECT_EQ(ended, 0);
  book.Free(1, {a, 99});
  EXPECT_EQ(ended, 1);
  EXPECT_EQ(book.size(), 1u);
  book.Free(2, {b});
  EXPECT_EQ(ended, 2);
  EXPECT_EQ(book.size(), 0u);
}

TEST(GrantBookTest, TheGrantsToTakeBackAreThoseDrawingOnWhatWasShort) {
  GrantBook book;
  const uint64_t user = book.Add(1, 1, kUser1000, nullptr);
  const uint64_t group = book.Add(2, 1, GrantBook::KeysOf({2000, 100, 0}), nullptr);
  const uint64_t project = book.Add(3, 1, GrantBook::KeysOf({3000, 300, 7}), nullptr);
  const uint64_t own = book.Add(4, 1, kUser1000, nullptr);
  const uint64_t room = book.Add(4, 1, {GrantBook::RoomKey(3)}, nullptr);
  auto holding = book.Holding(kUser1000, /*except=*/4);
  EXPECT_EQ(holding, (std::map<SessionId, std::vector<uint64_t>>{{1, {user}}, {2, {group}}}));
  holding = book.Holding(kUser1000, /*except=*/0);  // the asker's own too
  EXPECT_EQ(holding,
            (std::map<SessionId, std::vector<uint64_t>>{{1, {user}}, {2, {group}}, {4, {own}}}));
  holding = book.Holding({GrantBook::QuotaKey({QuotaType::kProject, 7})}, 0);
  EXPECT_EQ(holding, (std::map<SessionId, std::vector<uint64_t>>{{3, {project}}}));
  holding = book.Holding({GrantBook::RoomKey(3)}, 0);
  EXPECT_EQ(holding, (std::map<SessionId, std::vector<uint64_t>>{{4, {room}}}));
  // Ids of different kinds never meet: OST 1000 is not uid 1000.
  EXPECT_TRUE(book.Holding({GrantBook::RoomKey(1000)}, 0).empty());
  EXPECT_TRUE(book.Holding({GrantBook::QuotaKey({QuotaType::kUser, 5})}, 0).empty());
}

TEST(GrantBookTest, AStreamsEndFreesWhatWasGrantedUnderIt) {
  GrantBook book;
  int ended = 0;
  book.Add(1, 1, kUser1000, std::make_shared<CountedHold>(&ended));
  book.Add(1, 2, kUser1000, std::make_shared<CountedHold>(&ended));
  book.Add(2, 1, kUser1000, std::make_shared<CountedHold>(&ended));
  book.StreamEnded(1, 1);  // a newer stream (2) of session 1 is up
  EXPECT_EQ(ended, 1);
  book.StreamEnded(1, 2);
  EXPECT_EQ(ended, 2);
  EXPECT_EQ(book.size(), 1u);
}

}  // namespace
}  // namespace sfs::mds
