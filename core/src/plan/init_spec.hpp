// An input's initialiser as the manifest declares it (manifest.hpp), and a value variant changes
// it (value_variants.hpp): apart from both, which read it.
#pragma once

#include <cstdint>
#include <string>

namespace bb {

enum class InitKind { randn, uniform, randint, ones, zeros, arange, full, npy };
const char* init_kind_name(InitKind k);

// How an input is filled. randn: a=mean, b=std. uniform: [a, b). randint: [a, b).
// arange: a=start, b=step. full: a=value. npy: path (relative to the manifest's folder).
// A bound may be an expression of the case's parameters and the inputs before this one
// ({randn: {std: "1 / sqrt(d)"}}: scaled logits; {randint: {high: vocab}}): its text is kept in
// a_expr / b_expr and the value resolved per case (cases.hpp).
struct InitSpec {
  InitKind kind = InitKind::randn;
  double a = 0.0;
  double b = 1.0;
  std::string path;
  int line = 0;
  std::string a_expr, b_expr;  // "" where a / b is a number
  // A value variant's change to what the initialiser makes (value_variants.hpp): gen::Twist's
  // kind and its power of two. 0, 0: the values as made.
  uint32_t twist = 0;
  int32_t twist_log2 = 0;
};

}  // namespace bb
