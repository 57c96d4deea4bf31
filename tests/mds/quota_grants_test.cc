#include "mds/quota_grants.h"

#include <gtest/gtest.h>

namespace sfs::mds {
namespace {

// A reservation that counts its end.
class CountedHold final : public control::QuotaHold {
 public:
  explicit CountedHold(int* ended) : ended_(ended) {}
  ~CountedHold() override { ++*ended_; }

 private:
  int* const ended_;
};

TEST(QuotaGrantBookTest, ASessionFreesOnlyItsOwnGrants) {
  QuotaGrantBook book;
  int ended = 0;
  const uint64_t a = book.Add(1, 1, {1000, 100, 0}, std::make_shared<CountedHold>(&ended));
  const uint64_t b = book.Add(2, 1, {1000, 100, 0}, std::make_shared<CountedHold>(&ended));
  book.Free(2, {a});  // not session 2's
  EXPECT_EQ(ended, 0);
  book.Free(1, {a, 99});
  EXPECT_EQ(ended, 1);
  EXPECT_EQ(book.size(), 1u);
  book.Free(2, {b});
  EXPECT_EQ(ended, 2);
  EXPECT_EQ(book.size(), 0u);
}

TEST(QuotaGrantBookTest, TheGrantsToTakeBackAreOtherSessionsSharingAnId) {
  QuotaGrantBook book;
  const uint64_t user = book.Add(1, 1, {1000, 100, 0}, nullptr);
  const uint64_t group = book.Add(2, 1, {2000, 100, 0}, nullptr);
  const uint64_t project = book.Add(3, 1, {3000, 300, 7}, nullptr);
  book.Add(4, 1, {1000, 100, 0}, nullptr);  // the asker's own: kept
  auto holding = book.Holding(QuotaGrantBook::IdsOf({1000, 100, 0}), /*except=*/4);
  EXPECT_EQ(holding, (std::map<SessionId, std::vector<uint64_t>>{{1, {user}}, {2, {group}}}));
  holding = book.Holding({{QuotaType::kProject, 7}}, 0);
  EXPECT_EQ(holding, (std::map<SessionId, std::vector<uint64_t>>{{3, {project}}}));
  EXPECT_TRUE(book.Holding({{QuotaType::kUser, 5}}, 0).empty());
}

TEST(QuotaGrantBookTest, AStreamsEndFreesWhatWasGrantedUnderIt) {
  QuotaGrantBook book;
  int ended = 0;
  book.Add(1, 1, {1000, 100, 0}, std::make_shared<CountedHold>(&ended));
  book.Add(1, 2, {1000, 100, 0}, std::make_shared<CountedHold>(&ended));
  book.Add(2, 1, {1000, 100, 0}, std::make_shared<CountedHold>(&ended));
  book.StreamEnded(1, 1);  // a newer stream (2) of session 1 is up
  EXPECT_EQ(ended, 1);
  book.StreamEnded(1, 2);
  EXPECT_EQ(ended, 2);
  EXPECT_EQ(book.size(), 1u);
}

}  // namespace
}  // namespace sfs::mds
