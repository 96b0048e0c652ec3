// lauxlib's argument errors ("bad argument #1 to 'cloud.sign' (table expected, got
// nil)") with the function named in full, and the declared functions' checks handed to
// the one checker (lua/check.lua). luaL_argerror names a function as its
// caller wrote it ('sign' for cloud.sign, 's' for a local copy); luaL_traceback
// names it by the loaded module that holds it, and so do these, so a message names
// the same function wherever it was called from.
#include <lua.hpp>

#include <cstring>
#include <string>

#include "lua/binding.h"

namespace cloud {

namespace {

const char* const kCheckArgumentsKey = "cloud.check.arguments";  // registry: the one checker, kept

// "module.field" when a loaded module (package.loaded) holds the function of `ar`,
// as luaL_traceback finds it; a module's name wins over "_G"; "" when none holds it.
std::string loaded_name(lua_State* L, lua_Debug& ar) {
  luaL_checkstack(L, 6, "no room for an error message");
  int top = lua_gettop(L);
  lua_getinfo(L, "f", &ar);
  luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
  std::string found;
  for (lua_pushnil(L); lua_next(L, top + 2); lua_pop(L, 1)) {
    if (lua_type(L, -2) != LUA_TSTRING || !lua_istable(L, -1)) continue;
    std::string module = lua_tostring(L, -2);
    for (lua_pushnil(L); lua_next(L, -2); lua_pop(L, 1))
      if (lua_type(L, -2) == LUA_TSTRING && lua_rawequal(L, -1, top + 1) && (found.empty() || module != "_G"))
        found = module == "_G" ? lua_tostring(L, -2) : module + "." + lua_tostring(L, -2);
  }
  lua_settop(L, top);
  return found;
}

}  // namespace

void arg_error(lua_State* L, int arg, const std::string& message) {
  lua_Debug ar;
  if (!lua_getstack(L, 0, &ar)) {  // no function runs: lauxlib's wording without a name
    lua_pushfstring(L, "bad argument #%d (%s)", arg, message.c_str());
    raise_top(L);
  }
  std::string name = loaded_name(L, ar);
  if (name.empty()) {  // as luaL_argerror names it: self is no argument of a method
    lua_getinfo(L, "n", &ar);
    if (ar.namewhat && std::strcmp(ar.namewhat, "method") == 0 && --arg == 0) {
      luaL_where(L, 1);
      lua_pushfstring(L, "calling '%s' on bad self (%s)", ar.name, message.c_str());
      lua_concat(L, 2);
      raise_top(L);
    }
    name = ar.name ? ar.name : "?";
  }
  luaL_where(L, 1);
  lua_pushfstring(L, "bad argument #%d to '%s' (%s)", arg, name.c_str(), message.c_str());
  lua_concat(L, 2);
  raise_top(L);
}

void type_error(lua_State* L, int arg, const char* expected) {
  const char* got = luaL_getmetafield(L, arg, "__name") == LUA_TSTRING ? lua_tostring(L, -1)
                    : lua_type(L, arg) == LUA_TLIGHTUSERDATA           ? "light userdata"
                                                                       : luaL_typename(L, arg);
  arg_error(L, arg, std::string(expected) + " expected, got " + got);
}

void check_type(lua_State* L, int arg, int type) {
  if (lua_type(L, arg) != type) type_error(L, arg, lua_typename(L, type));
}

void check_declared(lua_State* L, const char* name) {
  int n = lua_gettop(L);
  luaL_checkstack(L, n + 5, "too many arguments");
  if (lua_getfield(L, LUA_REGISTRYINDEX, kCheckArgumentsKey) == LUA_TNIL) {  // the first check: required once
    lua_pop(L, 1);
    lua_getglobal(L, "require");
    lua_pushliteral(L, "cloud.check");
    call_lua(L, 1, 1);
    lua_getfield(L, -1, "arguments");
    lua_remove(L, -2);
    lua_pushvalue(L, -1);
    lua_setfield(L, LUA_REGISTRYINDEX, kCheckArgumentsKey);
  }
  lua_pushstring(L, name);
  lua_pushnil(L);         // the function named as declared
  lua_pushinteger(L, 2);  // blames the C function's caller
  for (int i = 1; i <= n; ++i) lua_pushvalue(L, i);
  call_lua(L, n + 3, 0);
}

}  // namespace cloud
