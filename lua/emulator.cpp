// cloud.emulator: fixtures, faults and time of the embedded emulator, from Lua.
// Present only when the embedded emulator serves the session. Each function checks
// its arguments, calls the emulator, and returns what it says.
#include <lauxlib.h>
#include <lua.h>

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

void check_known_keys(lua_State* L, const json& t, std::initializer_list<const char*> known) {
  for (auto it = t.begin(); it != t.end(); ++it) {
    bool ok = false;
    std::string list;
    for (const char* k : known) ok = ok || it.key() == k, list += (list.empty() ? "" : ", ") + std::string(k);
    if (!ok) arg_error(L, 1, "unknown field '" + it.key() + "'; known: " + list);
  }
}

// cloud.emulator.seed{ buckets=, firewall_groups=, backups=, instances=, snapshots=, clusters=,
// mesh_clusters= }
int l_seed(lua_State* L) {
  json fixtures = table_argument(L);
  check_known_keys(L, fixtures, {"buckets", "firewall_groups", "backups", "instances", "snapshots", "clusters",
                                 "mesh_clusters"});
  emulator_of(L).platform().seed(fixtures);
  return 0;
}

// cloud.emulator.advance(seconds): moves the platform's time on; due transitions settle.
int l_advance(lua_State* L) {
  int is_number = 0;
  lua_Number seconds = lua_tonumberx(L, 1, &is_number);
  if (!is_number) type_error(L, 1, "number");
  if (!(seconds >= 0)) arg_error(L, 1, "seconds must not be negative");
  emulator_of(L).platform().advance(seconds);
  return 0;
}

// maintenance = true: what the platform's JSON APIs answer while it is in maintenance
// (503 Server.Maintenance, as the vendor's nifcloud-hatoba-disk-csi-driver tests show
// it); only requests to the JSON APIs match it.
Fault fault_from(lua_State* L, const json& t) {
  Fault f;
  bool maintenance = t.value("maintenance", false);
  f.operation = t.value("operation", "");
  f.times = t.value("times", 1);
  f.status = t.value("status", maintenance ? 503 : 0);
  f.code = t.value("code", maintenance ? "Server.Maintenance" : "");
  f.message = t.value("message", maintenance ? "The system is in maintenance now." : "");
  f.json_only = maintenance;
  f.delay = t.value("delay", 0.0);
  f.drop = t.value("drop", false);
  f.error_in_200 = t.value("error_in_200", false);
  f.echo = t.value("echo", false);
  if (!f.operation.empty() && !Model::builtin().find(f.operation))
    arg_error(L, 1, "no operation named '" + f.operation + "'");
  if (f.times < 1) arg_error(L, 1, "times must be at least 1");
  if (maintenance && !f.operation.empty() && Model::builtin().find(f.operation)->api == "storage")
    arg_error(L, 1, "maintenance is a fault of the JSON APIs; " + f.operation + " is the storage API's");
  return f;
}

// cloud.emulator.fault{ operation=, times=, status=, code=, message=, delay=, drop=, error_in_200=, echo=, maintenance= }
int l_fault(lua_State* L) {
  json t = table_argument(L);
  check_known_keys(L, t,
                   {"operation", "times", "status", "code", "message", "delay", "drop", "error_in_200", "echo", "maintenance"});
  try {
    emulator_of(L).add_fault(fault_from(L, t));
  } catch (const json::exception& e) {
    arg_error(L, 1, e.what());
  }
  return 0;
}

// cloud.emulator.configure{ firewall_settle=, instance_restore=, cluster_provision=,
// mesh_upgrade=, min_part_size=, real_time=, seed= }: an unknown name is an error
// listing the known ones.
int l_configure(lua_State* L) {
  json t = table_argument(L);
  Emulator& emulator = emulator_of(L);
  Platform& p = emulator.platform();
  for (auto it = t.begin(); it != t.end(); ++it) {
    if (it.key() == "real_time") {
      if (!it->is_boolean()) arg_error(L, 1, "real_time must be a boolean");
      p.set_real_time(it->get<bool>());
      continue;
    }
    if (it.key() == "seed") {
      if (!it->is_number_integer() || it->get<long long>() < 0) arg_error(L, 1, "seed must be a whole number, 0 or more");
      seed_session(L, session_of(L), it->get<std::uint64_t>());
      continue;
    }
    // A name that is no setting is reported first, whatever its value.
    Outcome<bool> set = p.set_setting(it.key(), it->is_number() ? it->get<double>() : -1);
    if (set.ok()) continue;
    std::string message = set.error().message;
    if (set.error().code == "UnknownSetting") message += ", real_time, seed";
    else if (!it->is_number()) message = it.key() + " must be a number";
    arg_error(L, 1, message);
  }
  return 0;
}

int l_state(lua_State* L) {
  push_json(L, emulator_of(L).platform().state());
  return 1;
}

// cloud.emulator.reset(): no resources, no faults (not even the fixture set).
int l_reset(lua_State* L) {
  emulator_of(L).platform().reset();
  emulator_of(L).clear_faults();
  return 0;
}

// cloud.emulator.requests(): { PutObject = 3, ... }, the requests each operation was
// asked since the last reset (faulted ones too; an operation never asked is absent).
int l_requests(lua_State* L) {
  auto served = emulator_of(L).requests_served();
  lua_createtable(L, 0, static_cast<int>(served.size()));
  for (const auto& [operation, count] : served) {
    lua_pushinteger(L, static_cast<lua_Integer>(count));
    lua_setfield(L, -2, operation.c_str());
  }
  return 1;
}

int l_endpoints(lua_State* L) {
  lua_newtable(L);
  for (const auto& [api, url] : emulator_of(L).endpoints()) {
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
    lua_call(L, 1, 0);
  } else {
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
}

void open_emulator(lua_State* L, int module) {
  if (!session_of(L).emulated) return;
  const luaL_Reg fns[] = {{"advance", protect<l_advance>}, {"configure", protect<l_configure>}, {"endpoints", protect<l_endpoints>},
                          {"fault", protect<l_fault>},     {"requests", protect<l_requests>},   {"reset", protect<l_reset>},
                          {"seed", protect<l_seed>},       {"state", protect<l_state>},         {nullptr, nullptr}};
  luaL_newlib(L, fns);
  lua_setfield(L, module, "emulator");
}

}  // namespace cloud
