// Conversions between Lua values and the JSON documents the core works on.
// Lua cannot tell an empty list from an empty object, nor store nil in a table:
// an empty table becomes an empty object (the model turns it into a list where it
// wants one), except an empty list of a result, which keeps a mark (kListMark) and
// goes back to JSON as []; JSON null is the sentinel cloud.null.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "core/base/error.h"

struct lua_State;

namespace cloud {

using json = nlohmann::json;

// Pushes cloud.null (one userdata per state, kept in the registry).
void push_null(lua_State* L);
bool is_null(lua_State* L, int index);

// Marks: a table's metatable that says what it is, with no behaviour of its own.
// kListMark: an empty list of a result ([] in JSON); kMetaMark: a call's meta, which
// --output json leaves out unless asked (json-meta).
extern const char* const kListMark;
extern const char* const kMetaMark;
void set_mark(lua_State* L, int index, const char* mark);
bool has_mark(lua_State* L, int index, const char* mark);

// The Lua value at `index` as JSON; `path` names it in errors ("snapshot.tags[2]").
// Tables nested more than kMaxDepth levels (core/base/limits.h) are a validation error.
Outcome<json> to_json(lua_State* L, int index, const std::string& path = "");

// Pushes `value` as a Lua value (tables for objects and arrays, cloud.null for null).
// A document nested more than kMaxDepth levels raises a DocumentTooDeep error object.
void push_json(lua_State* L, const json& value);

}  // namespace cloud
