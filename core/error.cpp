// Error helpers: names of kinds and the one-line description shown to people.
#include "core/error.h"

#include "core/redact.h"

namespace cloud {

const char* kind_name(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::validation: return "validation";
    case ErrorKind::api: return "api";
    case ErrorKind::transport: return "transport";
    case ErrorKind::timeout: return "timeout";
    case ErrorKind::config: return "config";
    case ErrorKind::waiter: return "waiter";
    case ErrorKind::io: return "io";
  }
  return "unknown";
}

Error make_error(ErrorKind kind, std::string code, std::string message) {
  Error e;
  e.kind = kind;
  e.code = std::move(code);
  e.message = std::move(message);
  return e;
}

std::string Error::describe() const {
  std::string out = kind_name(kind);
  out += " error";
  if (!operation.empty()) out += " in " + operation;
  if (status != 0) out += " (HTTP " + std::to_string(status) + ")";
  out += ": ";
  if (!code.empty()) out += code + ": ";
  out += message;
  for (const FieldProblem& f : fields) out += "\n  " + f.path + ": " + f.problem;
  if (!request_id.empty()) out += "\n  request id: " + request_id;
  if (attempts > 1) out += "\n  attempts: " + std::to_string(attempts);
  return printable(redact(out));  // shown to people: never a secret nor a control sequence, whatever the message holds
}

}  // namespace cloud
