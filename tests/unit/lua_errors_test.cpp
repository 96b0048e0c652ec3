// Error objects at the Lua edge: the one constructor (push_error, and cloud.error{}
// over it) and the reader back into an Error (error_from_table), which must leave the
// caller's stack as it found it whatever the object holds.
#include <catch2/catch.hpp>

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

#include <memory>

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
