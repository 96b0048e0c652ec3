// Error objects at the Lua edge: the one constructor (push_error, and cloud.error{}
// over it) and the reader back into an Error (error_from_table), which must leave the
// caller's stack as it found it whatever the object holds; and the one edge where
// what C++ throws becomes an error object (protect<>), and where Lua's longjmps (an
// error, a yield) happen only once the binding's C++ objects are gone.
#include <catch2/catch.hpp>

#include <lua.hpp>

#include <memory>
#include <new>
#include <string>

#include "lua/binding.h"

namespace {

using State = std::unique_ptr<lua_State, void (*)(lua_State*)>;

State new_state() { return State(luaL_newstate(), lua_close); }

}  // namespace

TEST_CASE("error objects: reading one back leaves the stack as it was, with or without a fields list", "[lua]") {
  State L = new_state();
  lua_pushliteral(L.get(), "the caller's value");
  cloud::Error made = cloud::make_error(cloud::ErrorKind::validation, "ValidationError", "2 problems");
  made.fields = {{"snapshot.name", "too long"}, {"tags[1].key", "missing"}};
  cloud::push_error(L.get(), made);
  int top = lua_gettop(L.get());

  cloud::Error read = cloud::error_from_table(L.get(), top);
  CHECK(lua_gettop(L.get()) == top);
  CHECK(read.describe() == made.describe());
  REQUIRE(read.fields.size() == 2);
  CHECK(read.fields[1].path == "tags[1].key");

  for (const char* fields : {"nil", "a string"}) {
    INFO("fields = " << fields);
    if (std::string(fields) == "nil") lua_pushnil(L.get());
    else lua_pushliteral(L.get(), "not a list");
    lua_setfield(L.get(), top, "fields");
    cloud::Error without = cloud::error_from_table(L.get(), top);
    CHECK(lua_gettop(L.get()) == top);
    CHECK(without.fields.empty());
    CHECK(std::string(lua_tostring(L.get(), 1)) == "the caller's value");
  }
}

namespace {

// A Lua-facing function that runs out of memory (as a std::string growing past what
// the system gives would), after pushing a value of its own.
int runs_out(lua_State* L) {
  lua_pushnumber(L, 0.1);
  throw std::bad_alloc();
}

}  // namespace

TEST_CASE("error objects: what a binding throws (std::bad_alloc) is an error object, in pcall and in a coroutine",
          "[lua]") {
  State L = new_state();
  luaL_openlibs(L.get());
  lua_register(L.get(), "runs_out", cloud::protect<runs_out>);
  // Without the edge, the exception would cross Lua's C frames (Lua is linked as C).
  const char* code =
      "local ok, e = pcall(runs_out)\n"
      "local co = coroutine.create(function() return runs_out() end)\n"
      "local cok, ce = coroutine.resume(co)\n"
      "return type(e), e.kind, e.code, e.message, ok, type(ce), ce.code, cok";
  REQUIRE(luaL_dostring(L.get(), code) == LUA_OK);
  CHECK(std::string(lua_tostring(L.get(), 1)) == "table");
  CHECK(std::string(lua_tostring(L.get(), 2)) == "transport");
  CHECK(std::string(lua_tostring(L.get(), 3)) == "OutOfMemory");
  CHECK(std::string(lua_tostring(L.get(), 4)) == "out of memory");
  CHECK_FALSE(lua_toboolean(L.get(), 5));
  CHECK(std::string(lua_tostring(L.get(), 6)) == "table");
  CHECK(std::string(lua_tostring(L.get(), 7)) == "OutOfMemory");
  CHECK_FALSE(lua_toboolean(L.get(), 8));
}

namespace {

int alive = 0;  // Held objects not destroyed yet

// An object with a destructor, as a binding's std::string or lock is.
struct Held {
  Held() { ++alive; }
  ~Held() { --alive; }
  Held(const Held&) = delete;
  Held& operator=(const Held&) = delete;
};

// Calls its argument (which raises) while holding an object.
int raises_through(lua_State* L) {
  Held held;
  std::string text(100, 'x');  // on the heap
  lua_pushvalue(L, 1);
  cloud::call_lua(L, 0, 0);
  return 0;
}

// Yields its argument through the edge while holding an object; resumed, returns "resumed".
int yields_through(lua_State* L) {
  Held held;
  lua_pushvalue(L, 1);
  return cloud::yield_at_edge(L, 1, 0, [](lua_State* S, int, lua_KContext) {
    lua_pushliteral(S, "resumed");
    return 1;
  });
}

// Refuses its argument while holding an object.
int refuses(lua_State* L) {
  Held held;
  cloud::arg_error(L, 1, "a test");
}

}  // namespace

TEST_CASE("the edge: an error or a yield leaves no C++ object of the binding behind", "[lua]") {
  State L = new_state();
  luaL_openlibs(L.get());
  lua_register(L.get(), "raises_through", cloud::protect<raises_through>);
  lua_register(L.get(), "yields_through", cloud::protect<yields_through>);
  lua_register(L.get(), "refuses", cloud::protect<refuses>);
  const char* code =
      "local ok, e = pcall(raises_through, function() error('inner', 0) end)\n"
      "local co = coroutine.wrap(function(x) return yields_through(x) end)\n"
      "local yielded = co('out')\n"
      "local alive_at_yield = alive()\n"
      "local resumed = co()\n"
      "local rok, re = pcall(refuses)\n"
      "return ok, e, yielded, alive_at_yield, resumed, rok, re";
  lua_register(L.get(), "alive", [](lua_State* S) {
    lua_pushinteger(S, alive);
    return 1;
  });
  REQUIRE(luaL_dostring(L.get(), code) == LUA_OK);
  CHECK_FALSE(lua_toboolean(L.get(), 1));
  CHECK(std::string(lua_tostring(L.get(), 2)) == "inner");
  CHECK(std::string(lua_tostring(L.get(), 3)) == "out");
  CHECK(lua_tointeger(L.get(), 4) == 0);
  CHECK(std::string(lua_tostring(L.get(), 5)) == "resumed");
  CHECK_FALSE(lua_toboolean(L.get(), 6));
  CHECK(std::string(lua_tostring(L.get(), 7)) == "bad argument #1 to 'refuses' (a test)");
  CHECK(alive == 0);
}
