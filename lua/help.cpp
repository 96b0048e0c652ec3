// help() and cloud.describe: the operation model's help, reached from Lua by an
// operation function (cloud.devops.restore_instance), an API table (cloud.devops),
// or a name ("RestoreInstance", "restore_instance", "devops"). The text and the
// data both come from core/help, which reads them off the model.
#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

#include <cstdio>

#include "core/help.h"
#include "lua/binding.h"
#include "lua/convert.h"
#include "lua/session.h"

namespace cloud {

namespace {

const char* const kPrefix = "cloud.";

const Model& model_of(lua_State* L) { return session_of(L).client->model(); }

// The operation named by the value at `index`: an operation function or a name.
const Operation* operation_at(lua_State* L, int index) {
  const char* name = nullptr;
  if (lua_type(L, index) == LUA_TFUNCTION) name = operation_name_of(L, index);
  else if (lua_type(L, index) == LUA_TSTRING) name = lua_tostring(L, index);
  return name ? model_of(L).find(name) : nullptr;
}

// The API named by the value at `index`: its name, or a client's API table (known
// by its first operation function).
const Api* api_at(lua_State* L, int index) {
  if (lua_type(L, index) == LUA_TSTRING) return model_of(L).api(lua_tostring(L, index));
  if (lua_type(L, index) != LUA_TTABLE) return nullptr;
  for (const Api& api : model_of(L).apis()) {
    if (api.operations.empty()) continue;
    lua_getfield(L, index, api.operations.front()->snake_name.c_str());
    const Operation* op = operation_at(L, -1);
    lua_pop(L, 1);
    if (op && op->api == api.name) return &api;
  }
  return nullptr;
}

// True for `cloud` itself or a cloud.client{} table: its first API is an API table.
bool is_client_at(lua_State* L, int index) {
  if (lua_type(L, index) != LUA_TTABLE || model_of(L).apis().empty()) return false;
  lua_getfield(L, index, model_of(L).apis().front().name.c_str());
  bool client = api_at(L, -1) != nullptr;
  lua_pop(L, 1);
  return client;
}

std::string overview(const Model& model) {
  return "The platform's APIs as Lua functions: tables in, tables out.\n\n" + format_model_help(model, kPrefix) +
         "\nhelp(cloud.devops.restore_instance) or help\"RestoreInstance\" describes an\n"
         "operation, help\"devops\" an API. Also in cloud: call(name, args), request{...},\n"
         "sign{...}, client{...}, error{...}, redact(text), operations(), describe(op),\n"
         "pretty(value).\n";
}

// The help text for the argument at index 1; raises for something help knows nothing of.
std::string help_text(lua_State* L) {
  if (lua_isnoneornil(L, 1) || is_client_at(L, 1)) return overview(model_of(L));
  if (const Operation* op = operation_at(L, 1))
    return format_operation_help(describe_operation(*op), kPrefix + op->api + "." + op->snake_name);
  if (const Api* api = api_at(L, 1)) return format_api_help(*api, kPrefix);
  if (const Waiter* w = lua_type(L, 1) == LUA_TSTRING ? model_of(L).waiter(lua_tostring(L, 1)) : nullptr)
    return format_waiter_help(*w, kPrefix);
  if (lua_type(L, 1) == LUA_TSTRING)
    arg_error(L, 1, std::string("no operation or API named '") + lua_tostring(L, 1) + "'; help() lists them");
  arg_error(L, 1, std::string("an operation, an API or a name expected, got ") + luaL_typename(L, 1) + "; help() lists them");
}

// help([x]): writes the help for x, or the list of every API and operation, with
// io.write, so that io.output() can capture it; with fwrite when io is not loaded.
int l_help(lua_State* L) {
  std::string text = help_text(L);
  luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
  if (lua_getfield(L, -1, LUA_IOLIBNAME) == LUA_TTABLE && lua_getfield(L, -1, "write") == LUA_TFUNCTION) {
    lua_pushlstring(L, text.data(), text.size());
    lua_call(L, 1, 0);
    return 0;
  }
  std::fwrite(text.data(), 1, text.size(), stdout);
  std::fflush(stdout);
  return 0;
}

void set_string(lua_State* L, const char* key, const std::string& value) {
  lua_pushlstring(L, value.data(), value.size());
  lua_setfield(L, -2, key);
}

void push_strings(lua_State* L, const std::vector<std::string>& list) {
  lua_createtable(L, static_cast<int>(list.size()), 0);
  for (size_t i = 0; i < list.size(); ++i) {
    lua_pushlstring(L, list[i].data(), list[i].size());
    lua_rawseti(L, -2, static_cast<lua_Integer>(i + 1));
  }
}

void push_fields(lua_State* L, const std::vector<FieldHelp>& fields) {
  lua_createtable(L, static_cast<int>(fields.size()), 0);
  for (size_t i = 0; i < fields.size(); ++i) {
    const FieldHelp& f = fields[i];
    lua_createtable(L, 0, 9);
    set_string(L, "path", f.path);
    set_string(L, "location", f.location);
    if (!f.wire_name.empty()) set_string(L, "wire_name", f.wire_name);
    set_string(L, "type", f.type);
    lua_pushboolean(L, f.required);
    lua_setfield(L, -2, "required");
    push_strings(L, f.rules);
    lua_setfield(L, -2, "rules");
    push_json(L, json(f.allowed));
    lua_setfield(L, -2, "allowed");
    if (f.default_value) push_json(L, *f.default_value), lua_setfield(L, -2, "default");
    if (!f.default_text.empty()) set_string(L, "default_text", f.default_text);
    set_string(L, "doc", f.doc);
    lua_rawseti(L, -2, static_cast<lua_Integer>(i + 1));
  }
}

// cloud.describe(op): the operation as data — name, fn, api, method, path, doc,
// idempotent, parameters and result (lists of fields as help() shows them).
int l_describe(lua_State* L) {
  const Operation* op = operation_at(L, 1);
  if (!op) arg_error(L, 1, "an operation function or name expected; help() lists them");
  OperationHelp help = describe_operation(*op);
  lua_createtable(L, 0, 9);
  for (auto [key, value] : {std::pair{"name", &op->name}, {"fn", &op->snake_name}, {"api", &op->api},
                            {"method", &op->method}, {"path", &op->path}, {"doc", &op->doc}})
    set_string(L, key, *value);
  lua_pushboolean(L, op->idempotent);
  lua_setfield(L, -2, "idempotent");
  push_fields(L, help.parameters);
  lua_setfield(L, -2, "parameters");
  push_fields(L, help.results);
  lua_setfield(L, -2, "result");
  return 1;
}

}  // namespace

void open_help(lua_State* L, int module) {
  lua_pushcfunction(L, l_help);
  lua_pushvalue(L, -1);
  lua_setfield(L, module, "help");
  lua_setglobal(L, "help");
  lua_pushcfunction(L, l_describe);
  lua_setfield(L, module, "describe");
}

}  // namespace cloud
