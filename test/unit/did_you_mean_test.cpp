#include <gtest/gtest.h>

#include "plan/did_you_mean.hpp"

// The nearest known name to a typo, and none for a word that is no typo of any.
TEST(DidYouMean, TheNearestNameWithinATyposReach) {
  const std::vector<std::string> dtypes{"float32", "float64", "float16", "bfloat16", "int32"};
  EXPECT_EQ(bb::closest_name("bfloat", dtypes), "bfloat16") << "a prefix";
  EXPECT_EQ(bb::closest_name("flaot32", dtypes), "float32") << "two letters swapped";
  EXPECT_EQ(bb::closest_name("Float16", dtypes), "float16") << "case";
  EXPECT_EQ(bb::closest_name("complex64", dtypes), "");
  const std::vector<std::string> devices{"cpu", "cuda", "hip"};
  EXPECT_EQ(bb::closest_name("cpus", devices), "cpu");
  EXPECT_EQ(bb::closest_name("gpu", devices), "cpu");  // one letter: the nearest, as a typo would be
  EXPECT_EQ(bb::closest_name("tpu_v5", devices), "");
  EXPECT_EQ(bb::did_you_mean("cdua", devices), " (did you mean 'cuda'?)");
  EXPECT_EQ(bb::did_you_mean("xla", devices), "");
}
