// Lua <-> JSON, one case per type. Tables with keys 1..n are lists, tables with
// string keys are objects; anything else (mixed keys, functions, cycles) is an
// error that names where in the argument it sits. Both directions recurse, so both
// stop at core's kMaxDepth levels and make room on the Lua stack on the way down.
#include "lua/convert.h"

#include <lua.hpp>

#include <cmath>
#include <cstdint>

#include "core/base/limits.h"
#include "lua/binding.h"

namespace cloud {

namespace {

const char* const kNullKey = "cloud.null";

// Pushes the metatable of `mark`, made on first use (no __name: tables stay "table").
void push_mark(lua_State* L, const char* mark) {
  if (lua_getfield(L, LUA_REGISTRYINDEX, mark) != LUA_TNIL) return;
  lua_pop(L, 1);
  lua_newtable(L);
  lua_pushvalue(L, -1);
  lua_setfield(L, LUA_REGISTRYINDEX, mark);
}

Error bad_value(const std::string& path, const std::string& what) {
  Error e = make_error(ErrorKind::validation, "InvalidArgument", what);
  e.fields.push_back({path.empty() ? "(argument)" : path, what});
  return e;
}

std::string key_path(const std::string& path, const std::string& key) { return path.empty() ? key : path + "." + key; }

// Counts keys and tells whether they are exactly 1..n.
bool is_sequence(lua_State* L, int index, size_t& count) {
  count = 0;
  bool sequence = true;
  lua_pushnil(L);
  while (lua_next(L, index)) {
    ++count;
    if (!lua_isinteger(L, -2) || lua_tointeger(L, -2) < 1) sequence = false;
    lua_pop(L, 1);
  }
  return sequence && lua_rawlen(L, index) == count;
}

Outcome<json> table_to_json(lua_State* L, int index, const std::string& path, int depth);

Outcome<json> value_to_json(lua_State* L, int index, const std::string& path, int depth) {
  switch (lua_type(L, index)) {
    case LUA_TBOOLEAN: return json(lua_toboolean(L, index) != 0);
    case LUA_TNUMBER:
      if (lua_isinteger(L, index)) return json(static_cast<long long>(lua_tointeger(L, index)));
      if (!std::isfinite(lua_tonumber(L, index))) return bad_value(path, "numbers must be finite");
      return json(lua_tonumber(L, index));
    case LUA_TSTRING: {
      size_t len = 0;
      const char* s = lua_tolstring(L, index, &len);
      return json(std::string(s, len));
    }
    case LUA_TTABLE: return table_to_json(L, index, path, depth);
    case LUA_TUSERDATA:
      if (is_null(L, index)) return json(nullptr);
      [[fallthrough]];
    default: return bad_value(path, std::string("cannot send a ") + luaL_typename(L, index));
  }
}

Outcome<json> table_to_json(lua_State* L, int index, const std::string& path, int depth) {
  if (depth >= kMaxDepth || !lua_checkstack(L, 4))
    return bad_value(
        path, "tables nested more than " + std::to_string(kMaxDepth) + " levels deep (a table that contains itself?)");
  index = lua_absindex(L, index);
  size_t count = 0;
  bool sequence = is_sequence(L, index, count);
  if (count == 0 && has_mark(L, index, kListMark)) return json::array();  // an empty list of a result
  if (sequence && count > 0) {
    json out = json::array();
    for (size_t i = 1; i <= count; ++i) {
      lua_rawgeti(L, index, static_cast<lua_Integer>(i));
      auto item = value_to_json(L, -1, path + "[" + std::to_string(i) + "]", depth + 1);
      lua_pop(L, 1);
      if (!item.ok()) return item;
      out.push_back(std::move(item.value()));
    }
    return out;
  }
  json out = json::object();
  lua_pushnil(L);
  while (lua_next(L, index)) {
    if (lua_type(L, -2) != LUA_TSTRING) {
      lua_pop(L, 2);
      return bad_value(path, "a table mixes list items and named fields (or has non-string keys)");
    }
    std::string key = lua_tostring(L, -2);
    auto item = value_to_json(L, -1, key_path(path, key), depth + 1);
    lua_pop(L, 1);
    if (!item.ok()) {
      lua_pop(L, 1);
      return item;
    }
    out[key] = std::move(item.value());
  }
  return out;
}

}  // namespace

void push_null(lua_State* L) {
  if (lua_getfield(L, LUA_REGISTRYINDEX, kNullKey) != LUA_TNIL) return;
  lua_pop(L, 1);
  lua_newuserdatauv(L, 0, 0);
  luaL_newmetatable(L, kNullKey);
  lua_pushcfunction(L, [](lua_State* S) {
    lua_pushliteral(S, "cloud.null");
    return 1;
  });
  lua_setfield(L, -2, "__tostring");
  lua_pushliteral(L, "cloud.null");
  lua_setfield(L, -2, "__name");
  lua_setmetatable(L, -2);
  lua_pushvalue(L, -1);
  lua_setfield(L, LUA_REGISTRYINDEX, kNullKey);
}

const char* const kListMark = "cloud.list";
const char* const kMetaMark = "cloud.meta";

void set_mark(lua_State* L, int index, const char* mark) {
  index = lua_absindex(L, index);
  push_mark(L, mark);
  lua_setmetatable(L, index);
}

bool has_mark(lua_State* L, int index, const char* mark) {
  if (!lua_getmetatable(L, index)) return false;
  push_mark(L, mark);
  bool same = lua_rawequal(L, -1, -2);
  lua_pop(L, 2);
  return same;
}

bool is_null(lua_State* L, int index) {
  index = lua_absindex(L, index);
  push_null(L);
  bool same = lua_rawequal(L, index, -1);
  lua_pop(L, 1);
  return same;
}

Outcome<json> to_json(lua_State* L, int index, const std::string& path) {
  return value_to_json(L, lua_absindex(L, index), path, 0);
}

namespace {

// An unsigned JSON integer: a Lua integer when it fits one, else (2^63 to 2^64-1) the
// nearest float, as Lua's tonumber reads the same digits; a cast would make another
// integer (18446744073709551615 as -1).
void push_unsigned(lua_State* L, std::uint64_t n) {
  if (n <= static_cast<std::uint64_t>(LUA_MAXINTEGER)) return lua_pushinteger(L, static_cast<lua_Integer>(n));
  lua_pushnumber(L, static_cast<lua_Number>(n));
}

// One value of push_json, `depth` levels below the document's top (which is 0).
void push_value(lua_State* L, const json& value, int depth) {
  if ((value.is_structured() && depth >= kMaxDepth) || !lua_checkstack(L, 3))
    raise(L,
          make_error(ErrorKind::api, "DocumentTooDeep",
                     "a result nested more than " + std::to_string(kMaxDepth) + " levels deep cannot be a Lua value"));
  switch (value.type()) {
    case json::value_t::null: return push_null(L);
    case json::value_t::boolean: return lua_pushboolean(L, value.get<bool>());
    case json::value_t::number_integer: return lua_pushinteger(L, value.get<lua_Integer>());
    case json::value_t::number_unsigned: return push_unsigned(L, value.get<std::uint64_t>());
    case json::value_t::number_float: return lua_pushnumber(L, value.get<double>());
    case json::value_t::string: {
      const std::string& s = value.get_ref<const std::string&>();
      lua_pushlstring(L, s.data(), s.size());
      return;
    }
    case json::value_t::array: {
      lua_createtable(L, static_cast<int>(value.size()), 0);
      lua_Integer i = 0;
      for (const json& item : value) push_value(L, item, depth + 1), lua_rawseti(L, -2, ++i);
      if (value.empty()) set_mark(L, -1, kListMark);  // back to JSON as [], not {}
      return;
    }
    case json::value_t::object: {
      lua_createtable(L, 0, static_cast<int>(value.size()));
      for (auto it = value.begin(); it != value.end(); ++it) {
        push_value(L, it.value(), depth + 1);
        lua_setfield(L, -2, it.key().c_str());
      }
      return;
    }
    default: lua_pushnil(L);
  }
}

}  // namespace

void push_json(lua_State* L, const json& value) { push_value(L, value, 0); }

}  // namespace cloud
