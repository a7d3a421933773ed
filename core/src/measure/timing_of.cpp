#include "measure/timing_of.hpp"

namespace bb {

Timing timing_of(const Measurement& m) {
  Timing t;
  t.mode = timing_mode_name(m.mode);
  t.stats = m.stats;
  t.host = m.host;
  t.stop = stop_reason_name(m.stop);  // paired: how the pairing stopped
  t.batch = m.batch;
  t.warmup_calls = m.warmup_calls;
  t.wall_time = m.wall_time;
  t.measured_time = m.measured_time;
  t.throttled = m.throttled;
  t.clock_mhz = m.clock_mhz;
  t.blocking = m.blocking;
  t.eviction = m.eviction;
  t.samples_per_sync = m.samples_per_sync;
  t.event_cost = m.event_cost;
  t.notes = m.notes;
  return t;
}

}  // namespace bb
