// A handful of primitives that Lua's standard library lacks and that the pure-Lua
// helpers (cloud.wait_until, the test harness) and user scripts compose: a monotonic
// clock, a sleep (a timer on the loop), whether a file handle is a terminal (progress lines belong on
// terminals only), and the MD5 of a file range or a string (an ETag to compare: upload_file's
// resume, storage.sync's checksums), cloud.time, the Lua side of core/base/dates, and the
// process's bandwidth cap.
// Each follows the binding's order: check, act, push, return.
#include <lua.hpp>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>

#include "core/net/range_reader.h"
#include "core/net/rate_limit.h"
#include "core/base/crypto.h"
#include "core/base/dates.h"
#include "core/base/suggest.h"
#include "core/net/transport.h"
#include "lua/binding.h"
#include "lua/session.h"
#include "lua/tasks.h"

namespace cloud {

namespace {

// cloud.clock(): seconds on the loop's clock, the one its timers, cloud.sleep, the
// waiters and retry back-off read (monotonic: only differences mean anything); the
// seconds skipped where time is virtual included.
int l_clock(lua_State* L) {
  lua_pushnumber(L, Loop::current().now());
  return 1;
}

// What a sleep ends with: nothing, or the interruption's error when Ctrl-C brought it due.
int push_slept(lua_State* L, const Parked&) {
  return interrupt_flag().load() ? (push_error(L, interrupt_error()), -1) : 0;
}

// Starts a timer of `seconds` at `pace` on the session's loop (parked: see tasks.h);
// the index of the wait.
int start_sleep(lua_State* L, double seconds, Loop::Pace pace) {
  const std::shared_ptr<Client>& client = session_of(L).client;
  Transport* transport = &client->transport();
  Parked& p = park(L, client, push_slept);
  Transport::Id id = transport->add_timer(
      seconds, [&p] { p.end(std::monostate{}); }, pace);
  p.cancel = [transport, id] { transport->cancel(id); };
  return lua_gettop(L);
}

// The seconds argument of a sleep, checked.
double seconds_arg(lua_State* L) {
  int is_number = 0;
  lua_Number seconds = lua_tonumberx(L, 1, &is_number);
  if (!is_number) type_error(L, 1, "number");
  if (!(seconds >= 0 && std::isfinite(seconds))) arg_error(L, 1, "seconds must be a non-negative number");
  return seconds;
}

// The options table at `arg` of cloud.sleep: whether it says real_time; any other
// field is an error naming the nearest.
bool real_time_option(lua_State* L, int arg) {
  check_type(L, arg, LUA_TTABLE);
  lua_pushnil(L);
  while (lua_next(L, arg) != 0) {
    lua_pop(L, 1);
    std::string key = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : "?";
    if (key == "real_time") continue;
    arg_error(L, arg, unknown_field(key, {"real_time"}));
  }
  lua_getfield(L, arg, "real_time");
  bool real = lua_toboolean(L, -1);
  lua_pop(L, 1);
  return real;
}

// cloud.sleep(seconds [, { real_time = true }]): waits on the loop, so that inside a
// task other tasks run meanwhile; where time is virtual (`cloudlua test` with the
// embedded emulator, --replay) the wait is skipped when nothing else runs, unless
// real_time. Ctrl-C (the REPL's handler raised interrupt_flag()) ends it at once.
int l_sleep(lua_State* L) {
  double seconds = seconds_arg(L);
  bool real = !lua_isnoneornil(L, 2) && real_time_option(L, 2);
  int at = start_sleep(L, seconds, real ? Loop::Pace::real : Loop::Pace::clock);
  return wait_parked(L, at);
}

// cloud._sleep(seconds, pace): a sleep at pace "clock" (cloud.sleep's), "waiter" (a
// waiter's pause: skipped at once when nothing else runs where the session says so,
// waits_skipped, else as "clock") or "real" (always waited for); lua/wait.lua's.
int l_sleep_at(lua_State* L) {
  double seconds = seconds_arg(L);
  static const char* const kPaces[] = {"clock", "waiter", "real", nullptr};
  const Loop::Pace waiter = waits_skipped(session_of(L)) ? Loop::Pace::skipped : Loop::Pace::clock;
  const Loop::Pace paces[] = {Loop::Pace::clock, waiter, Loop::Pace::real};
  int at = start_sleep(L, seconds, paces[luaL_checkoption(L, 2, "clock", kPaces)]);
  return wait_parked(L, at);
}

// cloud.isatty(file): true when the Lua file handle (io.stderr, io.stdout...) is a terminal.
int l_isatty(lua_State* L) {
  auto* stream = static_cast<luaL_Stream*>(luaL_testudata(L, 1, LUA_FILEHANDLE));
  if (!stream) type_error(L, 1, LUA_FILEHANDLE);
  lua_pushboolean(L, stream->f != nullptr && isatty(fileno(stream->f)));
  return 1;
}

// A non-negative integer argument `arg`, or `fallback` when it is absent.
std::uint64_t count_arg(lua_State* L, int arg, std::uint64_t fallback) {
  if (lua_isnoneornil(L, arg)) return fallback;
  lua_Integer n = luaL_checkinteger(L, arg);
  if (n < 0) arg_error(L, arg, "must be an integer >= 0");
  return static_cast<std::uint64_t>(n);
}

// cloud.limit_rate(bytes_per_second): caps the bandwidth of every transfer of the
// process together (sent and received) at that many bytes a second on average; 0 or
// nil: no cap. Returns the cap it replaces (0 for none). `--limit-rate` sets it.
int l_limit_rate(lua_State* L) {
  std::uint64_t before = set_rate_limit(count_arg(L, 1, 0));
  lua_pushinteger(L, static_cast<lua_Integer>(before));
  return 1;
}

// cloud.md5(text): the hex MD5 of the bytes of text (a multipart ETag is the MD5 of
// its parts' MD5s: storage.sync's checksum compare).
int l_md5(lua_State* L) {
  size_t length = 0;
  const char* text = luaL_checklstring(L, 1, &length);
  std::string digest = hex(md5(std::string_view(text, length)));
  lua_pushlstring(L, digest.data(), digest.size());
  return 1;
}

// cloud.md5_file(path [, offset [, length]]): the hex MD5 of the file's bytes from
// offset (default 0), length of them (default: to the end), read once in pieces; nil
// and a message, as io.open says, when the file cannot be read or lacks the range.
int l_md5_file(lua_State* L) {
  FileRange range{luaL_checkstring(L, 1), 0, 0};
  struct stat st {};
  bool found = ::stat(range.path.c_str(), &st) == 0;
  if (!found || !S_ISREG(st.st_mode)) {
    lua_pushnil(L);
    lua_pushfstring(L, "%s: %s", range.path.c_str(), found ? "not a regular file" : std::strerror(errno));
    return 2;
  }
  auto size = static_cast<std::uint64_t>(st.st_size);
  range.offset = count_arg(L, 2, 0);
  range.length = count_arg(L, 3, range.offset <= size ? size - range.offset : 0);
  if (range.offset > size || range.length > size - range.offset) {
    lua_pushnil(L);
    lua_pushfstring(L, "%s: %I bytes, the range asked ends past them", range.path.c_str(),
                    static_cast<lua_Integer>(size));
    return 2;
  }
  Outcome<std::string> hash = hex_digest_of(range, Digest::md5);
  if (!hash.ok()) return lua_pushnil(L), lua_pushstring(L, hash.error().message.c_str()), 2;
  lua_pushstring(L, hash.value().c_str());
  return 1;
}

// cloud.time.parse(text): the seconds since 1970 (UTC) of a date in RFC 3339, HTTP or
// SigV4 form; nil and an error (kind validation, code InvalidDate) saying what was
// wrong when the text is none of them.
int l_time_parse(lua_State* L) {
  check_type(L, 1, LUA_TSTRING);
  size_t n = 0;
  const char* text = lua_tolstring(L, 1, &n);
  auto seconds = parse_date(std::string_view(text, n));
  if (!seconds) {
    lua_pushnil(L);
    push_error(L, seconds.error());
    return 2;
  }
  lua_pushinteger(L, static_cast<lua_Integer>(*seconds));
  return 1;
}

// cloud.time.format(seconds [, form]): the date in form "iso" (the default), "http"
// or "sigv4"; a fraction of a second is dropped.
int l_time_format(lua_State* L) {
  check_type(L, 1, LUA_TNUMBER);
  double seconds = lua_tonumber(L, 1);
  if (!std::isfinite(seconds)) arg_error(L, 1, "a finite number of seconds expected");
  if (!lua_isnoneornil(L, 2)) check_type(L, 2, LUA_TSTRING);
  const char* name = lua_isnoneornil(L, 2) ? "iso" : lua_tostring(L, 2);
  auto form = date_form_named(name);
  if (!form) arg_error(L, 2, std::string("'") + name + "' is not a date form: iso, http or sigv4 expected");
  double whole = std::floor(seconds);
  constexpr double kLimit = 9.2e18;  // within int64; format_date clamps to years 0000 to 9999
  std::int64_t t = whole < -kLimit  ? static_cast<std::int64_t>(-kLimit)
                   : whole > kLimit ? static_cast<std::int64_t>(kLimit)
                                    : static_cast<std::int64_t>(whole);
  std::string text = format_date(t, *form);
  lua_pushlstring(L, text.data(), text.size());
  return 1;
}

void open_time(lua_State* L, int module) {
  const luaL_Reg fns[] = {{"format", protect<l_time_format>}, {"parse", protect<l_time_parse>}, {nullptr, nullptr}};
  luaL_newlib(L, fns);
  lua_setfield(L, module, "time");
}

}  // namespace

void open_system(lua_State* L, int module) {
  const luaL_Reg fns[] = {{"clock", protect<l_clock>},           {"isatty", protect<l_isatty>},
                          {"limit_rate", protect<l_limit_rate>}, {"md5", protect<l_md5>},
                          {"md5_file", protect<l_md5_file>},     {"sleep", protect<l_sleep>},
                          {"_sleep", protect<l_sleep_at>},       {nullptr, nullptr}};
  lua_pushvalue(L, module);
  luaL_setfuncs(L, fns, 0);
  lua_pop(L, 1);
  open_time(L, module);
}

}  // namespace cloud
