// The pure-Lua modules built into the binary (lua/*.lua, embedded at build time by
// cmake/EmbedFiles.cmake) are offered to `require` as "cloud.<name>" through
// package.preload, so a script finds them with no files on disk.
#include <lauxlib.h>
#include <lua.h>

#include <cstring>
#include <string>

#include "core/embedded.h"
#include "lua/session.h"

namespace cloud {

namespace {

// package.preload loader; upvalue 1 is the module's index in lua_module_files.
// Leaves the module's value on the stack, as `require` expects.
int load_builtin_module(lua_State* L) {
  const EmbeddedFile& file = lua_module_files[lua_tointeger(L, lua_upvalueindex(1))];
  std::string chunk_name = std::string("@lua/") + file.name;
  if (luaL_loadbuffer(L, file.text, std::strlen(file.text), chunk_name.c_str()) != LUA_OK) return lua_error(L);
  lua_pushvalue(L, 1);
  lua_call(L, 1, 1);
  return 1;
}

}  // namespace

void open_builtin_modules(lua_State* L) {
  luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_PRELOAD_TABLE);
  for (int i = 0; lua_module_files[i].name; ++i) {
    std::string name = lua_module_files[i].name;
    name = "cloud." + name.substr(0, name.rfind(".lua"));
    lua_pushinteger(L, i);
    lua_pushcclosure(L, load_builtin_module, 1);
    lua_setfield(L, -2, name.c_str());
  }
  lua_pop(L, 1);
}

}  // namespace cloud
