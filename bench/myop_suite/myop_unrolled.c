/* Right: unrolled by four, the rest one by one. */
#include "myop_suite.h"

BB_EXPORT int myop_kernel_impl(const bb_call* call) {
  myop_args a;
  const int err = myop_args_of(call, &a);
  if (err) return err;
  int64_t i = 0;
  for (; i + 4 <= a.n; i += 4) {
    a.y[i] = a.x[i] * a.alpha;
    a.y[i + 1] = a.x[i + 1] * a.alpha;
    a.y[i + 2] = a.x[i + 2] * a.alpha;
    a.y[i + 3] = a.x[i + 3] * a.alpha;
  }
  for (; i < a.n; ++i) a.y[i] = a.x[i] * a.alpha;
  return BB_OK;
}
