// Validation of a call's arguments against the operation model, before anything is
// sent: every problem is collected with its field path (`rules[2].port`, list
// indexes 1-based as Lua counts) and reported at once in one Error of kind validation.
#pragma once

#include <string>
#include <vector>

#include "core/base/error.h"
#include "core/model/model.h"

namespace cloud {

// Who checks. The client applies every rule of the model before sending. A server
// (the emulator) leaves the rules the platform answers with an error code of its own
// to the operation's handler: a list out of order (ascendingBy) is S3's
// InvalidPartOrder there, not a generic validation error.
enum class Checker { client, server };

// Checks `value` against `shape`; appends one FieldProblem per violation.
void validate_value(const Shape& shape, const json& value, const std::string& path, std::vector<FieldProblem>& problems,
                    Checker checker = Checker::client);

// Checks a call's arguments and returns them normalised for the wire (an empty
// table given for a list becomes an empty array).
Outcome<json> validate_input(const Operation& op, const json& args, Checker checker = Checker::client);
// The same, taking the arguments' values (a large payload is moved, not copied).
Outcome<json> validate_input(const Operation& op, json&& args, Checker checker = Checker::client);

// The one error of kind validation for `problems` found in a call of `op`.
Error validation_error(const Operation& op, std::vector<FieldProblem> problems);

}  // namespace cloud
