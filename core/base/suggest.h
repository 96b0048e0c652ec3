// Suggestions for a mistyped name, one rule everywhere: validation's unknown fields,
// help's names, operations missing from an API table, the command line's options and
// sub-commands, and the automation scripts' options and values (through cloud.nearest);
// and the one wording of an unknown field, name or option, which every surface
// composes here.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace cloud {

// The edit distance between a and b (insertions, deletions, substitutions and swaps
// of two neighbouring letters each count one), letters compared without case.
size_t edit_distance(const std::string& a, const std::string& b);

// The candidate nearest to `typed` when it is near enough to be what was meant: at
// most 2 edits away, with more than half of `typed` right (so "-x" does not suggest
// "-h"). Ties go to the earlier candidate.
std::optional<std::string> nearest_name(const std::string& typed, const std::vector<std::string>& candidates);

// The one wording of an unknown field, for every surface (the model's validation, the
// Lua functions' checks through cloud._unknown_field, cloud.client{}, the emulator's
// control plane, the test event stream): "unknown field 'key'" ("unknown field" alone
// with Named::by_path: a path beside the message names the field), then ", did you mean
// 'near'?" for the nearest of `known`, else " (otherwise)" when `otherwise` is given.
enum class Named { in_message, by_path };
std::string unknown_field(const std::string& key, const std::vector<std::string>& known,
                          const std::string& otherwise = "", Named named = Named::in_message);

// The one "did you mean" of a refusal already worded (`text` names what was typed):
// text + "; did you mean 'near'?" for the nearest of `known`, else "; otherwise" when
// `otherwise` is given, else text. Every composer below and every surface's own
// sentence ("no operation 'x' in cloud.cluster") ends through it.
std::string suggested(const std::string& text, const std::string& typed, const std::vector<std::string>& known,
                      const std::string& otherwise = "");

// The one wording of an option the command line does not know (the C++ parser's and the
// Lua sub-commands'): "unknown option '--typed'", then "; did you mean '--near'?".
std::string unknown_option(const std::string& typed, const std::vector<std::string>& known);

// The one wording of a name that names nothing of its kind (a waiter, an operation, a
// setting, what help knows): "no waiter named 'typed'", then "; did you mean 'near'?"
// for the nearest of `known` (as the command line's and help's), else "; otherwise"
// when `otherwise` is given ("cloud.waiters() lists them").
std::string unknown_name(const std::string& kind, const std::string& typed, const std::vector<std::string>& known,
                         const std::string& otherwise = "");

}  // namespace cloud
