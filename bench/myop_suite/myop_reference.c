/* The suite's reference: y = x * alpha. */
#include "myop_suite.h"

BB_EXPORT int myop_reference(const bb_call* call) {
  myop_args a;
  const int err = myop_args_of(call, &a);
  if (err) return err;
  for (int64_t i = 0; i < a.n; ++i) a.y[i] = a.x[i] * a.alpha;
  return BB_OK;
}
