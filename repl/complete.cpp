// Tab completion (complete.h): the word before the cursor, then either the field
// names of the table being typed (an operation's arguments at any depth, from the
// model; a library function's options, from lua/reference.lua or a sub-command's
// declaration in lua/command_specs.lua), or the keys of the
// table its dotted path reaches.
#include "repl/complete.h"

#include <lua.hpp>

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

// A bracket ('{', '(' or '[') still open before the cursor: where it is and how
// many commas stand directly inside it so far.
struct Open {
  size_t at;
  char bracket;
  int commas;
};

// The brackets open at `end`, outermost first; text in quotes is skipped.
std::vector<Open> open_brackets(const std::string& text, size_t end) {
  std::vector<Open> open;
  for (size_t i = 0; i < end; ++i) {
    char c = text[i];
    if (c == '"' || c == '\'') {
      for (++i; i < end && text[i] != c; ++i)
        if (text[i] == '\\') ++i;
    } else if (c == '{' || c == '(' || c == '[') {
      open.push_back({i, c, 0});
    } else if ((c == '}' || c == ')' || c == ']') && !open.empty()) {
      open.pop_back();
    } else if (c == ',' && !open.empty()) {
      ++open.back().commas;
    }
  }
  return open;
}

// Where the text before `end` ends once spaces are left out.
size_t skip_space_back(const std::string& text, size_t end) {
  while (end > 0 && std::isspace(static_cast<unsigned char>(text[end - 1]))) --end;
  return end;
}

// The dotted name that ends at `end` (spaces before it left out), or "".
std::string name_before(const std::string& text, size_t end) {
  end = skip_space_back(text, end);
  return text.substr(name_start(text, end), end - name_start(text, end));
}

// How the table opened by open[i] is reached: a call of a function (`callee`, as
// its `argument`-th argument) or, inside the table open[i - 1], the value of `key`
// or (key empty) a list element. `valid` false for anything else.
struct Step {
  bool valid = false;
  std::string callee;
  int argument = 0;
  std::string key;
};

Step step_of(const std::string& text, const std::vector<Open>& open, size_t i) {
  Step s;
  size_t end = skip_space_back(text, open[i].at);
  char before = end > 0 ? text[end - 1] : '\0';
  const Open* outer = i > 0 ? &open[i - 1] : nullptr;
  if (end > 0 && (name_char(before) || before == '.')) {  // f{ ... }
    s.callee = name_before(text, end);
    s.argument = 1;
  } else if (outer && outer->bracket == '(' && (before == '(' || before == ',')) {  // f(x, { ... })
    s.callee = name_before(text, outer->at);
    s.argument = outer->commas + 1;
  } else if (outer && outer->bracket == '{' && before == '=') {  // key = { ... }
    s.key = name_before(text, end - 1);
    if (s.key.empty() || s.key.find('.') != std::string::npos) return s;
  } else if (!(outer && outer->bracket == '{' && (before == '{' || before == ','))) {  // { { ... } }: an element
    return s;
  }
  s.valid = !s.callee.empty() || outer;
  return s;
}

// The shape reached from `shape` by the steps after the call (a member's value, a
// list's element, a map's value); nullptr when the model has no such place.
const Shape* walk(const Shape* shape, const std::vector<Step>& steps) {
  for (const Step& s : steps) {
    if (!shape) return nullptr;
    if (s.key.empty()) {
      shape = shape->type == ShapeType::list ? shape->member : nullptr;
    } else if (shape->type == ShapeType::structure) {
      const Member* m = shape->find_member(s.key);
      shape = m ? m->shape : nullptr;
    } else {
      shape = shape->type == ShapeType::map ? shape->member : nullptr;
    }
  }
  return shape;
}

// The names listed between the braces of the `argument`-th argument of a usage line
// ("cloud.wait_for(name [, args [, { delay, max_attempts }]])" and 3 -> delay,
// max_attempts); words that are no plain name ("ARGS...", "option = value") left out.
std::vector<std::string> usage_fields(const std::string& usage, int argument) {
  size_t at = usage.find_first_of("{(");
  if (at == std::string::npos) return {};
  int index = 1;
  if (usage[at] == '(') {
    for (++at; at < usage.size() && usage[at] != ')' && !(usage[at] == '{' && index == argument); ++at)
      if (usage[at] == ',') ++index;
  }
  if (at >= usage.size() || usage[at] != '{' || index != argument) return {};
  size_t close = usage.find('}', at);
  std::vector<std::string> names;
  std::string item;
  for (size_t i = at + 1; i <= close && i < usage.size(); ++i) {
    if (usage[i] != ',' && usage[i] != '}') {
      if (!std::isspace(static_cast<unsigned char>(usage[i]))) item += usage[i];
      continue;
    }
    if (!item.empty() && !std::isdigit(static_cast<unsigned char>(item[0])) &&
        std::all_of(item.begin(), item.end(), name_char))
      names.push_back(item);
    item.clear();
  }
  return names;
}

// The fields of the table form of a sub-command ("cloud.commands.cp" -> dry_run,
// recursive, ...), as lua/command_specs.lua declares them; empty for anything else.
std::vector<std::string> command_fields(lua_State* L, const std::string& callee) {
  const std::string module = "cloud.commands.";
  if (callee.compare(0, module.size(), module) != 0) return {};
  std::vector<std::string> names;
  int top = lua_gettop(L);
  lua_getglobal(L, "require");
  lua_pushliteral(L, "cloud.commands");
  if (lua_pcall(L, 1, 1, 0) == LUA_OK && lua_getfield(L, -1, "fields_of") == LUA_TFUNCTION) {
    lua_pushstring(L, callee.c_str() + module.size());
    if (lua_pcall(L, 1, 1, 0) == LUA_OK && lua_istable(L, -1))
      for (lua_Integer i = 1; lua_rawgeti(L, -1, i) == LUA_TSTRING; ++i, lua_pop(L, 1))
        names.push_back(lua_tostring(L, -1));
  }
  lua_settop(L, top);
  return names;
}

// The field names for the table being typed at `end`: the model's members of that
// place when the outermost call it lies in is an operation's, or the fields the
// reference declares for a library function's option table.
std::vector<std::string> table_fields(lua_State* L, const std::string& text, size_t end) {
  std::vector<Open> open = open_brackets(text, end);
  if (open.empty() || open.back().bracket != '{') return {};
  std::vector<Step> steps;
  for (size_t i = open.size(); i-- > 0;) {
    if (open[i].bracket != '{') return {};
    Step s = step_of(text, open, i);
    if (!s.valid) return {};
    if (s.callee.empty()) {
      steps.insert(steps.begin(), s);
      continue;
    }
    push_global_path(L, s.callee);
    const char* name = lua_isfunction(L, -1) ? operation_name_of(L, -1) : nullptr;
    std::vector<std::string> names;
    if (const Operation* op = name ? session_of(L).client->model().find(name) : nullptr) {
      const Shape* shape = s.argument == 1 ? walk(op->input, steps) : nullptr;
      if (shape && shape->type == ShapeType::structure)
        for (const Member& m : shape->members) names.push_back(m.name);
    } else if (steps.empty()) {
      if (s.argument == 1) names = command_fields(L, s.callee);
      if (names.empty()) names = usage_fields(reference_usage(L, -1), s.argument);
    }
    lua_pop(L, 1);
    return names;
  }
  return {};
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
  size_t key_end = skip_space_back(before, c.start);
  bool at_key = key_end > 0 && (before[key_end - 1] == '{' || before[key_end - 1] == ',');
  if (at_key && word.find('.') == std::string::npos)
    for (std::string& name : table_fields(L, before, c.start))
      if (name.compare(0, word.size(), word) == 0) c.candidates.push_back(std::move(name));
  if (c.candidates.empty()) {
    size_t dot = word.rfind('.');
    c.candidates =
        dot == std::string::npos ? field_names(L, "", word) : field_names(L, word.substr(0, dot), word.substr(dot + 1));
  }
  std::sort(c.candidates.begin(), c.candidates.end());
  lua_settop(L, top);
  return c;
}

}  // namespace cloud
