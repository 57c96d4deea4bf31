#include "layout/pool_rule.h"

#include <gtest/gtest.h>

namespace sfs::layout {
namespace {

PlacementContext Who(uint32_t uid, uint32_t gid, std::string jobid, uint32_t projid = 0) {
  PlacementContext context;
  context.uid = uid;
  context.gid = gid;
  context.jobid = std::move(jobid);
  context.projid = projid;
  return context;
}

TEST(PoolRuleTest, ParsesTheIssueExamples) {
  auto r1 = ParsePoolRule("rank=10 uid={1000,1001} pool=fast");
  ASSERT_TRUE(r1.ok()) << r1.status().message();
  EXPECT_EQ(r1->rank, 10u);
  EXPECT_EQ(r1->pool, "fast");
  ASSERT_EQ(r1->conditions.size(), 1u);
  EXPECT_EQ(r1->conditions[0].field, RuleField::kUid);
  EXPECT_EQ(r1->conditions[0].numbers.ToString(), "1000 1001");
  EXPECT_EQ(FormatPoolRule(*r1), "rank=10 uid={1000,1001} pool=fast");

  auto r2 = ParsePoolRule("rank=20 jobid={ior.*} & gid={100} pool=slow");
  ASSERT_TRUE(r2.ok()) << r2.status().message();
  ASSERT_EQ(r2->conditions.size(), 2u);
  EXPECT_EQ(r2->conditions[0].patterns, (std::vector<std::string>{"ior.*"}));
  EXPECT_EQ(FormatPoolRule(*r2), "rank=20 jobid={ior.*} & gid={100} pool=slow");
}

TEST(PoolRuleTest, CanonicalFormRoundTrips) {
  for (const char* text : {"pool=all", "  pool=p1   rank=3 projid={7 5,5}  ",
                           "uid={3}&gid={4 5}&jobid={dd.* ?x,cp.1000} pool=a_b-c.d",
                           "rank=4294967295 projid={0} pool=z"}) {
    auto rule = ParsePoolRule(text);
    ASSERT_TRUE(rule.ok()) << text << ": " << rule.status().message();
    const std::string canonical = FormatPoolRule(*rule);
    auto again = ParsePoolRule(canonical);
    ASSERT_TRUE(again.ok()) << canonical;
    EXPECT_EQ(*again, *rule) << canonical;
    EXPECT_EQ(FormatPoolRule(*again), canonical);
  }
  EXPECT_EQ(FormatPoolRule(*ParsePoolRule("pool=p1 rank=3 projid={7 5,5}")),
            "rank=3 projid={5,7} pool=p1");
  EXPECT_EQ(FormatPoolRule(*ParsePoolRule("pool=x")), "rank=0 pool=x");
}

TEST(PoolRuleTest, MatchesOnEveryField) {
  auto rule =
      ParsePoolRule("rank=1 uid={1000,1001} & gid={100} & jobid={ior.* dd.?} & projid={42} pool=p");
  ASSERT_TRUE(rule.ok());
  EXPECT_TRUE(rule->Matches(Who(1000, 100, "ior.1000", 42)));
  EXPECT_TRUE(rule->Matches(Who(1001, 100, "dd.7", 42)));
  EXPECT_FALSE(rule->Matches(Who(1002, 100, "ior.1000", 42)));  // uid
  EXPECT_FALSE(rule->Matches(Who(1000, 101, "ior.1000", 42)));  // gid
  EXPECT_FALSE(rule->Matches(Who(1000, 100, "dd.17", 42)));     // jobid
  EXPECT_FALSE(rule->Matches(Who(1000, 100, "ior.1000", 0)));   // projid
  EXPECT_TRUE(ParsePoolRule("pool=any")->Matches(Who(5, 5, "")));
}

// Ranges as TBF takes them (common/id_list.h): sorted with the single ids,
// kept whole, matched on both ends.
TEST(PoolRuleTest, IdRanges) {
  auto rule = ParsePoolRule("uid={2000-2999 500,1000-1999} & projid={0-4294967295} pool=p");
  ASSERT_TRUE(rule.ok()) << rule.status().message();
  EXPECT_EQ(FormatPoolRule(*rule),
            "rank=0 uid={500,1000-1999,2000-2999} & projid={0-4294967295} pool=p");
  for (uint32_t uid : {500u, 1000u, 1500u, 1999u, 2999u}) {
    EXPECT_TRUE(rule->Matches(Who(uid, 0, "", 4294967295u))) << uid;
  }
  for (uint32_t uid : {0u, 501u, 999u, 3000u}) EXPECT_FALSE(rule->Matches(Who(uid, 0, ""))) << uid;
  for (const char* bad : {"uid={1999-1000} pool=p", "uid={1000-} pool=p", "uid={-5} pool=p",
                          "gid={1-2-3} pool=p", "projid={0-4294967296} pool=p"}) {
    auto refused = ParsePoolRule(bad);
    EXPECT_EQ(refused.status().err(), EINVAL) << bad;
  }
}

TEST(PoolRuleTest, Glob) {
  EXPECT_TRUE(GlobMatch("ior.*", "ior."));
  EXPECT_TRUE(GlobMatch("ior.*", "ior.1000"));
  EXPECT_FALSE(GlobMatch("ior.*", "xior.1"));
  EXPECT_TRUE(GlobMatch("*", ""));
  EXPECT_TRUE(GlobMatch("a*b*c", "aXbYbZc"));
  EXPECT_FALSE(GlobMatch("a*b*c", "aXbYbZ"));
  EXPECT_TRUE(GlobMatch("?d.*", "dd.0"));
  EXPECT_FALSE(GlobMatch("?", ""));
  EXPECT_TRUE(GlobMatch("*.1000", "cp.1000"));
  EXPECT_FALSE(GlobMatch("cp", "cp.1000"));
  EXPECT_TRUE(GlobMatch("**a", "a"));
}

TEST(PoolRuleTest, RejectsMalformedRulesWithAMessage) {
  const char* bad[] = {
      "",                      // no pool
      "rank=1 uid={1}",        // no pool
      "pool=a pool=b",         // twice
      "rank=1 rank=2 pool=a",  // twice
      "rank=x pool=a",         // not a number
      "rank=-1 pool=a",
      "rank=4294967296 pool=a",
      "color=red pool=a",        // unknown key
      "uid={1} gid={2} pool=a",  // missing '&'
      "& uid={1} pool=a",        // leading '&'
      "uid={1} & pool=a",        // '&' before a non-condition
      "uid={1} &",               // dangling
      "uid={1} & & gid={2} pool=a",
      "uid={} pool=a",  // no value
      "uid={ , } pool=a",
      "uid={abc} pool=a",
      "uid={1 pool=a",           // unclosed
      "uid=1 pool=a",            // no braces
      "uid={1},gid={2} pool=a",  // ',' outside braces
      "uid={1}pool=a",
      "jobid={a{b} pool=a",
      "pool=bad/name",
      "pool=-lead",
      "pool=",
      "pool=abcdefghijklmnopqrstuvwxyz0123456789",  // too long
      "uid pool=a",
  };
  for (const char* text : bad) {
    auto rule = ParsePoolRule(text);
    EXPECT_EQ(rule.err(), EINVAL) << "accepted: " << text;
    if (!rule.ok()) {
      EXPECT_NE(rule.status().message().find("pool rule"), std::string::npos);
    }
  }
  EXPECT_NE(ParsePoolRule("color=red pool=a").status().message().find("unknown key \"color\""),
            std::string::npos);
}

// Job id globs took any byte: a NUL or an escape sequence in a rule can
// only be a mistake, and it would reach every log line that quotes the rule.
TEST(PoolRuleTest, RefusesControlCharactersAndKeepsMessagesOnOneLine) {
  using namespace std::string_literals;
  for (const std::string& text :
       {"jobid={a\0b} pool=a"s, "jobid={\x01} pool=a"s, "jobid={ior.\x1b[2J} pool=a"s,
        "jobid={a\x7f} pool=a"s, "rank=1\x02 pool=a"s, "pool=a\x03"s, "\x04uid={1} pool=a"s}) {
    auto rule = ParsePoolRule(text);
    EXPECT_EQ(rule.err(), EINVAL) << Printable(text);
    if (!rule.ok()) {
      EXPECT_EQ(FindControl(rule.status().message()), std::string_view::npos)
          << Printable(rule.status().message());
    }
  }
  // Every blank separates, \r and \v included; UTF-8 in a glob is fine.
  auto rule = ParsePoolRule("jobid={a\rb\vc} \r\npool=a\r\n");
  ASSERT_TRUE(rule.ok()) << rule.status().message();
  EXPECT_EQ(FormatPoolRule(*rule), "rank=0 jobid={a,b,c} pool=a");
  EXPECT_TRUE(ParsePoolRule("jobid={caf\xc3\xa9.*} pool=a").ok());
  // A message quoting a rule with newlines still is one line.
  auto bad = ParsePoolRule("uid={x}\npool=a");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message().find('\n'), std::string::npos) << bad.status().message();
}

// Duplicate patterns are dropped in given order, and a long list (a whole
// 64 KiB value) costs a set lookup per pattern, not a scan of the list.
TEST(PoolRuleTest, ManyJobidPatternsKeepTheirFirstOccurrence) {
  std::string text = "jobid={b,a,b,";
  for (int i = 0; i < 12000; ++i) text += "p" + std::to_string(i) + ",";
  text += "a} pool=x";
  auto rule = ParsePoolRule(text);
  ASSERT_TRUE(rule.ok()) << rule.status().message();
  const std::vector<std::string>& patterns = rule->conditions.at(0).patterns;
  ASSERT_EQ(patterns.size(), 12002u);
  EXPECT_EQ(patterns[0], "b");
  EXPECT_EQ(patterns[1], "a");
  EXPECT_EQ(patterns[2], "p0");
  EXPECT_EQ(patterns.back(), "p11999");
}

TEST(PoolNameTest, Rules) {
  EXPECT_TRUE(CheckPoolName("fast").ok());
  EXPECT_TRUE(CheckPoolName("_x.y-z9").ok());
  EXPECT_TRUE(CheckPoolName(std::string(kMaxPoolNameLen, 'a')).ok());
  EXPECT_EQ(CheckPoolName(std::string(kMaxPoolNameLen + 1, 'a')).err(), EINVAL);
  EXPECT_EQ(CheckPoolName("").err(), EINVAL);
  EXPECT_EQ(CheckPoolName(".hidden").err(), EINVAL);
  EXPECT_EQ(CheckPoolName("a b").err(), EINVAL);
  EXPECT_EQ(CheckPoolName("a=b").err(), EINVAL);
  EXPECT_NE(CheckPoolName("a b", "rule").message().find("rule name"), std::string::npos);
}

}  // namespace
}  // namespace sfs::layout
