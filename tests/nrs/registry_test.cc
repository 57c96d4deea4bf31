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
  EXPECT_EQ(registry.Names(), std::vector<std::string>{"fifo"});
  auto policy = registry.Create("fifo");
  ASSERT_TRUE(policy.ok()) << policy.status().message();
  EXPECT_EQ((*policy)->Name(), "fifo");
}

TEST(RegistryTest, UnknownNameIsEinval) {
  PolicyRegistry registry = BuiltinPolicies();
  EXPECT_FALSE(registry.Has("tbf"));
  auto policy = registry.Create("tbf uid");
  ASSERT_FALSE(policy.ok());
  EXPECT_EQ(policy.err(), EINVAL);
  EXPECT_EQ(policy.status().message(), "unknown NRS policy 'tbf'");
}

TEST(RegistryTest, EmptyOrBlankSpecIsEinval) {
  PolicyRegistry registry = BuiltinPolicies();
  for (const char* spec : {"", "   ", "\n", " \t "}) {
    auto policy = registry.Create(spec);
    ASSERT_FALSE(policy.ok()) << "'" << spec << "'";
    EXPECT_EQ(policy.err(), EINVAL);
    EXPECT_EQ(policy.status().message(), "unknown NRS policy ''");
  }
}

TEST(RegistryTest, FifoWithArgumentsIsEinval) {
  PolicyRegistry registry = BuiltinPolicies();
  auto policy = registry.Create("fifo uid");
  ASSERT_FALSE(policy.ok());
  EXPECT_EQ(policy.err(), EINVAL);
}

TEST(RegistryTest, SurroundingWhitespaceIsTrimmed) {
  PolicyRegistry registry = BuiltinPolicies();
  for (const char* spec : {"  fifo", "fifo  ", "\tfifo\n", " fifo \r\n"}) {
    auto policy = registry.Create(spec);
    ASSERT_TRUE(policy.ok()) << "'" << spec << "': " << policy.status().message();
    EXPECT_EQ((*policy)->Name(), "fifo");
  }
}

TEST(RegistryTest, ArgsReachFactoryTrimmed) {
  PolicyRegistry registry;
  std::vector<std::string> seen;
  registry.Register("probe", [&seen](std::string_view args) -> Result<std::unique_ptr<Policy>> {
    seen.emplace_back(args);
    return NewFifoPolicy();
  });
  ASSERT_TRUE(registry.Create("probe").ok());
  ASSERT_TRUE(registry.Create("  probe   a  b \n").ok());
  ASSERT_TRUE(registry.Create("probe\tx").ok());
  EXPECT_EQ(seen, (std::vector<std::string>{"", "a  b", "x"}));
}

TEST(RegistryTest, NamesAreCaseSensitiveAndExact) {
  PolicyRegistry registry = BuiltinPolicies();
  EXPECT_FALSE(registry.Has("FIFO"));
  EXPECT_FALSE(registry.Has("fif"));
  EXPECT_EQ(registry.Create("FIFO").err(), EINVAL);
  EXPECT_EQ(registry.Create("fifox").err(), EINVAL);
}

TEST(RegistryTest, FactoryErrorIsPassedThrough) {
  PolicyRegistry registry;
  registry.Register("broken", [](std::string_view) -> Result<std::unique_ptr<Policy>> {
    return Status::Error(ERANGE, "rate out of range");
  });
  registry.Register(
      "alpha", [](std::string_view) -> Result<std::unique_ptr<Policy>> { return NewFifoPolicy(); });
  EXPECT_EQ(registry.Names(), (std::vector<std::string>{"alpha", "broken"}));
  auto policy = registry.Create("broken 5");
  ASSERT_FALSE(policy.ok());
  EXPECT_EQ(policy.err(), ERANGE);
  EXPECT_EQ(policy.status().message(), "rate out of range");
}

}  // namespace
}  // namespace sfs::nrs
