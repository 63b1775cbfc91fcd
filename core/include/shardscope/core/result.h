// Errors as values for ShardScope's core: a Result<T> holds either a value or
// an Error whose message already names the file, the JSON path and the
// expectation, ready to show to a user. The error's kind says what went wrong
// in a way programs act on (the CLI's exit code, the desktop's dialog).
#pragma once

#include <cassert>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace shardscope::core {

enum class ErrorKind {
  Usage,         // the request itself is malformed: an unknown option, a bad option value, a missing argument
  InvalidInput,  // an input is wrong or cannot be read: a file missing, not JSON, failing its format's checks
  Io,            // the environment failed: writing a file or a store, a pipe, a process or device that fails
  Cancelled,     // the user asked to stop
  Internal,      // should not happen with valid inputs: an unexpected exception or state
};

[[nodiscard]] constexpr std::string_view toString(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::Usage:
      return "usage";
    case ErrorKind::InvalidInput:
      return "invalid input";
    case ErrorKind::Io:
      return "i/o";
    case ErrorKind::Cancelled:
      return "cancelled";
    case ErrorKind::Internal:
      return "internal";
  }
  return "internal";
}

// `Error{"message"}` is an invalid input, the most common error; the message
// comes first so that this stays the short form. `file` and `json_path` (a
// JSON pointer) repeat what the message says, where known, for programs that
// point at the place (the message stays complete without them). Their `= {}`
// keeps the short forms free of missing-initializer warnings.
struct Error {
  std::string message;
  ErrorKind kind = ErrorKind::InvalidInput;
  std::string file = {};
  std::string json_path = {};
};

template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}      // NOLINT(google-explicit-constructor)
  Result(Error error) : v_(std::move(error)) {}  // NOLINT(google-explicit-constructor)

  [[nodiscard]] bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }

  [[nodiscard]] T& value() & {
    assert(ok());
    return std::get<0>(v_);
  }
  [[nodiscard]] const T& value() const& {
    assert(ok());
    return std::get<0>(v_);
  }
  [[nodiscard]] T&& value() && {
    assert(ok());
    return std::get<0>(std::move(v_));
  }
  [[nodiscard]] const Error& error() const {
    assert(!ok());
    return std::get<1>(v_);
  }

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
