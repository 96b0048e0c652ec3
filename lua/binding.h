// What the pieces of the Lua binding share: the session behind the `cloud` module
// and the one way core errors become Lua errors.
#pragma once

#include <string>

#include <lua.hpp>

#include "core/base/error.h"

namespace cloud {

// The one edge between C++ and Lua. Lua is linked as C (liblua5.4): its errors and
// yields are longjmps, which skip C++ destructors. So no Lua error or yield leaves a
// frame that holds a C++ object: inside a Lua-facing function an error travels as a
// C++ exception (LuaRaise, the error value on top of the Lua stack, thrown by raise,
// arg_error, call_lua...) and a yield as a return value (yield_at_edge); the edge,
// call_protected, raises or yields once `fn`'s frames are gone. What `fn` throws
// otherwise (std::bad_alloc above all) becomes an error object, kind transport, code
// OutOfMemory (InternalError for anything else). Every C function that may throw is
// registered behind this edge (protect<fn>); lauxlib's own checks (luaL_check*) raise
// by longjmp and are called only while no C++ object is alive in the function.
struct LuaRaise {};
int call_protected(lua_State* L, int (*fn)(lua_State*));
// `fn` behind that edge, for luaL_Reg arrays and closures: {"sign", protect<l_sign>}.
template <int (*Fn)(lua_State*)>
int protect(lua_State* L) {
  return call_protected(L, Fn);
}
// The same edge for a continuation (lua_KFunction) that may throw.
int continue_protected(lua_State* L, int (*fn)(lua_State*, int, lua_KContext), int status, lua_KContext ctx);
// For `return yield_at_edge(...)` in a function behind the edge: the edge yields the
// top `nresults` values, as lua_yieldk(L, nresults, ctx, k), after the function returned.
int yield_at_edge(lua_State* L, int nresults, lua_KContext ctx, lua_KFunction k);
// Throws LuaRaise: the value on top of the stack is the error the edge raises.
[[noreturn]] void raise_top(lua_State* L);
// luaL_error behind the edge: `text` where the calling Lua code stands ("file:3: text").
[[noreturn]] void raise_text(lua_State* L, const std::string& text);
// lua_call for a function behind the edge: an error the call raises comes back as
// LuaRaise, so that the C++ frames up to the edge unwind.
void call_lua(lua_State* L, int nargs, int nresults);
// luaL_tolstring for a function behind the edge (a __tostring that raises comes back
// as LuaRaise): pushes the value at `index` as a string and returns it.
const char* tolstring(lua_State* L, int index, size_t* length = nullptr);

struct Session;

Session& session_of(lua_State* L);

// Pushes the error object (a table with kind, code, message, ... and __tostring).
void push_error(lua_State* L, const Error& e);
// Raises it; never returns.
[[noreturn]] void raise(lua_State* L, const Error& e);
// The error object at `index` read back into an Error (describe() formats both alike);
// leaves the stack as it found it.
Error error_from_table(lua_State* L, int index);

// lauxlib's argument errors with the function named in full, as luaL_traceback names
// it ("bad argument #1 to 'cloud.sign' (table expected, got nil)"), wherever it was
// called from; lauxlib's own name for a function no loaded module holds (arguments.cpp).
[[noreturn]] void arg_error(lua_State* L, int arg, const std::string& message);
[[noreturn]] void type_error(lua_State* L, int arg, const char* expected);
void check_type(lua_State* L, int arg, int type);  // as luaL_checktype
// Checks the running C function's arguments against the declaration of `name`
// (lua/reference.lua) through the one checker, lua/check.lua's check.arguments: every
// type, bound and option-table field, an unknown one named with the nearest.
void check_declared(lua_State* L, const char* name);

// Sets cloud.emulator in the table at `module` when an emulator serves the session:
// the embedded one, or a `cloudlua serve` reached by endpoint_url (over its control
// plane).
void open_emulator(lua_State* L, int module);

// Sets cloud.json (encode, decode) in the table at `module` (json.cpp).
void open_json(lua_State* L, int module);
// Sets cloud.fs (glob, list, mkdir, remove, set_mtime, stat, sync) in the table at `module` (fs.cpp).
void open_fs(lua_State* L, int module);
// Sets cloud.clock, cloud.sleep, cloud.isatty and cloud.time in the table at `module` (system.cpp).
void open_system(lua_State* L, int module);
// Makes `require "cloud.<name>"` find the embedded lua/<name>.lua and sets the parts
// of the module written in Lua (cloud.wait_until) in the table at `module` (modules.cpp).
void open_embedded_modules(lua_State* L, int module);
// Adds upload_file and download_file (lua/transfer.lua), sync and check (lua/sync.lua)
// to the client table's storage table at `client`.
void add_transfers(lua_State* L, int client);
// The same, and a cloud.client{} table's own pages and wait_for (lua/pages.lua,
// lua/wait.lua, with the client's calls).
void add_client_functions(lua_State* L, int client);
// The name of the operation a function cloud.<api>.<operation> (of any client)
// calls; nullptr when the value at `index` is not such a function.
const char* operation_name_of(lua_State* L, int index);

// Pushes the value a dotted path ("cloud.emulator.fault") names from the globals, read
// raw so that no metamethod runs; nil when a part is missing or not a table; the
// globals themselves for "" (help.cpp).
void push_global_path(lua_State* L, const std::string& path);

// The usage line lua/reference.lua gives the function or table at `index`
// ("cloud.storage.sync{ from, to, ... } -> summary"); "" when it has none.
std::string reference_usage(lua_State* L, int index);

// Sets cloud.help, cloud.describe, cloud.nearest and the global help in the table at `module`.
void open_help(lua_State* L, int module);

}  // namespace cloud
