// cloud.emulator's operations as data: a name and a JSON document of arguments in, a
// JSON document or an error out. The one implementation behind the Lua functions
// (lua/emulator.cpp) and the control plane of `serve` (HTTP under /_cloudlua/).
#pragma once

#include <string>

#include "core/base/error.h"
#include "core/model/model.h"

namespace cloud {

class Emulator;
struct Caller;

// Runs cloud.emulator's `operation` ("seed", "fault", "advance", "configure", "state",
// "reset", "requests", "checkpoint", "restore", "checkpoints"; "snapshot" and
// "snapshots", their old names, kept for one release) with `args` (an object: the Lua
// function's table; advance's { seconds = }, checkpoint's and restore's { name = }). Arguments that are wrong are a validation error whose message names
// them; an unknown operation is UnknownControl, listing the known ones.
// It acts on `caller`'s world (serve's control plane: the world of the key a request
// is signed with); without one, on the default world (the embedded emulator's Lua).
// World and account operations: "accounts", "create_account", "delete_account",
// "worlds", "create_world", "delete_world" (docs/emulator.md, "Accounts and worlds").
Outcome<json> run_control(Emulator& emulator, const std::string& operation, const json& args);
Outcome<json> run_control(Emulator& emulator, const Caller& caller, const std::string& operation, const json& args);

// The answer to `GET /_cloudlua/discover`, the one control request taken unsigned:
// what a client given only this server's URL (endpoint_url) needs to reach it, and
// nothing secret. { server = "cloudlua serve", apis = { storage = port, ... },
// region, dialect ("ext", "aws" or "any"), credentials = "built-in" | "own" }, and
// with the built-in ones (public, in the docs; refused beyond loopback) their
// access_key_id and secret_access_key.
json discovery(const Emulator& emulator);
inline constexpr const char* kDiscoverPath = "/_cloudlua/discover";

}  // namespace cloud
