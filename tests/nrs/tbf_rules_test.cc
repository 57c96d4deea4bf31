#include "nrs/tbf_rules.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <initializer_list>
#include <memory>
#include <set>
#include <string>
#include <vector>

namespace sfs::nrs {
namespace {

using RuleSetPtr = std::shared_ptr<const TbfRuleSet>;

RuleSetPtr Apply(const RuleSetPtr& set, std::string_view command) {
  auto next = set->Apply(command);
  EXPECT_TRUE(next.ok()) << command << ": " << next.status().message();
  return next.ok() ? *next : set;
}

RuleSetPtr Rules(std::initializer_list<std::string_view> commands) {
  RuleSetPtr set = TbfRuleSet::Empty();
  for (std::string_view command : commands) set = Apply(set, command);
  return set;
}

std::vector<std::string> Names(const TbfRuleSet& set) {
  std::vector<std::string> names;
  for (const TbfRule& rule : set.rules()) names.push_back(rule.name);
  return names;
}

RequestInfo Info(uint32_t uid, Op op = Op::kRead, const char* jobid = nullptr, uint32_t gid = 0) {
  RequestInfo info;
  info.uid = uid;
  info.gid = gid;
  info.op = op;
  if (jobid != nullptr) info.jobid = std::make_shared<const std::string>(jobid);
  return info;
}

TEST(TbfTypeTest, ParsesFieldsInAnyOrder) {
  EXPECT_EQ(*ParseTbfType(""), kTbfAllFields);
  EXPECT_EQ(*ParseTbfType("uid"), kTbfUid);
  EXPECT_EQ(*ParseTbfType("opcode+uid"), kTbfUid | kTbfOpcode);
  EXPECT_EQ(*ParseTbfType("jobid+gid"), kTbfGid | kTbfJobid);
  EXPECT_EQ(TbfTypeName(*ParseTbfType("opcode+uid")), "uid+opcode");
  EXPECT_EQ(TbfTypeName(kTbfAllFields), "uid+gid+jobid+opcode");
}

TEST(TbfTypeTest, RejectsBadTypes) {
  for (const char* type : {"nid", "foo", "uid+uid", "uid+", "+uid", "uid opcode", "UID"}) {
    auto fields = ParseTbfType(type);
    EXPECT_EQ(fields.err(), EINVAL) << type;
  }
  EXPECT_NE(ParseTbfType("nid").status().message().find("no network ids"), std::string::npos);
}

TEST(TbfOpcodeTest, NamesAndClasses) {
  EXPECT_STREQ(TbfOpcodeName(Op::kRead), "read");
  EXPECT_STREQ(TbfOpcodeName(Op::kWrite), "write");
  EXPECT_STREQ(TbfOpcodeName(Op::kTruncate), "punch");
  EXPECT_STREQ(TbfOpcodeName(Op::kPunch), "punch");
  EXPECT_STREQ(TbfOpcodeName(Op::kSync), "fsync");
  EXPECT_STREQ(TbfOpcodeName(Op::kAllocate), "fallocate");
  EXPECT_STREQ(TbfOpcodeName(Op::kDestroy), "destroy");
  EXPECT_EQ(TbfOpcodeClass(Op::kTruncate), Op::kPunch);
  EXPECT_EQ(TbfOpcodeClass(Op::kWrite), Op::kWrite);
}

TEST(TbfOpcodeTest, MetadataOpsAreTheirOwnClasses) {
  // Every metadata op has an opcode class named as nrs::OpName names it,
  // distinct from every other op's.
  std::set<std::string> seen;
  for (int i = static_cast<int>(Op::kLookup); i <= static_cast<int>(kLastOp); ++i) {
    const Op op = static_cast<Op>(i);
    EXPECT_TRUE(IsMetadata(op));
    EXPECT_STREQ(TbfOpcodeName(op), OpName(op));
    EXPECT_EQ(TbfOpcodeClass(op), op);
    EXPECT_TRUE(seen.insert(TbfOpcodeName(op)).second) << OpName(op);
  }
  EXPECT_EQ(seen.size(), 14u);
  EXPECT_FALSE(IsMetadata(Op::kSeek));
  EXPECT_FALSE(seen.count(TbfOpcodeName(Op::kRead)));
}

TEST(TbfRuleSetTest, MetadataOpcodeRulesMatchOnlyTheirOps) {
  RuleSetPtr set = Rules({"start md opcode={create mkdir readlink} rate=10"});
  EXPECT_EQ(set->rules()[0].expression, "opcode={create mkdir readlink}");
  for (Op op : {Op::kCreate, Op::kMkdir, Op::kReadlink}) {
    EXPECT_EQ(set->Match(Info(0, op)).name, "md") << OpName(op);
  }
  for (Op op : {Op::kMknod, Op::kLookup, Op::kUnlink, Op::kWrite, Op::kSymlink}) {
    EXPECT_EQ(set->Match(Info(0, op)).name, "default") << OpName(op);
  }
}

TEST(TbfRuleSetTest, EmptyHasOnlyTheDefault) {
  RuleSetPtr set = TbfRuleSet::Empty();
  EXPECT_TRUE(set->rules().empty());
  EXPECT_EQ(set->default_rule().name, "default");
  EXPECT_EQ(set->default_rule().rate, 0u);
  EXPECT_EQ(set->default_rule().depth, 3u);
  EXPECT_EQ(set->fields(), 0);
  EXPECT_EQ(&set->Match(Info(1)), &set->default_rule());
  EXPECT_EQ(set->Serialize(), "");
}

TEST(TbfRuleSetTest, StartParsesAndCanonicalizes) {
  RuleSetPtr set = Rules({"start  r1   uid={1000,1001  7}&opcode={write punch}  rate=100 "});
  ASSERT_EQ(set->rules().size(), 1u);
  const TbfRule& rule = set->rules()[0];
  EXPECT_EQ(rule.name, "r1");
  EXPECT_EQ(rule.expression, "uid={1000 1001 7}&opcode={write punch}");
  EXPECT_EQ(rule.fields, kTbfUid | kTbfOpcode);
  EXPECT_EQ(rule.rate, 100u);
  EXPECT_EQ(rule.bps, 0u);
  EXPECT_EQ(rule.depth, 3u);
  EXPECT_FALSE(rule.realtime);
  EXPECT_EQ(rule.ToString(),
            "r1 uid={1000 1001 7}&opcode={write punch} rate=100 depth=3 realtime=0");
}

TEST(TbfRuleSetTest, BpsSuffixesArePowersOf1024) {
  RuleSetPtr set =
      Rules({"start a uid={1} bps=1K", "start b uid={1} bps=100M", "start c uid={1} bps=2g",
             "start d uid={1} bps=1T", "start e uid={1} bps=1000 rate=5 depth=9 realtime=1"});
  EXPECT_EQ(set->rules()[4].bps, 1024u);
  EXPECT_EQ(set->rules()[3].bps, 100u << 20);
  EXPECT_EQ(set->rules()[2].bps, uint64_t{2} << 30);
  EXPECT_EQ(set->rules()[1].bps, uint64_t{1} << 40);
  EXPECT_EQ(set->rules()[0].bps, 1000u);
  EXPECT_EQ(set->rules()[3].ToString(), "b uid={1} bps=100M depth=3 realtime=0");
  EXPECT_EQ(set->rules()[0].ToString(), "e uid={1} rate=5 bps=1000 depth=9 realtime=1");
}

struct BadCommand {
  const char* command;
  int err;
  const char* message_part;
};

TEST(TbfRuleSetTest, RejectsMalformedCommands) {
  RuleSetPtr set = Rules({"start r uid={1} rate=10", "start b uid={2} bps=1M"});
  const BadCommand cases[] = {
      {"start x nid={192.168.1.1@tcp} rate=1", EINVAL, "no network ids"},
      {"start x uid={{1}} rate=1", EINVAL, "bad braces"},
      {"start x uid=1} rate=1", EINVAL, "bad braces"},
      {"start x jobid={a} {b} rate=1", EINVAL, "stray brace"},
      {"start x jobid={a=b} rate=1", EINVAL, "stray brace"},
      {"start x uid={1}&gid={2 rate=1}", EINVAL, "stray brace"},
      {"start x uid={} rate=1", EINVAL, "empty value list"},
      {"start x uid={ , } rate=1", EINVAL, "empty value list"},
      {"start x uid={abc} rate=1", EINVAL, "not a number"},
      {"start x uid={-1} rate=1", EINVAL, "not a number"},
      {"start x uid={4294967296} rate=1", EINVAL, "out of range"},
      {"start x opcode={opendir} rate=1", EINVAL, "unknown opcode"},
      {"start x color={red} rate=1", EINVAL, "unknown field"},
      {"start x uid={1} rate=0", EINVAL, "out of range"},
      {"start x uid={1} rate=1000000001", EINVAL, "out of range"},
      {"start x uid={1} rate=ten", EINVAL, "not a number"},
      {"start x uid={1} bps=10X", EINVAL, "bad suffix"},
      {"start x uid={1} bps=M", EINVAL, "not a number"},
      {"start x uid={1} bps=2048T", EINVAL, "out of range"},
      {"start x uid={1} depth=0", EINVAL, "out of range"},
      {"start x uid={1} rate=1 realtime=2", EINVAL, "out of range"},
      {"start x uid={1} speed=1", EINVAL, "unknown key"},
      {"start x uid={1} rate=1 rate=2", EINVAL, "duplicate key"},
      {"start x uid={1} rate", EINVAL, "key=value"},
      {"start x uid={1} rate=", EINVAL, "key=value"},
      {"start x uid={1}rate=1", EINVAL, "blank after"},
      {"start x uid={1}", EINVAL, "needs rate= or bps="},
      {"start x rate=1", EINVAL, "needs an expression"},
      {"start x", EINVAL, "needs an expression"},
      {"start bad-name uid={1} rate=1", EINVAL, "letters, digits"},
      {"start a_name_of_16_chars uid={1} rate=1", EINVAL, "longer than 15"},
      {"start x uid={1} rate=1 rank=no-such", EINVAL, "letters, digits"},
      {"launch x uid={1} rate=1", EINVAL, "unknown TBF rule command"},
      {"", EINVAL, "unknown TBF rule command"},
      {"stop", EINVAL, "missing rule name"},
      {"stop r now", EINVAL, "takes no arguments"},
      {"change r", EINVAL, "needs rate="},
      {"change r rate=0", EINVAL, "out of range"},
      {"change r rank=r", EINVAL, "before itself"},
      {"change b bps=0", EINVAL, "neither rate= nor bps="},
      {"change default rank=r", EINVAL, "always last"},
      {"start r gid={1} rate=1", EEXIST, "exists"},
      {"start default uid={1} rate=1", EEXIST, "exists"},
      {"start x uid={1} rate=1 rank=nope", ENOENT, "no rule named 'nope'"},
      {"change nope rate=1", ENOENT, "no rule named"},
      {"change r rank=nope", ENOENT, "no rule named 'nope'"},
      {"stop nope", ENOENT, "no rule named"},
      {"stop default", EPERM, "cannot be stopped"},
  };
  for (const BadCommand& c : cases) {
    auto next = set->Apply(c.command);
    ASSERT_FALSE(next.ok()) << c.command;
    EXPECT_EQ(next.err(), c.err) << c.command << ": " << next.status().message();
    EXPECT_NE(next.status().message().find(c.message_part), std::string::npos)
        << c.command << ": " << next.status().message();
  }
  EXPECT_EQ(Names(*set), (std::vector<std::string>{"b", "r"}));  // unchanged
}

// Job id values took any byte but blanks, commas and braces.
TEST(TbfRuleSetTest, RefusesControlCharacters) {
  using namespace std::string_literals;
  RuleSetPtr set = Rules({"start r uid={1} rate=10"});
  for (const std::string& command :
       {"start x jobid={a\0b} rate=1"s, "start x jobid={\x01} rate=1"s,
        "start x jobid={a\x7f} rate=1"s, "start x jobid={dd.\x1b[2J} rate=1"s,
        "change r rate=5\x02"s, "stop r\x03"s, "\x04start x uid={1} rate=1"s}) {
    auto next = set->Apply(command);
    ASSERT_FALSE(next.ok()) << command;
    EXPECT_EQ(next.err(), EINVAL);
    EXPECT_NE(next.status().message().find("control character"), std::string::npos)
        << next.status().message();
  }
  EXPECT_EQ(Names(*set), (std::vector<std::string>{"r"}));
  EXPECT_FALSE(TbfRuleSet::Deserialize("start x jobid={a\x05} rate=1 depth=3 realtime=0\n").ok());
  // Blanks still separate values, and UTF-8 is not a control character.
  RuleSetPtr blanks = Apply(set, "start y\tjobid={a\rb\vc}\rrate=1\r\n");
  EXPECT_EQ(blanks->rules()[0].expression, "jobid={a b c}");
  Apply(set, "start z jobid={caf\xc3\xa9.*} rate=1");
}

TEST(TbfRuleSetTest, ApplyLeavesTheOldSetUnchanged) {
  RuleSetPtr one = Rules({"start a uid={1} rate=10"});
  RuleSetPtr two = Apply(one, "start b uid={2} rate=20");
  RuleSetPtr changed = Apply(two, "change a rate=99");
  EXPECT_EQ(Names(*one), (std::vector<std::string>{"a"}));
  EXPECT_EQ(one->rules()[0].rate, 10u);
  EXPECT_EQ(two->rules()[1].rate, 10u);
  EXPECT_EQ(changed->rules()[1].rate, 99u);
}

TEST(TbfRuleSetTest, NewRulesGoFirstAndRankPlacesThem) {
  RuleSetPtr set = Rules({"start a uid={1} rate=1", "start b uid={2} rate=1"});
  EXPECT_EQ(Names(*set), (std::vector<std::string>{"b", "a"}));
  set = Apply(set, "start c uid={3} rate=1 rank=a");
  EXPECT_EQ(Names(*set), (std::vector<std::string>{"b", "c", "a"}));
  set = Apply(set, "start d uid={4} rate=1 rank=default");
  EXPECT_EQ(Names(*set), (std::vector<std::string>{"b", "c", "a", "d"}));
  set = Apply(set, "change d rank=b");
  EXPECT_EQ(Names(*set), (std::vector<std::string>{"d", "b", "c", "a"}));
  set = Apply(set, "change b rank=a rate=7");
  EXPECT_EQ(Names(*set), (std::vector<std::string>{"d", "c", "b", "a"}));
  EXPECT_EQ(set->rules()[2].rate, 7u);
  set = Apply(set, "change d rank=default");
  EXPECT_EQ(Names(*set), (std::vector<std::string>{"c", "b", "a", "d"}));
  set = Apply(set, "change c rate=5");  // no rank: stays in place
  EXPECT_EQ(Names(*set), (std::vector<std::string>{"c", "b", "a", "d"}));
  set = Apply(set, "stop b");
  EXPECT_EQ(Names(*set), (std::vector<std::string>{"c", "a", "d"}));
}

TEST(TbfRuleSetTest, ChangeSetsOnlyTheNamedKeys) {
  RuleSetPtr set = Rules({"start a jobid={dd*} rate=10 bps=1M depth=4"});
  set = Apply(set, "change a depth=8 realtime=1");
  const TbfRule& rule = set->rules()[0];
  EXPECT_EQ(rule.expression, "jobid={dd*}");
  EXPECT_EQ(rule.rate, 10u);
  EXPECT_EQ(rule.bps, 1u << 20);
  EXPECT_EQ(rule.depth, 8u);
  EXPECT_TRUE(rule.realtime);
  set = Apply(set, "change a bps=0");  // keeps its rate, drops the byte limit
  EXPECT_EQ(set->rules()[0].bps, 0u);

  set = Apply(set, "change default rate=500 depth=5");
  EXPECT_EQ(set->default_rule().rate, 500u);
  EXPECT_EQ(set->default_rule().depth, 5u);
}

TEST(TbfRuleSetTest, SerializeRoundTrips) {
  RuleSetPtr set = Rules({
      "start io jobid={dd.* ior?} bps=100M",
      "start w uid={1000 1001}&opcode={write},gid={5} rate=200 depth=10 realtime=1",
      "start x opcode={fsync destroy} rate=3 rank=io",
      "change default rate=777 bps=5K",
  });
  const std::string text = set->Serialize();
  EXPECT_EQ(text,
            "start w uid={1000 1001}&opcode={write},gid={5} rate=200 depth=10 realtime=1\n"
            "start x opcode={fsync destroy} rate=3 depth=3 realtime=0\n"
            "start io jobid={dd.* ior?} bps=100M depth=3 realtime=0\n"
            "change default rate=777 bps=5K\n");
  auto back = TbfRuleSet::Deserialize(text);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ((*back)->Serialize(), text);
  EXPECT_EQ(Names(**back), Names(*set));
  for (size_t i = 0; i < set->rules().size(); i++) {
    const TbfRule& a = set->rules()[i];
    const TbfRule& b = (*back)->rules()[i];
    EXPECT_EQ(a.expression, b.expression);
    EXPECT_EQ(a.fields, b.fields);
    EXPECT_EQ(a.rate, b.rate);
    EXPECT_EQ(a.bps, b.bps);
    EXPECT_EQ(a.depth, b.depth);
    EXPECT_EQ(a.realtime, b.realtime);
  }
  EXPECT_EQ((*back)->default_rule().rate, 777u);
  EXPECT_EQ((*back)->default_rule().bps, 5u << 10);
  // Matching behaves the same.
  for (const RequestInfo& info :
       {Info(1000, Op::kWrite), Info(1, Op::kSync), Info(9, Op::kRead, "dd.3"),
        Info(9, Op::kRead, "x"), Info(9, Op::kRead, nullptr, 5)}) {
    EXPECT_EQ(set->Match(info).name, (*back)->Match(info).name);
  }

  EXPECT_EQ((*TbfRuleSet::Deserialize(""))->rules().size(), 0u);
  EXPECT_EQ(TbfRuleSet::Deserialize("start a uid={1} rate=1\nstart a uid={2} rate=1\n").err(),
            EEXIST);
  EXPECT_EQ(TbfRuleSet::Deserialize("start a uid={x} rate=1\n").err(), EINVAL);
}

TEST(TbfRuleSetTest, MatchIsFirstFit) {
  RuleSetPtr set = Rules({"start broad uid={1 2 3} rate=1", "start narrow uid={2} rate=1"});
  EXPECT_EQ(set->Match(Info(2)).name, "narrow");
  EXPECT_EQ(set->Match(Info(3)).name, "broad");
  EXPECT_EQ(set->Match(Info(4)).name, "default");
  set = Apply(set, "change narrow rank=default");
  EXPECT_EQ(set->Match(Info(2)).name, "broad");
}

TEST(TbfRuleSetTest, AndBindsTighterThanOr) {
  RuleSetPtr set = Rules({"start r uid={1}&opcode={write},jobid={dd*} rate=1"});
  EXPECT_EQ(set->fields(), kTbfUid | kTbfJobid | kTbfOpcode);
  EXPECT_EQ(set->Match(Info(1, Op::kWrite)).name, "r");
  EXPECT_EQ(set->Match(Info(1, Op::kRead)).name, "default");
  EXPECT_EQ(set->Match(Info(2, Op::kWrite)).name, "default");
  EXPECT_EQ(set->Match(Info(2, Op::kRead, "dd.0")).name, "r");
  EXPECT_EQ(set->Match(Info(1, Op::kRead, "ior")).name, "default");
}

TEST(TbfRuleSetTest, JobidGlobs) {
  RuleSetPtr set = Rules({"start r jobid={dd* job? *.sh a*b*c} rate=1"});
  auto matches = [&](const char* jobid) {
    return set->Match(Info(0, Op::kRead, jobid)).name == "r";
  };
  EXPECT_TRUE(matches("dd"));
  EXPECT_TRUE(matches("dd.1234"));
  EXPECT_TRUE(matches("job1"));
  EXPECT_FALSE(matches("job12"));
  EXPECT_FALSE(matches("job"));
  EXPECT_TRUE(matches("run.sh"));
  EXPECT_FALSE(matches("run.shx"));
  EXPECT_TRUE(matches("a-b-b-c"));
  EXPECT_FALSE(matches("a-b-b-cd"));
  EXPECT_FALSE(matches("xdd"));
  EXPECT_FALSE(matches(nullptr));

  RuleSetPtr any = Rules({"start r jobid={*} rate=1", "start e jobid={dd} rate=1"});
  EXPECT_EQ(any->Match(Info(0, Op::kRead, nullptr)).name, "r");  // no job id counts as ""
  EXPECT_EQ(any->Match(Info(0, Op::kRead, "dd")).name, "e");
}

TEST(TbfRuleSetTest, OpcodeNamesMatchTheirOps) {
  RuleSetPtr set =
      Rules({"start p opcode={punch} rate=1", "start s opcode={fsync fallocate} rate=1",
             "start d opcode={destroy read} rate=1", "start w opcode={write} rate=1"});
  EXPECT_EQ(set->Match(Info(0, Op::kTruncate)).name, "p");
  EXPECT_EQ(set->Match(Info(0, Op::kPunch)).name, "p");
  EXPECT_EQ(set->Match(Info(0, Op::kSync)).name, "s");
  EXPECT_EQ(set->Match(Info(0, Op::kAllocate)).name, "s");
  EXPECT_EQ(set->Match(Info(0, Op::kDestroy)).name, "d");
  EXPECT_EQ(set->Match(Info(0, Op::kRead)).name, "d");
  EXPECT_EQ(set->Match(Info(0, Op::kWrite)).name, "w");
}

TEST(TbfRuleSetTest, UidAndGidConditions) {
  RuleSetPtr set = Rules({"start g gid={100}&uid={0 4294967295} rate=1"});
  EXPECT_EQ(set->Match(Info(0, Op::kRead, nullptr, 100)).name, "g");
  EXPECT_EQ(set->Match(Info(4294967295u, Op::kRead, nullptr, 100)).name, "g");
  EXPECT_EQ(set->Match(Info(0, Op::kRead, nullptr, 101)).name, "default");
}

// Lustre's uid={500 1000-1999}: a range matches both ends and what lies
// between, keeps its place in the canonical text and is never expanded.
TEST(TbfRuleSetTest, UidAndGidRanges) {
  RuleSetPtr set = Rules({"start r uid={500 1000-1999},gid={0-4294967295}&opcode={write} rate=1"});
  EXPECT_EQ(set->rules().front().expression,
            "uid={500 1000-1999},gid={0-4294967295}&opcode={write}");
  for (uint32_t uid : {500u, 1000u, 1234u, 1999u})
    EXPECT_EQ(set->Match(Info(uid)).name, "r") << uid;
  for (uint32_t uid : {499u, 501u, 999u, 2000u}) {
    EXPECT_EQ(set->Match(Info(uid)).name, "default") << uid;
    EXPECT_EQ(set->Match(Info(uid, Op::kWrite, nullptr, 4294967295u)).name, "r") << uid;
  }
  auto back = TbfRuleSet::Deserialize(set->Serialize());
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ((*back)->Serialize(), set->Serialize());
  for (const char* bad :
       {"start x uid={1999-1000} rate=1", "start x uid={1-} rate=1", "start x gid={-1} rate=1",
        "start x uid={1-2-3} rate=1", "start x uid={0-4294967296} rate=1"}) {
    auto refused = TbfRuleSet::Empty()->Apply(bad);
    EXPECT_EQ(refused.status().err(), EINVAL) << bad;
  }
}

}  // namespace
}  // namespace sfs::nrs
