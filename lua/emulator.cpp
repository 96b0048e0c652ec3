// cloud.emulator: fixtures, faults and time of the emulator, from Lua. Present when
// the embedded emulator serves the session, or a `cloudlua serve` reached by
// endpoint_url: then each operation is a signed request to serve's control plane,
// which runs the same C++ (emulator/control.h), so both answer alike. Each function
// checks its arguments, calls the emulator, and returns what it says.
#include <lua.hpp>

#include "core/model/protocol.h"
#include "emulator/control.h"
#include "emulator/emulator.h"
#include "emulator/service.h"
#include "lua/binding.h"
#include "lua/convert.h"
#include "lua/session.h"

namespace cloud {

namespace {

// The session's emulator, started on first use.
Emulator& emulator_of(lua_State* L) {
  Session& session = session_of(L);
  auto complete = complete_config(session);
  if (!complete.ok()) raise(L, complete.error());
  return *session.emulator;
}

json table_argument(lua_State* L) {
  check_type(L, 1, LUA_TTABLE);
  auto value = to_json(L, 1);
  if (!value.ok()) raise(L, value.error());
  if (!value->is_object() && !value->empty()) arg_error(L, 1, "table of named fields expected");
  return value->is_object() ? value.value() : json::object();
}

}  // namespace

// `operation` sent to serve's control plane (POST /_cloudlua/<operation>, signed by
// the session's client, recorded with --record as any request). An error answer is
// the error run_control gave there: 400 and 404 are its validation errors. An
// endpoint_url that is an S3 server's has no control plane: NoServe, nothing sent.
Outcome<json> served_control(Client& client, const std::string& operation, const json& args) {
  if (std::optional<Error> unready = client.ready()) return *unready;
  if (client.config().endpoint_url_is_s3)  // discovery found another server there
    return make_error(ErrorKind::config, "NoServe",
                      "cloud.emulator." + operation + ": " + client.config().endpoint_url +
                          " is an S3 server, not a cloudlua serve: there is no emulator to control");
  RawRequest raw;
  raw.api = "storage";
  raw.method = "POST";
  raw.path = "/_cloudlua/" + operation;
  raw.headers = {{"Content-Type", "application/json"}};
  raw.body = args.dump();
  auto sent = client.request(raw);
  if (!sent.ok()) return sent.error();
  const HttpResponse& r = sent->response;
  if (r.status / 100 != 2) {
    Error e = parse_error(*client.model().api("storage"), r);
    if (r.status == 400 || r.status == 404) e.kind = ErrorKind::validation;
    return e;
  }
  return parse_json_document(r.body, "the control plane's answer");
}

namespace {

// What serve's clock follows the loop's skips with: a client of the session's
// configuration on a loop of its own, made at the first skip (a skip happens inside a
// turn of the session's loop, which must not turn again inside itself).
struct ServedClock {
  Loop loop;
  std::shared_ptr<Client> client;  // after `loop`: it goes first
};

// Makes serve's clock follow the seconds the loop's clock skips (a waiter's pause),
// each sent as the control plane's advance, until clock_follower goes. A skip whose
// advance fails moves serve's clock no further: the waiter's next try sees so. The
// advances go by a client with no cassette: they are the library's calls, not the
// script's, and a recording holds the script's only (its replay needs none of them).
void follow_served_clock(Session& session) {
  auto clock = std::make_shared<ServedClock>();
  std::weak_ptr<Client> main = session.client;
  Loop& loop = session.client->transport().loop();
  auto before = loop.follow([clock, main](double seconds) {
    auto client = main.lock();
    if (!client || client->ready()) return;
    if (!clock->client) {
      ClientConfig config = client->config();
      config.transport.loop = &clock->loop;
      config.record.clear(), config.replay.clear();
      auto made = make_client(config);
      if (!made.ok()) return;
      clock->client = made.value();
    }
    served_control(*clock->client, "advance", {{"seconds", seconds}});
  });
  session.clock_follower =
      std::shared_ptr<void>(nullptr, [client = session.client, &loop, before](void*) { loop.follow(before); });
}

// After configure{ real_time = ... } reached serve: the session holds serve's virtual
// time (false) or gives it back (true). While it holds it, its waiters' pauses are
// skipped (waits_skipped) and serve's clock follows; replaying, nothing is sent (no
// serve is there, the recording answers).
void hold_served_time(Session& session, bool real_time) {
  session.served_virtual_time = !real_time;
  session.clock_follower.reset();
  if (!real_time && session.config.client.replay.empty()) follow_served_clock(session);
}

// Runs cloud.emulator's `operation` in the emulator (emulator/control.h, the control
// plane's too; over HTTP when a serve serves the session) and pushes its answer, or
// nothing when it is an empty object. A wrong argument is lauxlib's "bad argument
// #1"; any other error is raised as its value.
int control(lua_State* L, const char* operation, const json& args) {
  auto answer = session_of(L).served ? served_control(*session_of(L).client, operation, args)
                                     : run_control(emulator_of(L), operation, args);
  if (!answer.ok() && answer.error().code == "InvalidArgument") arg_error(L, 1, answer.error().message);
  if (!answer.ok()) raise(L, answer.error());
  if (answer->is_object() && answer->empty()) return 0;
  push_json(L, *answer);
  return 1;
}

// cloud.emulator.seed{ buckets=, firewall_groups=, backups=, instances=, snapshots=, clusters=,
// mesh_clusters= }
int l_seed(lua_State* L) { return control(L, "seed", table_argument(L)); }

// cloud.emulator.advance(seconds): moves the platform's time on; due transitions settle.
int l_advance(lua_State* L) {
  int is_number = 0;
  lua_Number seconds = lua_tonumberx(L, 1, &is_number);
  if (!is_number) type_error(L, 1, "number");
  return control(L, "advance", {{"seconds", seconds}});
}

// cloud.emulator.fault{ operation=, times=, status=, code=, message=, delay=, drop=, error_in_200=, echo=, maintenance= }
int l_fault(lua_State* L) { return control(L, "fault", table_argument(L)); }

// cloud.emulator.configure{ firewall_settle=, instance_restore=, cluster_provision=,
// mesh_upgrade=, min_part_size=, real_time=, seed= }: an unknown name is an error
// listing the known ones. A seed also seeds the session (math.random, the retries'
// jitter); real_time against serve says whether the session holds serve's virtual time.
int l_configure(lua_State* L) {
  json t = table_argument(L);
  control(L, "configure", t);
  if (session_of(L).served && t.contains("real_time") && t["real_time"].is_boolean())
    hold_served_time(session_of(L), t["real_time"].get<bool>());
  if (t.contains("seed")) seed_session(L, session_of(L), t["seed"].get<std::uint64_t>());
  return 0;
}

int l_state(lua_State* L) { return control(L, "state", json::object()); }

// cloud.emulator.reset(): no resources, no faults (not even the fixture set).
int l_reset(lua_State* L) { return control(L, "reset", json::object()); }

// cloud.emulator.requests(): { PutObject = 3, ... }, the requests each operation was
// asked since the last reset (faulted ones too; an operation never asked is absent).
int l_requests(lua_State* L) {
  if (control(L, "requests", json::object()) == 0) lua_newtable(L);
  return 1;
}

// cloud.emulator.checkpoint(name): the whole platform saved as `name`.
int l_checkpoint(lua_State* L) {
  const char* name = luaL_checkstring(L, 1);  // before any C++ object: lauxlib raises by longjmp
  return control(L, "checkpoint", {{"name", name}});
}

// cloud.emulator.restore(name): the platform saved as `name` in place of this one.
int l_restore(lua_State* L) {
  const char* name = luaL_checkstring(L, 1);  // before any C++ object: lauxlib raises by longjmp
  return control(L, "restore", {{"name", name}});
}

// cloud.emulator.checkpoints(): the names of the checkpoints, sorted.
int l_checkpoints(lua_State* L) { return control(L, "checkpoints", json::object()); }

// cloud.emulator.endpoints(): { storage = url, ... }; of a serve, those its discovery gave.
int l_endpoints(lua_State* L) {
  Session& session = session_of(L);
  std::vector<std::pair<std::string, std::string>> urls;
  if (session.served) {
    if (std::optional<Error> failed = session.client->ready()) raise(L, *failed);
    for (const auto& [api, url] : session.client->config().endpoints) urls.emplace_back(api, url);
  } else {
    urls = emulator_of(L).endpoints();
  }
  lua_newtable(L);
  for (const auto& [api, url] : urls) {
    lua_pushstring(L, url.c_str());
    lua_setfield(L, -2, api.c_str());
  }
  return 1;
}

}  // namespace

void seed_session(lua_State* L, Session& session, std::uint64_t seed) {
  session.seed = seed;
  if (session.emulator) session.emulator->set_seed(seed);
  seed_retry_jitter(seed);
  lua_getglobal(L, "math");
  if (lua_getfield(L, -1, "randomseed") == LUA_TFUNCTION) {
    lua_pushinteger(L, static_cast<lua_Integer>(seed));
    call_lua(L, 1, 0);
  } else {
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
}

// cloud._emulator_settings(): the platform's settings configure{} takes, as { name,
// default, doc }: what lua/reference.lua declares cloud.emulator.configure's fields from.
int l_emulator_settings(lua_State* L) {
  lua_newtable(L);
  lua_Integer n = 0;
  for (const PlatformSetting& s : platform_settings()) {
    push_json(L, {{"name", s.name}, {"default", s.default_value}, {"doc", s.doc}});
    lua_rawseti(L, -2, ++n);
  }
  return 1;
}

void open_emulator(lua_State* L, int module) {
  lua_pushcfunction(L, protect<l_emulator_settings>);
  lua_setfield(L, module, "_emulator_settings");
  if (!session_of(L).emulated && !session_of(L).served) return;
  const luaL_Reg fns[] = {{"advance", protect<l_advance>},
                          {"checkpoint", protect<l_checkpoint>},
                          {"checkpoints", protect<l_checkpoints>},
                          {"configure", protect<l_configure>},
                          {"endpoints", protect<l_endpoints>},
                          {"fault", protect<l_fault>},
                          {"requests", protect<l_requests>},
                          {"reset", protect<l_reset>},
                          {"restore", protect<l_restore>},
                          {"seed", protect<l_seed>},
                          {"state", protect<l_state>},
                          // old names, kept for one release (docs/emulator.md)
                          {"snapshot", protect<l_checkpoint>},
                          {"snapshots", protect<l_checkpoints>},
                          {nullptr, nullptr}};
  luaL_newlib(L, fns);
  lua_setfield(L, module, "emulator");
}

}  // namespace cloud
