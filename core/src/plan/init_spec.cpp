#include "plan/init_spec.hpp"

namespace bb {

const char* init_kind_name(InitKind k) {
  static const char* names[] = {"randn", "uniform", "randint", "ones", "zeros", "arange", "full", "npy"};
  return names[static_cast<int>(k)];
}

}  // namespace bb
