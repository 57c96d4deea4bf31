// NrsControl's two scopes (the OSTs' schedulers, the metadata service's
// under "mdt."): which names each takes, what it stores and under which
// keys, what it refuses, and that a reload restores what was stored. The
// services are fakes that record what they were told; the store is a real
// RocksDB MetaStore.
#include "control/nrs_control.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "meta/meta_store.h"
#include "nrs/crrn_weights.h"
#include "nrs/registry.h"

namespace sfs::control {
namespace {

using Scope = NrsControl::Scope;

// Remembers the primary policy per head and the last hp ops set.
class FakeTarget final : public nrs::Target {
 public:
  void StartPolicy(nrs::Head head, std::unique_ptr<nrs::Policy> policy) override {
    primary[static_cast<int>(head)] = std::string(policy->Name());
  }
  void StopPolicy(nrs::Head head) override { primary[static_cast<int>(head)] = "fifo"; }
  void Retune(nrs::Head head, const nrs::Tunables& tunables) override {
    retunes++;
    tuned[static_cast<int>(head)] = tunables;
  }
  void SetHighPriority(nrs::OpSet ops, uint32_t ratio) override {
    hp_ops = ops;
    hp_ratio = ratio;
  }
  void SetEpochLength(std::chrono::nanoseconds length) override { epoch_length = length; }
  std::vector<nrs::PolicyStatus> PolicyStatus(nrs::Head, const std::vector<std::string>&,
                                              bool) const override {
    return {};
  }
  nrs::HeadStats HeadStats(nrs::Head) const override { return {}; }

  std::string primary[2] = {"fifo", "fifo"};
  int retunes = 0;
  nrs::Tunables tuned[2];  // by Retune, per head
  nrs::OpSet hp_ops = 0;
  uint32_t hp_ratio = 0;
  std::chrono::nanoseconds epoch_length{0};
};

class NrsControlTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/sfs-nrs-control-XXXXXX";
    dir_ = mkdtemp(tmpl);
    auto store = meta::MetaStore::Format(dir_ + "/meta", {});
    ASSERT_TRUE(store.ok());
    store_ = std::move(store).value();
  }
  void TearDown() override {
    store_.reset();
    std::filesystem::remove_all(dir_);
  }
  // Over the first `count` of `targets` (the others are for AddTarget: a
  // std::vector of targets would move them as it grew).
  std::unique_ptr<NrsControl> Control(Scope scope, std::vector<FakeTarget>* targets,
                                      size_t count = SIZE_MAX) {
    std::vector<nrs::Target*> pointers;
    for (size_t i = 0; i < std::min(count, targets->size()); i++)
      pointers.push_back(&(*targets)[i]);
    return std::make_unique<NrsControl>(scope, store_.get(), pointers, &registry_, nullptr);
  }
  std::map<std::string, std::string> Stored() { return *store_->AllSettings(); }

  std::string dir_;
  std::unique_ptr<meta::MetaStore> store_;
  const nrs::PolicyRegistry registry_ = nrs::BuiltinPolicies();
};

TEST_F(NrsControlTest, EachScopeTakesItsOwnNames) {
  for (const char* name : {"nrs_policies", "ost3.nrs_policies", "nrs_tbf_rule", "nrs_tbf_scope",
                           "nrs_eh_timeout", "nrs_crrn_weight", "nrs_stats", "nrs_hp_ops"}) {
    EXPECT_TRUE(NrsControl::Handles(Scope::kOsts, name)) << name;
    EXPECT_FALSE(NrsControl::Handles(Scope::kMdt, name)) << name;
  }
  for (const char* name : {"mdt.nrs_policies", "mdt.nrs_tbf_rule", "mdt.nrs_crrn_weight",
                           "mdt.nrs_stats", "mdt.nrs_hp_ops", "mdt.nrs_epoch_ms",
                           "mdt.nrs_tbf_default_rate"}) {
    EXPECT_TRUE(NrsControl::Handles(Scope::kMdt, name)) << name;
    EXPECT_FALSE(NrsControl::Handles(Scope::kOsts, name)) << name;
  }
  // A lone scheduler shares no rate and has no epoch handler; it has no
  // per-OST policies either.
  for (const char* name : {"mdt.nrs_tbf_scope", "mdt.nrs_eh_timeout", "mdt.ost0.nrs_policies",
                           "mdt.", "mdt.nrs_nothing", "mdtnrs_policies"}) {
    EXPECT_FALSE(NrsControl::Handles(Scope::kMdt, name)) << name;
  }
}

TEST_F(NrsControlTest, MdtSettingsAreStoredUnderTheirPrefixAndLeaveTheOstsAlone) {
  std::vector<FakeTarget> osts(2), mdt(1);
  auto ost_control = Control(Scope::kOsts, &osts);
  auto mdt_control = Control(Scope::kMdt, &mdt);
  ASSERT_TRUE(ost_control->Load().ok());
  ASSERT_TRUE(mdt_control->Load().ok());

  ASSERT_TRUE(mdt_control->Set("mdt.nrs_policies", "tbf jobid+opcode reg").ok());
  ASSERT_TRUE(mdt_control->Set("mdt.nrs_tbf_rule", "start c opcode={create} rate=7").ok());
  ASSERT_TRUE(mdt_control->Set("mdt.nrs_hp_ops", "unlink").ok());
  ASSERT_TRUE(mdt_control->Set("mdt.nrs_epoch_ms", "25").ok());
  EXPECT_EQ(mdt[0].primary[0], "tbf");
  EXPECT_EQ(mdt[0].primary[1], "fifo");
  EXPECT_EQ(mdt[0].hp_ops, nrs::OpBit(nrs::Op::kUnlink));
  EXPECT_EQ(mdt[0].epoch_length, std::chrono::milliseconds(25));
  EXPECT_EQ(osts[0].primary[0], "fifo");
  EXPECT_EQ(osts[1].primary[0], "fifo");

  const auto stored = Stored();
  EXPECT_EQ(stored.at("mdt.nrs_policies.reg"), "tbf jobid+opcode");
  EXPECT_EQ(stored.at("mdt.nrs_policies.hp"), "fifo");
  EXPECT_NE(stored.at("mdt.nrs_tbf_rule.reg").find("opcode={create}"), std::string::npos);
  EXPECT_EQ(stored.at("mdt.nrs_hp_ops"), "unlink");
  EXPECT_EQ(stored.at("mdt.nrs_epoch_ms"), "25");
  EXPECT_EQ(stored.count("mdt.nrs_tbf_scope"), 0u);
  EXPECT_EQ(stored.count("mdt.nrs_eh_timeout"), 0u);
  // The OSTs' values are their own (their control stored its defaults at
  // no point yet: nothing was set there).
  EXPECT_EQ(stored.count("nrs_hp_ops"), 0u);
  EXPECT_EQ(stored.count("ost0.nrs_policies.reg"), 0u);
  EXPECT_EQ(*mdt_control->Get("mdt.nrs_hp_ops"), "unlink");
  EXPECT_EQ(*ost_control->Get("nrs_hp_ops"), "truncate,punch,fsync");

  // A second pair of controls over the same store starts where these were.
  std::vector<FakeTarget> osts2(2), mdt2(1);
  auto ost_again = Control(Scope::kOsts, &osts2);
  auto mdt_again = Control(Scope::kMdt, &mdt2);
  ASSERT_TRUE(ost_again->Load().ok());
  ASSERT_TRUE(mdt_again->Load().ok());
  EXPECT_EQ(mdt2[0].primary[0], "tbf");
  EXPECT_EQ(mdt2[0].hp_ops, nrs::OpBit(nrs::Op::kUnlink));
  EXPECT_EQ(mdt2[0].epoch_length, std::chrono::milliseconds(25));
  EXPECT_EQ(osts2[0].primary[0], "fifo");
  EXPECT_EQ(*mdt_again->Get("mdt.nrs_tbf_rule"), *mdt_control->Get("mdt.nrs_tbf_rule"));
}

TEST_F(NrsControlTest, MdtRefusesWhatItCannotRunAndKeepsWhatItHad) {
  std::vector<FakeTarget> mdt(1);
  auto control = Control(Scope::kMdt, &mdt);
  ASSERT_TRUE(control->Load().ok());
  ASSERT_TRUE(control->Set("mdt.nrs_policies", "crrn uid").ok());
  const auto before = Stored();

  Status orr = control->Set("mdt.nrs_policies", "orr");
  EXPECT_EQ(orr.err(), EINVAL);
  EXPECT_NE(orr.message().find("metadata service"), std::string::npos) << orr.message();
  EXPECT_EQ(control->Set("mdt.nrs_policies", "orr hp").err(), EINVAL);
  EXPECT_EQ(control->Set("mdt.nrs_tbf_rule", "start x opcode={opendir} rate=1").err(), EINVAL);
  EXPECT_EQ(control->Set("mdt.nrs_hp_ops", "unlink,flush").err(), EINVAL);
  Status delay = control->Set("mdt.nrs_delay_max", "1ms");  // below the 10ms minimum
  EXPECT_EQ(delay.err(), EINVAL);
  EXPECT_NE(delay.message().find("mdt.nrs_delay_min"), std::string::npos) << delay.message();
  EXPECT_EQ(control->Set("mdt.nrs_stats", "x").err(), EINVAL);

  EXPECT_EQ(Stored(), before);
  EXPECT_EQ(mdt[0].primary[0], "crrn");
  EXPECT_EQ(mdt[0].primary[1], "crrn");
  // Reports name the metadata service.
  EXPECT_NE(control->Get("mdt.nrs_policies")->find("mdt:"), std::string::npos);
  EXPECT_EQ(control->Get("mdt.nrs_tbf_scope").err(), ENODATA);
}

TEST_F(NrsControlTest, AnAddedOstRunsWhatMostOstsRunAndIsStored) {
  std::vector<FakeTarget> osts(4);
  auto control = Control(Scope::kOsts, &osts, 3);
  ASSERT_TRUE(control->Load().ok());
  ASSERT_TRUE(control->Set("nrs_policies", "tbf jobid reg").ok());
  ASSERT_TRUE(control->Set("ost1.nrs_policies", "crrn reg").ok());
  ASSERT_TRUE(control->Set("nrs_hp_ops", "unlink").ok());

  ASSERT_TRUE(control->AddTarget(&osts[3]).ok());
  // Two of three run tbf on the regular head, all fifo on hp.
  EXPECT_EQ(osts[3].primary[0], "tbf");
  EXPECT_EQ(osts[3].primary[1], "fifo");
  EXPECT_EQ(osts[3].hp_ops, nrs::OpBit(nrs::Op::kUnlink));
  EXPECT_EQ(osts[1].primary[0], "crrn");
  EXPECT_EQ(Stored().at("ost3.nrs_policies.reg"), "tbf jobid");
  // (The report itself comes from the targets, fakes here.)
  EXPECT_TRUE(control->Get("ost3.nrs_policies").ok());
  EXPECT_FALSE(control->Get("ost4.nrs_policies").ok());
  // Set on all reaches it.
  ASSERT_TRUE(control->Set("nrs_policies", "crrn reg").ok());
  EXPECT_EQ(osts[3].primary[0], "crrn");
  // The metadata service is one target.
  std::vector<FakeTarget> mdt(1);
  FakeTarget extra;
  EXPECT_EQ(Control(Scope::kMdt, &mdt)->AddTarget(&extra).err(), EINVAL);
}

TEST_F(NrsControlTest, AnOstWithoutAStoredPolicyRunsWhatMostRunAtLoad) {
  // Three OSTs stored running orr on the regular head; then the store says
  // a fourth exists (an addition cut short before its spec was stored).
  {
    std::vector<FakeTarget> osts(3);
    auto control = Control(Scope::kOsts, &osts);
    ASSERT_TRUE(control->Load().ok());
    ASSERT_TRUE(control->Set("nrs_policies", "orr reg").ok());
    ASSERT_TRUE(control->Set("ost0.nrs_policies", "fifo reg").ok());
  }
  std::vector<FakeTarget> osts(4);
  auto control = Control(Scope::kOsts, &osts);
  ASSERT_TRUE(control->Load().ok());
  EXPECT_EQ(osts[0].primary[0], "fifo");
  EXPECT_EQ(osts[1].primary[0], "orr");
  EXPECT_EQ(osts[3].primary[0], "orr");
  EXPECT_EQ(osts[3].primary[1], "fifo");
}

TEST_F(NrsControlTest, PrefixesNameOneOstOneHeadOrBoth) {
  for (const char* name : {"ost1.nrs_orr_quantum", "hp.nrs_tbf_default_rate",
                           "ost2.reg.nrs_crrn_quantum", "ost0.nrs_crrn_weight",
                           "hp.nrs_crrn_weight", "ost3.nrs_epoch_ms", "ost3.hp.nrs_epoch_max_ms",
                           // Handled, to be refused with a reason:
                           "hp.nrs_epoch_ms", "ost1.nrs_eh_timeout"}) {
    EXPECT_TRUE(NrsControl::Handles(Scope::kOsts, name)) << name;
  }
  for (const char* name :
       {"hp.nrs_policies", "ost1.nrs_tbf_rule", "hp.nrs_tbf_rule", "ost1.nrs_stats",
        "ost1.nrs_nothing", "ost1.active", "mdt.hp.nrs_crrn_quantum"}) {
    EXPECT_FALSE(NrsControl::Handles(Scope::kOsts, name)) << name;
  }
  EXPECT_TRUE(NrsControl::Handles(Scope::kMdt, "mdt.hp.nrs_crrn_quantum"));
  EXPECT_TRUE(NrsControl::Handles(Scope::kMdt, "mdt.reg.nrs_crrn_weight"));
  EXPECT_FALSE(NrsControl::Handles(Scope::kMdt, "mdt.ost0.nrs_crrn_quantum"));
}

TEST_F(NrsControlTest, PerOstAndPerHeadTunablesLaterSetsWinCellByCell) {
  std::vector<FakeTarget> osts(3);
  auto control = Control(Scope::kOsts, &osts);
  ASSERT_TRUE(control->Load().ok());
  ASSERT_TRUE(control->Set("nrs_orr_quantum", "64").ok());
  ASSERT_TRUE(control->Set("ost1.nrs_orr_quantum", "32").ok());
  ASSERT_TRUE(control->Set("hp.nrs_orr_quantum", "16").ok());
  ASSERT_TRUE(control->Set("ost2.hp.nrs_orr_quantum", "8").ok());
  ASSERT_TRUE(control->Set("ost1.nrs_tbf_default_rate", "500").ok());
  const uint32_t want[3][2] = {{64, 16}, {32, 16}, {64, 8}};
  for (int ost = 0; ost < 3; ost++) {
    for (int head = 0; head < 2; head++) {
      EXPECT_EQ(osts[ost].tuned[head].orr_quantum, want[ost][head]) << ost << " " << head;
      EXPECT_EQ(osts[ost].tuned[head].tbf_default_rate, ost == 1 ? 500u : 10000u);
    }
  }
  EXPECT_EQ(*control->Get("ost1.reg.nrs_orr_quantum"), "32");
  EXPECT_EQ(*control->Get("ost1.nrs_tbf_default_rate"), "500");
  EXPECT_EQ(*control->Get("hp.nrs_orr_quantum"), "ost0: 16\nost1: 16\nost2: 8\n");
  EXPECT_EQ(*control->Get("nrs_orr_quantum"),
            "ost0.reg: 64\nost0.hp: 16\nost1.reg: 32\nost1.hp: 16\nost2.reg: 64\nost2.hp: 8\n");
  EXPECT_EQ(*control->Get("nrs_tbf_default_rate"), "ost0: 10000\nost1: 500\nost2: 10000\n");
  const auto stored = Stored();
  EXPECT_EQ(stored.at("ost1.nrs_orr_quantum.reg"), "32");
  EXPECT_EQ(stored.at("ost2.nrs_orr_quantum.hp"), "8");
  EXPECT_EQ(stored.count("nrs_orr_quantum"), 0u);

  // A reload over the same store runs what was stored.
  {
    std::vector<FakeTarget> again(3);
    auto reloaded = Control(Scope::kOsts, &again);
    ASSERT_TRUE(reloaded->Load().ok());
    for (int ost = 0; ost < 3; ost++) {
      for (int head = 0; head < 2; head++) {
        EXPECT_EQ(again[ost].tuned[head].orr_quantum, want[ost][head]) << ost << " " << head;
      }
    }
    EXPECT_EQ(*reloaded->Get("nrs_orr_quantum"), *control->Get("nrs_orr_quantum"));
  }

  // Without a prefix, a set overrides every earlier per-OST or per-head one.
  ASSERT_TRUE(control->Set("nrs_orr_quantum", "100").ok());
  EXPECT_EQ(*control->Get("nrs_orr_quantum"), "100");
  EXPECT_EQ(*control->Get("ost2.hp.nrs_orr_quantum"), "100");
  for (int ost = 0; ost < 3; ost++) EXPECT_EQ(osts[ost].tuned[1].orr_quantum, 100u);
}

TEST_F(NrsControlTest, PerServiceAndFilesystemTunablesRefuseNarrowerPrefixes) {
  std::vector<FakeTarget> osts(2);
  auto control = Control(Scope::kOsts, &osts);
  ASSERT_TRUE(control->Load().ok());
  ASSERT_TRUE(control->Set("ost1.nrs_epoch_ms", "20").ok());
  ASSERT_TRUE(control->Set("ost0.nrs_hp_ratio", "3").ok());
  EXPECT_EQ(osts[1].epoch_length, std::chrono::milliseconds(20));
  EXPECT_EQ(osts[0].epoch_length, std::chrono::milliseconds(50));
  EXPECT_EQ(osts[0].hp_ratio, 3u);
  EXPECT_EQ(osts[1].hp_ratio, nrs::kDefaultHpRatio);
  EXPECT_EQ(*control->Get("nrs_epoch_ms"), "ost0: 50\nost1: 20\n");
  EXPECT_EQ(Stored().at("ost1.nrs_epoch_ms"), "20");

  const auto before = Stored();
  Status head = control->Set("hp.nrs_epoch_ms", "20");
  EXPECT_EQ(head.err(), EINVAL);
  EXPECT_NE(head.message().find("per service"), std::string::npos) << head.message();
  EXPECT_EQ(control->Set("ost1.nrs_eh_timeout", "2").err(), EINVAL);
  EXPECT_EQ(control->Set("hp.nrs_tbf_scope", "ost").err(), EINVAL);
  EXPECT_EQ(control->Set("ost2.nrs_orr_quantum", "4").err(), ENOENT);
  EXPECT_EQ(control->Set("ost1.hp.nrs_orr_quantum", "0").err(), EINVAL);
  EXPECT_EQ(control->Get("ost2.nrs_orr_quantum").err(), ENODATA);
  EXPECT_EQ(control->Get("hp.nrs_eh_timeout").err(), EINVAL);
  EXPECT_EQ(Stored(), before);
}

TEST_F(NrsControlTest, WeightRulesPerOstAndHeadApplyToEachSetAllOrNone) {
  std::vector<FakeTarget> osts(2);
  auto control = Control(Scope::kOsts, &osts);
  ASSERT_TRUE(control->Load().ok());
  ASSERT_TRUE(control->Set("ost1.nrs_crrn_weight", "start a uid={1000-1999} weight=4").ok());
  ASSERT_TRUE(control->Set("hp.nrs_crrn_weight", "start h gid={7} weight=2").ok());
  nrs::RequestInfo uid1500;
  uid1500.uid = 1500;
  EXPECT_EQ(osts[1].tuned[0].crrn_weights->WeightOf(uid1500), 4u);
  EXPECT_EQ(osts[0].tuned[0].crrn_weights->WeightOf(uid1500), 1u);
  EXPECT_EQ(*control->Get("ost1.reg.nrs_crrn_weight"), "start a uid={1000-1999} weight=4\n");
  EXPECT_EQ(*control->Get("ost0.reg.nrs_crrn_weight"), "");
  EXPECT_EQ(*control->Get("hp.nrs_crrn_weight"),
            "ost0:\n  start h gid={7} weight=2\nost1:\n  start h gid={7} weight=2\n"
            "  start a uid={1000-1999} weight=4\n");
  EXPECT_EQ(Stored().at("ost1.nrs_crrn_weight.reg"), "start a uid={1000-1999} weight=4\n");

  // "start a" everywhere: OST 1 has an "a" already, so no set changes.
  const auto before = Stored();
  Status exists = control->Set("nrs_crrn_weight", "start a uid={5} weight=2");
  EXPECT_EQ(exists.err(), EEXIST);
  EXPECT_NE(exists.message().find("ost1"), std::string::npos) << exists.message();
  EXPECT_EQ(Stored(), before);
  ASSERT_TRUE(control->Set("nrs_crrn_weight", "start b uid={5} weight=3").ok());
  nrs::RequestInfo uid5;
  uid5.uid = 5;
  for (int ost = 0; ost < 2; ost++) {
    for (int head = 0; head < 2; head++)
      EXPECT_EQ(osts[ost].tuned[head].crrn_weights->WeightOf(uid5), 3u);
  }
}

TEST_F(NrsControlTest, EhTimeoutMustBeLongerThanEveryEpoch) {
  std::vector<FakeTarget> osts(3);
  auto control = Control(Scope::kOsts, &osts);
  ASSERT_TRUE(control->Load().ok());
  const auto before = Stored();
  // The default timeout is 1 s.
  Status epoch = control->Set("nrs_epoch_ms", "1000");
  EXPECT_EQ(epoch.err(), EINVAL);
  EXPECT_NE(epoch.message().find("nrs_eh_timeout"), std::string::npos) << epoch.message();
  EXPECT_EQ(control->Set("ost2.hp.nrs_epoch_max_ms", "1000").err(), EINVAL);
  EXPECT_EQ(control->Set("nrs_eh_timeout", "100ms").err(), EINVAL);  // the 100 ms epoch_max
  EXPECT_EQ(Stored(), before);
  EXPECT_TRUE(control->Set("nrs_epoch_ms", "999").ok());
  ASSERT_TRUE(control->Set("nrs_eh_timeout", "3").ok());
  ASSERT_TRUE(control->Set("ost2.hp.nrs_epoch_max_ms", "2500").ok());
  Status shorter = control->Set("nrs_eh_timeout", "2500ms");
  EXPECT_EQ(shorter.err(), EINVAL);
  EXPECT_NE(shorter.message().find("ost2 hp"), std::string::npos) << shorter.message();
  EXPECT_TRUE(control->Set("nrs_eh_timeout", "2501ms").ok());
  // The metadata service has no epoch handler: its epochs may be long.
  std::vector<FakeTarget> mdt(1);
  auto mdt_control = Control(Scope::kMdt, &mdt);
  ASSERT_TRUE(mdt_control->Load().ok());
  EXPECT_TRUE(mdt_control->Set("mdt.nrs_epoch_ms", "5000").ok());
}

TEST_F(NrsControlTest, AStoredTimeoutNotAboveTheEpochsIsRaisedAtLoad) {
  // As a store written before the check could hold them.
  ASSERT_TRUE(store_->PutSettings({{"nrs_eh_timeout", "1"}, {"ost1.nrs_epoch_ms", "3000"}}).ok());
  std::vector<FakeTarget> osts(2);
  auto control = Control(Scope::kOsts, &osts);
  ASSERT_TRUE(control->Load().ok());
  EXPECT_EQ(*control->Get("nrs_eh_timeout"), "6");
  EXPECT_EQ(osts[1].epoch_length, std::chrono::milliseconds(3000));
  // The values now agree, so a change goes through.
  EXPECT_TRUE(control->Set("nrs_orr_quantum", "5").ok());
}

TEST_F(NrsControlTest, ValuesStoredWithoutPrefixLoadIntoEveryOst) {
  // A store from before tunables were per OST and head.
  ASSERT_TRUE(store_
                  ->PutSettings({{"nrs_orr_quantum", "77"},
                                 {"nrs_hp_ratio", "5"},
                                 {"nrs_crrn_weight", "start w uid={9} weight=3\n"}})
                  .ok());
  std::vector<FakeTarget> osts(2);
  auto control = Control(Scope::kOsts, &osts);
  ASSERT_TRUE(control->Load().ok());
  EXPECT_EQ(*control->Get("nrs_orr_quantum"), "77");
  EXPECT_EQ(*control->Get("nrs_hp_ratio"), "5");
  EXPECT_EQ(*control->Get("nrs_crrn_weight"), "start w uid={9} weight=3\n");
  EXPECT_EQ(osts[1].tuned[1].orr_quantum, 77u);
  EXPECT_EQ(osts[1].hp_ratio, 5u);
  ASSERT_TRUE(control->Set("ost0.nrs_orr_quantum", "7").ok());
  EXPECT_EQ(Stored().at("ost1.nrs_orr_quantum.hp"), "77");
}

TEST_F(NrsControlTest, AnAddedOstTakesWhatMostOstsHave) {
  std::vector<FakeTarget> osts(4);
  auto control = Control(Scope::kOsts, &osts, 3);
  ASSERT_TRUE(control->Load().ok());
  ASSERT_TRUE(control->Set("ost1.nrs_orr_quantum", "32").ok());
  ASSERT_TRUE(control->Set("ost2.reg.nrs_orr_quantum", "32").ok());
  ASSERT_TRUE(control->Set("ost0.nrs_epoch_ms", "20").ok());
  ASSERT_TRUE(control->Set("ost2.nrs_crrn_weight", "start a uid={1} weight=2").ok());
  ASSERT_TRUE(control->AddTarget(&osts[3]).ok());
  EXPECT_EQ(osts[3].tuned[0].orr_quantum, 32u);   // two of three
  EXPECT_EQ(osts[3].tuned[1].orr_quantum, 256u);  // two of three kept the default
  EXPECT_EQ(osts[3].epoch_length, std::chrono::milliseconds(50));
  EXPECT_EQ(*control->Get("ost3.nrs_crrn_weight"), "");
  EXPECT_EQ(Stored().at("ost3.nrs_orr_quantum.reg"), "32");
  EXPECT_EQ(Stored().at("ost3.nrs_epoch_ms"), "50");
}

TEST_F(NrsControlTest, MdtTunablesTakeAHeadPrefix) {
  std::vector<FakeTarget> mdt(1);
  auto control = Control(Scope::kMdt, &mdt);
  ASSERT_TRUE(control->Load().ok());
  ASSERT_TRUE(control->Set("mdt.hp.nrs_crrn_quantum", "2").ok());
  EXPECT_EQ(mdt[0].tuned[1].crrn_quantum, 2u);
  EXPECT_EQ(mdt[0].tuned[0].crrn_quantum, 8u);
  EXPECT_EQ(*control->Get("mdt.nrs_crrn_quantum"), "mdt.reg: 8\nmdt.hp: 2\n");
  EXPECT_EQ(*control->Get("mdt.hp.nrs_crrn_quantum"), "2");
  EXPECT_EQ(Stored().at("mdt.nrs_crrn_quantum.hp"), "2");
  EXPECT_EQ(control->Set("mdt.hp.nrs_hp_ops", "unlink").err(), EINVAL);
}

}  // namespace
}  // namespace sfs::control
