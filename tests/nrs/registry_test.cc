#include "nrs/registry.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <string>
#include <vector>

namespace sfs::nrs {
namespace {

TEST(RegistryTest, BuiltinsCreateFifo) {
  PolicyRegistry registry = BuiltinPolicies();
  EXPECT_TRUE(registry.Has("fifo"));
  EXPECT_EQ(registry.Names(), (std::vector<std::string>{"crrn", "delay", "epoch", "fifo", "orr", "tbf"}));
  auto policy = registry.Create("fifo", Tunables{});
  ASSERT_TRUE(policy.ok()) << policy.status().message();
  EXPECT_EQ((*policy)->Name(), "fifo");
}

TEST(RegistryTest, UnknownNameIsEinval) {
  PolicyRegistry registry = BuiltinPolicies();
  EXPECT_FALSE(registry.Has("nosuch"));
  auto policy = registry.Create("nosuch uid", Tunables{});
  ASSERT_FALSE(policy.ok());
  EXPECT_EQ(policy.err(), EINVAL);
  EXPECT_EQ(policy.status().message(), "unknown NRS policy 'nosuch'");
}

TEST(RegistryTest, EmptyOrBlankSpecIsEinval) {
  PolicyRegistry registry = BuiltinPolicies();
  for (const char* spec : {"", "   ", "\n", " \t "}) {
    auto policy = registry.Create(spec, Tunables{});
    ASSERT_FALSE(policy.ok()) << "'" << spec << "'";
    EXPECT_EQ(policy.err(), EINVAL);
    EXPECT_EQ(policy.status().message(), "unknown NRS policy ''");
  }
}

TEST(RegistryTest, FifoWithArgumentsIsEinval) {
  PolicyRegistry registry = BuiltinPolicies();
  auto policy = registry.Create("fifo uid", Tunables{});
  ASSERT_FALSE(policy.ok());
  EXPECT_EQ(policy.err(), EINVAL);
}

TEST(RegistryTest, SurroundingWhitespaceIsTrimmed) {
  PolicyRegistry registry = BuiltinPolicies();
  for (const char* spec : {"  fifo", "fifo  ", "\tfifo\n", " fifo \r\n"}) {
    auto policy = registry.Create(spec, Tunables{});
    ASSERT_TRUE(policy.ok()) << "'" << spec << "': " << policy.status().message();
    EXPECT_EQ((*policy)->Name(), "fifo");
  }
}

TEST(RegistryTest, ArgsReachFactoryTrimmed) {
  PolicyRegistry registry;
  std::vector<std::string> seen;
  registry.Register("probe", [&seen](std::string_view args, const Tunables&) -> Result<std::unique_ptr<Policy>> {
    seen.emplace_back(args);
    return NewFifoPolicy();
  });
  ASSERT_TRUE(registry.Create("probe", Tunables{}).ok());
  ASSERT_TRUE(registry.Create("  probe   a  b \n", Tunables{}).ok());
  ASSERT_TRUE(registry.Create("probe\tx", Tunables{}).ok());
  EXPECT_EQ(seen, (std::vector<std::string>{"", "a  b", "x"}));
}

TEST(RegistryTest, CanonicalSpecHasSingleBlanks) {
  EXPECT_EQ(PolicyRegistry::Canonical("  tbf \t uid+opcode \n"), "tbf uid+opcode");
  EXPECT_EQ(PolicyRegistry::Canonical("fifo"), "fifo");
  EXPECT_EQ(PolicyRegistry::Canonical(" "), "");
}

TEST(RegistryTest, NamesAreCaseSensitiveAndExact) {
  PolicyRegistry registry = BuiltinPolicies();
  EXPECT_FALSE(registry.Has("FIFO"));
  EXPECT_FALSE(registry.Has("fif"));
  EXPECT_EQ(registry.Create("FIFO", Tunables{}).err(), EINVAL);
  EXPECT_EQ(registry.Create("fifox", Tunables{}).err(), EINVAL);
}

TEST(RegistryTest, FactoryErrorIsPassedThrough) {
  PolicyRegistry registry;
  registry.Register("broken", [](std::string_view, const Tunables&) -> Result<std::unique_ptr<Policy>> {
    return Status::Error(ERANGE, "rate out of range");
  });
  registry.Register(
      "alpha", [](std::string_view, const Tunables&) -> Result<std::unique_ptr<Policy>> { return NewFifoPolicy(); });
  EXPECT_EQ(registry.Names(), (std::vector<std::string>{"alpha", "broken"}));
  auto policy = registry.Create("broken 5", Tunables{});
  ASSERT_FALSE(policy.ok());
  EXPECT_EQ(policy.err(), ERANGE);
  EXPECT_EQ(policy.status().message(), "rate out of range");
}

}  // namespace
}  // namespace sfs::nrs
