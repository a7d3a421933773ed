// Which job a worker takes next: the first job of its device kind that is ready (the jobs it
// waits for are done), in the order they were made. Workers block in take() until a job is
// ready or none will ever be.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "plan/jobs.hpp"

namespace bb {

class Scheduler {
 public:
  explicit Scheduler(std::vector<Job> jobs);

  // The next job for a worker serving `kinds`, or nullopt once every job of those kinds has
  // been taken. Blocks while the remaining ones wait for others. A ready job of the same
  // implementation as `previous` (the worker's last job) comes first: its worker process
  // serves it without a restart. Then, for worker `slot` (>= 0), a ready job of the
  // implementation it claimed (next_implementation: its spare worker is starting for it); then
  // one of an implementation no other worker holds (its last job's) or claimed, of `previous`'s
  // op first (the op's reference and baseline workers serve it); then a piece of one another
  // worker holds (the run's tail: this worker starts one of its own rather than idle); a job
  // another worker claimed only where nothing else is ready (a worker never idles for a claim).
  // Several workers thus start on different implementations and each keeps to its own.
  std::optional<std::size_t> take(const std::vector<std::string>& kinds, std::optional<std::size_t> previous = std::nullopt, int slot = -1);
  void done(std::size_t job);
  // Once no job of `current`'s implementation is left waiting for `kinds`: the first waiting
  // job of another implementation, the one take() is likely to give this worker next (a job it
  // waits for may finish late): of `current`'s op first, one no other worker holds. Nothing is
  // taken. With `slot` (>= 0), an implementation another
  // worker claimed is passed over and the one named is claimed for `slot` until its next take():
  // on a host of several devices each worker's spare starts for a different implementation,
  // which that worker then gets.
  std::optional<std::size_t> next_implementation(const std::vector<std::string>& kinds, std::size_t current, int slot = -1);
  // Stops handing out jobs (an interrupted run); take() returns nullopt from now on.
  void cancel();

  const Job& job(std::size_t id) const { return jobs_[id]; }
  std::size_t size() const { return jobs_.size(); }

 private:
  enum class State { waiting, running, done };
  bool ready(std::size_t id) const;
  // The worker that claimed job `id`'s implementation, or -1.
  int claimant(std::size_t id) const;
  // Whether a worker other than `slot` holds job `id`'s implementation (took its last job of it).
  bool held_elsewhere(std::size_t id, int slot) const;
  std::vector<Job> jobs_;
  std::vector<State> state_;
  std::map<std::pair<int, int>, int> claims_;  // (op, impl) -> the worker whose spare starts for it
  std::map<int, std::pair<int, int>> holding_;  // worker -> the (op, impl) of the last job it took
  bool cancelled_ = false;
  std::mutex mutex_;
  std::condition_variable changed_;
};

}  // namespace bb
