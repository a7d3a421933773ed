#include "init.hpp"

#include <cmath>
#include <cstring>

#include <fmt/format.h>

#include "npy.hpp"
#include "parallel.hpp"

namespace bb {

uint64_t random_bits(uint64_t seed, uint64_t counter) {
  uint64_t z = seed + (counter + 1) * 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  z = z ^ (z >> 31);
  // a second round decorrelates neighbouring counters further
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

double random_uniform01(uint64_t seed, uint64_t counter) {
  return static_cast<double>(random_bits(seed, counter) >> 11) * (1.0 / 9007199254740992.0);
}

double random_normal(uint64_t seed, uint64_t counter) {
  const double u1 = 1.0 - random_uniform01(seed, 2 * counter);  // (0, 1]
  const double u2 = random_uniform01(seed, 2 * counter + 1);
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
}

namespace {

// Stores value(i) at every index i < n. Each value depends on its index alone (the generators
// are counter-based), so a large tensor is filled by several threads with the very values one
// thread would write: the inputs of a 64M-element case took 3.8 s on one core.
template <typename F>
void fill_by_index(DType dtype, void* data, std::size_t n, F value) {
  for_each_chunk(n, chunk_count(n), [&](std::size_t, std::size_t lo, std::size_t hi) {
    for (std::size_t i = lo; i < hi; ++i) store_element(dtype, data, i, value(i));
  });
}

}  // namespace

std::optional<double> init_value(const InitSpec& s, uint64_t seed, std::size_t i) {
  switch (s.kind) {
    case InitKind::randn: return s.a + s.b * random_normal(seed, i);
    case InitKind::uniform: return s.a + (s.b - s.a) * random_uniform01(seed, i);
    case InitKind::randint: {
      const double lo = std::ceil(s.a);
      const double span = std::ceil(s.b) - lo;  // [low, high)
      return lo + std::floor(span * random_uniform01(seed, i));
    }
    case InitKind::ones: return 1.0;
    case InitKind::zeros: return 0.0;
    case InitKind::arange: return s.a + s.b * static_cast<double>(i);
    case InitKind::full: return s.a;
    case InitKind::npy: return std::nullopt;
  }
  return std::nullopt;
}

Status fill_tensor(const ConcreteTensor& t, void* data, uint64_t seed, const std::filesystem::path& dir) {
  const auto n = static_cast<std::size_t>(t.numel());
  const InitSpec& s = t.init;
  switch (s.kind) {
    case InitKind::zeros:
      std::memset(data, 0, t.nbytes());
      break;
    case InitKind::npy: {
      const auto file = dir / s.path;
      // Inside the op's folder after links are followed, too (the manifest's check is lexical).
      std::error_code ec;
      const auto real = std::filesystem::weakly_canonical(file, ec), home = std::filesystem::weakly_canonical(dir, ec);
      const auto rel = real.lexically_relative(home);
      if (ec || rel.empty() || *rel.begin() == "..")
        return make_error(fmt::format("{}: leaves the op's folder {} (through a link?); expected a file inside it", file.string(), dir.string()));
      auto arr = read_npy(file);
      if (!arr) return arr.error();
      if (arr->shape != t.shape) {
        return make_error(fmt::format("{}: shape ({}) does not match input '{}' of shape ({})", file.string(),
                                      fmt::join(arr->shape, ", "), t.name, fmt::join(t.shape, ", ")));
      }
      if (arr->dtype == t.dtype) {
        std::memcpy(data, arr->data.data(), t.nbytes());
      } else {
        for (std::size_t i = 0; i < n; ++i) store_element(t.dtype, data, i, load_element(arr->dtype, arr->data.data(), i));
      }
      break;
    }
    default:
      fill_by_index(t.dtype, data, n, [&](std::size_t i) { return *init_value(s, seed, i); });
      break;
  }
  return Ok{};
}

}  // namespace bb
