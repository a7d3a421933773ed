// What the judges of a run share across the worker pool's threads: when each device last timed
// a block (DeviceActivity), and the manifests and cases the host has read (op_cases). Nothing
// else of a test outlives it.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "expected.hpp"
#include "plan/cases.hpp"
#include "plan/manifest.hpp"
#include "run/judge_request.hpp"

namespace bb::judge {

// When a block last ended on each device ("cuda:0"), any worker's: a device timed within
// kDeviceWarmFor has its clocks up, so a new worker's first block there skips the long warm-up
// of a first measurement (TimingOptions::device_warm). Shared by the worker pool's threads.
constexpr double kDeviceWarmFor = 0.5;
class DeviceActivity {
 public:
  static DeviceActivity& shared() {
    static DeviceActivity a;
    return a;
  }
  bool warm(const std::string& device) {
    std::lock_guard lock(mutex_);
    auto it = last_.find(device);
    return it != last_.end() && std::chrono::duration<double>(std::chrono::steady_clock::now() - it->second).count() < kDeviceWarmFor;
  }
  void timed(const std::string& device) {
    std::lock_guard lock(mutex_);
    last_[device] = std::chrono::steady_clock::now();
  }

 private:
  std::mutex mutex_;
  std::map<std::string, std::chrono::steady_clock::time_point> last_;
};

// The manifests and cases the host has read, shared by the worker pool's threads.
struct OpCases {
  Manifest manifest;
  std::vector<ConcreteCase> cases;
};
inline Expected<const OpCases*> op_cases(const TestRequest& req) {
  static std::mutex mutex;
  static std::map<std::string, std::unique_ptr<OpCases>> cache;
  std::lock_guard lock(mutex);
  auto& slot = cache[fmt::format("{}#{}#{}", req.manifest, req.seed ? std::to_string(*req.seed) : "", expansion_key(req.expansion))];
  if (!slot) {
    auto m = load_manifest(req.manifest, req.op);
    if (!m) return m.error();
    if (req.seed) m->seed = *req.seed;
    auto cases = expand_cases(*m, req.expansion);
    if (!cases) return cases.error();
    slot = std::make_unique<OpCases>(OpCases{std::move(*m), std::move(*cases)});
  }
  return slot.get();
}

}  // namespace bb::judge
