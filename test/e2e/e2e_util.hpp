// Running the backendbench binary from tests.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace e2e {

struct Run {
  int exit_code = -1;
  std::string out;  // stdout
  std::string err;  // stderr
};

// Runs backendbench with `args`; kills it after `timeout_s`.
Run backendbench(const std::vector<std::string>& args, double timeout_s = 240);

// Runs the program args[0] (a path) with the rest as its arguments; kills it after `timeout_s`.
Run run_program(const std::vector<std::string>& args, double timeout_s = 240);

// A fresh, empty folder for this test.
std::filesystem::path temp_dir(const std::string& name);

nlohmann::json read_json(const std::filesystem::path& file);
std::vector<nlohmann::json> read_jsonl(const std::filesystem::path& file);

// The tests of results.json whose impl is `impl`.
std::vector<nlohmann::json> tests_of(const nlohmann::json& results, const std::string& impl);

std::string fixture_root(const std::string& name);

}  // namespace e2e
