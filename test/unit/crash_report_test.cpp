// A worker's last words read back (crash_report.hpp): the report taken out of what it printed,
// the last one kept, frames with their modules and offsets, and where a frame is shown.
#include <gtest/gtest.h>

#include "run/workers/crash_report.hpp"

TEST(CrashReport, TheLastReportIsTakenOutOfWhatTheWorkerPrinted) {
  std::string printed =
      "hello\n"
      "backendbench-crash SIGBUS addr=0x10\n"
      "backendbench-frame 0x5 0x1 /a.so\n"
      "between\n"
      "backendbench-crash SIGSEGV addr=0x0\n"
      "backendbench-frame 0x7f0000001139 0x1139 /lib/with space/libk.so\n"
      "backendbench-frame 0x55aa 0x55aa\n"
      "bye";
  const auto r = bb::take_crash_report(printed);
  ASSERT_TRUE(r);
  EXPECT_EQ(printed, "hello\nbetween\nbye");
  EXPECT_EQ(r->signal, "SIGSEGV");
  EXPECT_EQ(r->address, 0u);
  ASSERT_EQ(r->frames.size(), 2u);
  EXPECT_EQ(r->frames[0].pc, 0x7f0000001139u);
  EXPECT_EQ(r->frames[0].offset, 0x1139u);
  EXPECT_EQ(r->frames[0].module, "/lib/with space/libk.so");
  EXPECT_EQ(r->frames[1].module, "");
  EXPECT_EQ(r->frames[0].where(), "0x7f0000001139 (libk.so+0x1139)");
  EXPECT_EQ(r->first_in({"/lib/with space/libk.so"}), &r->frames[0]);
  const auto j = r->to_json();
  EXPECT_EQ(j["frames"][0]["offset"], "0x1139");
  EXPECT_FALSE(j["frames"][1].contains("module"));

  std::string plain = "nothing here\n";
  EXPECT_FALSE(bb::take_crash_report(plain));
  EXPECT_EQ(plain, "nothing here\n");
}

// A frame placed by addr2line reads as function, file and line.
TEST(CrashReport, APlacedFrameNamesItsFunctionFileAndLine) {
  bb::CrashFrame f;
  f.pc = 0x1;
  f.offset = 0x1138;
  f.module = "/root/scale/scale_segfault.so";
  f.function = "run(bb::Call&)";
  f.file = "/src/scale_segfault.cpp";
  f.line = 5;
  EXPECT_EQ(f.where(), "run(bb::Call&) at scale_segfault.cpp:5 (scale_segfault.so+0x1138)");
}
