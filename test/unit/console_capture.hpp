// What the console reporter's tests give it for a terminal and a clock: a FILE* writing into
// memory (Capture) and a fake monotonic clock that the test moves by hand (FakeClock).
// console_reporter_test.cpp feeds the reporter events one by one; golden_output_test.cpp replays a whole
// run through it.
#pragma once

#include <stdio.h>  // open_memstream, flockfile

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <string>
#include <thread>

namespace bb_test {

// A FILE* writing into memory; text() once the reporter is gone.
class Capture {
 public:
  Capture() : file_(open_memstream(&buf_, &len_)) {}
  ~Capture() {
    if (file_) std::fclose(file_);
    std::free(buf_);
  }
  Capture(const Capture&) = delete;
  Capture& operator=(const Capture&) = delete;
  std::FILE* file() const { return file_; }
  // Safe while the reporter's ticker writes: the FILE's lock keeps the buffer still.
  std::string text() {
    flockfile(file_);
    std::fflush(file_);
    std::string s(buf_, len_);
    funlockfile(file_);
    return s;
  }

 private:
  char* buf_ = nullptr;
  std::size_t len_ = 0;
  std::FILE* file_;
};

// A fake monotonic clock, at 1000 s until advance() moves it. Read two ways:
//   fn()        every thread sees a move at once: for a test that moves the clock and then waits
//               for the reporter's ticker thread to print.
//   paced_fn()  the time moves on for other threads only once the thread that made the clock
//               has read it. The console reads the clock with its lock held in every event, so
//               the ticker (which reads it under the same lock) never sees a time that the event
//               in progress has not seen first, and a progress line is printed by the same event,
//               at the same count, on every run: for a replay whose output must not vary.
class FakeClock {
 public:
  FakeClock() : state_(std::make_shared<State>()) { state_->owner = std::this_thread::get_id(); }
  std::function<double()> fn() const {
    return [s = state_] { return s->now.load(); };
  }
  std::function<double()> paced_fn() const {
    return [s = state_] {
      if (std::this_thread::get_id() == s->owner) s->seen.store(s->now.load());
      return s->seen.load();
    };
  }
  void advance(double seconds) const { state_->now.store(state_->now.load() + seconds); }

 private:
  struct State {
    std::thread::id owner;
    std::atomic<double> now{1000.0}, seen{1000.0};
  };
  std::shared_ptr<State> state_;
};

}  // namespace bb_test
