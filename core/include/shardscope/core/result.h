// Errors as values for ShardScope's core: a Result<T> holds either a value or
// an Error whose message already names the file, the JSON path and the
// expectation, ready to show to a user.
#pragma once

#include <cassert>
#include <string>
#include <utility>
#include <variant>

namespace shardscope::core {

struct Error {
  std::string message;
};

template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}             // NOLINT(google-explicit-constructor)
  Result(Error error) : v_(std::move(error)) {}         // NOLINT(google-explicit-constructor)

  [[nodiscard]] bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }

  [[nodiscard]] T& value() & { assert(ok()); return std::get<0>(v_); }
  [[nodiscard]] const T& value() const& { assert(ok()); return std::get<0>(v_); }
  [[nodiscard]] T&& value() && { assert(ok()); return std::get<0>(std::move(v_)); }
  [[nodiscard]] const Error& error() const { assert(!ok()); return std::get<1>(v_); }

  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T&& operator*() && { return std::move(*this).value(); }

 private:
  std::variant<T, Error> v_;
};

// For operations that return nothing but may fail.
struct Ok {};
using Status = Result<Ok>;

}  // namespace shardscope::core
