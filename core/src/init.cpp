#include "init.hpp"

#include <backendbench/detail/init_values.h>

#include <cmath>
#include <cstring>

#include <fmt/format.h>

#include "npy.hpp"
#include "parallel.hpp"

namespace bb {

uint64_t random_bits(uint64_t seed, uint64_t counter) { return gen::random_bits(seed, counter); }
double random_uniform01(uint64_t seed, uint64_t counter) { return gen::random_uniform01(seed, counter); }
double random_normal(uint64_t seed, uint64_t counter) { return gen::random_normal(seed, counter); }

bool varies_with_seed(InitKind k) { return k == InitKind::randn || k == InitKind::uniform || k == InitKind::randint; }

std::optional<uint32_t> device_init_kind(InitKind k) {
  switch (k) {
    case InitKind::randn: return gen::kRandn;
    case InitKind::uniform: return gen::kUniform;
    case InitKind::randint: return gen::kRandint;
    case InitKind::ones: return gen::kOnes;
    case InitKind::zeros: return gen::kZeros;
    case InitKind::arange: return gen::kArange;
    case InitKind::full: return gen::kFull;
    case InitKind::npy: return std::nullopt;
  }
  return std::nullopt;
}

namespace {

// Stores value(i) at every index i < n. Each value depends on its index alone (the generators
// are counter-based), so a large tensor is filled by several threads with the very values one
// thread would write: the inputs of a 64M-element case took 3.8 s on one core.
template <typename F>
void fill_by_index(DType dtype, void* data, std::size_t n, F value) {
  const DLDataType d = to_dlpack(dtype);
  for_each_chunk(n, chunk_count(n), [&](std::size_t, std::size_t lo, std::size_t hi) {
    for (std::size_t i = lo; i < hi; ++i) gen::store(d.code, d.bits, data, i, value(i));
  });
}

}  // namespace

std::optional<double> init_value(const InitSpec& s, uint64_t seed, std::size_t i) {
  const auto kind = device_init_kind(s.kind);
  if (!kind) return std::nullopt;
  return gen::made(*kind, s.a, s.b, s.twist, s.twist_log2, seed, i);
}

Status fill_tensor(const ConcreteTensor& t, void* data, uint64_t seed, const std::filesystem::path& dir) {
  const auto n = static_cast<std::size_t>(t.numel());
  const InitSpec& s = t.init;
  switch (s.kind) {
    case InitKind::zeros:
      if (s.twist != gen::kAsMade) {  // zeros with NaN or infinities among them
        fill_by_index(t.dtype, data, n, [&](std::size_t i) { return *init_value(s, seed, i); });
        break;
      }
      std::memset(data, 0, t.nbytes());
      break;
    case InitKind::npy: {
      const auto file = dir / s.path;
      // Inside the op's folder after links are followed, too (the manifest's check is lexical),
      // or inside the folder its manifest links to (a build links gen_input.yaml and data/ to
      // the op's source folder).
      std::error_code ec;
      const auto real = std::filesystem::weakly_canonical(file, ec);
      bool inside = false;
      auto within = [&](const std::filesystem::path& home) {
        const auto rel = real.lexically_relative(home);
        return !home.empty() && !rel.empty() && *rel.begin() != "..";
      };
      if (!ec) {
        std::error_code h;
        inside = within(std::filesystem::weakly_canonical(dir, h));
        for (const char* manifest : {"gen_input.yaml", "gen_input.py"})
          if (!inside && std::filesystem::is_symlink(dir / manifest, h))
            inside = within(std::filesystem::canonical(dir / manifest, h).parent_path());
      }
      if (!inside)
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
    case InitKind::randn: {
      // Two normals per Box-Muller pair: its radius (the logarithm) made once for both, the very
      // values init_value gives element by element.
      const DLDataType d = to_dlpack(t.dtype);
      for_each_chunk(n, chunk_count(n), [&](std::size_t, std::size_t lo, std::size_t hi) {
        for (std::size_t i = lo; i < hi;) {
          const uint64_t pair = i >> 1;
          const double r = gen::normal_radius(seed, pair);
          for (bool second : {false, true}) {
            if ((i & 1) != static_cast<std::size_t>(second) || i >= hi) continue;
            const double v = gen::add(s.a, gen::mul(s.b, gen::normal_of_pair(seed, pair, r, second)));
            gen::store(d.code, d.bits, data, i, gen::twisted(s.twist, s.twist_log2, v, seed, i));
            ++i;
          }
        }
      });
      break;
    }
    default:
      fill_by_index(t.dtype, data, n, [&](std::size_t i) { return *init_value(s, seed, i); });
      break;
  }
  return Ok{};
}

}  // namespace bb
