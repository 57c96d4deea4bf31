// nrs::Nrs: routing to the high-priority head and the hp ratio.
#include "nrs/nrs.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/nrs/test_policies.h"
#include "tests/nrs/test_requests.h"

namespace sfs::nrs {
namespace {

using namespace std::chrono_literals;
using testing::At;
using testing::HoldPolicy;
using testing::MakeRequests;
using testing::T0;

// Serves everything, returning "r" for regular and "h" for high-priority.
std::string Drain(Nrs& nrs, TimePoint now) {
  std::string order;
  while (true) {
    Pick pick = nrs.Dequeue(now);
    if (pick.request == nullptr) break;
    order += pick.request->sched.high_priority ? 'h' : 'r';
    nrs.Complete(pick.request, now);
  }
  return order;
}

TEST(NrsTest, DefaultHighPriorityOpsAreSyncTruncateAndPunch) {
  Nrs nrs;
  auto requests = MakeRequests(7);
  const Op ops[] = {Op::kRead,     Op::kWrite, Op::kTruncate, Op::kPunch,
                    Op::kAllocate, Op::kSync,  Op::kDestroy};
  for (size_t i = 0; i < 7; i++) {
    requests[i]->info.op = ops[i];
    nrs.Enqueue(requests[i].get(), T0());
  }
  EXPECT_EQ(nrs.head(Head::kHighPriority).Queued(), 3u);
  EXPECT_EQ(nrs.head(Head::kRegular).Queued(), 4u);
  EXPECT_TRUE(requests[2]->sched.high_priority);
  EXPECT_FALSE(requests[0]->sched.high_priority);
  EXPECT_EQ(Drain(nrs, T0()), "hhhrrrr");
  EXPECT_EQ(nrs.Queued(), 0u);
  EXPECT_EQ(nrs.Active(), 0u);
}

TEST(NrsTest, RatioServesThatManyHighPriorityPerRegular) {
  Nrs nrs;
  nrs.SetHighPriority(OpBit(Op::kSync), 3);
  auto requests = MakeRequests(12);
  for (size_t i = 0; i < 12; i++) {
    requests[i]->info.op = i < 8 ? Op::kSync : Op::kRead;  // 8 high, 4 regular
    nrs.Enqueue(requests[i].get(), T0());
  }
  EXPECT_EQ(Drain(nrs, T0()), "hhhrhhhrhhrr");
}

TEST(NrsTest, HighPriorityGoesOnWhenRegularHasNothingReady) {
  Nrs nrs;
  nrs.SetHighPriority(OpBit(Op::kSync), 1);
  auto requests = MakeRequests(4);
  for (auto& r : requests) {
    r->info.op = Op::kSync;
    nrs.Enqueue(r.get(), T0());
  }
  EXPECT_EQ(Drain(nrs, T0()), "hhhh");
}

TEST(NrsTest, ThrottledHeadDoesNotBlockTheOtherAndUntilIsTheEarliest) {
  Nrs nrs;
  nrs.head(Head::kRegular).StartPrimary(std::make_unique<HoldPolicy>(At(5s)));
  nrs.head(Head::kHighPriority).StartPrimary(std::make_unique<HoldPolicy>(At(2s)));
  auto requests = MakeRequests(2);
  requests[0]->info.op = Op::kWrite;
  requests[1]->info.op = Op::kSync;
  nrs.Enqueue(requests[0].get(), T0());
  nrs.Enqueue(requests[1].get(), T0());
  Pick pick = nrs.Dequeue(T0());
  EXPECT_EQ(pick.request, nullptr);
  EXPECT_EQ(pick.not_before, At(2s));
  pick = nrs.Dequeue(At(2s));
  EXPECT_EQ(pick.request, requests[1].get());
  nrs.Complete(pick.request, At(2s));
  pick = nrs.Dequeue(At(2s));
  EXPECT_EQ(pick.not_before, At(5s));
  EXPECT_EQ(nrs.Dequeue(At(5s)).request, requests[0].get());
}

TEST(NrsTest, OpSetParsesAndPrints) {
  auto ops = ParseOpSet("fsync, punch,truncate");
  ASSERT_TRUE(ops.ok());
  EXPECT_EQ(*ops, kDefaultHpOps);
  EXPECT_EQ(OpSetName(*ops), "truncate,punch,fsync");
  auto none = ParseOpSet("none");
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(*none, 0u);
  EXPECT_EQ(OpSetName(0), "none");
  EXPECT_EQ(ParseOpSet("").err(), EINVAL);
  EXPECT_EQ(ParseOpSet("fsync,flush").err(), EINVAL);
  EXPECT_EQ(ParseOpSet("none,read").err(), EINVAL);
  // Metadata ops, for the metadata service's mdt.nrs_hp_ops.
  auto md = ParseOpSet("unlink rename,getattr");
  ASSERT_TRUE(md.ok());
  EXPECT_EQ(*md, OpBit(Op::kGetattr) | OpBit(Op::kUnlink) | OpBit(Op::kRename));
  EXPECT_EQ(OpSetName(*md), "getattr,unlink,rename");
  EXPECT_NE(ParseOpSet("flush").status().message().find("readlink"), std::string::npos);
  EXPECT_STREQ(HeadName(Head::kRegular), "reg");
  EXPECT_STREQ(HeadName(Head::kHighPriority), "hp");
}

TEST(NrsTest, SeekDistanceAndObjectSwitchesFollowServiceOrder) {
  Scheduler head;
  auto requests = MakeRequests(4);
  // Object 7: 0+4096, then 8192+4096 (gap 4096); object 9; back to object 7
  // at 4096 (distance from 12288 is 8192).
  const uint64_t objects[] = {7, 7, 9, 7};
  const uint64_t offsets[] = {0, 8192, 0, 4096};
  for (size_t i = 0; i < 4; i++) {
    requests[i]->info.op = Op::kRead;
    requests[i]->info.object_id = objects[i];
    requests[i]->info.offset = offsets[i];
    requests[i]->info.length = 4096;
    head.Enqueue(requests[i].get(), T0());
  }
  while (Request* r = head.Dequeue(T0()).request) head.Complete(r, T0());
  HeadStats stats = head.head_stats();
  EXPECT_EQ(stats.dequeued, 4u);
  EXPECT_EQ(stats.seek_bytes, 4096u);  // only same-object moves count as seeks
  EXPECT_EQ(stats.object_switches, 2u);
}

TEST(NrsTest, PerClassStatsCountCompletedRequests) {
  Scheduler head;
  auto requests = MakeRequests(3);
  for (auto& r : requests) {
    r->info.length = 10;
    head.Enqueue(r.get(), T0());
  }
  while (Request* r = head.Dequeue(At(1ms)).request) head.Complete(r, At(3ms));
  auto status = head.Status({});
  ASSERT_EQ(status[0].classes.size(), 1u);
  EXPECT_EQ(status[0].classes[0].name, "all");
  EXPECT_EQ(status[0].classes[0].requests, 3u);
  EXPECT_EQ(status[0].classes[0].bytes, 30u);
  // 1 ms wait, 2 ms service, each within one histogram bucket (< 19 %).
  EXPECT_GE(status[0].classes[0].wait.Percentile(50), 1'000'000u);
  EXPECT_LE(status[0].classes[0].wait.Percentile(50), 1'190'000u);
  EXPECT_GE(status[0].classes[0].service.Percentile(99), 2'000'000u);
  EXPECT_LE(status[0].classes[0].service.Percentile(99), 2'380'000u);
}

}  // namespace
}  // namespace sfs::nrs
