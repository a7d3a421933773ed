// What the reports say of a message (report_text.hpp): its headline (a Python traceback's
// exception, not its first line) and its shape (numbers of any sign and form alike).
#include <gtest/gtest.h>

#include "report/report_text.hpp"

TEST(ReportText, APythonTracebacksHeadlineIsItsException) {
  const std::string m =
      "Traceback (most recent call last):\n"
      "  File \"/ops/scale/scale_raise.py\", line 3, in scale_kernel_impl\n"
      "    raise ValueError(\"scale_raise: refusing to scale %d elements\" % x.numel())\n"
      "ValueError: scale_raise: refusing to scale 16 elements";
  EXPECT_EQ(bb::message_headline(m), "ValueError: scale_raise: refusing to scale 16 elements (a Python traceback)");
  EXPECT_EQ(bb::message_headline("the call: Traceback (most recent call last):\n  File \"x.py\"\nKeyError: 'a'\n"),
            "the call: KeyError: 'a' (a Python traceback)");
  // The traceback's head and tail, its middle left out: the tail still ends with the exception.
  EXPECT_EQ(bb::message_headline("Traceback (most recent call last):\n  File \"a\"\n[... 10 bytes left out ...]\n  File \"b\"\nRuntimeError: x"),
            "RuntimeError: x (a Python traceback)");
  EXPECT_EQ(bb::message_headline("output 'y': 3 of 16 elements differ\nmore"), "output 'y': 3 of 16 elements differ");
}

TEST(ReportText, FailuresThatDifferInTheirFiguresHaveOneShape) {
  const auto a = bb::message_shape("first at [3]: got -1.5, expected 2.25e-03 (atol 1e-05)");
  EXPECT_EQ(a, bb::message_shape("first at [12]: got 1.5, expected -7.5E+02 (atol 1e-05)"));
  EXPECT_EQ(a, "first at [#]: got #, expected # (atol #)");
  EXPECT_EQ(bb::message_shape("faulting address 0x7ffe12ab"), bb::message_shape("faulting address 0x0"));
  // A hyphen between words is no sign; a dtype's digits are a number all the same.
  EXPECT_EQ(bb::message_shape("row-major float16"), "row-major float#");
  EXPECT_NE(bb::message_shape("ValueError: a"), bb::message_shape("KeyError: a"));
}
