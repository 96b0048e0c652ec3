// Tab completion (complete.h): the word before the cursor, then either the argument
// names of the operation whose braces are open, or the keys of the table its dotted
// path reaches.
#include "repl/complete.h"

#include <lauxlib.h>
#include <lua.h>

#include <algorithm>
#include <cctype>

#include "core/client/client.h"
#include "lua/binding.h"
#include "lua/session.h"

namespace cloud {

namespace {

bool name_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// Where the name (with its dots) that ends at `end` starts.
size_t name_start(const std::string& text, size_t end) {
  size_t start = end;
  while (start > 0 && (name_char(text[start - 1]) || text[start - 1] == '.')) --start;
  return start;
}

// The '{' that is still open before `end`, or npos.
size_t open_brace(const std::string& text, size_t end) {
  int depth = 0;
  for (size_t i = end; i-- > 0;) {
    if (text[i] == '}') ++depth;
    if (text[i] == '{' && depth-- == 0) return i;
  }
  return std::string::npos;
}

// The argument names of the operation called with the brace at `brace` that start
// with `prefix`; empty when what precedes the brace is no operation.
std::vector<std::string> argument_names(lua_State* L, const std::string& text, size_t brace, const std::string& prefix) {
  size_t end = brace;
  while (end > 0 && std::isspace(static_cast<unsigned char>(text[end - 1]))) --end;
  push_global_path(L, text.substr(name_start(text, end), end - name_start(text, end)));
  const char* name = lua_isfunction(L, -1) ? operation_name_of(L, -1) : nullptr;
  const Operation* op = name ? session_of(L).client->model().find(name) : nullptr;
  lua_pop(L, 1);
  std::vector<std::string> names;
  if (!op || !op->input) return names;
  for (const Member& m : op->input->members)
    if (m.name.compare(0, prefix.size(), prefix) == 0) names.push_back(m.name);
  return names;
}

// The string keys of the table `path` reaches that start with `prefix`, as whole
// words ("cloud." + "cluster"); the globals when path is empty.
std::vector<std::string> field_names(lua_State* L, const std::string& path, const std::string& prefix) {
  std::vector<std::string> names;
  push_global_path(L, path);
  if (lua_istable(L, -1)) {
    for (lua_pushnil(L); lua_next(L, -2); lua_pop(L, 1)) {
      if (lua_type(L, -2) != LUA_TSTRING) continue;
      std::string key = lua_tostring(L, -2);
      if (key.compare(0, prefix.size(), prefix) == 0) names.push_back(path.empty() ? key : path + "." + key);
    }
  }
  lua_pop(L, 1);
  return names;
}

}  // namespace

Completion complete_at(lua_State* L, const std::string& before) {
  int top = lua_gettop(L);
  Completion c;
  c.start = name_start(before, before.size());
  std::string word = before.substr(c.start);
  size_t brace = word.find('.') == std::string::npos ? open_brace(before, c.start) : std::string::npos;
  if (brace != std::string::npos) c.candidates = argument_names(L, before, brace, word);
  if (c.candidates.empty()) {
    size_t dot = word.rfind('.');
    c.candidates = dot == std::string::npos ? field_names(L, "", word) : field_names(L, word.substr(0, dot), word.substr(dot + 1));
  }
  std::sort(c.candidates.begin(), c.candidates.end());
  lua_settop(L, top);
  return c;
}

}  // namespace cloud
