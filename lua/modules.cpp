// The pure-Lua modules built into the binary (lua/*.lua, embedded by
// cmake/EmbedFiles.cmake): `require "cloud.<name>"` finds lua/<name>.lua through a
// searcher placed right after package.preload, so no file on disk is needed and a
// module on package.path cannot shadow them by accident. Parts of the `cloud` API
// written in Lua (cloud.wait_until, cloud.pages, cloud.pretty, cloud.storage.upload_file) are installed from here.
#include <lauxlib.h>
#include <lua.h>

#include <cstring>
#include <initializer_list>
#include <string>

#include "core/embedded.h"
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

// The searcher: a loader for "cloud.<name>" when lua/<name>.lua is embedded, else
// the line require adds to its "module not found" message.
int embedded_searcher(lua_State* L) {
  const char* name = luaL_checkstring(L, 1);
  const EmbeddedFile* f = find_embedded(name);
  if (!f) {
    lua_pushfstring(L, "no embedded module '%s'", name);
    return 1;
  }
  std::string chunkname = std::string("=[cloudlua] ") + f->name;
  if (luaL_loadbuffer(L, f->text, std::strlen(f->text), chunkname.c_str()) != LUA_OK)
    return luaL_error(L, "error loading embedded module '%s': %s", name, lua_tostring(L, -1));
  lua_pushstring(L, f->name);
  return 2;
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
  lua_pushcfunction(L, embedded_searcher);
  lua_rawseti(L, -2, 2);
  lua_pop(L, 2);
}

// module[field] = require(name), or require(name)[part] when `part` is given.
void set_required(lua_State* L, int module, const char* field, const char* name, const char* part = nullptr) {
  lua_getglobal(L, "require");
  lua_pushstring(L, name);
  lua_call(L, 1, 1);
  if (part) {
    lua_getfield(L, -1, part);
    lua_remove(L, -2);
  }
  lua_setfield(L, module, field);
}

// module[field] = require(name)[field], for each of `fields`.
void set_fields_of_required(lua_State* L, int module, std::initializer_list<const char*> fields, const char* name) {
  lua_getglobal(L, "require");
  lua_pushstring(L, name);
  lua_call(L, 1, 1);
  for (const char* field : fields) {
    lua_getfield(L, -1, field);
    lua_setfield(L, module, field);
  }
  lua_pop(L, 1);
}

}  // namespace

void add_transfers(lua_State* L, int client) {
  lua_getglobal(L, "require");
  lua_pushstring(L, "cloud.transfer");
  lua_call(L, 1, 1);
  lua_pushvalue(L, client);
  lua_call(L, 1, 0);
}

void open_embedded_modules(lua_State* L, int module) {
  add_searcher(L);
  set_fields_of_required(L, module, {"wait_until", "wait_for"}, "cloud.wait");
  set_fields_of_required(L, module, {"pages"}, "cloud.pages");
  set_required(L, module, "pretty", "cloud.pretty");
  set_required(L, module, "spawn", "cloud.tasks", "spawn");
  set_required(L, module, "map", "cloud.tasks", "map");
  add_transfers(L, module);
}

}  // namespace cloud
