// Error helpers: names of kinds, the one constructor. (The text shown to people,
// Error::describe, is in core/net/redact.cpp: it passes the redaction on its way out.)
#include "core/base/error.h"

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

}  // namespace cloud
