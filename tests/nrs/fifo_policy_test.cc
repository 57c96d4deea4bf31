#include <gtest/gtest.h>

#include "nrs/policy.h"
#include "tests/nrs/test_requests.h"

namespace sfs::nrs {
namespace {

using testing::MakeRequests;
using testing::T0;

TEST(FifoPolicyTest, NameIsFifo) { EXPECT_EQ(NewFifoPolicy()->Name(), "fifo"); }

TEST(FifoPolicyTest, EmptyDequeueIsEmptyNotUntil) {
  auto fifo = NewFifoPolicy();
  Pick pick = fifo->Dequeue(T0());
  EXPECT_EQ(pick.request, nullptr);
  EXPECT_FALSE(pick.not_before.has_value());
  EXPECT_EQ(fifo->Queued(), 0u);
}

TEST(FifoPolicyTest, ServesManyRequestsInArrivalOrder) {
  constexpr size_t kCount = 10000;
  auto fifo = NewFifoPolicy();
  auto requests = MakeRequests(kCount);
  for (auto& r : requests) ASSERT_TRUE(fifo->Enqueue(r.get(), T0()));
  EXPECT_EQ(fifo->Queued(), kCount);

  for (size_t i = 0; i < kCount; i++) {
    Pick pick = fifo->Dequeue(T0());
    ASSERT_EQ(pick.request, requests[i].get()) << "at position " << i;
    EXPECT_EQ(fifo->Queued(), kCount - i - 1);
  }
  EXPECT_EQ(fifo->Dequeue(T0()).request, nullptr);
}

TEST(FifoPolicyTest, InterleavedEnqueueAndDequeueKeepOrder) {
  auto fifo = NewFifoPolicy();
  auto requests = MakeRequests(6);
  fifo->Enqueue(requests[0].get(), T0());
  fifo->Enqueue(requests[1].get(), T0());
  EXPECT_EQ(fifo->Dequeue(T0()).request, requests[0].get());
  fifo->Enqueue(requests[2].get(), T0());
  EXPECT_EQ(fifo->Dequeue(T0()).request, requests[1].get());
  EXPECT_EQ(fifo->Dequeue(T0()).request, requests[2].get());
  EXPECT_EQ(fifo->Dequeue(T0()).request, nullptr);
  fifo->Enqueue(requests[3].get(), T0());
  EXPECT_EQ(fifo->Dequeue(T0()).request, requests[3].get());
}

}  // namespace
}  // namespace sfs::nrs
