// Validation of a call's arguments against the operation model, before anything is
// sent: every problem is collected with its field path (`rules[2].port`, list
// indexes 1-based as Lua counts) and reported at once in one Error of kind validation.
#pragma once

#include <string>
#include <vector>

#include "core/error.h"
#include "core/model.h"

namespace cloud {

// Checks `value` against `shape`; appends one FieldProblem per violation.
void validate_value(const Shape& shape, const json& value, const std::string& path,
                    std::vector<FieldProblem>& problems);

// Checks a call's arguments and returns them normalised for the wire (an empty
// table given for a list becomes an empty array).
Outcome<json> validate_input(const Operation& op, const json& args);

// Number of Unicode characters in UTF-8 text; -1 when the text is not valid UTF-8.
long long utf8_length(const std::string& s);

}  // namespace cloud
