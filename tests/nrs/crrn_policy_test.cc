#include <gtest/gtest.h>

#include <cerrno>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "nrs/policy.h"
#include "tests/nrs/test_requests.h"

namespace sfs::nrs {
namespace {

using testing::T0;

std::unique_ptr<Policy> MakeCrrn(std::string_view args, uint32_t quantum) {
  Tunables tunables;
  tunables.crrn_quantum = quantum;
  auto policy = NewCrrnPolicy(args, tunables);
  EXPECT_TRUE(policy.ok()) << policy.status().message();
  return std::move(policy).value();
}

// Owns the requests of one test; each is labelled by its client so an order
// reads "A A B B".
class CrrnPolicyTest : public ::testing::Test {
 protected:
  Request* Job(const std::string& jobid, uint32_t uid = 0) {
    auto r = std::make_unique<Request>();
    r->info.jobid = std::make_shared<const std::string>(jobid);  // a new pointer each time
    r->info.uid = uid;
    r->info.object_id = requests_.size();
    requests_.push_back(std::move(r));
    return requests_.back().get();
  }

  void Add(Policy& policy, const std::string& jobid, int count) {
    for (int i = 0; i < count; i++) ASSERT_TRUE(policy.Enqueue(Job(jobid), T0()));
  }

  // Dequeues `count` requests (all when count < 0) and returns their job ids.
  static std::vector<std::string> Take(Policy& policy, int count = -1) {
    std::vector<std::string> order;
    while (count < 0 || static_cast<int>(order.size()) < count) {
      Pick pick = policy.Dequeue(T0());
      if (pick.request == nullptr) {
        EXPECT_FALSE(pick.not_before.has_value()) << "CRR-N never throttles";
        break;
      }
      order.push_back(*pick.request->info.jobid);
    }
    return order;
  }

  static std::vector<std::string> Words(const std::string& text) {
    std::vector<std::string> words;
    size_t pos = 0;
    while (pos < text.size()) {
      size_t end = text.find(' ', pos);
      if (end == std::string::npos) end = text.size();
      if (end > pos) words.push_back(text.substr(pos, end - pos));
      pos = end + 1;
    }
    return words;
  }

  std::vector<std::unique_ptr<Request>> requests_;
};

TEST_F(CrrnPolicyTest, FactoryArguments) {
  Tunables tunables;
  for (const char* args : {"", "jobid", "uid"}) {
    auto policy = NewCrrnPolicy(args, tunables);
    ASSERT_TRUE(policy.ok()) << "'" << args << "': " << policy.status().message();
    EXPECT_EQ((*policy)->Name(), "crrn");
  }
  for (const char* args : {"gid", "nid", "jobid uid", "UID", "opcode"}) {
    auto policy = NewCrrnPolicy(args, tunables);
    ASSERT_FALSE(policy.ok()) << "'" << args << "'";
    EXPECT_EQ(policy.err(), EINVAL);
    EXPECT_NE(policy.status().message().find(args), std::string::npos) << policy.status().message();
  }
}

TEST_F(CrrnPolicyTest, ZeroQuantumIsEinval) {
  Tunables tunables;
  tunables.crrn_quantum = 0;
  auto policy = NewCrrnPolicy("", tunables);
  ASSERT_FALSE(policy.ok());
  EXPECT_EQ(policy.err(), EINVAL);
}

TEST_F(CrrnPolicyTest, EmptyDequeueIsEmpty) {
  auto crrn = MakeCrrn("", 8);
  Pick pick = crrn->Dequeue(T0());
  EXPECT_EQ(pick.request, nullptr);
  EXPECT_FALSE(pick.not_before.has_value());
  EXPECT_EQ(crrn->Queued(), 0u);
}

TEST_F(CrrnPolicyTest, QuantumOneAlternatesBetweenClients) {
  auto crrn = MakeCrrn("", 1);
  Add(*crrn, "A", 3);
  Add(*crrn, "B", 3);
  EXPECT_EQ(crrn->Queued(), 6u);
  EXPECT_EQ(Take(*crrn), (std::vector<std::string>{"A", "B", "A", "B", "A", "B"}));
  EXPECT_EQ(crrn->Queued(), 0u);
}

TEST_F(CrrnPolicyTest, ServesBatchesOfQuantum) {
  auto crrn = MakeCrrn("", 2);
  Add(*crrn, "A", 5);
  Add(*crrn, "B", 4);
  Add(*crrn, "C", 4);
  EXPECT_EQ(Take(*crrn), (std::vector<std::string>{"A", "A", "B", "B", "C", "C", "A", "A", "B", "B",
                                                   "C", "C", "A"}));
}

TEST_F(CrrnPolicyTest, InterleavedArrivalsGiveTheSameBatches) {
  auto crrn = MakeCrrn("", 2);
  for (int i = 0; i < 4; i++) {
    for (const char* c : {"C", "A", "B"}) Add(*crrn, c, 1);
  }
  EXPECT_EQ(Take(*crrn),
            (std::vector<std::string>{"C", "C", "A", "A", "B", "B", "C", "C", "A", "A", "B", "B"}));
}

TEST_F(CrrnPolicyTest, RequestsOfOneClientKeepArrivalOrder) {
  auto crrn = MakeCrrn("", 3);
  std::vector<Request*> a;
  for (int i = 0; i < 7; i++) {
    a.push_back(Job("A"));
    crrn->Enqueue(a.back(), T0());
    crrn->Enqueue(Job("B"), T0());
  }
  std::vector<Request*> served;
  while (Request* r = crrn->Dequeue(T0()).request) {
    if (*r->info.jobid == "A") served.push_back(r);
  }
  EXPECT_EQ(served, a);
}

TEST_F(CrrnPolicyTest, NewClientJoinsTheCurrentRound) {
  auto crrn = MakeCrrn("", 2);
  Add(*crrn, "A", 6);
  Add(*crrn, "B", 6);
  // Round 0 (A A B B) and the first request of round 1.
  EXPECT_EQ(Take(*crrn, 5), (std::vector<std::string>{"A", "A", "B", "B", "A"}));
  // C joins round 1 behind the batches already in it, not round 0 and not
  // behind all of A's and B's rounds.
  Add(*crrn, "C", 3);
  EXPECT_EQ(Take(*crrn),
            (std::vector<std::string>{"A", "B", "B", "C", "C", "A", "A", "B", "B", "C"}));
}

TEST_F(CrrnPolicyTest, IdleClientBanksNoCredit) {
  auto crrn = MakeCrrn("", 2);
  Add(*crrn, "A", 2);
  Add(*crrn, "B", 2);
  EXPECT_EQ(Take(*crrn), (std::vector<std::string>{"A", "A", "B", "B"}));
  // B keeps working for three rounds while A is idle.
  Add(*crrn, "B", 6);
  EXPECT_EQ(Take(*crrn, 2), (std::vector<std::string>{"B", "B"}));
  // A returns: it shares the rounds from now on instead of catching up.
  Add(*crrn, "A", 6);
  EXPECT_EQ(Take(*crrn),
            (std::vector<std::string>{"B", "B", "A", "A", "B", "B", "A", "A", "A", "A"}));
}

TEST_F(CrrnPolicyTest, ClientReturningMidRoundContinuesItsBatchNotAFreshOne) {
  auto crrn = MakeCrrn("", 3);
  Add(*crrn, "A", 1);
  EXPECT_EQ(Take(*crrn), (std::vector<std::string>{"A"}));
  Add(*crrn, "B", 4);
  Add(*crrn, "A", 4);
  // A has 2 of its 3 left in round 0 (its batch came first), then B's 3;
  // round 1: B's fourth (its batch opened first), then A's last 2.
  EXPECT_EQ(Take(*crrn), (std::vector<std::string>{"A", "A", "B", "B", "B", "B", "A", "A"}));
}

TEST_F(CrrnPolicyTest, ReArrivingClientsCannotStarveABackloggedOne) {
  // A is backlogged; B and C send one request at a time, each re-arriving
  // as soon as its previous one is served (synchronous clients).
  auto crrn = MakeCrrn("", 8);
  Add(*crrn, "A", 100);
  Add(*crrn, "B", 1);
  Add(*crrn, "C", 1);
  std::map<std::string, int> served;
  for (int i = 0; i < 300; i++) {
    Pick pick = crrn->Dequeue(T0());
    ASSERT_NE(pick.request, nullptr);
    const std::string who = *pick.request->info.jobid;
    served[who]++;
    if (who != "A") Add(*crrn, who, 1);
  }
  // Round robin with quantum 8: A gets about a third.
  EXPECT_GE(served["A"], 90);
  EXPECT_LE(served["A"], 110);
}

TEST_F(CrrnPolicyTest, JobidClientsCompareByValue) {
  auto crrn = MakeCrrn("jobid", 1);
  // Each Job() has its own string object; equal text is one client.
  Add(*crrn, "dd.1000", 2);
  Add(*crrn, "cp.1000", 2);
  EXPECT_EQ(Take(*crrn), (std::vector<std::string>{"dd.1000", "cp.1000", "dd.1000", "cp.1000"}));
}

TEST_F(CrrnPolicyTest, NullJobidIsTheEmptyJobid) {
  auto crrn = MakeCrrn("", 1);
  Request* null_jobid = Job("");
  null_jobid->info.jobid = nullptr;
  Request* empty_jobid = Job("");
  Request* other = Job("x");
  crrn->Enqueue(null_jobid, T0());
  crrn->Enqueue(empty_jobid, T0());
  crrn->Enqueue(other, T0());
  EXPECT_EQ(crrn->ClassOf(*null_jobid), "jobid=");
  EXPECT_EQ(crrn->ClassOf(*empty_jobid), "jobid=");
  // One client with two requests: the other client comes in between.
  EXPECT_EQ(crrn->Dequeue(T0()).request, null_jobid);
  EXPECT_EQ(crrn->Dequeue(T0()).request, other);
  EXPECT_EQ(crrn->Dequeue(T0()).request, empty_jobid);
}

TEST_F(CrrnPolicyTest, UidOrJobidDecidesTheClient) {
  // One job run by two users.
  std::vector<Request*> requests;
  for (uint32_t uid : {1000, 1000, 2000, 2000}) requests.push_back(Job("job", uid));

  auto by_uid = MakeCrrn("uid", 1);
  for (Request* r : requests) by_uid->Enqueue(r, T0());
  std::vector<uint32_t> uids;
  while (Request* r = by_uid->Dequeue(T0()).request) uids.push_back(r->info.uid);
  EXPECT_EQ(uids, (std::vector<uint32_t>{1000, 2000, 1000, 2000}));
  EXPECT_EQ(by_uid->ClassOf(*requests[2]), "uid=2000");

  auto by_jobid = MakeCrrn("jobid", 1);
  for (Request* r : requests) by_jobid->Enqueue(r, T0());
  uids.clear();
  while (Request* r = by_jobid->Dequeue(T0()).request) uids.push_back(r->info.uid);
  EXPECT_EQ(uids, (std::vector<uint32_t>{1000, 1000, 2000, 2000}));  // one client: arrival order
  EXPECT_EQ(by_jobid->ClassOf(*requests[2]), "jobid=job");
}

TEST_F(CrrnPolicyTest, RetunedQuantumSizesLaterBatches) {
  auto crrn = MakeCrrn("", 1);
  Add(*crrn, "A", 2);
  Add(*crrn, "B", 2);
  Tunables tunables;
  tunables.crrn_quantum = 3;
  crrn->Retune(tunables, T0());
  Add(*crrn, "A", 4);
  Add(*crrn, "B", 4);
  EXPECT_EQ(Take(*crrn),
            (std::vector<std::string>{"A", "B", "A", "B", "A", "A", "A", "B", "B", "B", "A", "B"}));
  EXPECT_EQ(Words(crrn->Describe())[0], "quantum=3");
}

TEST_F(CrrnPolicyTest, RetuneKeepsTheOpenBatchAllowance) {
  auto crrn = MakeCrrn("", 4);
  Add(*crrn, "A", 2);  // A's batch may take 2 more
  Tunables tunables;
  tunables.crrn_quantum = 1;
  crrn->Retune(tunables, T0());
  Add(*crrn, "B", 2);
  Add(*crrn, "A", 3);
  // A's open batch still takes two; B's second and A's third batch are
  // opened with quantum 1, B's first.
  EXPECT_EQ(Take(*crrn), (std::vector<std::string>{"A", "A", "A", "A", "B", "B", "A"}));
}

TEST_F(CrrnPolicyTest, DescribeCountsClientsWithQueuedRequests) {
  auto crrn = MakeCrrn("uid", 8);
  EXPECT_EQ(crrn->Describe(), "quantum=8 client=uid clients=0");
  crrn->Enqueue(Job("x", 1), T0());
  crrn->Enqueue(Job("x", 2), T0());
  crrn->Enqueue(Job("x", 2), T0());
  EXPECT_EQ(crrn->Describe(), "quantum=8 client=uid clients=2");
  crrn->Dequeue(T0());
  EXPECT_EQ(crrn->Describe(), "quantum=8 client=uid clients=1");
  Take(*crrn);
  EXPECT_EQ(crrn->Describe(), "quantum=8 client=uid clients=0");
  EXPECT_EQ(MakeCrrn("", 8)->Describe(), "quantum=8 client=jobid clients=0");
}

// Many clients, random arrivals and departures: every request comes back
// exactly once, each client's requests in arrival order, and while every
// client is backlogged no client gets more than `quantum` requests ahead of
// another.
TEST_F(CrrnPolicyTest, ManyClientsEveryRequestOnce) {
  constexpr int kClients = 10000;
  constexpr int kRequests = 100000;
  auto crrn = MakeCrrn("", 4);
  std::mt19937 random(42);
  std::uniform_int_distribution<int> client(0, kClients - 1);
  std::map<std::string, std::vector<Request*>> sent;
  std::map<std::string, size_t> next;  // per client: index of the next expected request
  size_t served = 0;
  auto check = [&](Request* r) {
    const std::string& id = *r->info.jobid;
    ASSERT_LT(next[id], sent[id].size()) << id;
    ASSERT_EQ(r, sent[id][next[id]]) << id;
    next[id]++;
    served++;
  };
  for (int i = 0; i < kRequests; i++) {
    const std::string id = "job" + std::to_string(client(random));
    Request* r = Job(id);
    sent[id].push_back(r);
    ASSERT_TRUE(crrn->Enqueue(r, T0()));
    if (random() % 3 == 0) {
      Request* out = crrn->Dequeue(T0()).request;
      ASSERT_NE(out, nullptr);
      check(out);
    }
  }
  EXPECT_EQ(crrn->Queued(), kRequests - served);
  while (Request* r = crrn->Dequeue(T0()).request) check(r);
  EXPECT_EQ(served, static_cast<size_t>(kRequests));
  EXPECT_EQ(crrn->Queued(), 0u);
  EXPECT_EQ(Words(crrn->Describe()).back(), "clients=0");
}

// More idle clients than the policy keeps records for: the sweep must not
// disturb clients that still have requests queued.
TEST_F(CrrnPolicyTest, IdleRecordSweepKeepsBusyClients) {
  constexpr int kClients = 40000;
  auto crrn = MakeCrrn("uid", 1);  // the second requests wait a round, through the sweeps
  for (int pass = 0; pass < 2; pass++) {
    for (int c = 0; c < kClients; c++) ASSERT_TRUE(crrn->Enqueue(Job("j", c), T0()));
    for (int c = 0; c < 5; c++) ASSERT_TRUE(crrn->Enqueue(Job("j", c), T0()));
    std::map<uint32_t, int> count;
    while (Request* r = crrn->Dequeue(T0()).request) count[r->info.uid]++;
    ASSERT_EQ(count.size(), static_cast<size_t>(kClients));
    for (const auto& [uid, n] : count) ASSERT_EQ(n, uid < 5 ? 2 : 1) << uid;
    EXPECT_EQ(crrn->Describe(), "quantum=1 client=uid clients=0");
  }
}

TEST_F(CrrnPolicyTest, BackloggedClientsShareEvenly) {
  constexpr int kClients = 50;
  constexpr uint32_t kQuantum = 3;
  auto crrn = MakeCrrn("", kQuantum);
  for (int round = 0; round < 20; round++) {
    for (int c = 0; c < kClients; c++) Add(*crrn, "c" + std::to_string(c), 1);
  }
  std::map<std::string, int> count;
  std::vector<std::string> order = Take(*crrn, kClients * 10 * kQuantum / 2);
  for (const std::string& id : order) count[id]++;
  ASSERT_EQ(count.size(), static_cast<size_t>(kClients));
  for (const auto& [id, n] : count) EXPECT_EQ(n, 15) << id;
}

}  // namespace
}  // namespace sfs::nrs
