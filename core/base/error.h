// Errors are values: every fallible core function returns an Outcome holding either
// its result or an Error with a kind, a code and a message a person can act on.
// Core never throws across its API and never raises Lua errors; the binding turns
// an Error into a Lua error object at the edge.
#pragma once

#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace cloud {

// waiter: a named waiter met one of its failure acceptors (cloud.wait_for); io: a local
// file-system call failed (cloud.fs), its code the system's name for the reason (ENOENT).
enum class ErrorKind { validation, api, transport, timeout, config, waiter, io };

const char* kind_name(ErrorKind kind);

// One offending input field: where it is (`rules[2].port`) and the rule it breaks.
struct FieldProblem {
  std::string path;
  std::string problem;
  std::string code;  // the code a server answers for it (the model's errorCodes); "": its protocol's

  FieldProblem() = default;
  FieldProblem(std::string p, std::string text, std::string c = "")
      : path(std::move(p)), problem(std::move(text)), code(std::move(c)) {}
};

struct Error {
  ErrorKind kind = ErrorKind::api;
  std::string code;
  std::string message;
  long status = 0;  // HTTP status, 0 when no answer came
  std::string request_id;
  std::string operation;
  int attempts = 0;                  // requests sent, retries included (0: nothing was sent)
  std::vector<FieldProblem> fields;  // validation only: every problem at once

  // "kind: [operation] code: message" on one line, then one line per field problem;
  // redacted and made printable, as everything shown is (defined in core/net/redact.cpp,
  // beside the redaction it passes through).
  std::string describe() const;
};

Error make_error(ErrorKind kind, std::string code, std::string message);

template <class T>
class Outcome {
 public:
  Outcome(T value) : v_(std::move(value)) {}
  Outcome(Error error) : v_(std::move(error)) {}

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }
  T& value() { return std::get<0>(v_); }
  const T& value() const { return std::get<0>(v_); }
  T& operator*() { return value(); }
  T* operator->() { return &value(); }
  const T& operator*() const { return value(); }
  const T* operator->() const { return &value(); }
  const Error& error() const { return std::get<1>(v_); }
  Error& error() { return std::get<1>(v_); }

 private:
  std::variant<T, Error> v_;
};

}  // namespace cloud
