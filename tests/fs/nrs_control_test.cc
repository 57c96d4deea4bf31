// NrsControl's two scopes (the OSTs' schedulers, the metadata service's
// under "mdt."): which names each takes, what it stores and under which
// keys, what it refuses, and that a reload restores what was stored. The
// services are fakes that record what they were told; the store is a real
// RocksDB MetaStore.
#include "fs/nrs_control.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "meta/meta_store.h"
#include "nrs/registry.h"

namespace sfs::fs {
namespace {

using Scope = NrsControl::Scope;

// Remembers the primary policy per head and the last hp ops set.
class FakeTarget final : public nrs::Target {
 public:
  void StartPolicy(nrs::Head head, std::unique_ptr<nrs::Policy> policy) override {
    primary[static_cast<int>(head)] = std::string(policy->Name());
  }
  void StopPolicy(nrs::Head head) override { primary[static_cast<int>(head)] = "fifo"; }
  void Retune(nrs::Head head, const nrs::Tunables& tunables) override { retunes++; }
  void SetHighPriority(nrs::OpSet ops, uint32_t ratio) override { hp_ops = ops; }
  void SetEpochLength(std::chrono::nanoseconds length) override { epoch_length = length; }
  std::vector<nrs::PolicyStatus> PolicyStatus(nrs::Head, const std::vector<std::string>&,
                                              bool) const override {
    return {};
  }
  nrs::HeadStats HeadStats(nrs::Head) const override { return {}; }

  std::string primary[2] = {"fifo", "fifo"};
  int retunes = 0;
  nrs::OpSet hp_ops = 0;
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
  std::unique_ptr<NrsControl> Control(Scope scope, std::vector<FakeTarget>* targets) {
    std::vector<nrs::Target*> pointers;
    for (FakeTarget& t : *targets) pointers.push_back(&t);
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
  // A std::vector of targets would move them as it grows: fixed slots.
  std::vector<FakeTarget> osts(4);
  std::vector<nrs::Target*> pointers;
  for (int i = 0; i < 3; i++) pointers.push_back(&osts[i]);
  auto control = std::make_unique<NrsControl>(Scope::kOsts, store_.get(), pointers, &registry_,
                                              nullptr);
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

}  // namespace
}  // namespace sfs::fs
