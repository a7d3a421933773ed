// Errors as values: Expected<T> holds a T or a Failure with a message.
#pragma once

#include <string>
#include <utility>
#include <variant>

namespace bb {

struct Failure {
  std::string message;
};

template <typename T>
class [[nodiscard]] Expected {
 public:
  Expected(T value) : v_(std::move(value)) {}          // NOLINT: implicit by design
  Expected(Failure error) : v_(std::move(error)) {}      // NOLINT
  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }
  T& value() & { return std::get<0>(v_); }
  const T& value() const& { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() { return value(); }
  const T& operator*() const { return value(); }
  const Failure& error() const { return std::get<1>(v_); }

 private:
  std::variant<T, Failure> v_;
};

// For operations that return nothing on success.
struct Ok {};
using Status = Expected<Ok>;

inline Failure make_error(std::string message) { return Failure{std::move(message)}; }

}  // namespace bb
