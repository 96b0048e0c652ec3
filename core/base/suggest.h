// Suggestions for a mistyped name, one rule everywhere: validation's unknown fields,
// help's names, operations missing from an API table, the command line's options and
// sub-commands, and the automation scripts' options and values (through cloud.nearest).
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

}  // namespace cloud
