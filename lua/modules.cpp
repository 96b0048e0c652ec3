// The pure-Lua modules built into the binary (lua/*.lua, embedded by
// cmake/EmbedFiles.cmake): `require "cloud.<name>"` finds lua/<name>.lua through a
// searcher placed right after package.preload, so no file on disk is needed and a
// module on package.path cannot shadow them by accident. Parts of the `cloud` API
// written in Lua (cloud.wait_until, cloud.pages, cloud.pretty, cloud.commands,
// cloud.storage.upload_file) are installed from here, by the makers in lua/stubs.lua
// (no Lua source lives in this file).
// Each function is a stub that requires its module on the first call and tail-calls
// into it: nothing is compiled that a script does not use, and, the tail call leaving
// no frame, the module's errors point at the script's line as they would without the
// stub. cloud.pretty, a module table (the same as require's), is required the first
// time the field is read, through the `cloud` table's __index (compiling pretty.lua
// was a sixth of what `cloudlua -e ''` executed beyond the dynamic loader).
#include <lua.hpp>

#include <cstring>
#include <initializer_list>
#include <string>

#include "core/base/embedded.h"
#include "lua/binding.h"

namespace cloud {

namespace {

const EmbeddedFile* find_embedded(const std::string& module) {
  const std::string prefix = "cloud.";
  if (module.compare(0, prefix.size(), prefix) != 0) return nullptr;
  std::string file = module.substr(prefix.size()) + ".lua";
  for (const EmbeddedFile* f = lua_module_files; f->name; ++f)
    if (file == f->name) return f;
  return nullptr;
}

// Compiles lua/<name>.lua for module "cloud.<name>" and pushes the chunk; false when
// no such file is embedded.
bool load_embedded(lua_State* L, const char* name) {
  const EmbeddedFile* f = find_embedded(name);
  if (!f) return false;
  lua_pushfstring(L, "=[cloudlua] %s", f->name);  // the chunk's name on the Lua stack: no C++ object under an error
  int status = luaL_loadbuffer(L, f->text, std::strlen(f->text), lua_tostring(L, -1));
  lua_remove(L, -2);
  if (status != LUA_OK) luaL_error(L, "error loading embedded module '%s': %s", name, lua_tostring(L, -1));
  return true;
}

// The searcher: a loader for "cloud.<name>" when lua/<name>.lua is embedded, else
// the line require adds to its "module not found" message.
int embedded_searcher(lua_State* L) {
  const char* name = luaL_checkstring(L, 1);
  if (!load_embedded(L, name)) {
    lua_pushfstring(L, "no embedded module '%s'", name);
    return 1;
  }
  lua_pushstring(L, find_embedded(name)->name);
  return 2;
}

// open(name) for luaL_requiref: runs the embedded module `name` as require would
// (with its name and file), returning its value.
int open_embedded(lua_State* L) {
  const char* name = luaL_checkstring(L, 1);
  if (!load_embedded(L, name)) return luaL_error(L, "no embedded module '%s'", name);
  lua_pushstring(L, name);
  lua_pushstring(L, find_embedded(name)->name);
  lua_call(L, 2, 1);
  return 1;
}

// Inserts the searcher at position 2 of package.searchers.
void add_searcher(lua_State* L) {
  lua_getglobal(L, "package");
  if (!lua_istable(L, -1)) return lua_pop(L, 1);
  lua_getfield(L, -1, "searchers");
  lua_Integer n = static_cast<lua_Integer>(lua_rawlen(L, -1));
  for (lua_Integer i = n; i >= 2; --i) {
    lua_rawgeti(L, -1, i);
    lua_rawseti(L, -2, i + 1);
  }
  lua_pushcfunction(L, protect<embedded_searcher>);
  lua_rawseti(L, -2, 2);
  lua_pop(L, 2);
}

// __index of the `cloud` table: cloud.pretty is require "cloud.pretty" and
// cloud.commands require "cloud.commands" (the sub-commands), kept in the table from
// then on; cloud.ANY is require("cloud.stubber").ANY; any other missing field is nil.
int index_lazy_module(lua_State* L) {
  const char* field = luaL_checkstring(L, 2);
  if (std::strcmp(field, "ANY") == 0) {
    lua_getglobal(L, "require");
    lua_pushstring(L, "cloud.stubber");
    lua_call(L, 1, 1);
    lua_getfield(L, -1, "ANY");
    return 1;
  }
  if (std::strcmp(field, "pretty") != 0 && std::strcmp(field, "commands") != 0) return 0;
  lua_getglobal(L, "require");
  lua_pushfstring(L, "cloud.%s", field);
  lua_call(L, 1, 1);
  lua_pushvalue(L, -1);
  lua_setfield(L, 1, field);
  return 1;
}

void set_lazy_modules(lua_State* L, int module) {
  lua_createtable(L, 0, 1);
  lua_pushcfunction(L, index_lazy_module);
  lua_setfield(L, -2, "__index");
  lua_setmetatable(L, module);
}

// Pushes the table of lua/stubs.lua, the makers of the stubs: required once per
// state (through package.loaded, as require would) and kept in the registry, so that
// a script that empties package.loaded still gets working stubs.
void push_stubs(lua_State* L) {
  static const char key = 0;
  if (lua_rawgetp(L, LUA_REGISTRYINDEX, &key) == LUA_TTABLE) return;
  lua_pop(L, 1);
  luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);  // as luaL_requiref, an error as LuaRaise
  if (lua_getfield(L, -1, "cloud.stubs") != LUA_TTABLE) {
    lua_pop(L, 1);
    lua_pushcfunction(L, open_embedded);
    lua_pushliteral(L, "cloud.stubs");
    call_lua(L, 1, 1);
    lua_pushvalue(L, -1);
    lua_setfield(L, -3, "cloud.stubs");
  }
  lua_remove(L, -2);
  lua_pushvalue(L, -1);
  lua_rawsetp(L, LUA_REGISTRYINDEX, &key);
}

// Calls require("cloud.stubs")[maker](value at index `arg`), leaving nothing.
void call_stub_maker(lua_State* L, const char* maker, int arg) {
  arg = lua_absindex(L, arg);
  push_stubs(L);
  lua_getfield(L, -1, maker);
  lua_pushvalue(L, arg);
  call_lua(L, 1, 0);
  lua_pop(L, 1);
}

// module[field] = a stub for require(name)[field], for each of `fields`.
void set_stubs(lua_State* L, int module, std::initializer_list<const char*> fields, const char* name) {
  push_stubs(L);
  for (const char* field : fields) {
    lua_getfield(L, -1, "stub");
    lua_pushstring(L, name);
    lua_pushstring(L, field);
    call_lua(L, 2, 1);
    lua_setfield(L, module, field);
  }
  lua_pop(L, 1);
}

}  // namespace

void add_transfers(lua_State* L, int client) {
  call_stub_maker(L, "transfers", client);
  call_stub_maker(L, "sync", client);
}

void add_client_functions(lua_State* L, int client) {
  add_transfers(L, client);
  call_stub_maker(L, "client", client);
}

void open_embedded_modules(lua_State* L, int module) {
  add_searcher(L);
  set_stubs(L, module, {"wait_until", "wait_for"}, "cloud.wait");
  set_stubs(L, module, {"pages"}, "cloud.pages");
  set_lazy_modules(L, module);
  set_stubs(L, module, {"spawn", "map", "event"}, "cloud.tasks");
  set_stubs(L, module, {"stub"}, "cloud.stubber");
  add_transfers(L, module);
}

}  // namespace cloud
