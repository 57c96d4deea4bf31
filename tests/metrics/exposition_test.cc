#include "metrics/exposition.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace sfs::metrics {
namespace {

TEST(ExpositionTest, GroupsSamplesUnderTheirFamily) {
  Exposition e;
  e.Family("stripefs_ost_bytes_total", Exposition::Type::kCounter, "Bytes moved.");
  e.Family("stripefs_ost_up", Exposition::Type::kGauge, "1 if the OST answers.");
  e.Add("stripefs_ost_bytes_total", {{"ost", "0"}}, uint64_t{10});
  e.Add("stripefs_ost_up", {{"ost", "0"}}, 1.0);
  e.Add("stripefs_ost_bytes_total", {{"ost", "1"}}, uint64_t{20});
  EXPECT_EQ(e.Text(),
            "# HELP stripefs_ost_bytes_total Bytes moved.\n"
            "# TYPE stripefs_ost_bytes_total counter\n"
            "stripefs_ost_bytes_total{ost=\"0\"} 10\n"
            "stripefs_ost_bytes_total{ost=\"1\"} 20\n"
            "# HELP stripefs_ost_up 1 if the OST answers.\n"
            "# TYPE stripefs_ost_up gauge\n"
            "stripefs_ost_up{ost=\"0\"} 1\n");
}

TEST(ExpositionTest, EscapesLabelValuesAndWritesSpecialNumbers) {
  Exposition e;
  e.Add("m", {{"job", "a\"b\\c\nd"}, {"op", "read"}}, 0.5);
  e.Add("m", {}, std::numeric_limits<double>::infinity());
  e.Add("m", {}, std::nan(""));
  EXPECT_EQ(e.Text(),
            "# TYPE m gauge\n"
            "m{job=\"a\\\"b\\\\c\\nd\",op=\"read\"} 0.5\n"
            "m +Inf\n"
            "m NaN\n");
}

TEST(ExpositionTest, LabelValuesAreAlwaysUtf8) {
  // A job id from a user's environment, cut in the middle of a character.
  EXPECT_EQ(EscapeLabelValue("caf\xc3"), "caf\\\\xc3");
  EXPECT_EQ(EscapeLabelValue("caf\xc3\xa9"), "caf\xc3\xa9");
}

TEST(ExpositionTest, AFamilyWithoutSamplesSaysNothing) {
  Exposition e;
  e.Family("unused", Exposition::Type::kGauge, "never sampled");
  EXPECT_EQ(e.Text(), "");
}

}  // namespace
}  // namespace sfs::metrics
