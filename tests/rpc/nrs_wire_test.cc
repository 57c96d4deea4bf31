// The NRS's values cross the wire (rpc/nrs_wire.h) unchanged, and what no
// mount sends is refused.
#include "rpc/nrs_wire.h"

#include <gtest/gtest.h>

#include "nrs/crrn_weights.h"
#include "nrs/tbf_rules.h"

namespace sfs::rpc {
namespace {

TEST(NrsWireTest, SettingsRoundTripEveryField) {
  nrs::TargetSettings in;
  in.specs = {"tbf uid", "orr"};
  for (size_t head = 0; head < 2; head++) {
    nrs::Tunables& t = in.tunables[head];
    t.crrn_quantum = 3 + head;
    t.crrn_weights = *nrs::CrrnWeights::Empty()->Apply("start heavy uid={5} weight=4");
    t.orr_quantum = 17;
    t.orr_quantum_bytes = 1 << 20;
    t.orr_supported = nrs::OrrSupported::kReadsAndWrites;
    t.tbf_default_rate = 1234;
    t.tbf_rules = *nrs::TbfRuleSet::Empty()->Apply("start r1 uid={1000} rate=50 bps=1000000");
    t.tbf_idle_class_limit = 99;
    t.tbf_scope = nrs::TbfScope::kOst;
    t.epoch_max = std::chrono::milliseconds(70);
    t.delay_pct = 42;
    t.delay_min = std::chrono::milliseconds(3);
    t.delay_max = std::chrono::milliseconds(9);
    t.random_seed = 77;
  }
  in.hp_ops = nrs::OpBit(nrs::Op::kSync);
  in.hp_ratio = 4;
  in.epoch_length = std::chrono::milliseconds(25);
  in.eh_timeout = std::chrono::seconds(3);

  NrsSettings wire;
  ASSERT_TRUE(wire.ParseFromString(ToWire(in).SerializeAsString()));
  auto out = FromWire(wire);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(out->specs, in.specs);
  for (size_t head = 0; head < 2; head++) {
    const nrs::Tunables& a = in.tunables[head];
    const nrs::Tunables& b = out->tunables[head];
    EXPECT_EQ(b.crrn_quantum, a.crrn_quantum);
    EXPECT_EQ(b.crrn_weights->Serialize(), a.crrn_weights->Serialize());
    EXPECT_EQ(b.orr_quantum, a.orr_quantum);
    EXPECT_EQ(b.orr_quantum_bytes, a.orr_quantum_bytes);
    EXPECT_EQ(b.orr_supported, a.orr_supported);
    EXPECT_EQ(b.tbf_default_rate, a.tbf_default_rate);
    EXPECT_EQ(b.tbf_rules->Serialize(), a.tbf_rules->Serialize());
    EXPECT_EQ(b.tbf_idle_class_limit, a.tbf_idle_class_limit);
    EXPECT_EQ(b.tbf_scope, a.tbf_scope);
    EXPECT_EQ(b.epoch_max, a.epoch_max);
    EXPECT_EQ(b.delay_pct, a.delay_pct);
    EXPECT_EQ(b.delay_min, a.delay_min);
    EXPECT_EQ(b.delay_max, a.delay_max);
    EXPECT_EQ(b.random_seed, a.random_seed);
  }
  EXPECT_EQ(out->hp_ops, in.hp_ops);
  EXPECT_EQ(out->hp_ratio, in.hp_ratio);
  EXPECT_EQ(out->epoch_length, in.epoch_length);
  EXPECT_EQ(out->eh_timeout, in.eh_timeout);
}

TEST(NrsWireTest, WhatNoMountSendsIsRefused) {
  nrs::TargetSettings good;
  for (nrs::Tunables& t : good.tunables) {
    t.crrn_weights = nrs::CrrnWeights::Empty();
    t.tbf_rules = nrs::TbfRuleSet::Empty();
  }
  ASSERT_TRUE(FromWire(ToWire(good)).ok());
  NrsSettings one_head = ToWire(good);
  one_head.mutable_specs()->RemoveLast();
  EXPECT_EQ(FromWire(one_head).err(), EINVAL);
  NrsSettings bad_rules = ToWire(good);
  bad_rules.mutable_tunables(0)->set_tbf_rules("start x nonsense=1");
  EXPECT_EQ(FromWire(bad_rules).err(), EINVAL);
  NrsSettings bad_scope = ToWire(good);
  bad_scope.mutable_tunables(1)->set_tbf_scope(7);
  EXPECT_EQ(FromWire(bad_scope).err(), EINVAL);
  NrsSettings no_epoch = ToWire(good);
  no_epoch.set_epoch_length_ns(0);
  EXPECT_EQ(FromWire(no_epoch).err(), EINVAL);
}

TEST(NrsWireTest, StatusRoundTripsWithClassHistograms) {
  nrs::PolicyStatus policy;
  policy.name = "tbf";
  policy.state = nrs::PolicyState::kStarted;
  policy.primary = true;
  policy.description = "tbf uid";
  policy.stats.completed = 12;
  policy.stats.bytes = 4096;
  policy.stats.wait_ns = 1000;
  nrs::ClassStats& c = policy.classes.emplace_back();
  c.name = "uid=1000";
  c.requests = 12;
  c.wait.Add(1500, 10);
  c.wait.Add(9000000, 2);
  c.service.Add(42);
  nrs::HeadStats head{7, 8, 9};
  NrsStatusReply reply;
  ToWire({policy}, head, &reply);
  NrsStatusReply parsed;
  ASSERT_TRUE(parsed.ParseFromString(reply.SerializeAsString()));
  const auto back = PoliciesFromWire(parsed);
  ASSERT_EQ(back.size(), 1u);
  EXPECT_EQ(back[0].name, "tbf");
  EXPECT_EQ(back[0].state, nrs::PolicyState::kStarted);
  EXPECT_TRUE(back[0].primary);
  EXPECT_EQ(back[0].stats.completed, 12u);
  ASSERT_EQ(back[0].classes.size(), 1u);
  EXPECT_EQ(back[0].classes[0].wait.count(), 12u);
  EXPECT_EQ(back[0].classes[0].wait.Percentile(50), c.wait.Percentile(50));
  EXPECT_EQ(back[0].classes[0].wait.Percentile(99), c.wait.Percentile(99));
  EXPECT_EQ(back[0].classes[0].service.count(), 1u);
  const nrs::HeadStats head_back = HeadStatsFromWire(parsed);
  EXPECT_EQ(head_back.dequeued, 7u);
  EXPECT_EQ(head_back.object_switches, 9u);
}

}  // namespace
}  // namespace sfs::rpc
