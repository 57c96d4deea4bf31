// The epoch policy (seed 002's coordinated epochs): its policy data and
// reduction, the group choice and its no-starvation bound, one OST's
// serving order, and four simulated OSTs coordinated through the reduction
// as the epoch hub does on a mount. The clock is injected: no threads, no
// sleeps.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "nrs/epoch_data.h"
#include "nrs/epoch_groups.h"
#include "nrs/policy.h"
#include "test_requests.h"

namespace sfs::nrs {
namespace {

using std::chrono::milliseconds;
using testing::T0;

// ---- Policy data and its reduction ----

TEST(EpochGroupsTest, ByteOrderIsLittleEndianWhateverTheMachine) {
  const std::vector<uint8_t> bytes = EncodeEpochGroups(
      EpochGroups{2, 0x0a0b0c0d0e0f1011, 0x4142434445464748,
                  {EpochGroupEntry{0x0102030405060708ull, 0x1112131415161718ull, 0x21222324,
                                   0x31323334}}});
  const std::vector<uint8_t> want = {0x02, 0, 0, 0,                                     // reporters
                                     0x11, 0x10, 0x0f, 0x0e, 0x0d, 0x0c, 0x0b, 0x0a,  // epoch
                                     0x48, 0x47, 0x46, 0x45, 0x44, 0x43, 0x42, 0x41,  // window
                                     0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01,  // key
                                     0x18, 0x17, 0x16, 0x15, 0x14, 0x13, 0x12, 0x11,  // bytes
                                     0x24, 0x23, 0x22, 0x21,                          // requests
                                     0x34, 0x33, 0x32, 0x31};                         // waited
  EXPECT_EQ(bytes, want);
  const EpochGroups back = DecodeEpochGroups(bytes);
  EXPECT_EQ(back.reporters, 2u);
  EXPECT_EQ(back.epoch, 0x0a0b0c0d0e0f1011);
  EXPECT_EQ(back.window, 0x4142434445464748u);
  ASSERT_EQ(back.entries.size(), 1u);
  EXPECT_EQ(back.entries[0].waited_us, 0x31323334u);
}

std::vector<uint8_t> RandomReport(std::mt19937_64& rng, size_t groups, uint64_t key_space) {
  // Tags from a small set, so inputs of the same and of other (epoch,
  // window) meet.
  const Epoch epoch = static_cast<Epoch>(rng() % 3);
  const uint64_t window = rng() % 2 == 0 ? 0 : key_space / 2;
  std::vector<EpochGroupEntry> entries;
  for (size_t i = 0; i < groups; i++) {
    // Large values now and then, so sums saturate.
    const uint64_t bytes = rng() % 8 == 0 ? UINT64_MAX - rng() % 1000 : rng() % (1u << 30);
    const uint32_t requests = rng() % 8 == 0 ? UINT32_MAX - rng() % 10 : rng() % 1000;
    entries.push_back(EpochGroupEntry{rng() % key_space, bytes, requests,
                                      static_cast<uint32_t>(rng())});
  }
  return EncodeEpochGroups(EpochGroups{1, epoch, window, std::move(entries)});
}

TEST(EpochGroupsTest, CombineIsAssociativeAndCommutativeOnRandomInputs) {
  std::mt19937_64 rng(20261123);
  for (int round = 0; round < 300; round++) {
    const size_t groups = round % 2 == 0 ? 20 : 150;  // over kEpochGroupEntries: cut
    const uint64_t key_space = round % 3 == 0 ? 40 : 100000;
    const auto a = RandomReport(rng, groups, key_space);
    const auto b = RandomReport(rng, groups, key_space);
    const auto c = RandomReport(rng, groups, key_space);
    const auto ab_c = CombineEpochGroups(CombineEpochGroups(a, b), c);
    ASSERT_EQ(ab_c, CombineEpochGroups(a, CombineEpochGroups(b, c))) << "round " << round;
    ASSERT_EQ(ab_c, CombineEpochGroups(CombineEpochGroups(c, a), b)) << "round " << round;
    ASSERT_EQ(CombineEpochGroups(a, b), CombineEpochGroups(b, a)) << "round " << round;
    ASSERT_LE(ab_c.size(), kMaxEpochPayload);
    EXPECT_EQ(DecodeEpochGroups(ab_c).reporters, 3u);
    // The envelope's combine dispatches to it.
    EpochEnvelope ea{1, {EpochSection{EpochKind::kEpochGroups, 0, a}}};
    EpochEnvelope eb{1, {EpochSection{EpochKind::kEpochGroups, 0, b}}};
    const EpochEnvelope both =
        DecodeEpochData(CombineEpochData(EncodeEpochData(ea), EncodeEpochData(eb)));
    ASSERT_EQ(both.sections.size(), 1u);
    EXPECT_EQ(both.sections[0].payload, CombineEpochGroups(a, b));
  }
}

TEST(EpochGroupsTest, TheReductionSumsBytesAndRequestsAndKeepsTheLongestWait) {
  std::vector<EpochGroupEntry> one, two;
  for (uint64_t key = 1; key <= kEpochGroupEntries + 10; key++) {
    one.push_back(EpochGroupEntry{key, 100, 1, 50});
    two.push_back(EpochGroupEntry{key + 5, 1000, 2, 20});
  }
  auto report = [](Epoch epoch, uint64_t window, std::vector<EpochGroupEntry> entries) {
    return EncodeEpochGroups(EpochGroups{1, epoch, window, std::move(entries)});
  };
  const EpochGroups both = DecodeEpochGroups(CombineEpochGroups(report(3, 0, one), report(3, 0, two)));
  EXPECT_EQ(both.reporters, 2u);
  EXPECT_EQ(both.epoch, 3);
  ASSERT_EQ(both.entries.size(), kEpochGroupEntries);
  EXPECT_EQ(both.entries.front(), (EpochGroupEntry{1, 100, 1, 50}));
  EXPECT_EQ(both.entries[5], (EpochGroupEntry{6, 1100, 3, 50}));
  EXPECT_EQ(both.entries.back().key, kEpochGroupEntries);  // the first keys from the window
  EXPECT_LE(kEpochGroupsHeaderBytes + kEpochGroupEntries * kEpochGroupEntryBytes, kMaxEpochPayload);
  // From a window at key 50 on, wrapping round: 50, 51, ... then 1, 2, ...
  const EpochGroups windowed =
      DecodeEpochGroups(CombineEpochGroups(report(3, 50, one), report(3, 50, two)));
  ASSERT_EQ(windowed.entries.size(), kEpochGroupEntries);
  EXPECT_EQ(windowed.entries.front().key, 50u);
  EXPECT_EQ(windowed.entries[kEpochGroupEntries + 10 + 5 - 50 + 1].key, 1u);
  // Data of an older epoch is stale: its groups are dropped, its reporter
  // still counts.
  const EpochGroups fresh = DecodeEpochGroups(CombineEpochGroups(report(3, 0, one), report(2, 0, two)));
  EXPECT_EQ(fresh.reporters, 2u);
  EXPECT_EQ(fresh.entries[5], (EpochGroupEntry{6, 100, 1, 50}));
  // Sums saturate instead of wrapping.
  const EpochGroups big = DecodeEpochGroups(report(
      1, 0, {EpochGroupEntry{7, UINT64_MAX - 1, UINT32_MAX - 1, 1}, EpochGroupEntry{7, 5, 5, 2}}));
  ASSERT_EQ(big.entries.size(), 1u);
  EXPECT_EQ(big.entries[0], (EpochGroupEntry{7, UINT64_MAX, UINT32_MAX, 2}));
}

TEST(EpochGroupsTest, TheWindowMovesPastTheLastKeyAfterAFullAgingEpoch) {
  EpochGroups full{4, 8, 0, {}};
  for (uint64_t key = 10; key < 10 + kEpochGroupEntries; key++) {
    full.entries.push_back(EpochGroupEntry{key, 1, 1, 1});
  }
  EXPECT_EQ(NextEpochGroupWindow(full, kEpochAgingPeriod), 10 + kEpochGroupEntries);
  EXPECT_EQ(NextEpochGroupWindow(full, kEpochAgingPeriod + 1), 0u);  // not an aging epoch
  full.entries.pop_back();
  EXPECT_EQ(NextEpochGroupWindow(full, kEpochAgingPeriod), 0u);  // everything fitted
}

TEST(EpochGroupsTest, AnyBytesDecodeWithoutHarm) {
  std::mt19937_64 rng(7);
  for (int round = 0; round < 2000; round++) {
    std::vector<uint8_t> junk(rng() % 140);
    for (auto& byte : junk) byte = static_cast<uint8_t>(rng());
    const EpochGroups groups = DecodeEpochGroups(junk);
    EXPECT_LE(groups.entries.size(), junk.size() / kEpochGroupEntryBytes);
    // Whatever came in, what is kept is in window order, keys unique.
    for (size_t i = 1; i < groups.entries.size(); i++) {
      EXPECT_LT(groups.entries[i - 1].key - groups.window, groups.entries[i].key - groups.window);
    }
    ChooseEpochGroup(groups, round);  // any data gives some choice, never a crash
  }
}

TEST(EpochGroupsTest, GroupKeysAreTheSameOnEveryMachine) {
  // FNV-1a 64 of "j" "job.1" and of "u" + 1000 little endian: fixed values,
  // so a peer on another machine computes the same keys.
  EXPECT_EQ(EpochGroupKeyOfJobid("job.1"), 0xa1a0b9c6a34b391dull);
  EXPECT_EQ(EpochGroupKeyOfUid(1000), 0x2497c1f382e3a999ull);
  EXPECT_NE(EpochGroupKeyOfJobid(""), EpochGroupKeyOfUid(0));
  EXPECT_NE(EpochGroupKeyOfJobid("a"), EpochGroupKeyOfJobid("b"));
}

// ---- The choice ----

TEST(EpochGroupsTest, TheGroupWithTheMostWaitingBytesIsChosenTiesByWaitThenKey) {
  EpochGroups groups{2, 1, 0, {EpochGroupEntry{1, 100, 1, 900}, EpochGroupEntry{2, 300, 3, 10},
                               EpochGroupEntry{3, 300, 1, 20}, EpochGroupEntry{4, 5000, 0, 0}}};
  // Key 4 has bytes but no request (cannot happen from a real OST): skipped.
  EXPECT_EQ(ChooseEpochGroup(groups, 1), 3u);  // 300 bytes each, 3 waited longer
  groups.entries[1].waited_us = 20;
  EXPECT_EQ(ChooseEpochGroup(groups, 1), 2u);  // full tie: the smaller key
  // Aging epochs choose by wait.
  EXPECT_EQ(ChooseEpochGroup(groups, kEpochAgingPeriod), 1u);
  EXPECT_EQ(ChooseEpochGroup(groups, 3 * kEpochAgingPeriod), 1u);
  EXPECT_EQ(ChooseEpochGroup(EpochGroups{}, 1), std::nullopt);
  EXPECT_EQ(ChooseEpochGroup(EpochGroups{1, 1, 0, {EpochGroupEntry{9, 0, 0, 0}}}, 1), std::nullopt);
  // A zero-byte request (fsync) still makes its group choosable.
  EXPECT_EQ(ChooseEpochGroup(EpochGroups{1, 1, 0, {EpochGroupEntry{9, 0, 1, 0}}}, 1), 9u);
}

// ---- One OST ----

std::unique_ptr<Request> Req(const std::string& jobid, uint64_t length, uint64_t id,
                             uint32_t uid = 0) {
  static std::map<std::string, std::shared_ptr<const std::string>> jobids;
  auto& shared = jobids[jobid];
  if (shared == nullptr) shared = std::make_shared<const std::string>(jobid);
  auto r = std::make_unique<Request>();
  r->info.jobid = shared;
  r->info.uid = uid;
  r->info.length = length;
  r->info.object_id = id;
  r->info.arrival = T0();
  return r;
}

std::vector<uint8_t> Reduce(const std::vector<Policy*>& osts, TimePoint now) {
  std::vector<uint8_t> reduced;
  for (size_t i = 0; i < osts.size(); i++) {
    const auto mine = osts[i]->ReportEpoch(now);
    reduced = i == 0 ? mine : CombineEpochGroups(reduced, mine);
  }
  return reduced;
}

TEST(EpochPolicyTest, ArgumentsAndTunables) {
  Tunables tunables;
  EXPECT_TRUE(NewEpochPolicy("", tunables).ok());
  EXPECT_TRUE(NewEpochPolicy("jobid", tunables).ok());
  EXPECT_TRUE(NewEpochPolicy("uid", tunables).ok());
  EXPECT_EQ(NewEpochPolicy("gid", tunables).status().err(), EINVAL);
  tunables.epoch_max = std::chrono::nanoseconds(0);
  EXPECT_EQ(NewEpochPolicy("", tunables).status().err(), EINVAL);

  tunables.epoch_max = milliseconds(30);
  auto policy = std::move(NewEpochPolicy("uid", tunables)).value();
  EXPECT_EQ(policy->Name(), "epoch");
  EXPECT_EQ(policy->EpochDataKind(), EpochKind::kEpochGroups);
  EXPECT_EQ(policy->EpochLength(), milliseconds(30));
  tunables.epoch_max = milliseconds(70);
  policy->Retune(tunables, T0());
  EXPECT_EQ(policy->EpochLength(), milliseconds(70));
  auto r = Req("x", 1, 1, 1234);
  EXPECT_EQ(policy->ClassOf(*r), "uid=1234");
  EXPECT_NE(policy->Describe().find("group=uid"), std::string::npos);
}

TEST(EpochPolicyTest, TheChosenGroupIsServedFirstThenTheOthersInArrivalOrder) {
  auto policy = std::move(NewEpochPolicy("jobid", Tunables{})).value();
  // Nothing chosen and nothing queued: the epoch runs its length.
  EXPECT_FALSE(policy->EpochDone(T0()));
  std::vector<std::unique_ptr<Request>> owned;
  auto add = [&](const std::string& job, uint64_t length, TimePoint at) {
    owned.push_back(Req(job, length, owned.size()));
    policy->Enqueue(owned.back().get(), at);
  };
  add("a", 4096, T0());
  // Something waits and nothing is chosen: ask now, so it can be chosen.
  EXPECT_TRUE(policy->EpochDone(T0()));
  add("b", 1 << 20, T0() + milliseconds(1));
  add("a", 4096, T0() + milliseconds(2));
  add("c", 8192, T0() + milliseconds(3));
  add("b", 1 << 20, T0() + milliseconds(4));
  EXPECT_EQ(policy->Queued(), 5u);

  const TimePoint now = T0() + milliseconds(10);
  const EpochGroups report = DecodeEpochGroups(policy->ReportEpoch(now));
  ASSERT_EQ(report.entries.size(), 3u);
  auto entry_of = [&](const std::string& job) -> EpochGroupEntry {
    for (const EpochGroupEntry& e : report.entries) {
      if (e.key == EpochGroupKeyOfJobid(job)) return e;
    }
    ADD_FAILURE() << "no entry for " << job;
    return {};
  };
  const uint64_t a = EpochGroupKeyOfJobid("a"), b = EpochGroupKeyOfJobid("b");
  const uint64_t c = EpochGroupKeyOfJobid("c");
  EXPECT_EQ(entry_of("a"), (EpochGroupEntry{a, 8192, 2, 10000}));
  EXPECT_EQ(entry_of("b"), (EpochGroupEntry{b, 2 << 20, 2, 9000}));
  EXPECT_EQ(entry_of("c"), (EpochGroupEntry{c, 8192, 1, 7000}));
  policy->StartEpoch(1, policy->ReportEpoch(now), now);  // "b": most bytes
  EXPECT_NE(policy->Describe().find("chosen=jobid=b"), std::string::npos) << policy->Describe();
  EXPECT_FALSE(policy->EpochDone(now));
  std::vector<uint64_t> order;
  for (int i = 0; i < 2; i++) order.push_back(policy->Dequeue(now).request->info.object_id);
  // "b" has nothing left here: the OST is through with this epoch.
  EXPECT_TRUE(policy->EpochDone(now));
  while (Request* r = policy->Dequeue(now).request) order.push_back(r->info.object_id);
  EXPECT_EQ(order, (std::vector<uint64_t>{1, 4, 0, 2, 3}));
  EXPECT_NE(policy->Describe().find("served_chosen=2 order_violations=0 epochs_chosen_first=1"),
            std::string::npos)
      << policy->Describe();
  EXPECT_EQ(policy->Queued(), 0u);
  EXPECT_EQ(policy->Dequeue(now).request, nullptr);
}

TEST(EpochPolicyTest, AGroupChosenElsewhereLetsThisOstServeInArrivalOrder) {
  auto here = std::move(NewEpochPolicy("jobid", Tunables{})).value();
  auto there = std::move(NewEpochPolicy("jobid", Tunables{})).value();
  std::vector<std::unique_ptr<Request>> owned;
  for (int i = 0; i < 3; i++) {
    owned.push_back(Req("big", 1 << 20, 100 + i));
    there->Enqueue(owned.back().get(), T0());
  }
  owned.push_back(Req("small", 4096, 1));
  here->Enqueue(owned.back().get(), T0());
  owned.push_back(Req("small2", 4096, 2));
  here->Enqueue(owned.back().get(), T0());
  const auto reduced = Reduce({here.get(), there.get()}, T0());
  here->StartEpoch(1, reduced, T0());
  there->StartEpoch(1, reduced, T0());
  // "big" is chosen; it has nothing here, so this OST asks for the next
  // epoch at once and meanwhile serves what it has (no idle bandwidth).
  EXPECT_TRUE(here->EpochDone(T0()));
  EXPECT_FALSE(there->EpochDone(T0()));
  EXPECT_NE(here->Describe().find("chosen=elsewhere"), std::string::npos);
  EXPECT_EQ(here->Dequeue(T0()).request->info.object_id, 1u);
  EXPECT_EQ(here->Dequeue(T0()).request->info.object_id, 2u);
  while (there->Dequeue(T0()).request != nullptr) {
  }
}

TEST(EpochServeOrderTest, CountsAnotherGroupServedWhileTheChosenOneWaits) {
  // The policy cannot be made to break its order through its interface,
  // so the counting is shown here: each call is one request served.
  EpochServeOrder order;
  order.Served(false, false);  // before any epoch: nothing chosen
  order.StartEpoch();
  order.Served(true, true);  // the chosen group first
  order.Served(true, true);
  order.Served(false, false);  // then another, the chosen one ran out
  EXPECT_EQ(order.Describe(), "served_chosen=2 order_violations=0 epochs_chosen_first=1");
  order.StartEpoch();
  order.Served(false, true);  // another group while the chosen one waits
  order.Served(true, true);
  order.Served(false, true);
  EXPECT_EQ(order.violations(), 2u);
  EXPECT_EQ(order.epochs_chosen_first(), 1u);  // this epoch did not start with it
  order.StartEpoch();
  order.Served(false, false);  // the chosen group has nothing here: no violation
  EXPECT_EQ(order.Describe(), "served_chosen=3 order_violations=2 epochs_chosen_first=1");
}

// ---- Four OSTs ----

// Four simulated OSTs, each serving one request per step; an epoch ends
// when every OST is through with it (EpochDone) or after `max_steps`, as
// the hub does when every OST has asked.
class EpochSimulation {
 public:
  EpochSimulation(size_t osts, int max_steps) : max_steps_(max_steps) {
    for (size_t i = 0; i < osts; i++) {
      osts_.push_back(std::move(NewEpochPolicy("jobid", Tunables{})).value());
    }
  }
  ~EpochSimulation() {
    for (auto& ost : osts_) {
      while (Request* r = ost->TakeAny()) delete r;
    }
  }

  void Submit(size_t ost, const std::string& job, uint64_t length, uint64_t id) {
    osts_[ost]->Enqueue(Req(job, length, id).release(), now_);
  }

  // One step: ends the epoch if due, then every OST serves one request.
  // Returns the ids served, per OST (UINT64_MAX: idle).
  std::vector<uint64_t> Step() {
    bool all_done = true;
    for (auto& ost : osts_) all_done = all_done && ost->EpochDone(now_);
    if (epoch_ == 0 || all_done || steps_in_epoch_ >= max_steps_) {
      std::vector<Policy*> raw;
      for (auto& ost : osts_) raw.push_back(ost.get());
      const auto reduced = Reduce(raw, now_);
      epoch_++;
      chosen_.push_back(ChooseEpochGroup(DecodeEpochGroups(reduced), epoch_));
      for (auto& ost : osts_) ost->StartEpoch(epoch_, reduced, now_);
      steps_in_epoch_ = 0;
    }
    std::vector<uint64_t> served;
    for (auto& ost : osts_) {
      Request* r = ost->Dequeue(now_).request;
      served.push_back(r != nullptr ? r->info.object_id : UINT64_MAX);
      delete r;
    }
    steps_in_epoch_++;
    now_ += milliseconds(1);
    return served;
  }

  Epoch epoch() const { return epoch_; }
  std::string Describe(size_t ost) const { return osts_[ost]->Describe(); }
  // The group chosen in epoch e is chosen()[e - 1].
  const std::vector<std::optional<uint64_t>>& chosen() const { return chosen_; }
  size_t Queued(size_t ost) const { return osts_[ost]->Queued(); }

 private:
  std::vector<std::unique_ptr<Policy>> osts_;
  int max_steps_;
  int steps_in_epoch_ = 0;
  Epoch epoch_ = 0;
  TimePoint now_ = T0();
  std::vector<std::optional<uint64_t>> chosen_;
};

TEST(EpochPolicyTest, EveryOstServesTheSameJobsStripesAtTheSameTime) {
  // Four jobs each read one 4-stripe block; each OST got the parts in a
  // different order (the submitting threads raced). Under the epoch policy
  // every job's four parts are served in the same step on every OST, so
  // each read completes as soon as its own parts are done.
  EpochSimulation sim(4, 100);
  const std::vector<std::vector<int>> arrival_order = {
      {0, 1, 2, 3}, {3, 2, 1, 0}, {1, 3, 0, 2}, {2, 0, 3, 1}};
  for (size_t ost = 0; ost < 4; ost++) {
    for (int job : arrival_order[ost]) {
      // Job j's parts are slightly bigger than job j+1's, so the choice
      // order is fixed: 0, 1, 2, 3.
      sim.Submit(ost, "job" + std::to_string(job), (1 << 20) - job, job);
    }
  }
  for (int step = 0; step < 4; step++) {
    const std::vector<uint64_t> served = sim.Step();
    EXPECT_EQ(served, std::vector<uint64_t>(4, step)) << "step " << step;
  }
  // One epoch per job: each OST ran out of the chosen group after one part.
  EXPECT_EQ(sim.epoch(), 4);
}

// The number after `name=` in a Describe string; -1 if absent.
int64_t Counter(const std::string& described, const std::string& name) {
  const size_t at = described.find(" " + name + "=");
  if (at == std::string::npos) return -1;
  return std::stoll(described.substr(at + name.size() + 2));
}

TEST(EpochPolicyTest, ARandomWorkloadNeverServesAnotherGroupBeforeTheChosenOne) {
  // Six jobs of random sizes arrive in bursts on random OSTs, about as
  // fast as the OSTs serve, so queues grow and drain; epochs end early or
  // after their length. No OST ever serves another group while the chosen
  // one has a request queued there, and the chosen group is served first
  // in many epochs on every OST.
  std::mt19937_64 rng(31);
  EpochSimulation sim(4, 6);
  uint64_t id = 0;
  for (int step = 0; step < 4000; step++) {
    const int arrivals = static_cast<int>(rng() % 9);
    for (int i = 0; i < arrivals; i++) {
      sim.Submit(rng() % 4, "job" + std::to_string(rng() % 6), 4096 << (rng() % 9), id++);
    }
    sim.Step();
  }
  EXPECT_GT(sim.epoch(), 100);
  for (size_t ost = 0; ost < 4; ost++) {
    const std::string described = sim.Describe(ost);
    EXPECT_EQ(Counter(described, "order_violations"), 0) << described;
    EXPECT_GT(Counter(described, "served_chosen"), 100) << described;
    EXPECT_GT(Counter(described, "epochs_chosen_first"), 50) << described;
  }
}

TEST(EpochPolicyTest, EveryGroupWithDemandIsChosenWithinTheBound) {
  // "heavy" keeps 8 large requests queued on every OST for ever, so it has
  // the most waiting bytes in every epoch and never runs out (each epoch
  // lasts its full 10 steps). Three light jobs each queue one small
  // request on one OST. Choosing by bytes alone would never serve them:
  // heavy always has something queued everywhere, and a light request is
  // served only when its group is chosen. The aging epochs bound their
  // wait: a request with k older requests waiting anywhere is chosen within
  // kEpochAgingPeriod x (k + 1) epochs.
  EpochSimulation sim(4, 10);
  uint64_t next_heavy = 1000;
  auto refill = [&] {
    for (size_t ost = 0; ost < 4; ost++) {
      while (sim.Queued(ost) < 8) {
        sim.Submit(ost, "heavy", 1 << 20, next_heavy++);
      }
    }
  };
  refill();
  const std::vector<std::string> light = {"light1", "light2", "light3"};
  std::map<uint64_t, Epoch> served_in;
  for (int step = 0; step < 600; step++) {
    if (step == 5 || step == 6 || step == 7) {
      const int i = step - 5;
      sim.Submit(static_cast<size_t>(i), light[i], 4096, i + 1);
    }
    for (uint64_t id : sim.Step()) {
      if (id >= 1 && id <= 3 && served_in.count(id) == 0) served_in[id] = sim.epoch();
    }
    refill();
  }
  ASSERT_EQ(served_in.size(), 3u) << "a light job starved";
  // At step 5 heavy's oldest requests (queued at steps 0..4) are older, but
  // they are served within one epoch; after that each light request is
  // among the 3 oldest anywhere: k <= 2.
  const Epoch arrived = 1;
  for (const auto& [id, epoch] : served_in) {
    EXPECT_LE(epoch - arrived, kEpochAgingPeriod * 3 + 1) << "light" << id;
  }
  // And the other epochs still went to the group with the most bytes.
  const uint64_t heavy = EpochGroupKeyOfJobid("heavy");
  for (size_t e = 1; e <= sim.chosen().size(); e++) {
    if (static_cast<Epoch>(e) % kEpochAgingPeriod != 0) {
      EXPECT_EQ(sim.chosen()[e - 1], heavy) << "epoch " << e;
    }
  }
}

TEST(EpochPolicyTest, MoreGroupsThanTheDataHoldsAreAllChosenInTurn) {
  // 200 light jobs, each reading one 4-stripe block at a time (a part on
  // every OST) and the next one as soon as it is done, and the never-ending
  // heavy job: more groups than the 84 an epoch's data holds. Cut by key
  // alone, the jobs beyond the 84 smallest keys would never be in the data,
  // never chosen; the chosen ones have a part on every OST, so no OST would
  // serve the others' parts as filler: they would starve. The window moves
  // on after each full aging epoch, so each job is in the data once every
  // ceil(201 / 84) = 3 aging epochs.
  constexpr int kLight = 200;
  EpochSimulation sim(4, 10);
  uint64_t next_heavy = 1'000'000;
  auto refill = [&] {
    for (size_t ost = 0; ost < 4; ost++) {
      while (sim.Queued(ost) < 8 + kLight) sim.Submit(ost, "heavy", 1 << 20, next_heavy++);
    }
  };
  // Part p of job j's block is request id j * 4 + p + 1 (ids below 1000).
  std::vector<int> parts_left(kLight, 0);
  auto read_block = [&](int job) {
    parts_left[job] = 4;
    for (size_t ost = 0; ost < 4; ost++) {
      sim.Submit(ost, "l" + std::to_string(job), 4096, static_cast<uint64_t>(job) * 4 + ost + 1);
    }
  };
  for (int job = 0; job < kLight; job++) read_block(job);
  refill();
  std::map<int, Epoch> first_block_done;
  for (int step = 0; step < 60000 && first_block_done.size() < kLight; step++) {
    for (uint64_t id : sim.Step()) {
      if (id == 0 || id > 4 * kLight) continue;
      const int job = static_cast<int>((id - 1) / 4);
      if (--parts_left[job] == 0) {
        first_block_done.emplace(job, sim.epoch());
        read_block(job);
      }
    }
    refill();
  }
  ASSERT_EQ(first_block_done.size(), static_cast<size_t>(kLight)) << "light jobs starved";
  // The bound of epoch_groups.h: k <= kLight - 1 older requests.
  const Epoch bound = kEpochAgingPeriod * 3 * kLight;
  for (const auto& [job, epoch] : first_block_done) EXPECT_LE(epoch, bound) << "l" << job;
}

}  // namespace
}  // namespace sfs::nrs
