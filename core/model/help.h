// Help from the operation model: what an operation takes and returns, for a person
// (help() in the REPL) and as data (cloud.describe). Everything here is read off the
// model, so a limit or an allowed value is written once, in core/model/*.json.
#pragma once

#include <string>
#include <vector>

#include "core/model/model.h"

namespace cloud {

// One field of the arguments or of the result, nested fields flattened into paths
// ("snapshot.tags[].key"; "[]" stands for every element of a list).
struct FieldHelp {
  std::string path;
  std::string location;   // "body", "path", "query", "header" or "local" (never sent)
  std::string wire_name;  // query key or header name when it differs from the path
  std::string type;       // "string", "integer", "boolean", "table", "list of tables", ...
  bool required = false;
  std::vector<std::string> rules;     // "1 to 63 characters", "required when protocol is TCP", ...
  std::vector<json> allowed;          // the value set (of each element, for a list)
  std::optional<json> default_value;  // what the server assumes when the field is left out
  std::string default_text;           // the default in words, where it depends on something
  std::string doc;
  int depth = 0;  // 0 for a top-level field
};

struct OperationHelp {
  const Operation* operation = nullptr;
  std::vector<FieldHelp> parameters;
  std::vector<FieldHelp> results;
};

OperationHelp describe_operation(const Operation& op);

// The text help() prints for one operation; `call_name` is how the caller reaches it
// ("cloud.devops.restore_instance"). Lines stay within `width` columns where words allow.
std::string format_operation_help(const OperationHelp& help, const std::string& call_name, size_t width = 80);

// One API: its doc line, then each operation's Lua name (`prefix` + api + snake
// name), its name and its doc line.
std::string format_api_help(const Api& api, const std::string& prefix, size_t width = 80);

// One named waiter: how it is called, what it calls and how often, its acceptors in
// order, and where the definition comes from.
std::string format_waiter_help(const Waiter& waiter, const std::string& prefix, size_t width = 80);

// Every API, as format_api_help shows them.
std::string format_model_help(const Model& model, const std::string& prefix, size_t width = 80);

}  // namespace cloud
