#include "common/text.h"

#include <gtest/gtest.h>

#include <string_view>
#include <vector>

namespace sfs {
namespace {

using Views = std::vector<std::string_view>;

TEST(TextTest, TrimAndWordsTreatEveryBlankAlike) {
  EXPECT_EQ(Trim(" \t tbf uid \r\n"), "tbf uid");
  EXPECT_EQ(Trim(" \n "), "");
  EXPECT_EQ(Words("  tbf\tuid+opcode \n hp"), (Views{"tbf", "uid+opcode", "hp"}));
  EXPECT_TRUE(Words(" \t").empty());
  const auto [first, rest] = SplitWord("  start slow uid={1 2} rate=5\n");
  EXPECT_EQ(first, "start");
  EXPECT_EQ(rest, "slow uid={1 2} rate=5");
  EXPECT_EQ(SplitAny("a,,b c", ", "), (Views{"a", "b", "c"}));
}

TEST(TextTest, GlobMatchesLikeAShell) {
  EXPECT_TRUE(GlobMatch("ior.*", "ior.1234"));
  EXPECT_TRUE(GlobMatch("ior.*", "ior."));
  EXPECT_FALSE(GlobMatch("ior.*", "mdtest.1"));
  EXPECT_TRUE(GlobMatch("*.1?", "dd.12"));
  EXPECT_FALSE(GlobMatch("*.1?", "dd.1"));
  EXPECT_TRUE(GlobMatch("a*b*c", "axxbyyc"));
  EXPECT_FALSE(GlobMatch("a*b*c", "axxbyy"));
  EXPECT_TRUE(GlobMatch("*", ""));
  EXPECT_FALSE(GlobMatch("", "x"));
}

TEST(TextTest, FindControlSkipsBlanks) {
  using namespace std::string_literals;
  EXPECT_EQ(FindControl("a b\tc\n\r\f\v"), std::string_view::npos);
  EXPECT_EQ(FindControl("ab\x01"), 2u);
  EXPECT_EQ(FindControl("a\0b"s), 1u);
  EXPECT_EQ(FindControl("a\x7f"), 1u);
  EXPECT_EQ(FindControl("\x1b[2J"), 0u);
  EXPECT_EQ(FindControl("caf\xc3\xa9 ~"), std::string_view::npos);  // UTF-8 and '~' are fine
}

TEST(TextTest, PrintableEscapesControlBytes) {
  using namespace std::string_literals;
  EXPECT_EQ(Printable("a\nb\0c\x7f"s), "a\\x0ab\\x00c\\x7f");
  EXPECT_EQ(Printable("plain \\ text"), "plain \\ text");
  EXPECT_EQ(Printable(Printable("a\n")), "a\\x0a");  // idempotent
}

TEST(TextTest, JsonQuoteEscapesQuotesBackslashesAndControlBytes) {
  using namespace std::string_literals;
  EXPECT_EQ(JsonQuote("dd.0"), "\"dd.0\"");
  EXPECT_EQ(JsonQuote("a\"b\\c"), "\"a\\\"b\\\\c\"");
  EXPECT_EQ(JsonQuote("\n\0\x7f"s), "\"\\u000a\\u0000\\u007f\"");
  EXPECT_EQ(JsonQuote("caf\xc3\xa9"), "\"caf\xc3\xa9\"");  // UTF-8 as it is
  EXPECT_EQ(JsonQuote("a\xff"), "\"a\\\\xff\"");         // not UTF-8: the text \xff
}

TEST(TextTest, ValidUtf8KeepsUtf8AndSpellsOutTheRest) {
  EXPECT_EQ(ValidUtf8("plain caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"),
            "plain caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
  EXPECT_EQ(ValidUtf8("cut \xc3"), "cut \\xc3");            // a sequence cut short (a 64-byte cut)
  EXPECT_EQ(ValidUtf8("\x80x"), "\\x80x");                  // a stray continuation byte
  EXPECT_EQ(ValidUtf8("\xc0\xaf"), "\\xc0\\xaf");          // overlong '/'
  EXPECT_EQ(ValidUtf8("\xed\xa0\x80"), "\\xed\\xa0\\x80");  // a surrogate
  EXPECT_EQ(ValidUtf8("\xf4\x90\x80\x80"), "\\xf4\\x90\\x80\\x80");  // above U+10FFFF
  EXPECT_EQ(Utf8SequenceLength("\xe2\x82\xac", 0), 3u);
  EXPECT_EQ(Utf8SequenceLength("\xe2\x82", 0), 0u);
}

}  // namespace
}  // namespace sfs
