// The bounds that keep a hostile or mistaken document from exhausting the stack or
// the memory: one depth for every converter that recurses (Lua <-> JSON, XML -> JSON,
// the emulator's reading of bodies), the largest body the platform takes, and the
// largest answer kept in memory. Client and emulator read them from here.
#pragma once

#include <cstdint>
#include <string>

namespace cloud {

// Levels of nested tables, JSON arrays and objects, or XML elements; the outermost
// counts as one. Deeper documents are refused, never walked.
constexpr int kMaxDepth = 200;

// The largest part or object the platform takes in one request: 5 GiB.
constexpr std::uint64_t kMaxBodyBytes = std::uint64_t{5} << 30;

// The largest answer the client keeps in memory (TransportOptions may lower it).
constexpr std::uint64_t kMaxResponseBytes = std::uint64_t{1} << 30;

// "5 GiB", "64 MiB", "10 KiB" for whole multiples, else "1234 bytes".
std::string size_text(std::uint64_t bytes);

}  // namespace cloud
