// The verdict table (verdict.hpp): every verdict has one row, its name reads back as itself, and
// its kind decides how every report groups it.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "verdict.hpp"

TEST(Verdict, EveryVerdictHasARowWhoseNameReadsBack) {
  std::set<std::string> names;
  for (int i = 0; i <= static_cast<int>(bb::Verdict::skipped); ++i) {
    const auto v = static_cast<bb::Verdict>(i);
    EXPECT_EQ(bb::verdict_row(v).verdict, v);
    EXPECT_EQ(bb::parse_verdict(bb::verdict_name(v)), v) << bb::verdict_name(v);
    EXPECT_TRUE(names.insert(bb::verdict_name(v)).second) << "two verdicts named " << bb::verdict_name(v);
  }
  EXPECT_EQ(names.size(), 11u);
  EXPECT_FALSE(bb::parse_verdict("pass"));  // names are upper case, as results.json writes them
  EXPECT_FALSE(bb::parse_verdict("BROKEN"));
}

TEST(Verdict, ItsKindSaysPassedSkippedFailedOrError) {
  EXPECT_EQ(bb::verdict_kind(bb::Verdict::pass), bb::VerdictKind::passed);
  EXPECT_EQ(bb::verdict_kind(bb::Verdict::skipped), bb::VerdictKind::skipped);
  for (auto v : {bb::Verdict::error, bb::Verdict::crash, bb::Verdict::timeout}) EXPECT_EQ(bb::verdict_kind(v), bb::VerdictKind::error) << bb::verdict_name(v);
  for (auto v : {bb::Verdict::fail, bb::Verdict::unwritten, bb::Verdict::input_mutated, bb::Verdict::out_of_bounds, bb::Verdict::nondeterministic,
                 bb::Verdict::implausible})
    EXPECT_EQ(bb::verdict_kind(v), bb::VerdictKind::failed) << bb::verdict_name(v);
  EXPECT_FALSE(bb::is_failure(bb::Verdict::pass));
  EXPECT_FALSE(bb::is_failure(bb::Verdict::skipped));
  EXPECT_TRUE(bb::is_failure(bb::Verdict::implausible));
  EXPECT_TRUE(bb::is_failure(bb::Verdict::crash));
}
