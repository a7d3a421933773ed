// Writes a manifest into a fresh temporary op folder for a test.
#pragma once

#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

inline std::filesystem::path write_manifest(const std::string& op, const std::string& yaml) {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  const auto dir = std::filesystem::temp_directory_path() / "bb_unit" / (std::string(info->test_suite_name()) + "." + info->name()) / op;
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "gen_input.yaml") << yaml;
  return dir / "gen_input.yaml";
}
