// The pure-Lua modules built into the binary (lua/*.lua, embedded by
// cmake/EmbedFiles.cmake): `require "cloud.<name>"` finds lua/<name>.lua through a
// searcher placed right after package.preload, so no file on disk is needed and a
// module on package.path cannot shadow them by accident. Parts of the `cloud` API
// written in Lua (cloud.wait_until, cloud.pages, cloud.pretty, cloud.commands,
// cloud.storage.upload_file) are installed from here.
// Each function is a stub that requires its module on the first call and tail-calls
// into it: nothing is compiled that a script does not use, and, the tail call leaving
// no frame, the module's errors point at the script's line as they would without the
// stub. cloud.pretty, a module table (the same as require's), is required the first
// time the field is read, through the `cloud` table's __index (compiling pretty.lua
// was a sixth of what `cloudlua -e ''` executed beyond the dynamic loader).
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
  lua_pushcfunction(L, protect<embedded_searcher>);
  lua_rawseti(L, -2, 2);
  lua_pop(L, 2);
}

// __index of the `cloud` table: cloud.pretty is require "cloud.pretty" and
// cloud.commands require "cloud.commands" (the sub-commands), kept in the table from
// then on; any other missing field is nil.
int index_lazy_module(lua_State* L) {
  const char* field = luaL_checkstring(L, 2);
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

// The stubs' makers, compiled once per state: (name, field) -> a function that calls
// require(name)[field]; (client table) -> its storage table's upload_file and
// download_file, calling require "cloud.transfer"'s with the client (its pages list an
// upload's parts); (client table) -> its storage table's sync and check, calling
// require "cloud.sync"'s with the client (its pages list the bucket), and location,
// the parser of s3://BUCKET/PREFIX they read their strings with.
const char* const kStubMaker = R"(
local name, field = ...
return function(...) return require(name)[field](...) end)";
const char* const kTransferStubs = R"(
local client = ...
rawset(client.storage, "upload_file", function(args) return require("cloud.transfer").upload_file(client, args) end)
rawset(client.storage, "download_file", function(args) return require("cloud.transfer").download_file(client, args) end))";
const char* const kSyncStubs = R"(
local client = ...
rawset(client.storage, "sync", function(args) return require("cloud.sync").sync(client, args) end)
rawset(client.storage, "check", function(args) return require("cloud.sync").check(client, args) end)
rawset(client.storage, "location", function(text) return require("cloud.sync").location(text) end))";
// (client table) -> a cloud.client{}'s own pages and wait_for, calling the modules'
// with the client (cloud.pages and cloud.wait_for are the default client's).
const char* const kClientStubs = R"(
local client = ...
rawset(client, "pages", function(name, args) return require("cloud.pages").pages(name, args, client) end)
rawset(client, "wait_for", function(name, args, opts) return require("cloud.wait").wait_for(name, args, opts, client) end))";

// Pushes the function compiled from `code` (once; kept in the registry under `code`).
void push_compiled(lua_State* L, const char* code) {
  if (lua_rawgetp(L, LUA_REGISTRYINDEX, code) == LUA_TFUNCTION) return;
  lua_pop(L, 1);
  if (luaL_loadbuffer(L, code, std::strlen(code), "=[cloudlua] stubs") != LUA_OK) lua_error(L);
  lua_pushvalue(L, -1);
  lua_rawsetp(L, LUA_REGISTRYINDEX, code);
}

// module[field] = a stub for require(name)[field], for each of `fields`.
void set_stubs(lua_State* L, int module, std::initializer_list<const char*> fields, const char* name) {
  for (const char* field : fields) {
    push_compiled(L, kStubMaker);
    lua_pushstring(L, name);
    lua_pushstring(L, field);
    lua_call(L, 2, 1);
    lua_setfield(L, module, field);
  }
}

}  // namespace

void add_transfers(lua_State* L, int client) {
  push_compiled(L, kTransferStubs);
  lua_pushvalue(L, client);
  lua_call(L, 1, 0);
  push_compiled(L, kSyncStubs);
  lua_pushvalue(L, client);
  lua_call(L, 1, 0);
}

void add_client_functions(lua_State* L, int client) {
  add_transfers(L, client);
  push_compiled(L, kClientStubs);
  lua_pushvalue(L, client);
  lua_call(L, 1, 0);
}

void open_embedded_modules(lua_State* L, int module) {
  add_searcher(L);
  set_stubs(L, module, {"wait_until", "wait_for"}, "cloud.wait");
  set_stubs(L, module, {"pages"}, "cloud.pages");
  set_lazy_modules(L, module);
  set_stubs(L, module, {"spawn", "map", "event"}, "cloud.tasks");
  add_transfers(L, module);
}

}  // namespace cloud
