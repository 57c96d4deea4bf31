#include <gtest/gtest.h>

#include <cerrno>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "nrs/policy.h"
#include "tests/nrs/test_requests.h"

namespace sfs::nrs {
namespace {

using testing::T0;

Tunables OrrTunables(uint32_t quantum, OrrSupported supported = OrrSupported::kReads,
                     uint64_t quantum_bytes = 0) {
  Tunables tunables;
  tunables.orr_quantum = quantum;
  tunables.orr_supported = supported;
  tunables.orr_quantum_bytes = quantum_bytes;
  return tunables;
}

Tunables OrrBytes(uint32_t quantum, uint64_t quantum_bytes) {
  return OrrTunables(quantum, OrrSupported::kReads, quantum_bytes);
}

std::unique_ptr<Policy> MakeOrr(uint32_t quantum, OrrSupported supported = OrrSupported::kReads) {
  auto policy = NewOrrPolicy("", OrrTunables(quantum, supported));
  EXPECT_TRUE(policy.ok()) << policy.status().message();
  return std::move(policy).value();
}

// An object and offset, as a test reads a served order: {7, 300} is the
// request at offset 300 of object 7.
using Io = std::pair<uint64_t, uint64_t>;

class OrrPolicyTest : public ::testing::Test {
 protected:
  Request* New(uint64_t object, uint64_t offset, uint64_t length = 4096, Op op = Op::kRead,
               uint32_t ost = 0) {
    auto r = std::make_unique<Request>();
    r->info.op = op;
    r->info.ost = ost;
    r->info.object_id = object;
    r->info.offset = offset;
    r->info.length = length;
    requests_.push_back(std::move(r));
    return requests_.back().get();
  }

  Request* Read(Policy& policy, uint64_t object, uint64_t offset, uint64_t length = 4096) {
    Request* r = New(object, offset, length);
    EXPECT_TRUE(policy.Enqueue(r, T0()));
    return r;
  }

  static std::vector<Io> Take(Policy& policy, int count = -1) {
    std::vector<Io> order;
    while (count < 0 || static_cast<int>(order.size()) < count) {
      Pick pick = policy.Dequeue(T0());
      if (pick.request == nullptr) {
        EXPECT_FALSE(pick.not_before.has_value()) << "ORR never throttles";
        break;
      }
      order.emplace_back(pick.request->info.object_id, pick.request->info.offset);
    }
    return order;
  }

  std::vector<std::unique_ptr<Request>> requests_;
};

TEST_F(OrrPolicyTest, FactoryArgumentsAndTunables) {
  auto policy = NewOrrPolicy("", Tunables());
  ASSERT_TRUE(policy.ok()) << policy.status().message();
  EXPECT_EQ((*policy)->Name(), "orr");
  EXPECT_EQ((*policy)->Describe(), "quantum=256 supported=reads objects=0");

  for (const char* args : {"physical", "reads", "uid"}) {
    auto bad = NewOrrPolicy(args, Tunables());
    ASSERT_FALSE(bad.ok()) << args;
    EXPECT_EQ(bad.err(), EINVAL);
  }
  auto zero = NewOrrPolicy("", OrrTunables(0));
  ASSERT_FALSE(zero.ok());
  EXPECT_EQ(zero.err(), EINVAL);
}

TEST_F(OrrPolicyTest, SortsByOffsetWithinABatch) {
  auto orr = MakeOrr(8);
  for (uint64_t offset : {300, 100, 500, 200, 400}) Read(*orr, 1, offset);
  EXPECT_EQ(Take(*orr), (std::vector<Io>{{1, 100}, {1, 200}, {1, 300}, {1, 400}, {1, 500}}));
}

TEST_F(OrrPolicyTest, EqualOffsetsServeTheShorterExtentFirst) {
  auto orr = MakeOrr(8);
  Request* long_one = Read(*orr, 1, 0, 8192);
  Request* short_one = Read(*orr, 1, 0, 4096);
  Request* short_two = Read(*orr, 1, 0, 4096);  // same extent: arrival order
  EXPECT_EQ(orr->Dequeue(T0()).request, short_one);
  EXPECT_EQ(orr->Dequeue(T0()).request, short_two);
  EXPECT_EQ(orr->Dequeue(T0()).request, long_one);
}

TEST_F(OrrPolicyTest, RoundRobinBetweenObjectsInBatchesOfQuantum) {
  auto orr = MakeOrr(2);
  for (uint64_t offset : {5, 4, 3, 2, 1}) Read(*orr, 7, offset);
  for (uint64_t offset : {50, 40, 30, 20}) Read(*orr, 9, offset);
  // Each batch is the next `quantum` arrivals of an object, sorted.
  EXPECT_EQ(Take(*orr),
            (std::vector<Io>{
                {7, 4}, {7, 5}, {9, 40}, {9, 50}, {7, 2}, {7, 3}, {9, 20}, {9, 30}, {7, 1}}));
}

TEST_F(OrrPolicyTest, ObjectIsOstAndObjectId) {
  auto orr = MakeOrr(1);
  Request* a1 = New(0x1f, 0, 4096, Op::kRead, 0);
  Request* a2 = New(0x1f, 4096, 4096, Op::kRead, 0);
  Request* b1 = New(0x1f, 0, 4096, Op::kRead, 3);
  Request* b2 = New(0x1f, 4096, 4096, Op::kRead, 3);
  for (Request* r : {a1, a2, b1, b2}) ASSERT_TRUE(orr->Enqueue(r, T0()));
  EXPECT_EQ(orr->Describe(), "quantum=1 supported=reads objects=2");
  EXPECT_EQ(orr->ClassOf(*a1), "object=0:0x1f");
  EXPECT_EQ(orr->ClassOf(*b2), "object=3:0x1f");
  EXPECT_EQ(orr->Dequeue(T0()).request, a1);
  EXPECT_EQ(orr->Dequeue(T0()).request, b1);
  EXPECT_EQ(orr->Dequeue(T0()).request, a2);
  EXPECT_EQ(orr->Dequeue(T0()).request, b2);
  EXPECT_EQ(orr->Describe(), "quantum=1 supported=reads objects=0");
}

// Seed 000 section 4: a request at a high offset must not wait for ever
// behind a stream of later arrivals at lower offsets on the same object.
TEST_F(OrrPolicyTest, ReArrivingObjectsCannotStarveABackloggedOne) {
  auto orr = MakeOrr(8);
  for (uint64_t i = 0; i < 100; i++) Read(*orr, 1, i * 4096);
  Read(*orr, 2, 0);
  Read(*orr, 3, 0);
  int backlogged = 0;
  for (int i = 0; i < 300; i++) {
    Pick pick = orr->Dequeue(T0());
    ASSERT_NE(pick.request, nullptr);
    const uint64_t object = pick.request->info.object_id;
    if (object == 1) {
      backlogged++;
    } else {
      Read(*orr, object, (i + 1) * 4096);  // a synchronous reader: next one at once
    }
  }
  EXPECT_GE(backlogged, 90);
}

TEST_F(OrrPolicyTest, LowerOffsetStreamCannotStarveAnEarlierRequest) {
  constexpr uint32_t kQuantum = 4;
  constexpr int kStream = 1000;
  auto served_at = [this](uint32_t quantum) {
    auto orr = MakeOrr(quantum);
    Request* high = Read(*orr, 1, uint64_t{1} << 40);
    int position = 0;
    for (int i = 0; i < kStream; i++) {
      Read(*orr, 1, kStream - i);  // each lower than anything before it
      if (orr->Dequeue(T0()).request == high) return position;
      position++;
    }
    while (orr->Dequeue(T0()).request != high) position++;
    return position;
  };
  // Only the requests sorted into its own batch can pass it.
  EXPECT_LT(served_at(kQuantum), static_cast<int>(kQuantum));
  // Without the bound it waits for the whole stream.
  EXPECT_EQ(served_at(1u << 30), kStream);
}

TEST_F(OrrPolicyTest, QuantumIncreaseTakesEffectAtOnce) {
  auto orr = MakeOrr(2);
  Read(*orr, 7, 30);
  Read(*orr, 7, 40);  // the batch is full at quantum 2
  Read(*orr, 9, 0);
  orr->Retune(OrrTunables(4), T0());
  Read(*orr, 7, 10);  // the open batch grows to 4
  Read(*orr, 7, 20);
  Read(*orr, 7, 5);  // the fifth opens the next round
  EXPECT_EQ(Take(*orr), (std::vector<Io>{{7, 10}, {7, 20}, {7, 30}, {7, 40}, {9, 0}, {7, 5}}));
  EXPECT_EQ(orr->Describe(), "quantum=4 supported=reads objects=0");
}

TEST_F(OrrPolicyTest, QuantumDecreaseKeepsSortedBatches) {
  auto orr = MakeOrr(4);
  for (uint64_t offset : {400, 300, 200}) Read(*orr, 7, offset);
  Read(*orr, 9, 0);
  orr->Retune(OrrTunables(2), T0());
  Read(*orr, 7, 100);  // 7 already sorted 3 >= 2: next round
  Read(*orr, 9, 50);   // 9 sorted 1 < 2: its batch takes one more
  Read(*orr, 9, 25);   // now full: next round
  EXPECT_EQ(Take(*orr),
            (std::vector<Io>{{7, 200}, {7, 300}, {7, 400}, {9, 0}, {9, 50}, {7, 100}, {9, 25}}));
}

// Seed 000 5.b.a: the quantum "in either I/O size or number of requests";
// a batch closes at whichever it reaches first.
TEST_F(OrrPolicyTest, ByteQuantumClosesABatchBeforeTheRequestQuantum) {
  auto orr = NewOrrPolicy("", OrrBytes(100, 16 << 10)).value();
  EXPECT_EQ(orr->Describe(), "quantum=100 quantum_bytes=16384 supported=reads objects=0");
  for (uint64_t offset : {50, 40, 30, 20, 10}) Read(*orr, 7, offset << 10, 8 << 10);
  Read(*orr, 9, 0, 8 << 10);
  // 16 KiB = two 8 KiB requests per batch, sorted within it.
  EXPECT_EQ(Take(*orr), (std::vector<Io>{{7, 40 << 10},
                                         {7, 50 << 10},
                                         {9, 0},
                                         {7, 20 << 10},
                                         {7, 30 << 10},
                                         {7, 10 << 10}}));
}

// A request count alone (16) lets object 1's eight 64 KiB requests make
// one 512 KiB batch, served before any of object 2's 4 KiB requests; with a
// byte quantum of 64 KiB each round serves 64 KiB of each object.
TEST_F(OrrPolicyTest, ByteQuantumEvensBytesBetweenObjectsOfDifferentRequestSizes) {
  // The bytes of each object served until object 1 is done.
  auto served_until_one_is_done = [this](uint64_t quantum_bytes) {
    auto orr = NewOrrPolicy("", OrrBytes(16, quantum_bytes)).value();
    for (uint64_t i = 0; i < 8; i++) Read(*orr, 1, i << 16, 64 << 10);
    for (uint64_t i = 0; i < 128; i++) Read(*orr, 2, i << 12, 4 << 10);
    std::map<uint64_t, uint64_t> served;
    while (served[1] < (8u << 16)) {
      Request* r = orr->Dequeue(T0()).request;
      EXPECT_NE(r, nullptr);
      if (r == nullptr) break;
      served[r->info.object_id] += r->info.length;
    }
    return std::make_pair(served[1], served[2]);
  };
  EXPECT_EQ(served_until_one_is_done(0), std::make_pair(uint64_t{512} << 10, uint64_t{0}));
  // Object 1 finishes in the eighth round, after object 2's seventh batch.
  EXPECT_EQ(served_until_one_is_done(64 << 10),
            std::make_pair(uint64_t{512} << 10, uint64_t{448} << 10));
}

TEST_F(OrrPolicyTest, RequestQuantumClosesABatchBeforeTheByteQuantum) {
  auto orr = NewOrrPolicy("", OrrBytes(2, 1 << 20)).value();
  for (uint64_t offset : {5, 4, 3}) Read(*orr, 7, offset << 12);
  Read(*orr, 9, 0);
  EXPECT_EQ(Take(*orr), (std::vector<Io>{{7, 4 << 12}, {7, 5 << 12}, {9, 0}, {7, 3 << 12}}));
}

TEST_F(OrrPolicyTest, RequestLargerThanTheByteQuantumIsABatchOfItsOwn) {
  auto orr = NewOrrPolicy("", OrrBytes(100, 4096)).value();
  Read(*orr, 7, 1 << 20, 1 << 20);  // 1 MiB against 4 KiB: still served
  Read(*orr, 7, 0, 4096);           // would pass it: opens the next batch
  Read(*orr, 9, 0, 1 << 20);
  EXPECT_EQ(Take(*orr), (std::vector<Io>{{7, 1 << 20}, {9, 0}, {7, 0}}));
}

// The byte quantum follows the request quantum's rule (seed 000 5.b.a): an
// increase lets the open batch grow at once, a decrease closes it.
TEST_F(OrrPolicyTest, ByteQuantumIncreaseAtOnceDecreaseClosesTheOpenBatch) {
  auto orr = NewOrrPolicy("", OrrBytes(100, 8192)).value();
  Read(*orr, 7, 30 << 12);
  Read(*orr, 7, 40 << 12);  // 8 KiB: full
  Read(*orr, 9, 0);
  orr->Retune(OrrBytes(100, 16384), T0());
  Read(*orr, 7, 10 << 12);  // grows to 16 KiB
  Read(*orr, 7, 20 << 12);
  Read(*orr, 7, 5 << 12);  // past 16 KiB: next round
  orr->Retune(OrrBytes(100, 4096), T0());
  Read(*orr, 9, 50 << 12);  // 9 holds 4 KiB already: full at the new quantum
  EXPECT_EQ(orr->Describe(), "quantum=100 quantum_bytes=4096 supported=reads objects=2");
  EXPECT_EQ(Take(*orr), (std::vector<Io>{{7, 10 << 12},
                                         {7, 20 << 12},
                                         {7, 30 << 12},
                                         {7, 40 << 12},
                                         {9, 0},
                                         {7, 5 << 12},
                                         {9, 50 << 12}}));
  // Back to 0: batches bounded by requests alone again.
  orr->Retune(OrrBytes(100, 0), T0());
  for (uint64_t offset : {3, 2, 1}) Read(*orr, 7, offset << 20, 1 << 20);
  EXPECT_EQ(Take(*orr), (std::vector<Io>{{7, 1 << 20}, {7, 2 << 20}, {7, 3 << 20}}));
  EXPECT_EQ(orr->Describe(), "quantum=100 supported=reads objects=0");
}

TEST_F(OrrPolicyTest, SupportedOperations) {
  const Op kOthers[] = {Op::kTruncate, Op::kPunch, Op::kAllocate, Op::kSync, Op::kDestroy};
  struct Case {
    OrrSupported supported;
    bool reads;
    bool writes;
  };
  for (const Case& c :
       {Case{OrrSupported::kReads, true, false}, Case{OrrSupported::kWrites, false, true},
        Case{OrrSupported::kReadsAndWrites, true, true}}) {
    SCOPED_TRACE(OrrSupportedName(c.supported));
    auto orr = MakeOrr(8, c.supported);
    EXPECT_EQ(orr->Enqueue(New(1, 0, 4096, Op::kRead), T0()), c.reads);
    EXPECT_EQ(orr->Enqueue(New(1, 0, 4096, Op::kWrite), T0()), c.writes);
    for (Op op : kOthers) {
      Request* r = New(1, 0, 0, op);
      EXPECT_FALSE(orr->Enqueue(r, T0())) << OpName(op);
      EXPECT_EQ(r->policy_data, nullptr) << "a refused request is left untouched";
    }
    EXPECT_EQ(orr->Queued(), static_cast<size_t>(c.reads) + static_cast<size_t>(c.writes));
    EXPECT_EQ(orr->Describe(), "quantum=8 supported=" + std::string(OrrSupportedName(c.supported)) +
                                   " objects=" + std::to_string(orr->Queued() > 0 ? 1 : 0));
  }
}

TEST_F(OrrPolicyTest, ReadsAndWritesShareTheObjectBatch) {
  auto orr = MakeOrr(8, OrrSupported::kReadsAndWrites);
  ASSERT_TRUE(orr->Enqueue(New(1, 300, 4096, Op::kWrite), T0()));
  ASSERT_TRUE(orr->Enqueue(New(1, 100, 4096, Op::kRead), T0()));
  ASSERT_TRUE(orr->Enqueue(New(1, 200, 4096, Op::kWrite), T0()));
  EXPECT_EQ(Take(*orr), (std::vector<Io>{{1, 100}, {1, 200}, {1, 300}}));
}

TEST_F(OrrPolicyTest, RetunedSupportAppliesToLaterArrivals) {
  auto orr = MakeOrr(8, OrrSupported::kReads);
  Request* read = Read(*orr, 1, 0);
  orr->Retune(OrrTunables(8, OrrSupported::kWrites), T0());
  EXPECT_FALSE(orr->Enqueue(New(1, 0, 4096, Op::kRead), T0()));
  EXPECT_TRUE(orr->Enqueue(New(1, 8192, 4096, Op::kWrite), T0()));
  EXPECT_EQ(orr->Dequeue(T0()).request, read);  // kept, and still served
  EXPECT_EQ(orr->Queued(), 1u);
}

// Random objects, offsets, lengths and ops, dequeues interleaved with
// arrivals and quantum changes: every request comes back exactly once.
TEST_F(OrrPolicyTest, RandomLoadDeliversEveryRequestOnce) {
  constexpr int kRequests = 50000;
  auto orr = MakeOrr(4, OrrSupported::kReadsAndWrites);
  std::mt19937_64 random(20240607);
  std::uniform_int_distribution<uint64_t> object(0, 199);
  std::uniform_int_distribution<uint64_t> offset(0, 1 << 20);
  std::uniform_int_distribution<uint64_t> length(1, 1 << 16);
  std::set<Request*> held;
  size_t served = 0;
  auto take = [&] {
    Request* r = orr->Dequeue(T0()).request;
    ASSERT_NE(r, nullptr);
    ASSERT_EQ(held.erase(r), 1u) << "served twice or never queued";
    served++;
  };
  for (int i = 0; i < kRequests; i++) {
    Request* r = New(object(random), offset(random), length(random),
                     random() % 2 ? Op::kRead : Op::kWrite, static_cast<uint32_t>(random() % 2));
    ASSERT_TRUE(orr->Enqueue(r, T0()));
    held.insert(r);
    if (random() % 2 == 0) take();
    if (i % 5000 == 4999) {
      const uint64_t bytes = random() % 2 ? 0 : random() % (1 << 18);
      orr->Retune(OrrTunables(1 + random() % 8, OrrSupported::kReadsAndWrites, bytes), T0());
    }
  }
  EXPECT_EQ(orr->Queued(), held.size());
  while (!held.empty()) take();
  EXPECT_EQ(served, static_cast<size_t>(kRequests));
  EXPECT_EQ(orr->Dequeue(T0()).request, nullptr);
  EXPECT_EQ(orr->Queued(), 0u);
}

TEST_F(OrrPolicyTest, IdleRecordSweepKeepsBusyObjects) {
  constexpr int kObjects = 40000;
  auto orr = MakeOrr(1);  // the second reads wait a round, through the sweeps
  for (int pass = 0; pass < 2; pass++) {
    for (int o = 0; o < kObjects; o++) Read(*orr, o, 0);
    for (int o = 0; o < 5; o++) Read(*orr, o, 4096);
    std::map<uint64_t, int> count;
    while (Request* r = orr->Dequeue(T0()).request) count[r->info.object_id]++;
    ASSERT_EQ(count.size(), static_cast<size_t>(kObjects));
    for (const auto& [id, n] : count) ASSERT_EQ(n, id < 5 ? 2 : 1) << id;
    EXPECT_EQ(orr->Describe(), "quantum=1 supported=reads objects=0");
  }
}

}  // namespace
}  // namespace sfs::nrs
