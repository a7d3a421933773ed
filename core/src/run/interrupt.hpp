// SIGINT and SIGTERM stop a run cleanly: no new test starts, the tests in flight are abandoned
// (their workers killed), and every report is written for what finished. Signals sent by the
// run's own worker processes (a plugin signalling the host) are ignored. A second SIGINT or
// SIGTERM ends the host at once.
#pragma once

#include <functional>

namespace bb {

// Installs the handlers; `on_interrupt` runs once, on a thread of its own, after the first signal.
void install_interrupt_handlers(std::function<void()> on_interrupt);
// The signal that interrupted the run, or 0.
int interrupt_signal();
inline bool interrupted() { return interrupt_signal() != 0; }
// Signals from workers that were ignored so far.
int ignored_worker_signals();

}  // namespace bb
