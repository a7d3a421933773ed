// BackendBench plugin helpers for C++ (C++17; host code only: do not include from device code).
//
// Typed tensor views, attribute lookup with defaults, 16-bit float types, dtype dispatch, and
// the export macros that define `<op>_kernel_impl` / `<op>_reference` and turn any C++
// exception into an error return. Header-only; no link against the host.
//
//   #include <backendbench/plugin.hpp>
//   static void run(bb::Call& c) {
//     auto x = c.input<float>("x");
//     auto y = c.output<float>("y");
//     const float alpha = static_cast<float>(c.attr<double>("alpha", 1.0));
//     for (int64_t i = 0; i < x.numel(); ++i) y[i] = alpha * x[i];
//   }
//   BB_KERNEL_IMPL(myop, run)
#ifndef BACKENDBENCH_PLUGIN_HPP
#define BACKENDBENCH_PLUGIN_HPP

#include <backendbench/plugin.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#define BB_STR2_(x) #x
#define BB_STR_(x) BB_STR2_(x)

namespace bb {

// ---------------------------------------------------------------------------------------------
// 16-bit floating-point storage types with round-to-nearest-even conversion.

inline uint32_t float_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}
inline float bits_float(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

inline uint16_t float_to_half_bits(float f) {
  const uint32_t x = float_bits(f);
  const uint32_t sign = (x >> 16) & 0x8000u;
  const uint32_t abs = x & 0x7fffffffu;
  if (abs >= 0x7f800000u) {  // Inf or NaN
    return static_cast<uint16_t>(sign | 0x7c00u | (abs > 0x7f800000u ? (0x200u | ((abs >> 13) & 0x3ffu)) : 0u));
  }
  if (abs >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // rounds to Inf
  if (abs < 0x38800000u) {                                                // half subnormal or 0
    // value = abs_float; half subnormal unit is 2^-24.
    const float a = bits_float(abs);
    const float scaled = a * 16777216.0f;  // exact: multiply by 2^24
    // round half to even
    float r = std::nearbyint(scaled);
    return static_cast<uint16_t>(sign | static_cast<uint32_t>(r));
  }
  const uint32_t mant = abs & 0x7fffffu;
  const uint32_t exp = (abs >> 23) - 127 + 15;
  uint32_t h = (exp << 10) | (mant >> 13);
  const uint32_t rest = mant & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) ++h;
  return static_cast<uint16_t>(sign | h);
}

inline float half_bits_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1fu;
  const uint32_t mant = h & 0x3ffu;
  if (exp == 0) {
    const float v = static_cast<float>(mant) * (1.0f / 16777216.0f);
    return sign ? -v : v;
  }
  if (exp == 31) return bits_float(sign | 0x7f800000u | (mant << 13));
  return bits_float(sign | ((exp - 15 + 127) << 23) | (mant << 13));
}

inline uint16_t float_to_bfloat16_bits(float f) {
  const uint32_t x = float_bits(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);  // quiet NaN
  const uint32_t rounding = 0x7fffu + ((x >> 16) & 1u);
  return static_cast<uint16_t>((x + rounding) >> 16);
}

inline float bfloat16_bits_to_float(uint16_t b) { return bits_float(static_cast<uint32_t>(b) << 16); }

struct half {
  uint16_t bits = 0;
  half() = default;
  half(float f) : bits(float_to_half_bits(f)) {}  // NOLINT: implicit, like a float type
  operator float() const { return half_bits_to_float(bits); }
  static half from_bits(uint16_t b) {
    half h;
    h.bits = b;
    return h;
  }
};

struct bfloat16 {
  uint16_t bits = 0;
  bfloat16() = default;
  bfloat16(float f) : bits(float_to_bfloat16_bits(f)) {}  // NOLINT
  operator float() const { return bfloat16_bits_to_float(bits); }
  static bfloat16 from_bits(uint16_t b) {
    bfloat16 h;
    h.bits = b;
    return h;
  }
};

static_assert(sizeof(half) == 2 && sizeof(bfloat16) == 2, "16-bit storage types");

// ---------------------------------------------------------------------------------------------
// Errors: throw bb::Error (or anything derived from std::exception) inside a kernel; the export
// macro turns it into an error return with the message.

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& what, int code = BB_ERR_GENERIC) : std::runtime_error(what), code_(code) {}
  int code() const { return code_; }

 private:
  int code_;
};

// Thrown by a function for a case it does not support (a shape, a dtype): BB_ERR_UNSUPPORTED, so
// the test is SKIPPED with the message (an ERROR where the declared preconditions admit the case).
class Unsupported : public Error {
 public:
  explicit Unsupported(const std::string& what) : Error(what, BB_ERR_UNSUPPORTED) {}
};

#define BB_CHECK(cond, msg)                                                      \
  do {                                                                           \
    if (!(cond)) throw ::bb::Error(std::string("check failed: " #cond ": ") + (msg), BB_ERR_INVALID_ARGUMENT); \
  } while (0)

// ---------------------------------------------------------------------------------------------
// Dtypes.

template <typename T>
constexpr DLDataType dtype_of() {
  if constexpr (std::is_same_v<T, float>) return DLDataType{kDLFloat, 32, 1};
  else if constexpr (std::is_same_v<T, double>) return DLDataType{kDLFloat, 64, 1};
  else if constexpr (std::is_same_v<T, half>) return DLDataType{kDLFloat, 16, 1};
  else if constexpr (std::is_same_v<T, bfloat16>) return DLDataType{kDLBfloat, 16, 1};
  else if constexpr (std::is_same_v<T, bool>) return DLDataType{static_cast<uint8_t>(BB_DLPACK_BOOL), 8, 1};
  else if constexpr (std::is_same_v<T, int8_t>) return DLDataType{kDLInt, 8, 1};
  else if constexpr (std::is_same_v<T, int16_t>) return DLDataType{kDLInt, 16, 1};
  else if constexpr (std::is_same_v<T, int32_t>) return DLDataType{kDLInt, 32, 1};
  else if constexpr (std::is_same_v<T, int64_t>) return DLDataType{kDLInt, 64, 1};
  else if constexpr (std::is_same_v<T, uint8_t>) return DLDataType{kDLUInt, 8, 1};
  else static_assert(sizeof(T) == 0, "unsupported element type");
}

inline bool same_dtype(DLDataType a, DLDataType b) { return a.code == b.code && a.bits == b.bits && a.lanes == b.lanes; }

inline const char* dtype_name(DLDataType t) {
  if (t.lanes != 1) return "vector";
  switch (t.code) {
    case kDLFloat: return t.bits == 32 ? "float32" : t.bits == 64 ? "float64" : t.bits == 16 ? "float16" : "float?";
    case kDLBfloat: return t.bits == 16 ? "bfloat16" : "bfloat?";
    case kDLInt: return t.bits == 8 ? "int8" : t.bits == 16 ? "int16" : t.bits == 32 ? "int32" : t.bits == 64 ? "int64" : "int?";
    case kDLUInt: return t.bits == 8 ? "uint8" : "uint?";
    case BB_DLPACK_BOOL: return "bool";
    default: return "unknown";
  }
}

// Calls f(T{}) with T the C++ type of a floating dtype (float, double, half, bfloat16).
template <typename F>
decltype(auto) dispatch_floating(DLDataType t, F&& f) {
  if (same_dtype(t, dtype_of<float>())) return f(float{});
  if (same_dtype(t, dtype_of<double>())) return f(double{});
  if (same_dtype(t, dtype_of<half>())) return f(half{});
  if (same_dtype(t, dtype_of<bfloat16>())) return f(bfloat16{});
  throw Error(std::string("unsupported dtype ") + dtype_name(t) + " (expected a floating dtype)", BB_ERR_UNSUPPORTED);
}

// ---------------------------------------------------------------------------------------------
// Tensor views.

inline int64_t numel_of(const DLTensor& t) {
  int64_t n = 1;
  for (int i = 0; i < t.ndim; ++i) n *= t.shape[i];
  return n;
}

inline bool is_contiguous(const DLTensor& t) {
  if (t.strides == nullptr) return true;
  int64_t expected = 1;
  for (int i = t.ndim - 1; i >= 0; --i) {
    if (t.shape[i] != 1 && t.strides[i] != expected) return false;
    expected *= t.shape[i];
  }
  return true;
}

// A typed view of a DLTensor. Element access by linear index assumes a contiguous tensor (which
// the host always passes); at() follows strides.
template <typename T>
class TensorView {
 public:
  TensorView() = default;
  explicit TensorView(const DLTensor* t) : t_(t) {
    if (!same_dtype(t->dtype, dtype_of<std::remove_const_t<T>>()))
      throw Error(std::string("tensor has dtype ") + dtype_name(t->dtype) + ", view expects " +
                      dtype_name(dtype_of<std::remove_const_t<T>>()),
                  BB_ERR_UNSUPPORTED);
  }
  T* data() const { return reinterpret_cast<T*>(static_cast<char*>(t_->data) + t_->byte_offset); }
  int ndim() const { return t_->ndim; }
  int64_t size(int d) const { return t_->shape[d < 0 ? d + t_->ndim : d]; }
  int64_t stride(int d) const {
    d = d < 0 ? d + t_->ndim : d;
    if (t_->strides) return t_->strides[d];
    int64_t s = 1;
    for (int i = t_->ndim - 1; i > d; --i) s *= t_->shape[i];
    return s;
  }
  int64_t numel() const { return numel_of(*t_); }
  bool contiguous() const { return is_contiguous(*t_); }
  const DLTensor& raw() const { return *t_; }
  T& operator[](int64_t i) const { return data()[i]; }
  template <typename... I>
  T& at(I... idx) const {
    const int64_t ix[] = {static_cast<int64_t>(idx)...};
    int64_t off = 0;
    for (size_t d = 0; d < sizeof...(I); ++d) off += ix[d] * stride(static_cast<int>(d));
    return data()[off];
  }

 private:
  const DLTensor* t_ = nullptr;
};

// ---------------------------------------------------------------------------------------------
// The call, with lookups by name.

class Call {
 public:
  explicit Call(const bb_call* c) : c_(c) {}
  const bb_call& raw() const { return *c_; }
  const char* op() const { return c_->op; }
  void* stream() const { return c_->stream; }
  int num_inputs() const { return c_->num_inputs; }
  int num_outputs() const { return c_->num_outputs; }

  const DLTensor& input(int i) const {
    if (i < 0 || i >= c_->num_inputs) throw Error("input index " + std::to_string(i) + " out of range", BB_ERR_INVALID_ARGUMENT);
    return c_->inputs[i];
  }
  const DLTensor& input(const char* name) const { return input(index_of(c_->input_names, c_->num_inputs, name, "input")); }
  DLTensor& output(int i) const {
    if (i < 0 || i >= c_->num_outputs) throw Error("output index " + std::to_string(i) + " out of range", BB_ERR_INVALID_ARGUMENT);
    return c_->outputs[i];
  }
  DLTensor& output(const char* name) const { return output(index_of(c_->output_names, c_->num_outputs, name, "output")); }

  template <typename T, typename K>
  TensorView<const T> input(K key) const { return TensorView<const T>(&input(key)); }
  template <typename T, typename K>
  TensorView<T> output(K key) const { return TensorView<T>(&output(key)); }

  const bb_attr* find_attr(const char* name) const {
    for (int i = 0; i < c_->num_attrs; ++i)
      if (std::strcmp(c_->attrs[i].name, name) == 0) return &c_->attrs[i];
    return nullptr;
  }
  bool has_attr(const char* name) const { return find_attr(name) != nullptr; }

  // attr<int64_t>, attr<double>, attr<bool>, attr<std::string>, attr<std::vector<int64_t>>,
  // attr<std::vector<double>>: the attribute's value, or `def` where the call has none.
  template <typename T>
  T attr(const char* name, T def) const {
    const bb_attr* a = find_attr(name);
    if (!a) return def;
    if constexpr (std::is_same_v<T, bool>) {
      if (a->kind == BB_ATTR_BOOL || a->kind == BB_ATTR_INT) return a->i != 0;
    } else if constexpr (std::is_integral_v<T>) {
      if (a->kind == BB_ATTR_INT || a->kind == BB_ATTR_BOOL) return static_cast<T>(a->i);
    } else if constexpr (std::is_floating_point_v<T>) {
      if (a->kind == BB_ATTR_FLOAT) return static_cast<T>(a->f);
      if (a->kind == BB_ATTR_INT) return static_cast<T>(a->i);
    } else if constexpr (std::is_same_v<T, std::string>) {
      if (a->kind == BB_ATTR_STRING) return std::string(a->s ? a->s : "");
    } else if constexpr (std::is_same_v<T, std::vector<int64_t>>) {
      if (a->kind == BB_ATTR_INT_LIST) return std::vector<int64_t>(a->ints, a->ints + a->count);
    } else if constexpr (std::is_same_v<T, std::vector<double>>) {
      if (a->kind == BB_ATTR_FLOAT_LIST) return std::vector<double>(a->floats, a->floats + a->count);
      if (a->kind == BB_ATTR_INT_LIST) return std::vector<double>(a->ints, a->ints + a->count);
    } else {
      static_assert(sizeof(T) == 0, "unsupported attribute type");
    }
    throw Error(std::string("attribute '") + name + "' has an unexpected kind", BB_ERR_INVALID_ARGUMENT);
  }
  std::string attr(const char* name, const char* def) const { return attr<std::string>(name, std::string(def)); }

 private:
  static int index_of(const char* const* names, int n, const char* name, const char* what) {
    for (int i = 0; i < n; ++i)
      if (names && names[i] && std::strcmp(names[i], name) == 0) return i;
    throw Error(std::string("no ") + what + " named '" + name + "'", BB_ERR_INVALID_ARGUMENT);
  }
  const bb_call* c_;
};

namespace detail {
inline void write_error(const bb_call* c, const char* msg) {
  if (c && c->error && c->error_capacity > 0) {
    std::snprintf(c->error, c->error_capacity, "%s", msg);
  }
}

template <typename F>
int invoke(F&& f, const bb_call* c) noexcept {
  if (c == nullptr) return BB_ERR_INVALID_ARGUMENT;
  if (BB_ABI_MAJOR_OF(c->abi_version) != BB_ABI_VERSION_MAJOR || c->struct_size < offsetof(bb_call, error_capacity) + sizeof(size_t)) {
    write_error(c, "plugin speaks BackendBench ABI major " BB_STR_(BB_ABI_VERSION_MAJOR) ", the host another");
    return BB_ERR_ABI;
  }
  try {
    Call call(c);
    if constexpr (std::is_same_v<decltype(f(call)), int>) {
      return f(call);
    } else {
      f(call);
      return BB_OK;
    }
  } catch (const Error& e) {
    write_error(c, e.what());
    return e.code();
  } catch (const std::exception& e) {
    write_error(c, e.what());
    return BB_ERR_GENERIC;
  } catch (...) {
    write_error(c, "unknown C++ exception");
    return BB_ERR_GENERIC;
  }
}
// Owns the strings behind a bb_plugin_info built from comma-separated lists.
struct InfoHolder {
  std::vector<std::string> device_strings, dtype_strings, precondition_strings;
  std::vector<const char*> device_ptrs, dtype_ptrs, precondition_ptrs;
  bb_plugin_info info{};
  // Items between `sep`; spaces dropped where `keep_spaces` is false.
  static void split(const char* list, std::vector<std::string>& out, char sep = ',', bool keep_spaces = false) {
    std::string cur;
    for (const char* p = list; ; ++p) {
      if (*p == sep || *p == '\0') {
        while (!cur.empty() && cur.back() == ' ') cur.pop_back();
        if (!cur.empty()) out.push_back(cur);
        cur.clear();
        if (*p == '\0') break;
      } else if (*p != ' ' || (keep_spaces && !cur.empty())) {
        cur += *p;
      }
    }
  }
  InfoHolder(const char* version, const char* devices, const char* dtypes, const char* preconditions = "") {
    split(devices, device_strings);
    split(dtypes, dtype_strings);
    split(preconditions, precondition_strings, ';', true);
    for (auto& d : device_strings) device_ptrs.push_back(d.c_str());
    for (auto& d : dtype_strings) dtype_ptrs.push_back(d.c_str());
    for (auto& d : precondition_strings) precondition_ptrs.push_back(d.c_str());
    info.num_preconditions = static_cast<int32_t>(precondition_ptrs.size());
    info.preconditions = precondition_ptrs.empty() ? nullptr : precondition_ptrs.data();
    info.struct_size = sizeof(bb_plugin_info);
    info.abi_version = BB_ABI_VERSION;
    info.version = version;
    info.num_devices = static_cast<int32_t>(device_ptrs.size());
    info.devices = device_ptrs.empty() ? nullptr : device_ptrs.data();
    info.num_dtypes = static_cast<int32_t>(dtype_ptrs.size());
    info.dtypes = dtype_ptrs.empty() ? nullptr : dtype_ptrs.data();
  }
};
}  // namespace detail

}  // namespace bb

// Defines `extern "C" int <op>_kernel_impl(const bb_call*)` calling fn(bb::Call&).
// fn returns void (success unless it throws) or int (a BB_* code).
#define BB_KERNEL_IMPL(op, fn) \
  extern "C" BB_EXPORT int op##_kernel_impl(const bb_call* call) { return ::bb::detail::invoke(fn, call); }

// Defines `extern "C" int <op>_reference(const bb_call*)`.
#define BB_REFERENCE(op, fn) \
  extern "C" BB_EXPORT int op##_reference(const bb_call* call) { return ::bb::detail::invoke(fn, call); }

// Defines `extern "C" int <op>_backward_impl(const bb_call*)`: the op's backward pass (its
// call reads the forward's inputs and grad_<output>, writes grad_<input>: docs/MANIFEST.md,
// "Backward"), and `<op>_backward_reference`, the trusted one.
#define BB_BACKWARD_IMPL(op, fn) \
  extern "C" BB_EXPORT int op##_backward_impl(const bb_call* call) { return ::bb::detail::invoke(fn, call); }
#define BB_BACKWARD_REFERENCE(op, fn) \
  extern "C" BB_EXPORT int op##_backward_reference(const bb_call* call) { return ::bb::detail::invoke(fn, call); }

// Defines the info record. Devices and dtypes are comma-separated lists; "" means "the op's
// devices" / "every dtype":
//   BB_PLUGIN_INFO("1.2.0", "cpu", "float32,float16,bfloat16")
#define BB_PLUGIN_INFO(version_string, devices_csv, dtypes_csv)                          \
  extern "C" BB_EXPORT const bb_plugin_info* backendbench_plugin_info(void) {            \
    static const ::bb::detail::InfoHolder holder(version_string, devices_csv, dtypes_csv); \
    return &holder.info;                                                                  \
  }

// The same with preconditions, separated by ';' (docs/PLUGIN_ABI.md, Preconditions):
//   BB_PLUGIN_INFO_PRECONDITIONS("1.0", "cuda", "bfloat16,ids:int32", "x.-1 % 4 == 0; rows <= 65535")
#define BB_PLUGIN_INFO_PRECONDITIONS(version_string, devices_csv, dtypes_csv, preconditions)                   \
  extern "C" BB_EXPORT const bb_plugin_info* backendbench_plugin_info(void) {                                  \
    static const ::bb::detail::InfoHolder holder(version_string, devices_csv, dtypes_csv, preconditions);      \
    return &holder.info;                                                                                        \
  }

#endif  // BACKENDBENCH_PLUGIN_HPP
