// Runs one test, (implementation, case), to its verdict: fresh inputs, reference, poisoned and
// guarded outputs, the call, the checks, then timing if asked. The same code runs inside a
// worker process (the default) and in the host (--no-isolate).
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cases.hpp"
#include "measurement.hpp"
#include "plugin_library.hpp"
#include "results.hpp"

namespace bb {

// Which function a test calls.
struct Target {
  enum class Kind { kernel_impl, reference, identity };
  Kind kind = Kind::identity;
  std::string library;  // empty for identity
};

struct TestRequest {
  std::string manifest;  // gen_input.yaml
  std::string op;
  int case_index = 0;
  Target impl;
  Target reference;
  std::string device = "cpu";            // where the implementation runs: cpu, cuda, hip
  int device_index = 0;
  std::string reference_device = "cpu";  // where the reference runs
  bool check = true;              // compare against the reference
  bool time = false;              // measure when correct (or when check is false)
  bool check_determinism = false; // a second call must give the same bytes
  std::optional<uint64_t> seed;   // overrides the manifest's seed
  int random_cases = 0;           // --random-cases: the case list includes them (cases.hpp)
  TimingOptions timing;
  // With `time`: the baseline to time against, on the implementation's device, in alternating
  // blocks (paired.hpp); the result then carries the paired speedup and its interval.
  std::optional<Target> baseline;
};

struct ProbeRequest {
  std::string library;
  std::string op;
};

struct ProbeReply {
  bool loaded = false;
  std::string error;
  bool has_kernel_impl = false;
  bool has_reference = false;
  PluginInfo info;
};

nlohmann::json to_json(const TestRequest& r);
TestRequest test_request_from_json(const nlohmann::json& j);
nlohmann::json to_json(const ProbeRequest& r);
ProbeRequest probe_request_from_json(const nlohmann::json& j);
nlohmann::json to_json(const ProbeReply& r);
ProbeReply probe_reply_from_json(const nlohmann::json& j);

class TestRunner {
 public:
  TestResult run(const TestRequest& request);
  ProbeReply probe(const ProbeRequest& request);
  // A sticky device error has left this process's device context unusable, or a call left
  // something running in it (a thread still writing, a child process): it must exit.
  bool poisoned() const { return poisoned_ || retired_; }

  struct Exec;  // where a call runs: the CPU, or a device with its stream

 private:
  struct OpData {
    Manifest manifest;
    std::vector<ConcreteCase> cases;
  };
  Expected<const OpData*> op_data(const std::string& manifest, const std::string& op, std::optional<uint64_t> seed, int random_cases);
  Expected<const PluginLibrary*> library(const std::string& path, const std::string& op);
  Expected<bb_kernel_fn> resolve(const Target& t, const std::string& op);

  Expected<Exec> exec_for(const std::string& device, int index);

  std::map<std::string, std::unique_ptr<OpData>> ops_;
  std::map<std::string, void*> streams_;  // one stream per device, for the process's life
  bool poisoned_ = false;
  bool retired_ = false;
  std::map<std::string, std::unique_ptr<PluginLibrary>> libraries_;
};

}  // namespace bb
