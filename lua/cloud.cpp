// The `cloud` Lua module. Every Lua-facing function follows one order: check the
// arguments, call the core, push the results, return their count. Core errors are
// turned into error objects (tables of fixed shape with __tostring, metatable
// "cloud.error") and raised here, at the edge, and nowhere else.
#include <lua.hpp>

#include <cctype>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <optional>

#include "core/client/config.h"
#include "core/model/protocol.h"
#include "core/model/validate.h"
#include "core/net/redact.h"
#include "core/client/settings.h"
#include "core/base/suggest.h"
#include "lua/binding.h"
#include "lua/convert.h"
#include "lua/session.h"
#include "lua/tasks.h"

namespace cloud {

namespace {

const char* const kClientMeta = "cloud.client";
const char* const kClientBoxMeta = "cloud.client.handle";
const char* const kErrorMeta = "cloud.error";
const char* const kSessionKey = "cloud.session";

// ------------------------------------------------------------------ error objects

std::string field_string(lua_State* L, int index, const char* name) {
  lua_getfield(L, index, name);
  std::string out = lua_isstring(L, -1) ? lua_tostring(L, -1) : "";
  lua_pop(L, 1);
  return out;
}

// The kind called `name` into `out`; false when no kind is called so.
bool find_kind(const std::string& name, ErrorKind& out) {
  for (ErrorKind k : {ErrorKind::validation, ErrorKind::api, ErrorKind::transport, ErrorKind::timeout,
                      ErrorKind::config, ErrorKind::waiter, ErrorKind::io})
    if (name == kind_name(k)) return out = k, true;
  return false;
}

}  // namespace

// The error object read back into an Error, so describe() is the one formatter.
Error error_from_table(lua_State* L, int index) {
  index = lua_absindex(L, index);
  Error e;
  find_kind(field_string(L, index, "kind"), e.kind);
  e.code = field_string(L, index, "code");
  e.message = field_string(L, index, "message");
  e.operation = field_string(L, index, "operation");
  e.request_id = field_string(L, index, "request_id");
  lua_getfield(L, index, "status");
  e.status = static_cast<long>(lua_tointeger(L, -1));
  lua_getfield(L, index, "attempts");
  e.attempts = static_cast<int>(lua_tointeger(L, -1));
  lua_pop(L, 2);
  if (lua_getfield(L, index, "fields") == LUA_TTABLE) {
    for (lua_Integer i = 1; lua_rawgeti(L, -1, i) == LUA_TTABLE; ++i) {
      e.fields.push_back({field_string(L, -1, "path"), field_string(L, -1, "problem")});
      lua_pop(L, 1);
    }
    lua_pop(L, 1);  // the value after the last problem
  }
  lua_pop(L, 1);  // fields
  return e;
}

namespace {

int error_tostring(lua_State* L) {
  check_type(L, 1, LUA_TTABLE);
  std::string text = error_from_table(L, 1).describe();
  lua_pushlstring(L, text.data(), text.size());
  return 1;
}

}  // namespace

void push_error(lua_State* L, const Error& e) {
  lua_createtable(L, 0, 9);
  lua_pushstring(L, kind_name(e.kind));
  lua_setfield(L, -2, "kind");
  for (auto [name, value] : {std::pair{"code", &e.code},
                             {"message", &e.message},
                             {"request_id", &e.request_id},
                             {"operation", &e.operation}}) {
    lua_pushlstring(L, value->data(), value->size());
    lua_setfield(L, -2, name);
  }
  lua_pushinteger(L, e.status);
  lua_setfield(L, -2, "status");
  lua_pushinteger(L, e.attempts);
  lua_setfield(L, -2, "attempts");
  lua_createtable(L, static_cast<int>(e.fields.size()), 0);
  for (size_t i = 0; i < e.fields.size(); ++i) {
    lua_createtable(L, 0, 2);
    lua_pushstring(L, e.fields[i].path.c_str());
    lua_setfield(L, -2, "path");
    lua_pushstring(L, e.fields[i].problem.c_str());
    lua_setfield(L, -2, "problem");
    lua_rawseti(L, -2, static_cast<lua_Integer>(i + 1));
  }
  if (e.fields.empty()) set_mark(L, -1, kListMark);  // a list, [] in JSON
  lua_setfield(L, -2, "fields");
  luaL_setmetatable(L, kErrorMeta);
}

[[noreturn]] void raise(lua_State* L, const Error& e) {
  push_error(L, e);
  raise_top(L);
}

[[noreturn]] void raise_top(lua_State*) { throw LuaRaise{}; }

[[noreturn]] void raise_text(lua_State* L, const std::string& text) {
  luaL_where(L, 1);
  lua_pushlstring(L, text.data(), text.size());
  lua_concat(L, 2);
  raise_top(L);
}

void call_lua(lua_State* L, int nargs, int nresults) {
  if (lua_pcall(L, nargs, nresults, 0) != LUA_OK) raise_top(L);
}

const char* tolstring(lua_State* L, int index, size_t* length) {
  index = lua_absindex(L, index);
  lua_pushcfunction(L, [](lua_State* S) {
    luaL_tolstring(S, 1, nullptr);
    return 1;
  });
  lua_pushvalue(L, index);
  call_lua(L, 1, 1);
  return lua_tolstring(L, -1, length);
}

namespace {

// What the edge does once the function behind it has returned (its results' count
// otherwise).
enum EdgeAction : int { kRaise = -1, kYield = -2 };

// The yield a function behind the edge asked for (yield_at_edge); Lua runs one
// function at a time per thread.
thread_local struct {
  int nresults;
  lua_KContext ctx;
  lua_KFunction k;
} pending_yield;

// What a C++ exception other than LuaRaise was, kept until the edge pushes it as an
// error object (outside the handler: no exception object is alive when Lua unwinds).
thread_local struct {
  bool pending = false;
  bool out_of_memory = false;
  std::string what;
} failure;

// Raises or yields as `n` asks (the failure kept, if any, pushed first as an error
// object); else returns it. No C++ object is alive in the caller but the failure's text.
int finish_at_edge(lua_State* L, int n) {
  if (n == kYield) return lua_yieldk(L, pending_yield.nresults, pending_yield.ctx, pending_yield.k);
  if (n != kRaise) return n;
  if (failure.pending) {
    failure.pending = false;
    push_error(L, failure.out_of_memory ? make_error(ErrorKind::transport, "OutOfMemory", "out of memory")
                                        : make_error(ErrorKind::transport, "InternalError", failure.what));
  }
  return lua_error(L);
}

// Keeps a C++ exception other than LuaRaise for finish_at_edge.
int note_failure(bool out_of_memory, const char* what) {
  failure = {true, out_of_memory, what};
  return kRaise;
}

// Runs `body` (a function behind the edge, which returns its results' count or an
// EdgeAction) and finishes as it asks, once its frames are gone.
template <class Body>
int behind_edge(lua_State* L, Body body) {
  int n;
  try {
    n = body();
  } catch (const LuaRaise&) {
    n = kRaise;
  } catch (const std::bad_alloc&) {
    n = note_failure(true, "out of memory");
  } catch (const std::exception& e) {
    n = note_failure(false, e.what());
  } catch (...) {
    n = note_failure(false, "an exception that is no std::exception");
  }
  return finish_at_edge(L, n);
}

}  // namespace

int yield_at_edge(lua_State*, int nresults, lua_KContext ctx, lua_KFunction k) {
  pending_yield = {nresults, ctx, k};
  return kYield;
}

int call_protected(lua_State* L, int (*fn)(lua_State*)) {
  return behind_edge(L, [L, fn] { return fn(L); });
}

int continue_protected(lua_State* L, int (*fn)(lua_State*, int, lua_KContext), int status, lua_KContext ctx) {
  return behind_edge(L, [=] { return fn(L, status, ctx); });
}

namespace {

// ------------------------------------------------------------------ results

void push_headers(lua_State* L, const Headers& headers) {
  lua_createtable(L, 0, static_cast<int>(headers.size()));
  std::string name;  // one buffer for every lowercased name: no allocation per header
  for (const Header& h : headers) {
    name.assign(h.first);
    for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    lua_pushlstring(L, name.data(), name.size());
    lua_pushvalue(L, -1);
    if (lua_rawget(L, -3) == LUA_TSTRING) {  // a repeated header: "first, second"
      lua_pushliteral(L, ", ");
      lua_pushlstring(L, h.second.data(), h.second.size());
      lua_concat(L, 3);
    } else {
      lua_pop(L, 1);
      lua_pushlstring(L, h.second.data(), h.second.size());
    }
    lua_rawset(L, -3);
  }
}

void push_meta(lua_State* L, const Meta& meta) {
  lua_createtable(L, 0, 5);
  lua_pushinteger(L, meta.status);
  lua_setfield(L, -2, "status");
  push_headers(L, meta.headers);
  lua_setfield(L, -2, "headers");
  lua_pushstring(L, meta.request_id.c_str());
  lua_setfield(L, -2, "request_id");
  lua_pushinteger(L, meta.attempts);
  lua_setfield(L, -2, "attempts");
  lua_pushnumber(L, meta.elapsed);
  lua_setfield(L, -2, "elapsed");
  set_mark(L, -1, kMetaMark);  // --output json shows a call's result, its meta with json-meta
}

// ------------------------------------------------------------------ clients

struct ClientBox {
  std::shared_ptr<Client> client;
};

const std::shared_ptr<Client>& client_ptr_upvalue(lua_State* L) {
  return static_cast<ClientBox*>(lua_touserdata(L, lua_upvalueindex(1)))->client;  // always the client's box
}

Client& client_upvalue(lua_State* L) { return *client_ptr_upvalue(L); }

int client_box_gc(lua_State* L) {
  static_cast<ClientBox*>(luaL_checkudata(L, 1, kClientBoxMeta))->~ClientBox();
  return 0;
}

json arguments_table(lua_State* L, int index) {
  if (lua_isnoneornil(L, index)) return json::object();
  check_type(L, index, LUA_TTABLE);
  auto args = to_json(L, index);
  if (!args.ok()) raise(L, args.error());
  return std::move(args.value());
}

// Pushes an operation's result and meta (2 values), or its error object (-1).
int push_call_outcome(lua_State* L, const Parked& p) {
  const auto& outcome = std::get<Outcome<CallResult>>(p.result);
  if (!outcome.ok()) return push_error(L, outcome.error()), -1;
  push_json(L, outcome->result);
  push_meta(L, outcome->meta);
  return 2;
}

// Starts the operation on the client's loop (parked: see tasks.h); the index of the wait.
int start_named(lua_State* L, const std::string& operation, int args_index) {
  json args = arguments_table(L, args_index);
  const std::shared_ptr<Client>& client = client_ptr_upvalue(L);
  Parked& p = park(L, client, push_call_outcome);
  Client::Id id = client->start_call(operation, std::move(args), [&p](Outcome<CallResult> r) { p.end(std::move(r)); });
  p.cancel = [c = client.get(), id] { c->cancel(id); };
  return lua_gettop(L);
}

// cloud.<api>.<operation>{...}: upvalue 2 is the operation's name.
int l_operation(lua_State* L) {
  int at = start_named(L, lua_tostring(L, lua_upvalueindex(2)), 1);
  return wait_parked(L, at);
}

// cloud.call("UpdateSnapshot", {...})
// client.check_result(operation, result): raises the validation error naming every
// field of `result` that the operation's output shape does not allow (its path, what
// is wrong), as a call's arguments are checked; nothing when it fits. cloud.stub
// checks the answers it is given with it (lua/stubber.lua).
int l_check_result(lua_State* L) {
  if (!lua_isstring(L, 1)) type_error(L, 1, "string");
  const std::string name = lua_tostring(L, 1);
  const Operation* op = client_upvalue(L).model().find(name);
  if (!op) raise(L, make_error(ErrorKind::validation, "UnknownOperation", "no operation named '" + name + "'"));
  json result = arguments_table(L, 2);
  std::vector<FieldProblem> problems;
  if (op->output) validate_value(*op->output, result, "", problems);
  if (!problems.empty()) raise(L, validation_error(*op, std::move(problems)));
  return 0;
}

int l_call(lua_State* L) {
  if (!lua_isstring(L, 1)) type_error(L, 1, "string");
  int at = start_named(L, lua_tostring(L, 1), 2);
  return wait_parked(L, at);
}

// Field `name` of argument 1 (the table at `index`), a string; `fallback` when absent.
std::string opt_string_field(lua_State* L, int index, const char* name, const std::string& fallback = "") {
  int t = lua_getfield(L, index, name);
  std::string out = fallback;
  size_t length = 0;
  if (t == LUA_TSTRING || t == LUA_TNUMBER) {
    const char* text = lua_tolstring(L, -1, &length);
    out.assign(text, length);  // every byte: a body may hold NULs
  } else if (t != LUA_TNIL)
    arg_error(L, 1, std::string("field '") + name + "' must be a string, got " + luaL_typename(L, -1));
  lua_pop(L, 1);
  return out;
}

// A headers argument: a list of {name, value} pairs, or a { name = value } map.
Headers headers_field(lua_State* L, int index) {
  Headers out;
  if (lua_getfield(L, index, "headers") == LUA_TNIL) return lua_pop(L, 1), out;
  if (!lua_istable(L, -1)) arg_error(L, 1, std::string("field 'headers' must be a table, got ") + luaL_typename(L, -1));
  int t = lua_gettop(L);
  if (lua_rawlen(L, t) > 0) {
    for (lua_Integer i = 1; lua_rawgeti(L, t, i) == LUA_TTABLE; ++i) {
      lua_rawgeti(L, -1, 1);
      lua_rawgeti(L, -2, 2);
      if (!lua_isstring(L, -2) || !lua_isstring(L, -1))
        arg_error(L, 1, "headers[" + std::to_string(i) + "] must be a {name, value} pair");
      out.emplace_back(lua_tostring(L, -2), lua_tostring(L, -1));
      lua_pop(L, 3);
    }
    lua_pop(L, 1);
  } else {
    for (lua_pushnil(L); lua_next(L, t); lua_pop(L, 1))
      if (lua_type(L, -2) == LUA_TSTRING && lua_isstring(L, -1))
        out.emplace_back(lua_tostring(L, -2), lua_tostring(L, -1));
  }
  lua_pop(L, 1);
  return out;
}

// Field `name` of argument 1 (the table at `index`), an integer; `fallback` when absent.
std::optional<long> opt_integer_field(lua_State* L, int index, const char* name, std::optional<long> fallback = {}) {
  if (lua_getfield(L, index, name) != LUA_TNIL) {
    int is_integer = 0;
    fallback = static_cast<long>(lua_tointegerx(L, -1, &is_integer));
    if (!is_integer)
      arg_error(L, 1, std::string("field '") + name + "' must be an integer, got " + luaL_typename(L, -1));
  }
  lua_pop(L, 1);
  return fallback;
}

bool opt_bool_field(lua_State* L, int index, const char* name, bool fallback) {
  lua_getfield(L, index, name);
  bool out = lua_isnil(L, -1) ? fallback : lua_toboolean(L, -1) != 0;
  lua_pop(L, 1);
  return out;
}

// Pushes a raw answer as { status=, headers=, body= } and its meta (2 values), or
// its error object (-1).
int push_raw_outcome(lua_State* L, const Parked& p) {
  const auto& outcome = std::get<Outcome<RawResult>>(p.result);
  if (!outcome.ok()) return push_error(L, outcome.error()), -1;
  lua_createtable(L, 0, 3);
  lua_pushinteger(L, outcome->response.status);
  lua_setfield(L, -2, "status");
  push_headers(L, outcome->response.headers);
  lua_setfield(L, -2, "headers");
  lua_pushlstring(L, outcome->response.body.data(), outcome->response.body.size());
  lua_setfield(L, -2, "body");
  push_meta(L, outcome->meta);
  return 2;
}

// Starts c.request's signed request on the client's loop; the index of the wait.
int start_request(lua_State* L) {
  check_type(L, 1, LUA_TTABLE);
  RawRequest raw;
  raw.api = opt_string_field(L, 1, "api");
  raw.method = opt_string_field(L, 1, "method", "GET");
  raw.path = opt_string_field(L, 1, "path", "/");
  raw.body = opt_string_field(L, 1, "body");
  raw.headers = headers_field(L, 1);
  if (lua_getfield(L, 1, "query") == LUA_TTABLE)
    for (lua_pushnil(L); lua_next(L, -2); lua_pop(L, 1)) {
      std::string key = tolstring(L, -2);
      std::string value = tolstring(L, -2);  // the value, below the key's copy
      lua_pop(L, 2);
      raw.query[key] = value;
    }
  lua_pop(L, 1);
  const std::shared_ptr<Client>& client = client_ptr_upvalue(L);
  Parked& p = park(L, client, push_raw_outcome);
  Client::Id id = client->start_request(raw, [&p](Outcome<RawResult> r) { p.end(std::move(r)); });
  p.cancel = [c = client.get(), id] { c->cancel(id); };
  return lua_gettop(L);
}

// c.request{api=, method=, path=, query=, headers=, body=}: any signed request.
int l_request(lua_State* L) {
  check_declared(L, "cloud.request");
  int at = start_request(L);
  return wait_parked(L, at);
}

// cloud.storage.presign{ Bucket =, Object =, method = "GET", expires = 900 }: a URL
// that performs the object operation of `method` alone, signed by the client.
int l_presign(lua_State* L) {
  check_type(L, 1, LUA_TTABLE);
  std::string method = opt_string_field(L, 1, "method", "GET");
  const char* operation = presigned_object_operation(method);
  if (!operation) arg_error(L, 1, "field 'method' must be GET, PUT or HEAD, got '" + method + "'");
  long expires = *opt_integer_field(L, 1, "expires", 900);
  json args = arguments_table(L, 1);
  args.erase("method");
  args.erase("expires");
  auto url = client_upvalue(L).presign(operation, args, expires);
  if (!url.ok()) raise(L, url.error());
  lua_pushlstring(L, url->data(), url->size());
  return 1;
}

// cloud.storage.presign_post{ Bucket =, Object =, conditions =, fields =, expires = }:
// { url =, fields = { ... } }, the form of a browser upload (Client::presign_post).
int l_presign_post(lua_State* L) {
  check_type(L, 1, LUA_TTABLE);
  auto form = client_upvalue(L).presign_post(arguments_table(L, 1));
  if (!form.ok() && form.error().code == "BadArgument") arg_error(L, 1, form.error().message);
  if (!form.ok()) raise(L, form.error());
  lua_createtable(L, 0, 2);
  lua_pushlstring(L, form->url.data(), form->url.size());
  lua_setfield(L, -2, "url");
  lua_createtable(L, 0, static_cast<int>(form->fields.size()));
  for (const auto& [name, value] : form->fields) {
    lua_pushlstring(L, value.data(), value.size());
    lua_setfield(L, -2, name.c_str());
  }
  lua_setfield(L, -2, "fields");
  return 1;
}

// c.operations(): a list of { name=, api=, fn=, method=, path=, doc= }, and
// paginator = { input_token = {...}, output_token = {...}, more_results = } for the
// listings (lua/pages.lua follows them).
int l_operations(lua_State* L) {
  auto ops = client_upvalue(L).model().operations();
  lua_createtable(L, static_cast<int>(ops.size()), 0);
  for (size_t i = 0; i < ops.size(); ++i) {
    lua_createtable(L, 0, 6);
    for (auto [key, value] : {std::pair{"name", &ops[i]->name},
                              {"api", &ops[i]->api},
                              {"fn", &ops[i]->snake_name},
                              {"method", &ops[i]->method},
                              {"path", &ops[i]->path},
                              {"doc", &ops[i]->doc}}) {
      lua_pushstring(L, value->c_str());
      lua_setfield(L, -2, key);
    }
    if (const std::optional<Paginator>& p = ops[i]->paginator) {
      push_json(
          L, {{"input_token", p->input_tokens}, {"output_token", p->output_tokens}, {"more_results", p->more_results}});
      lua_setfield(L, -2, "paginator");
    }
    lua_rawseti(L, -2, static_cast<lua_Integer>(i + 1));
  }
  return 1;
}

// __index of an API table: a name that is no operation of the API is an error that
// names the nearest one ("no operation 'update_snapshots' in cloud.cluster; did you
// mean 'update_snapshot'?") where Lua would hand back a nil to call.
int l_missing_operation(lua_State* L) {
  const Api* api = client_upvalue(L).model().api(lua_tostring(L, lua_upvalueindex(2)));
  std::string key = luaL_tolstring(L, 2, nullptr);
  std::vector<std::string> names;
  for (const Operation* op : api->operations) names.push_back(op->snake_name);
  std::string text =
      suggested("no operation '" + key + "' in cloud." + api->name, key, names, "help\"" + api->name + "\" lists them");
  luaL_where(L, 1);  // where the Lua code indexed the table
  lua_pushlstring(L, text.data(), text.size());
  lua_concat(L, 2);
  raise_top(L);
}

// Pushes the metatable of an API table (its __index: l_missing_operation).
void push_api_metatable(lua_State* L, int box, const std::string& api) {
  lua_createtable(L, 0, 1);
  lua_pushvalue(L, box);
  lua_pushstring(L, api.c_str());
  lua_pushcclosure(L, protect<l_missing_operation>, 2);
  lua_setfield(L, -2, "__index");
}

// c.waiters(): a list of { name=, api=, operation=, delay=, max_attempts=, doc=,
// source=, acceptors= }, the model's named waiters (lua/wait.lua runs them).
int l_waiters(lua_State* L) {
  auto waiters = client_upvalue(L).model().waiters();
  lua_createtable(L, static_cast<int>(waiters.size()), 0);
  for (size_t i = 0; i < waiters.size(); ++i) {
    const Waiter& w = *waiters[i];
    json delay = w.delay == static_cast<long long>(w.delay) ? json(static_cast<long long>(w.delay)) : json(w.delay);
    push_json(L, {{"name", w.name},
                  {"api", w.api},
                  {"operation", w.operation},
                  {"delay", delay},
                  {"max_attempts", w.max_attempts},
                  {"doc", w.doc},
                  {"source", w.source},
                  {"acceptors", w.acceptors}});
    lua_rawseti(L, -2, static_cast<lua_Integer>(i + 1));
  }
  return 1;
}

void push_client_closure(lua_State* L, int box, lua_CFunction fn) {
  lua_pushvalue(L, box);
  lua_pushcclosure(L, fn, 1);
}

// Fills the table on top of the stack with the client API: one table per API of
// closures per operation (a missing name is an error suggesting the nearest), plus
// call, request and operations.
void fill_client_table(lua_State* L, std::shared_ptr<Client> client) {
  int table = lua_gettop(L);
  new (lua_newuserdatauv(L, sizeof(ClientBox), 0)) ClientBox{client};
  luaL_setmetatable(L, kClientBoxMeta);
  int box = lua_gettop(L);
  const Model& model = client->model();  // the index only: each API's file is read when first called
  const std::string presigning_api = model.api_of(presigned_object_operation("GET"));
  for (const std::string& api : model.api_names()) {
    std::vector<std::string> operations = model.operation_names(api);
    lua_createtable(L, 0, static_cast<int>(operations.size()));
    for (const std::string& name : operations) {
      lua_pushvalue(L, box);
      lua_pushstring(L, name.c_str());
      lua_pushcclosure(L, protect<l_operation>, 2);
      lua_setfield(L, -2, snake_case(name).c_str());
    }
    if (api == presigning_api) {  // the storage API: its objects have URLs
      push_client_closure(L, box, protect<l_presign>);
      lua_setfield(L, -2, "presign");
      push_client_closure(L, box, protect<l_presign_post>);
      lua_setfield(L, -2, "presign_post");
    }
    push_api_metatable(L, box, api);
    lua_setmetatable(L, -2);
    lua_setfield(L, table, api.c_str());
  }
  const std::pair<const char*, lua_CFunction> fns[] = {{"call", protect<l_call>},
                                                       {"check_result", protect<l_check_result>},
                                                       {"operations", protect<l_operations>},
                                                       {"request", protect<l_request>},
                                                       {"waiters", protect<l_waiters>}};
  for (const auto& [name, fn] : fns) push_client_closure(L, box, fn), lua_setfield(L, table, name);
  lua_pushvalue(L, box);
  lua_setfield(L, table, "_handle");
  lua_settop(L, table);
}

}  // namespace

const char* operation_name_of(lua_State* L, int index) {
  if (lua_tocfunction(L, index) != protect<l_operation> || !lua_getupvalue(L, index, 2)) return nullptr;
  const char* name = lua_tostring(L, -1);
  lua_pop(L, 1);
  return name;  // the string stays alive: the closure holds it
}

Session& session_of(lua_State* L) {
  lua_getfield(L, LUA_REGISTRYINDEX, kSessionKey);
  auto* s = static_cast<std::shared_ptr<Session>*>(lua_touserdata(L, -1));
  lua_pop(L, 1);
  return **s;
}

namespace {

// cloud.client's argument as JSON for core's client_config; a value without a JSON
// form (a function...) is refused as a bad setting, as core refuses the others.
json client_arguments(lua_State* L) {
  if (lua_isnoneornil(L, 1)) return json::object();
  check_type(L, 1, LUA_TTABLE);
  auto args = to_json(L, 1);
  if (args.ok()) return std::move(args.value());
  const Error& e = args.error();
  std::string field = e.fields.empty() || e.fields.front().path == "(argument)" ? "" : e.fields.front().path + ": ";
  raise(L, make_error(ErrorKind::config, "InvalidSetting", "cloud.client: " + field + e.message));
}

// cloud.client{profile=, region=, dialect=, endpoints=, credentials=, ...}: a new
// cloud._client_settings(): the settings cloud.client{} takes, from core's table of
// settings, as { key, kind ("integer", "choice"...), per_api, choices, doc }: what
// lua/reference.lua declares cloud.client's fields from.
int l_client_settings(lua_State* L) {
  static const char* const kinds[] = {"name", "choice", "url", "text", "integer", "seconds", "boolean", "field_names"};
  lua_newtable(L);
  lua_Integer n = 0;
  for (const SettingSpec& s : setting_specs()) {
    if (s.client_key.empty()) continue;
    push_json(L, {{"key", s.client_key},
                  {"kind", kinds[static_cast<int>(s.kind)]},
                  {"per_api", s.per_api},
                  {"choices", s.choices},
                  {"doc", s.doc}});
    lua_rawseti(L, -2, ++n);
  }
  return 1;
}

// client whose left-out fields come from the session's configuration, or with
// profile= from that profile of the config file; every field is checked by core's
// table of settings, as the config file's are. A client that replays needs no account:
// the embedded emulator is not started for it.
int l_client(lua_State* L) {
  json arguments = client_arguments(L);
  bool replays = arguments.is_object() && arguments.value("replay", json("")) != json("");
  auto session = replays ? Outcome<const ClientConfig*>(&session_of(L).config.client)  // no emulator to start
                         : complete_config(session_of(L));
  if (!session.ok()) raise(L, session.error());
  auto config = client_config(arguments, *session.value(), [](const char* name) { return std::getenv(name); });
  if (!config.ok()) raise(L, config.error());
  auto client = make_client(*config);
  if (!client.ok()) raise(L, client.error());
  lua_newtable(L);
  fill_client_table(L, client.value());
  add_client_functions(L, lua_gettop(L));
  luaL_setmetatable(L, kClientMeta);
  return 1;
}

int client_tostring(lua_State* L) {
  lua_getfield(L, 1, "_handle");
  auto* box = static_cast<ClientBox*>(luaL_checkudata(L, -1, kClientBoxMeta));
  const ClientConfig& c = box->client->config();
  lua_pushfstring(L, "cloud.client (profile %s, region %s, dialect %s)", c.profile.c_str(), c.region.c_str(),
                  c.dialect->name.c_str());
  return 1;
}

// ------------------------------------------------------------------ cloud.sign

void push_pairs(lua_State* L, const Headers& headers) {
  lua_createtable(L, static_cast<int>(headers.size()), 0);
  for (size_t i = 0; i < headers.size(); ++i) {
    lua_createtable(L, 2, 0);
    lua_pushstring(L, headers[i].first.c_str());
    lua_rawseti(L, -2, 1);
    lua_pushstring(L, headers[i].second.c_str());
    lua_rawseti(L, -2, 2);
    lua_rawseti(L, -2, static_cast<lua_Integer>(i + 1));
  }
}

SignInput sign_input(lua_State* L) {
  SignInput in;
  in.method = opt_string_field(L, 1, "method", "GET");
  in.url = opt_string_field(L, 1, "url");
  if (in.url.empty()) arg_error(L, 1, "field 'url' is required");
  in.headers = headers_field(L, 1);
  in.body = opt_string_field(L, 1, "body");
  in.region = opt_string_field(L, 1, "region", session_of(L).config.client.region);
  in.service = opt_string_field(L, 1, "service");
  if (in.service.empty()) arg_error(L, 1, "field 'service' is required");
  in.credentials.access_key_id = opt_string_field(L, 1, "access_key_id");
  in.credentials.secret_access_key = opt_string_field(L, 1, "secret_access_key");
  in.credentials.session_token = opt_string_field(L, 1, "session_token");
  in.omit_session_token = opt_bool_field(L, 1, "omit_session_token", false);
  in.time = opt_string_field(L, 1, "time");
  std::string dialect = opt_string_field(L, 1, "dialect", "ext");
  in.dialect = Dialect::find(dialect);
  if (!in.dialect) arg_error(L, 1, "field 'dialect' must be ext or aws, got '" + dialect + "'");
  in.policy.normalize_path = opt_bool_field(L, 1, "normalize", true);
  in.policy.double_encode = opt_bool_field(L, 1, "double_encode", true);
  in.policy.payload_hash = opt_bool_field(L, 1, "sign_body", false) ? PayloadHash::header : PayloadHash::omitted;
  in.presign_expires = opt_integer_field(L, 1, "presign_expires");
  return in;
}

// cloud.sign{...}: the signature and everything around it, nothing sent.
int l_sign(lua_State* L) {
  check_declared(L, "cloud.sign");
  auto out = sign(sign_input(L));
  if (!out.ok()) raise(L, out.error());
  lua_createtable(L, 0, 6);
  for (auto [key, value] : {std::pair{"canonical_request", &out->canonical_request},
                            {"string_to_sign", &out->string_to_sign},
                            {"signature", &out->signature},
                            {"authorization", &out->authorization},
                            {"url", &out->url}}) {
    lua_pushlstring(L, value->data(), value->size());
    lua_setfield(L, -2, key);
  }
  push_pairs(L, out->headers);
  lua_setfield(L, -2, "headers");
  return 1;
}

// ------------------------------------------------------------------ cloud.error

// cloud.error{kind=, code=, message=, status=, request_id=, operation=, attempts=,
// fields=}: an error object from the one constructor of the module's own errors
// (push_error), for Lua code that raises errors of the same shape (cloud.wait_until).
// It is returned; error() raises it.
int l_error(lua_State* L) {
  check_type(L, 1, LUA_TTABLE);
  ErrorKind kind;
  std::string name = opt_string_field(L, 1, "kind");
  if (!find_kind(name, kind))
    arg_error(L, 1,
              "field 'kind' must be validation, api, transport, timeout, config, waiter or io, got '" + name + "'");
  if (opt_string_field(L, 1, "code").empty()) arg_error(L, 1, "field 'code' is required");
  for (const char* field : {"message", "operation", "request_id"}) opt_string_field(L, 1, field);
  for (const char* field : {"status", "attempts"})
    if (int t = lua_getfield(L, 1, field); lua_pop(L, 1), t != LUA_TNIL && t != LUA_TNUMBER)
      arg_error(L, 1, std::string("field '") + field + "' must be an integer");
  if (int t = lua_getfield(L, 1, "fields"); lua_pop(L, 1), t != LUA_TNIL && t != LUA_TTABLE)
    arg_error(L, 1, "field 'fields' must be a list of { path =, problem = }");
  push_error(L, error_from_table(L, 1));
  return 1;
}

// cloud.printable(text): the text as a terminal may show it, every control character
// but line feed and tab written as an escape (core/net/redact's printable).
int l_printable(lua_State* L) {
  size_t n = 0;
  const char* text = luaL_checklstring(L, 1, &n);
  std::string shown = printable(std::string_view(text, n));
  lua_pushlstring(L, shown.data(), shown.size());
  return 1;
}

// cloud.redact(text): the text as cloudlua shows any text, every secret replaced.
int l_redact(lua_State* L) {
  size_t len = 0;
  const char* text = luaL_checklstring(L, 1, &len);
  std::string shown = redact(std::string_view(text, len));
  lua_pushlstring(L, shown.data(), shown.size());
  return 1;
}

// ------------------------------------------------------------------ the module

int session_gc(lua_State* L) {
  static_cast<std::shared_ptr<Session>*>(lua_touserdata(L, 1))->~shared_ptr();
  return 0;
}

void register_metatables(lua_State* L) {
  luaL_newmetatable(L, kErrorMeta);
  lua_pushcfunction(L, protect<error_tostring>);
  lua_setfield(L, -2, "__tostring");
  luaL_newmetatable(L, kClientBoxMeta);
  lua_pushcfunction(L, client_box_gc);
  lua_setfield(L, -2, "__gc");
  luaL_newmetatable(L, kClientMeta);
  lua_pushcfunction(L, protect<client_tostring>);
  lua_setfield(L, -2, "__tostring");
  lua_pop(L, 3);
}

void store_session(lua_State* L, std::shared_ptr<Session> session) {
  new (lua_newuserdatauv(L, sizeof(std::shared_ptr<Session>), 0)) std::shared_ptr<Session>(std::move(session));
  lua_createtable(L, 0, 1);
  lua_pushcfunction(L, session_gc);
  lua_setfield(L, -2, "__gc");
  lua_setmetatable(L, -2);
  lua_setfield(L, LUA_REGISTRYINDEX, kSessionKey);
}

// `require "cloud"` works, and each API table (and cloud.emulator) is a loaded module
// too, so that tracebacks and arg_error name functions fully: "bad argument #1 to
// 'cloud.cluster.update_snapshot'".
void register_loaded(lua_State* L, int module) {
  luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
  lua_pushvalue(L, module);
  lua_setfield(L, -2, "cloud");
  std::vector<std::string> parts = api_names();
  parts.push_back("emulator");  // when the embedded emulator serves the session
  parts.push_back("fs");
  parts.push_back("time");
  for (const std::string& part : parts) {
    if (lua_getfield(L, module, part.c_str()) == LUA_TTABLE) lua_setfield(L, -2, ("cloud." + part).c_str());
    else lua_pop(L, 1);
  }
  lua_pop(L, 1);
}

}  // namespace

void open_cloud(lua_State* L, std::shared_ptr<Session> session) {
  register_metatables(L);
  std::shared_ptr<Client> client = session->client;
  store_session(L, std::move(session));
  lua_newtable(L);
  fill_client_table(L, client);
  const luaL_Reg module_fns[] = {{"client", protect<l_client>},
                                 {"error", protect<l_error>},
                                 {"printable", protect<l_printable>},
                                 {"redact", protect<l_redact>},
                                 {"sign", protect<l_sign>},
                                 {"_client_settings", protect<l_client_settings>},
                                 {nullptr, nullptr}};
  luaL_setfuncs(L, module_fns, 0);
  push_null(L);
  lua_setfield(L, -2, "null");
  open_emulator(L, lua_gettop(L));
  open_system(L, lua_gettop(L));
  open_fs(L, lua_gettop(L));
  open_json(L, lua_gettop(L));
  open_tasks(L, lua_gettop(L));
  open_help(L, lua_gettop(L));
  lua_pushstring(L, "cloudlua " CLOUDLUA_VERSION);
  lua_setfield(L, -2, "_VERSION");
  lua_pushvalue(L, -1);
  lua_setglobal(L, "cloud");
  register_loaded(L, lua_gettop(L));
  open_embedded_modules(L, lua_gettop(L));
  lua_pop(L, 1);
}

}  // namespace cloud
