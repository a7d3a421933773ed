// When each device last timed a block, shared by the judges of a run across the worker pool's
// threads. Nothing else of a test outlives it.
#pragma once

#include <chrono>
#include <map>
#include <mutex>
#include <string>

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

}  // namespace bb::judge
