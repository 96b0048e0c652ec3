// The `cloud` Lua module. Every Lua-facing function follows one order: check the
// arguments, call the core, push the results, return their count. Core errors are
// turned into error objects (tables of fixed shape with __tostring, metatable
// "cloud.error") and raised here, at the edge, and nowhere else.
#include <lauxlib.h>
#include <lua.h>

#include <cstdlib>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "core/protocol.h"
#include "core/redact.h"
#include "core/validate.h"
#include "lua/binding.h"
#include "lua/convert.h"
#include "lua/session.h"

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

// The error object read back into an Error, so describe() is the one formatter.
Error error_from_table(lua_State* L, int index) {
  Error e;
  std::string kind = field_string(L, index, "kind");
  for (ErrorKind k : {ErrorKind::validation, ErrorKind::api, ErrorKind::transport, ErrorKind::timeout, ErrorKind::config})
    if (kind == kind_name(k)) e.kind = k;
  e.code = field_string(L, index, "code");
  e.message = field_string(L, index, "message");
  e.operation = field_string(L, index, "operation");
  e.request_id = field_string(L, index, "request_id");
  lua_getfield(L, index, "status");
  e.status = static_cast<long>(lua_tointeger(L, -1));
  lua_getfield(L, index, "attempts");
  e.attempts = static_cast<int>(lua_tointeger(L, -1));
  lua_pop(L, 2);
  if (lua_getfield(L, index, "fields") == LUA_TTABLE)
    for (lua_Integer i = 1; lua_rawgeti(L, -1, i) == LUA_TTABLE; ++i) {
      e.fields.push_back({field_string(L, -1, "path"), field_string(L, -1, "problem")});
      lua_pop(L, 1);
    }
  lua_pop(L, 2);
  return e;
}

int error_tostring(lua_State* L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  std::string text = error_from_table(L, 1).describe();
  lua_pushlstring(L, text.data(), text.size());
  return 1;
}

}  // namespace

void push_error(lua_State* L, const Error& e) {
  lua_createtable(L, 0, 9);
  lua_pushstring(L, kind_name(e.kind));
  lua_setfield(L, -2, "kind");
  for (auto [name, value] : {std::pair{"code", &e.code}, {"message", &e.message}, {"request_id", &e.request_id},
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
  lua_setfield(L, -2, "fields");
  luaL_setmetatable(L, kErrorMeta);
}

[[noreturn]] void raise(lua_State* L, const Error& e) {
  push_error(L, e);
  lua_error(L);
  abort();  // lua_error does not return
}

namespace {

// ------------------------------------------------------------------ results

void push_headers(lua_State* L, const Headers& headers) {
  lua_createtable(L, 0, static_cast<int>(headers.size()));
  for (const Header& h : headers) {
    std::string name = to_lower(h.first);
    std::string value = h.second;
    if (lua_getfield(L, -1, name.c_str()) == LUA_TSTRING) value = std::string(lua_tostring(L, -1)) + ", " + value;
    lua_pop(L, 1);
    lua_pushlstring(L, value.data(), value.size());
    lua_setfield(L, -2, name.c_str());
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
}

// ------------------------------------------------------------------ clients

struct ClientBox {
  std::shared_ptr<Client> client;
};

Client& client_upvalue(lua_State* L) {
  auto* box = static_cast<ClientBox*>(luaL_checkudata(L, lua_upvalueindex(1), kClientBoxMeta));
  return *box->client;
}

int client_box_gc(lua_State* L) {
  static_cast<ClientBox*>(luaL_checkudata(L, 1, kClientBoxMeta))->~ClientBox();
  return 0;
}

json arguments_table(lua_State* L, int index) {
  if (lua_isnoneornil(L, index)) return json::object();
  luaL_checktype(L, index, LUA_TTABLE);
  auto args = to_json(L, index);
  if (!args.ok()) raise(L, args.error());
  return std::move(args.value());
}

// The whole file at `path`, or why it cannot be read ("No such file or directory").
Outcome<std::string> read_file(const std::string& path) {
  FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return make_error(ErrorKind::validation, "FileUnreadable", std::strerror(errno));
  std::string bytes;
  char buffer[65536];
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof buffer, f)) > 0) bytes.append(buffer, n);
  int failed = std::ferror(f) ? errno : 0;
  std::fclose(f);
  if (failed) return make_error(ErrorKind::validation, "FileUnreadable", std::strerror(failed));
  return bytes;
}

// An operation whose request body is raw bytes (UploadPart's `body`, PutObject's
// `Body`) also takes `file = "path"`: the file's bytes become the body. Read here, at
// the edge, so the core only ever sees bytes. Both given, or a file that cannot be
// read, is a problem of field `file`, reported with the arguments' other problems
// in one validation error; nothing is sent.
void load_payload_file(lua_State* L, const Operation& op, json& args) {
  if (op.payload.empty() || !args.is_object() || !args.contains("file") || op.input->find_member("file")) return;
  json file = args["file"];
  args.erase("file");
  std::optional<FieldProblem> problem;
  if (!file.is_string()) {
    problem = FieldProblem{"file", "string expected (the path of a file to send as " + op.payload + ")"};
  } else if (args.contains(op.payload)) {
    problem = FieldProblem{"file", "give " + op.payload + " or file, not both"};
  } else if (auto bytes = read_file(file.get<std::string>()); !bytes.ok()) {
    problem = FieldProblem{"file", "cannot read '" + file.get<std::string>() + "': " + bytes.error().message};
  } else {
    args[op.payload] = std::move(bytes.value());
    return;
  }
  auto others = validate_input(op, args);
  std::vector<FieldProblem> problems{*problem};
  if (!others.ok()) problems.insert(problems.end(), others.error().fields.begin(), others.error().fields.end());
  raise(L, validation_error(op, std::move(problems)));
}

int call_named(lua_State* L, const std::string& operation, int args_index) {
  json args = arguments_table(L, args_index);
  if (const Operation* op = client_upvalue(L).model().find(operation)) load_payload_file(L, *op, args);
  auto outcome = client_upvalue(L).call(operation, args);
  if (!outcome.ok()) raise(L, outcome.error());
  push_json(L, outcome->result);
  push_meta(L, outcome->meta);
  return 2;
}

// cloud.<api>.<operation>{...}: upvalue 2 is the operation's name.
int l_operation(lua_State* L) { return call_named(L, lua_tostring(L, lua_upvalueindex(2)), 1); }

// cloud.call("UpdateSnapshot", {...})
int l_call(lua_State* L) { return call_named(L, luaL_checkstring(L, 1), 2); }

std::string opt_string_field(lua_State* L, int index, const char* name, const char* fn, const std::string& fallback = "") {
  int t = lua_getfield(L, index, name);
  std::string out = fallback;
  if (t == LUA_TSTRING || t == LUA_TNUMBER) out = lua_tostring(L, -1);
  else if (t != LUA_TNIL) luaL_error(L, "bad argument #1 to '%s' (field '%s' must be a string, got %s)", fn, name, luaL_typename(L, -1));
  lua_pop(L, 1);
  return out;
}

// A headers argument: a list of {name, value} pairs, or a { name = value } map.
Headers headers_field(lua_State* L, int index, const char* fn) {
  Headers out;
  if (lua_getfield(L, index, "headers") == LUA_TNIL) return lua_pop(L, 1), out;
  if (!lua_istable(L, -1)) luaL_error(L, "bad argument #1 to '%s' (field 'headers' must be a table)", fn);
  int t = lua_gettop(L);
  if (lua_rawlen(L, t) > 0) {
    for (lua_Integer i = 1; lua_rawgeti(L, t, i) == LUA_TTABLE; ++i) {
      lua_rawgeti(L, -1, 1);
      lua_rawgeti(L, -2, 2);
      if (!lua_isstring(L, -2) || !lua_isstring(L, -1))
        luaL_error(L, "bad argument #1 to '%s' (headers[%d] must be a {name, value} pair)", fn, static_cast<int>(i));
      out.emplace_back(lua_tostring(L, -2), lua_tostring(L, -1));
      lua_pop(L, 3);
    }
    lua_pop(L, 1);
  } else {
    for (lua_pushnil(L); lua_next(L, t); lua_pop(L, 1))
      if (lua_type(L, -2) == LUA_TSTRING && lua_isstring(L, -1)) out.emplace_back(lua_tostring(L, -2), lua_tostring(L, -1));
  }
  lua_pop(L, 1);
  return out;
}

bool opt_bool_field(lua_State* L, int index, const char* name, bool fallback) {
  lua_getfield(L, index, name);
  bool out = lua_isnil(L, -1) ? fallback : lua_toboolean(L, -1) != 0;
  lua_pop(L, 1);
  return out;
}

// c.request{api=, method=, path=, query=, headers=, body=}: any signed request.
int l_request(lua_State* L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  RawRequest raw;
  raw.api = opt_string_field(L, 1, "api", "request");
  raw.method = opt_string_field(L, 1, "method", "request", "GET");
  raw.path = opt_string_field(L, 1, "path", "request", "/");
  raw.body = opt_string_field(L, 1, "body", "request");
  raw.headers = headers_field(L, 1, "request");
  if (lua_getfield(L, 1, "query") == LUA_TTABLE)
    for (lua_pushnil(L); lua_next(L, -2); lua_pop(L, 1)) {
      std::string key = luaL_tolstring(L, -2, nullptr);
      std::string value = luaL_tolstring(L, -2, nullptr);  // the value, below the key's copy
      lua_pop(L, 2);
      raw.query[key] = value;
    }
  lua_pop(L, 1);
  auto outcome = client_upvalue(L).request(raw);
  if (!outcome.ok()) raise(L, outcome.error());
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

// c.operations(): a list of { name=, api=, fn=, method=, path=, doc= }.
int l_operations(lua_State* L) {
  auto ops = client_upvalue(L).model().operations();
  lua_createtable(L, static_cast<int>(ops.size()), 0);
  for (size_t i = 0; i < ops.size(); ++i) {
    lua_createtable(L, 0, 6);
    for (auto [key, value] : {std::pair{"name", &ops[i]->name}, {"api", &ops[i]->api}, {"fn", &ops[i]->snake_name},
                              {"method", &ops[i]->method}, {"path", &ops[i]->path}, {"doc", &ops[i]->doc}}) {
      lua_pushstring(L, value->c_str());
      lua_setfield(L, -2, key);
    }
    lua_rawseti(L, -2, static_cast<lua_Integer>(i + 1));
  }
  return 1;
}

void push_client_closure(lua_State* L, int box, lua_CFunction fn) {
  lua_pushvalue(L, box);
  lua_pushcclosure(L, fn, 1);
}

// Fills the table on top of the stack with the client API: one table per API of
// closures per operation, plus call, request and operations.
void fill_client_table(lua_State* L, std::shared_ptr<Client> client) {
  int table = lua_gettop(L);
  new (lua_newuserdatauv(L, sizeof(ClientBox), 0)) ClientBox{client};
  luaL_setmetatable(L, kClientBoxMeta);
  int box = lua_gettop(L);
  for (const Api& api : client->model().apis()) {
    lua_createtable(L, 0, static_cast<int>(api.operations.size()));
    for (const Operation* op : api.operations) {
      lua_pushvalue(L, box);
      lua_pushstring(L, op->name.c_str());
      lua_pushcclosure(L, l_operation, 2);
      lua_setfield(L, -2, op->snake_name.c_str());
    }
    lua_setfield(L, table, api.name.c_str());
  }
  const std::pair<const char*, lua_CFunction> fns[] = {{"call", l_call}, {"operations", l_operations}, {"request", l_request}};
  for (const auto& [name, fn] : fns) push_client_closure(L, box, fn), lua_setfield(L, table, name);
  lua_pushvalue(L, box);
  lua_setfield(L, table, "_handle");
  lua_settop(L, table);
}

}  // namespace

const char* operation_name_of(lua_State* L, int index) {
  if (lua_tocfunction(L, index) != l_operation || !lua_getupvalue(L, index, 2)) return nullptr;
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

// A field holding a number of seconds (0 or more), in lauxlib's wording when it is not.
double opt_seconds_field(lua_State* L, int index, const char* name, double fallback) {
  int t = lua_getfield(L, index, name);
  double out = t == LUA_TNIL ? fallback : lua_tonumber(L, -1);
  if (t != LUA_TNIL && (t != LUA_TNUMBER || out < 0))
    luaL_error(L, "bad argument #1 to 'client' (field '%s' must be a number of seconds, 0 or more)", name);
  lua_pop(L, 1);
  return out;
}

// max_attempts (every retry counts, InvalidPart's included), the back-off of 5xx,
// throttling and connection failures (retry_base_delay doubled per attempt with full
// jitter, at most retry_max_delay), invalid_part_delay, and retry_restores.
void apply_retry_options(lua_State* L, RetryPolicy& r) {
  if (lua_getfield(L, 1, "max_attempts") != LUA_TNIL) {
    lua_Integer n = lua_isinteger(L, -1) ? lua_tointeger(L, -1) : 0;
    if (n < 1) luaL_error(L, "bad argument #1 to 'client' (field 'max_attempts' must be an integer, 1 or more)");
    r.max_attempts = static_cast<int>(n);
  }
  lua_pop(L, 1);
  r.base_delay = opt_seconds_field(L, 1, "retry_base_delay", r.base_delay);
  r.max_delay = opt_seconds_field(L, 1, "retry_max_delay", r.max_delay);
  r.invalid_part_delay = opt_seconds_field(L, 1, "invalid_part_delay", r.invalid_part_delay);
  r.retry_non_idempotent = opt_bool_field(L, 1, "retry_restores", r.retry_non_idempotent);
}

void apply_client_options(lua_State* L, ClientConfig& c) {
  c.profile = opt_string_field(L, 1, "profile", "client", c.profile);
  c.region = opt_string_field(L, 1, "region", "client", c.region);
  std::string dialect = opt_string_field(L, 1, "dialect", "client", c.dialect->name);
  c.dialect = Dialect::find(dialect);
  if (!c.dialect) luaL_error(L, "bad argument #1 to 'client' (dialect must be \"ext\" or \"aws\", got \"%s\")", dialect.c_str());
  if (lua_getfield(L, 1, "endpoints") == LUA_TTABLE)
    for (const std::string& api : api_names()) {
      std::string url = opt_string_field(L, -1, api.c_str(), "client", c.endpoints[api]);  // "": none
      std::string problem = url.empty() ? "" : endpoint_problem(api, url);
      if (!problem.empty()) luaL_error(L, "bad argument #1 to 'client' (%s)", problem.c_str());
      c.endpoints[api] = url;
    }
  lua_pop(L, 1);
  if (lua_getfield(L, 1, "credentials") == LUA_TTABLE) {
    c.credentials.access_key_id = opt_string_field(L, -1, "access_key_id", "client", c.credentials.access_key_id);
    c.credentials.secret_access_key = opt_string_field(L, -1, "secret_access_key", "client", c.credentials.secret_access_key);
    c.credentials.session_token = opt_string_field(L, -1, "session_token", "client", c.credentials.session_token);
  }
  lua_pop(L, 1);
  apply_retry_options(L, c.retry);
  c.transport.timeout_ms = static_cast<long>(opt_seconds_field(L, 1, "timeout", c.transport.timeout_ms / 1000.0) * 1000);
  c.transport.connect_timeout_ms =
      static_cast<long>(opt_seconds_field(L, 1, "connect_timeout", c.transport.connect_timeout_ms / 1000.0) * 1000);
}

// A named profile's configuration on its own (core's load_profile): the config
// file's section over defaults. The session's --debug hook carries over.
ClientConfig profile_config(lua_State* L, const std::string& profile) {
  auto loaded = load_profile(profile, [](const char* name) { return std::getenv(name); });
  if (!loaded.ok()) raise(L, loaded.error());
  loaded->client.debug = session_of(L).config.client.debug;
  return loaded->client;
}

// cloud.client{profile=, region=, dialect=, endpoints=, credentials=}: a new client
// whose left-out fields come from the session's configuration, or with profile=
// from that profile of the config file.
int l_client(lua_State* L) {
  if (lua_isnoneornil(L, 1)) lua_newtable(L), lua_replace(L, 1);
  luaL_checktype(L, 1, LUA_TTABLE);
  ClientConfig config = session_of(L).config.client;
  std::string profile = opt_string_field(L, 1, "profile", "client");
  if (!profile.empty()) config = profile_config(L, profile);
  apply_client_options(L, config);
  lua_newtable(L);
  fill_client_table(L, make_client(config));
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
  in.method = opt_string_field(L, 1, "method", "sign", "GET");
  in.url = opt_string_field(L, 1, "url", "sign");
  if (in.url.empty()) luaL_error(L, "bad argument #1 to 'sign' (field 'url' is required)");
  in.headers = headers_field(L, 1, "sign");
  in.body = opt_string_field(L, 1, "body", "sign");
  in.region = opt_string_field(L, 1, "region", "sign", session_of(L).config.client.region);
  in.service = opt_string_field(L, 1, "service", "sign");
  if (in.service.empty()) luaL_error(L, "bad argument #1 to 'sign' (field 'service' is required)");
  in.credentials.access_key_id = opt_string_field(L, 1, "access_key_id", "sign");
  in.credentials.secret_access_key = opt_string_field(L, 1, "secret_access_key", "sign");
  in.credentials.session_token = opt_string_field(L, 1, "session_token", "sign");
  in.omit_session_token = opt_bool_field(L, 1, "omit_session_token", false);
  in.time = opt_string_field(L, 1, "time", "sign");
  std::string dialect = opt_string_field(L, 1, "dialect", "sign", "ext");
  in.dialect = Dialect::find(dialect);
  if (!in.dialect) luaL_error(L, "bad argument #1 to 'sign' (dialect must be \"ext\" or \"aws\", got \"%s\")", dialect.c_str());
  in.normalize = opt_bool_field(L, 1, "normalize", true);
  in.double_encode = opt_bool_field(L, 1, "double_encode", true);
  in.sign_body = opt_bool_field(L, 1, "sign_body", false);
  if (lua_getfield(L, 1, "presign_expires") != LUA_TNIL) in.presign_expires = static_cast<long>(luaL_checkinteger(L, -1));
  lua_pop(L, 1);
  return in;
}

// cloud.sign{...}: the signature and everything around it, nothing sent.
int l_sign(lua_State* L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  auto out = sign(sign_input(L));
  if (!out.ok()) raise(L, out.error());
  lua_createtable(L, 0, 6);
  for (auto [key, value] : {std::pair{"canonical_request", &out->canonical_request}, {"string_to_sign", &out->string_to_sign},
                            {"signature", &out->signature}, {"authorization", &out->authorization}, {"url", &out->url}}) {
    lua_pushlstring(L, value->data(), value->size());
    lua_setfield(L, -2, key);
  }
  push_pairs(L, out->headers);
  lua_setfield(L, -2, "headers");
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
  lua_pushcfunction(L, error_tostring);
  lua_setfield(L, -2, "__tostring");
  luaL_newmetatable(L, kClientBoxMeta);
  lua_pushcfunction(L, client_box_gc);
  lua_setfield(L, -2, "__gc");
  luaL_newmetatable(L, kClientMeta);
  lua_pushcfunction(L, client_tostring);
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

// `require "cloud"` works, and each API table is a loaded module too, so that
// lauxlib names functions fully in messages: "bad argument #1 to
// 'cloud.cluster.update_snapshot'".
void register_loaded(lua_State* L, int module) {
  luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
  lua_pushvalue(L, module);
  lua_setfield(L, -2, "cloud");
  for (const std::string& api : api_names()) {
    lua_getfield(L, module, api.c_str());
    lua_setfield(L, -2, ("cloud." + api).c_str());
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
  const luaL_Reg module_fns[] = {{"client", l_client}, {"redact", l_redact}, {"sign", l_sign}, {nullptr, nullptr}};
  luaL_setfuncs(L, module_fns, 0);
  push_null(L);
  lua_setfield(L, -2, "null");
  open_emulator(L, lua_gettop(L));
  open_system(L, lua_gettop(L));
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
