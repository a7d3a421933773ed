/* Shared by the suite's plugins: the call's x, y and alpha, float32 only. */
#pragma once
#include <backendbench/plugin.h>
#include <stdio.h>
#include <string.h>

typedef struct {
  const float* x;
  float* y;
  int64_t n;
  float alpha;
} myop_args;

/* 0 and the arguments, or an error code with the call's message written. */
static inline int myop_args_of(const bb_call* call, myop_args* a) {
  const DLTensor* x = &call->inputs[0];
  if (x->dtype.code != kDLFloat || x->dtype.bits != 32) {
    snprintf(call->error, call->error_capacity, "only float32");
    return BB_ERR_UNSUPPORTED;
  }
  a->alpha = 1.0f;
  for (int i = 0; i < call->num_attrs; ++i)
    if (strcmp(call->attrs[i].name, "alpha") == 0) a->alpha = (float)call->attrs[i].f;
  a->n = 1;
  for (int d = 0; d < x->ndim; ++d) a->n *= x->shape[d];
  a->x = (const float*)x->data;
  a->y = (float*)call->outputs[0].data;
  return BB_OK;
}
