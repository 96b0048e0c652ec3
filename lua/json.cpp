// cloud.json: encode a Lua value as JSON text and decode JSON text into Lua values,
// by the rules every call's arguments and results follow (lua/convert.h): an empty
// table is {}, an empty list of a result (or of a decoded text) is [], cloud.null is
// null. Both directions stop at core's kMaxDepth levels.
#include <lua.hpp>

#include "core/model/protocol.h"
#include "lua/binding.h"
#include "lua/convert.h"

namespace cloud {

namespace {

// cloud.json.encode(value) -> text: compact, object keys sorted. A value JSON cannot
// say (a function, NaN, a table that mixes list items and named fields, text that
// is not UTF-8) is an InvalidArgument error naming where it sits.
int l_encode(lua_State* L) {
  luaL_checkany(L, 1);
  auto value = to_json(L, 1);
  if (!value.ok()) raise(L, value.error());
  std::string text;
  try {
    text = value->dump();
  } catch (const json::type_error& e) {  // a string that is not UTF-8
    std::string why = e.what();
    raise(L, make_error(
                 ErrorKind::validation, "InvalidArgument",
                 "JSON text is UTF-8: " + why.substr(why.find("] ") == std::string::npos ? 0 : why.find("] ") + 2)));
  }
  lua_pushlstring(L, text.data(), text.size());
  return 1;
}

// cloud.json.decode(text) -> value: a text that is not JSON is an InvalidJSON error
// (kind validation) whose message names the byte it stopped at ("at byte 7: ...").
int l_decode(lua_State* L) {
  size_t len = 0;
  const char* text = luaL_checklstring(L, 1, &len);
  auto value = parse_json_document(std::string(text, len), "the text");
  if (!value.ok()) raise(L, value.error());
  push_json(L, *value);
  return 1;
}

}  // namespace

void open_json(lua_State* L, int module) {
  const luaL_Reg fns[] = {{"encode", protect<l_encode>}, {"decode", protect<l_decode>}, {nullptr, nullptr}};
  luaL_newlib(L, fns);
  lua_setfield(L, module, "json");
}

}  // namespace cloud
