// A passing timed result's share of its device's peaks: percent of the measured copy bandwidth
// and of the theoretical one (from its bytes per second), and its roofline (roofline.hpp: its
// FLOPs against the compute peak its dtype is held to, its bytes against the bandwidth).
#pragma once

#include <string>

#include "devices/device_kind.hpp"
#include "dtype.hpp"
#include "results.hpp"

namespace bb {

// Fills r.performance's peak_pct, peak_pct_theoretical and roofline_* where the device's figures
// (kind's device r.id.device_index) and the result's are known; leaves them empty otherwise.
// `dtype`: the case's first input's (compute_kind_for).
void add_peak_shares(TestResult& r, const DeviceKind& kind, DType dtype);

}  // namespace bb
