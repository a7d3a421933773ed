#include "run/workers/worker_stock.hpp"

#include <algorithm>
#include <cstring>
#include <cstdlib>
#include <filesystem>

#include <fmt/format.h>

#include "devices/device_runtimes.hpp"

namespace bb {

WorkerStock::~WorkerStock() { abandon_all(); }

void WorkerStock::start(const std::string& key, const std::string& kind, std::unique_ptr<Executor> worker, nlohmann::json warm,
                        double timeout_seconds) {
  auto spare = std::make_unique<SpareWorker>();
  spare->start(std::move(worker), {0, 0}, std::move(warm), timeout_seconds);
  if (!spare->held()) return;  // could not start: the slot starts one as before
  std::lock_guard lock(mutex_);
  workers_[key] = Entry{kind, std::move(spare)};
}

bool WorkerStock::holds(const std::string& key) const {
  std::lock_guard lock(mutex_);
  return workers_.count(key) > 0;
}

std::unique_ptr<Executor> WorkerStock::take(const std::string& key) {
  std::unique_ptr<SpareWorker> spare;
  {
    std::lock_guard lock(mutex_);
    auto it = workers_.find(key);
    if (it == workers_.end()) return nullptr;
    spare = std::move(it->second.spare);
    workers_.erase(it);
  }
  return spare->take({0, 0});  // settled; one whose warm-up failed is ended there
}

void WorkerStock::settle() {
  std::lock_guard lock(mutex_);
  for (auto& [key, e] : workers_) e.spare->settle();
}

void WorkerStock::abandon_all() {
  end_if([](const Entry&) { return true; }, false);
}

void WorkerStock::retire_kind(const std::string& kind) {
  end_if([&](const Entry& e) { return e.kind == kind; }, true);
}

void WorkerStock::end_if(const std::function<bool(const Entry&)>& which, bool wait) {
  std::vector<std::unique_ptr<SpareWorker>> left;
  {
    std::lock_guard lock(mutex_);
    for (auto it = workers_.begin(); it != workers_.end();)
      if (which(it->second)) {
        left.push_back(std::move(it->second.spare));
        it = workers_.erase(it);
      } else {
        ++it;
      }
  }
  for (auto& spare : left)
    if (auto w = spare->release()) wait ? w->recycle() : w->abandon();
}

std::size_t WorkerStock::size() const {
  std::lock_guard lock(mutex_);
  return workers_.size();
}

std::string stocked_impl_key(int op, int impl, const std::string& device, int ordinal) {
  return fmt::format("impl|{}|{}|{}:{}", op, impl, device, ordinal);
}

std::string stocked_reference_key(const std::string& reference_key, int ordinal) { return fmt::format("reference|{}|{}", reference_key, ordinal); }

int gpu_count_hint(const std::string& kind) {
  const RuntimeRow* rt = find_runtime_row(kind);
  if (!rt || !rt->visible_env || !rt->gpu_node_prefix) return -1;
  if (const char* visible = std::getenv(rt->visible_env)) {
    const std::string v = visible;
    return v.empty() ? 0 : static_cast<int>(std::count(v.begin(), v.end(), ',')) + 1;
  }
  int n = 0;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator("/dev", ec)) {
    const std::string name = e.path().filename().string();
    const std::size_t p = std::strlen(rt->gpu_node_prefix);
    if (name.size() > p && name.rfind(rt->gpu_node_prefix, 0) == 0 && std::all_of(name.begin() + static_cast<std::ptrdiff_t>(p), name.end(), [](char c) { return c >= '0' && c <= '9'; })) ++n;
  }
  return ec ? -1 : n;
}

bool might_have_device(const std::string& kind) {
  std::error_code ec;
  const RuntimeRow* rt = find_runtime_row(kind);
  return !rt || std::filesystem::exists(rt->driver_node, ec);
}

}  // namespace bb
