// Validation from the model: one checker per shape type, chosen by a switch. Messages
// say what was wrong and what is allowed, in the words the spec uses.
#include "core/model/validate.h"

#include <algorithm>
#include <cctype>
#include <cstdio>

#include "core/model/body.h"
#include "core/wire/http.h"
#include "core/base/pattern.h"
#include "core/base/suggest.h"
#include "core/base/utf8.h"

namespace cloud {

namespace {

// A value as a message quotes it: long ones cut, so a 1 MB value gives a short message.
std::string quoted(const std::string& s) {
  constexpr size_t kShown = 64;
  if (s.size() <= kShown) return "'" + s + "'";
  size_t cut = kShown;
  while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;  // not inside a UTF-8 character
  return "'" + s.substr(0, cut) + "...' (" + std::to_string(s.size()) + " bytes)";
}

// Lua-facing type names: what the user passed, not how JSON spells it.
std::string type_of(const json& v) {
  switch (v.type()) {
    case json::value_t::null: return "cloud.null";
    case json::value_t::boolean: return "boolean";
    case json::value_t::string: return "string";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned: return "integer";
    case json::value_t::number_float: return "number";
    case json::value_t::array: return "list";
    case json::value_t::object: return v.empty() ? "empty table" : "table";
    default: return "value";
  }
}

std::string show(const json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

std::string join_allowed(const std::vector<json>& allowed) {
  std::string out;
  for (size_t i = 0; i < allowed.size(); ++i) {
    if (i) out += i + 1 == allowed.size() ? " or " : ", ";
    out += show(allowed[i]);
  }
  return out;
}

// The problem of an unknown field, named by its path (core/base/suggest's wording):
// "unknown field, did you mean 'name'?" for 'nmae', or the list of known fields; a
// name another API gives a member (the model's otherNames) is told the member's name:
// "unknown field (the object's key is 'Object' here, S3's Key)".
std::string unknown_field_problem(const Shape& shape, const std::string& key) {
  for (const Member& m : shape.members)
    if (auto other = m.shape->other_names.find(key); other != m.shape->other_names.end())
      return unknown_field(key, {}, other->second.what + " is '" + m.name + "' here, " + other->second.elsewhere,
                           Named::by_path);
  std::vector<std::string> names;
  std::string known;
  for (const Member& m : shape.members) names.push_back(m.name), known += (known.empty() ? "" : ", ") + m.name;
  return unknown_field(key, names, "known: " + known, Named::by_path);
}

// "1 character", "40 characters".
std::string count_of(long long n, const std::string& noun) {
  return std::to_string(n) + " " + noun + (n == 1 ? "" : "s");
}

std::string child_path(const std::string& path, const std::string& key) {
  return path.empty() ? key : path + "." + key;
}

bool in_allowed(const Shape& shape, const json& v) {
  if (shape.allowed.empty()) return true;
  return std::find(shape.allowed.begin(), shape.allowed.end(), v) != shape.allowed.end();
}

bool condition_holds(const json& object, const Condition& c) {
  return object.contains(c.field) && object[c.field] == c.value;
}

std::string condition_text(const Condition& c) { return c.field + " is " + show(c.value); }

void check_ipv4_or_cidr(const std::string& s, bool cidr_required, const std::string& path,
                        std::vector<FieldProblem>& problems) {
  unsigned a, b, c, d, bits = 32;
  char tail = 0;
  int n = std::sscanf(s.c_str(), "%3u.%3u.%3u.%3u/%2u%c", &a, &b, &c, &d, &bits, &tail);
  bool shape_ok = (n == 4 && !cidr_required && s.find('/') == std::string::npos) || n == 5;
  bool ok = shape_ok && a < 256 && b < 256 && c < 256 && d < 256 && bits <= 32 &&
            s.find_first_not_of("0123456789./") == std::string::npos;
  if (!ok)
    problems.push_back(
        {path, cidr_required ? "must be an IPv4 CIDR block such as 192.168.0.10/24 (got " + quoted(s) + ")"
                             : "must be an IPv4 address or CIDR block such as 203.0.113.0/24 (got " + quoted(s) + ")"});
}

// ISO 8601 date-time: 2026-01-31T12:00:00Z, optional fraction, Z or an offset.
void check_iso8601(const std::string& s, const std::string& path, std::vector<FieldProblem>& problems) {
  static const Pattern iso = Pattern::builtin(R"(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2}))");
  if (!iso.full_match(s))
    problems.push_back({path, "must be an ISO 8601 time such as 2026-12-31T23:59:59Z (got " + quoted(s) + ")"});
}

void check_format(const Shape& shape, const std::string& s, const std::string& path,
                  std::vector<FieldProblem>& problems) {
  if (shape.format == "ipv4-or-cidr") check_ipv4_or_cidr(s, false, path, problems);
  else if (shape.format == "cidr") check_ipv4_or_cidr(s, true, path, problems);
  else if (shape.format == "iso8601") check_iso8601(s, path, problems);
}

// A value at `path` breaks `rule` of `shape`: the problem, with the code the model
// gives that rule (errorCodes), if any.
FieldProblem broken(const Shape& shape, const char* rule, const std::string& path, std::string problem) {
  auto code = shape.error_codes.find(rule);
  return {path, std::move(problem), code == shape.error_codes.end() ? "" : code->second};
}

void check_string(const Shape& shape, const json& v, const std::string& path, std::vector<FieldProblem>& problems) {
  if (!v.is_string()) return problems.push_back({path, "string expected, got " + type_of(v)});
  const std::string& s = v.get_ref<const std::string&>();
  long long n = utf8_length(s);
  if (n < 0) return problems.push_back({path, "is not valid UTF-8 text"});
  if (shape.max_length && n > *shape.max_length)
    problems.push_back(
        broken(shape, "maxLength", path,
               "at most " + count_of(*shape.max_length, "character") + " (got " + std::to_string(n) + ")"));
  if (shape.max_bytes && static_cast<long long>(s.size()) > *shape.max_bytes)
    problems.push_back(
        broken(shape, "maxBytes", path,
               "at most " + count_of(*shape.max_bytes, "byte") + " (got " + std::to_string(s.size()) + ")"));
  if (shape.min_length && n < *shape.min_length)
    problems.push_back(
        broken(shape, "minLength", path,
               "at least " + count_of(*shape.min_length, "character") + " (got " + std::to_string(n) + ")"));
  if (!in_allowed(shape, v))
    problems.push_back(
        broken(shape, "enum", path, "must be " + join_allowed(shape.allowed) + " (got " + quoted(s) + ")"));
  if (shape.pattern && !shape.pattern->full_match(s))
    problems.push_back(broken(shape, "pattern", path, "must be " + shape.pattern_text + " (got " + quoted(s) + ")"));
  check_format(shape, s, path, problems);
}

void check_integer(const Shape& shape, const json& v, const std::string& path, std::vector<FieldProblem>& problems) {
  if (!v.is_number_integer()) return problems.push_back({path, "integer expected, got " + type_of(v)});
  long long n = v.get<long long>();
  if (!in_allowed(shape, v))
    problems.push_back({path, "must be " + join_allowed(shape.allowed) + " (got " + std::to_string(n) + ")"});
  if (shape.min && n < *shape.min)
    problems.push_back({path, "at least " + std::to_string(*shape.min) + " (got " + std::to_string(n) + ")"});
  if (shape.max && n > *shape.max)
    problems.push_back({path, "at most " + std::to_string(*shape.max) + " (got " + std::to_string(n) + ")"});
}

// What one item of the list at `path` is called in messages: the list's own name in
// lower case ("Part" -> "part").
std::string item_noun(const std::string& path) {
  size_t cut = path.find_last_of(".]");
  std::string name = cut == std::string::npos ? path : path.substr(cut + 1);
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return name;
}

// ascendingBy: each item's key must be greater than the one before it, so a list
// out of order or with a repeat is refused ("Part[3].PartNumber: must be greater
// than the previous part's (5)"). Items whose key is missing or mistyped are already
// reported by their own checks and skipped here.
void check_ascending(const Shape& shape, const json& items, const std::string& path,
                     std::vector<FieldProblem>& problems) {
  const std::string& key = shape.ascending_by;
  std::string noun = item_noun(path);
  const json* previous = nullptr;
  for (size_t i = 0; i < items.size(); ++i) {
    const json& item = items[i];
    if (!item.is_object() || !item.contains(key) || !item[key].is_number_integer()) continue;
    if (previous && item[key].get<long long>() <= previous->get<long long>())
      problems.push_back({path + "[" + std::to_string(i + 1) + "]." + key,
                          "must be greater than the previous " + noun + "'s (" + previous->dump() + ")"});
    previous = &item[key];
  }
}

void check_list(const Shape& shape, const json& v, const std::string& path, std::vector<FieldProblem>& problems,
                Checker checker) {
  bool empty_table = v.is_object() && v.empty();
  if (!v.is_array() && !empty_table) return problems.push_back({path, "list expected, got " + type_of(v)});
  long long n = static_cast<long long>(v.size());
  if (shape.max_length && n > *shape.max_length)
    problems.push_back({path, "at most " + count_of(*shape.max_length, "item") + " (got " + std::to_string(n) + ")"});
  if (shape.min_length && n < *shape.min_length)
    problems.push_back({path, "at least " + count_of(*shape.min_length, "item") + " (got " + std::to_string(n) + ")"});
  if (empty_table) return;
  for (size_t i = 0; i < v.size(); ++i)
    validate_value(*shape.member, v[i], path + "[" + std::to_string(i + 1) + "]", problems, checker);
  if (!shape.ascending_by.empty() && checker == Checker::client) check_ascending(shape, v, path, problems);
}

// Whether the member has a value to check. cloud.null counts as left out only where
// the model says `nullable` (the ICMP rule's port, as the platform returns it);
// elsewhere it is a value of the wrong type, refused before anything is sent.
bool given(const Member& m, const json& object) {
  return object.contains(m.name) && !(m.nullable && object[m.name].is_null());
}

void check_member_conditions(const Member& m, const json& object, const std::string& path,
                             std::vector<FieldProblem>& problems) {
  bool present = given(m, object);
  if (!present && m.required) problems.push_back({path, "required"});
  for (const Condition& c : m.required_when)
    if (!present && condition_holds(object, c)) problems.push_back({path, "required when " + condition_text(c)});
  for (const Condition& c : m.absent_when)
    if (present && condition_holds(object, c)) problems.push_back({path, "must be left out when " + condition_text(c)});
}

// "rules[2].port: must be 22 or 443 when protocol is TCP (got 80)": a value outside
// the member's set is told with the condition that makes the member required, when
// that condition holds, so the message says the rule as the spec words it.
void qualify_allowed(const Member& m, const json& object, const std::string& path, size_t first,
                     std::vector<FieldProblem>& problems) {
  if (m.shape->allowed.empty()) return;
  std::string prefix = "must be " + join_allowed(m.shape->allowed);
  for (const Condition& c : m.required_when) {
    if (!condition_holds(object, c)) continue;
    for (size_t i = first; i < problems.size(); ++i)
      if (problems[i].path == path && problems[i].problem.rfind(prefix + " (", 0) == 0)
        problems[i].problem.insert(prefix.size(), " when " + condition_text(c));
  }
}

bool is_blank(char c) { return c == ' ' || c == '\t'; }

// A header member holds no line break or other control character (a tab excepted):
// "0-1\r\nX-Injected: 1" would go on the wire as a header of its own. Nor does it begin
// or end with a space or tab: HTTP trims them, so the server would read another value.
void check_header_text(const json& v, const std::string& path, std::vector<FieldProblem>& problems) {
  if (!v.is_string()) return;
  const std::string& s = v.get_ref<const std::string&>();
  if (!header_value_ok(s)) problems.push_back({path, "a header value holds no line break or control character"});
  else if (!s.empty() && (is_blank(s.front()) || is_blank(s.back())))
    problems.push_back(
        {path, "a header value does not begin or end with a space or tab, which HTTP drops (got " + quoted(s) + ")"});
}

void check_header_value(const Member& m, const json& v, const std::string& path, std::vector<FieldProblem>& problems) {
  if (m.location == Location::header) check_header_text(v, path, problems);
}

// A one-segment path parameter of "." or ".." would be read as a dot segment and the
// path would name another resource (/v1/snapshots/.. is /v1); a greedy one (a storage
// key) is opaque and goes on the wire as it is.
void check_path_segment(const Member& m, const json& v, const std::string& path, std::vector<FieldProblem>& problems) {
  if (m.location != Location::path || m.greedy || !v.is_string()) return;
  const std::string& s = v.get_ref<const std::string&>();
  if (s == "." || s == "..")
    problems.push_back(
        {path, "must not be '.' or '..', which a URL path reads as a dot segment (got " + quoted(s) + ")"});
}

// A map (S3's user metadata): a table of names to strings, each name and value checked
// by its shape, each value a header value (a map is sent as headers), no two names
// the same but for case (HTTP would take them for one header), and the names and
// values together within maxBytes (S3 counts the UTF-8 bytes of both).
void check_map(const Shape& shape, const json& v, const std::string& path, std::vector<FieldProblem>& problems,
               Checker checker) {
  if (!v.is_object()) return problems.push_back({path, "table expected (name -> value), got " + type_of(v)});
  long long bytes = 0;
  std::map<std::string, std::string> seen;  // lower-cased -> as given
  for (auto it = v.begin(); it != v.end(); ++it) {
    std::string p = child_path(path, it.key());
    validate_value(*shape.key, it.key(), p + " (its name)", problems, checker);
    validate_value(*shape.member, it.value(), p, problems, checker);
    check_header_text(it.value(), p, problems);
    auto [before, fresh] = seen.emplace(to_lower(it.key()), it.key());
    if (!fresh)
      problems.push_back({p, "the same name as '" + before->second + "' but for case, which HTTP reads as one header"});
    bytes += static_cast<long long>(it.key().size()) +
             (it.value().is_string() ? static_cast<long long>(it.value().get_ref<const std::string&>().size()) : 0);
  }
  if (shape.max_bytes && bytes > *shape.max_bytes)
    problems.push_back(broken(shape, "maxBytes", path,
                              "at most " + count_of(*shape.max_bytes, "byte") + " of names and values together (got " +
                                  std::to_string(bytes) + ")"));
}

void check_structure(const Shape& shape, const json& v, const std::string& path, std::vector<FieldProblem>& problems,
                     Checker checker) {
  if (!v.is_object())
    return problems.push_back({path.empty() ? "(arguments)" : path, "table expected, got " + type_of(v)});
  for (auto it = v.begin(); it != v.end(); ++it)
    if (!shape.find_member(it.key()))
      problems.push_back({child_path(path, it.key()), unknown_field_problem(shape, it.key())});
  for (const Member& m : shape.members) {
    auto found = v.find(m.name);
    // Left out, and nothing asks for it: nothing to check (a list of 10,000 parts, each
    // with five checksum members left out, made a path for each).
    if (found == v.end() && !m.required && m.required_when.empty()) continue;
    std::string p = child_path(path, m.name);
    check_member_conditions(m, v, p, problems);
    if (!given(m, v)) continue;
    size_t first = problems.size();
    validate_value(*m.shape, *found, p, problems, checker);
    check_path_segment(m, *found, p, problems);
    check_header_value(m, *found, p, problems);
    qualify_allowed(m, v, p, first, problems);
  }
}

// The first character of `s` that XML 1.0 cannot carry in text, as "U+0000"; "" when
// none. Only tab, line feed and carriage return are allowed below U+0020.
std::string xml_forbidden_character(const std::string& s) {
  for (unsigned char c : s) {
    if (c >= 0x20 || c == '\t' || c == '\n' || c == '\r') continue;
    char name[8];
    std::snprintf(name, sizeof name, "U+%04X", c);
    return name;
  }
  return "";
}

// Every string in `v` (at any depth) that an XML body could not carry: a NUL would end
// the text there, and no XML reader takes the other control characters.
void check_xml_text(const json& v, const std::string& path, std::vector<FieldProblem>& problems) {
  if (v.is_object()) {
    for (auto it = v.begin(); it != v.end(); ++it) check_xml_text(it.value(), child_path(path, it.key()), problems);
  } else if (v.is_array()) {
    for (size_t i = 0; i < v.size(); ++i) check_xml_text(v[i], path + "[" + std::to_string(i + 1) + "]", problems);
  } else if (v.is_string()) {
    std::string bad = xml_forbidden_character(v.get_ref<const std::string&>());
    if (!bad.empty())
      problems.push_back({path, "holds the control character " + bad +
                                    ", which an XML body cannot carry (of those below U+0020, only tab, line feed "
                                    "and carriage return)"});
  }
}

// Whether any string in `v` (at any depth) holds a character an XML body cannot
// carry: the quick look, without the paths check_xml_text names.
bool has_xml_forbidden(const json& v) {
  if (v.is_string()) return !xml_forbidden_character(v.get_ref<const std::string&>()).empty();
  if (!v.is_structured()) return false;
  for (const json& e : v)
    if (has_xml_forbidden(e)) return true;
  return false;
}

// The members an operation sends in an XML document (input_root) hold only text XML
// can carry. The paths are made only for a member that holds such text.
void check_xml_body(const Operation& op, const json& args, std::vector<FieldProblem>& problems) {
  if (op.input_root.empty() || !op.payload.empty() || !args.is_object()) return;
  for (const Member& m : op.input->members) {
    if (m.location != Location::body) continue;
    auto it = args.find(m.name);
    if (it != args.end() && has_xml_forbidden(*it)) check_xml_text(*it, m.name, problems);
  }
}

// Empty tables become arrays where the model wants a list (Lua cannot tell an empty
// list from an empty object; the model can). Runs after validation succeeded, so
// every member is one the model knows: the value is changed in place, nothing is
// copied or rebuilt (a payload of a gigabyte is not duplicated; a 10,000-part list is
// not made again).
void normalise(const Shape& shape, json& v) {
  if (v.is_null()) return;
  if (shape.type == ShapeType::list) {
    if (!v.is_array()) v = json::array();
    for (json& e : v) normalise(*shape.member, e);
  } else if (shape.type == ShapeType::structure && v.is_object()) {
    for (const Member& m : shape.members)
      if (auto it = v.find(m.name); it != v.end()) normalise(*m.shape, *it);
  }
}

}  // namespace

void validate_value(const Shape& shape, const json& value, const std::string& path, std::vector<FieldProblem>& problems,
                    Checker checker) {
  switch (shape.type) {
    case ShapeType::structure: return check_structure(shape, value, path, problems, checker);
    case ShapeType::list: return check_list(shape, value, path, problems, checker);
    case ShapeType::map: return check_map(shape, value, path, problems, checker);
    case ShapeType::integer: return check_integer(shape, value, path, problems);
    case ShapeType::boolean:
      if (!value.is_boolean()) problems.push_back({path, "boolean expected, got " + type_of(value)});
      return;
    case ShapeType::timestamp: {
      Shape iso = shape;
      if (iso.format.empty()) iso.format = "iso8601";
      return check_string(iso, value, path, problems);
    }
    case ShapeType::string: return check_string(shape, value, path, problems);
    case ShapeType::blob:  // bytes: any content, so no UTF-8 or length-in-characters rule
      if (!value.is_string()) problems.push_back({path, "string expected, got " + type_of(value)});
      return;
  }
}

Outcome<json> validate_input(const Operation& op, const json& args, Checker checker) {
  return validate_input(op, json(args), checker);
}

Outcome<json> validate_input(const Operation& op, json&& args, Checker checker) {
  std::vector<FieldProblem> problems;
  if (checker == Checker::client) {  // the files named are the client's own
    payload_file_range(op, args, problems);
    check_output_file(op, args, problems);
  }
  validate_value(*op.input, args, "", problems, checker);
  check_xml_body(op, args, problems);
  if (problems.empty()) {
    normalise(*op.input, args);
    return std::move(args);
  }
  return validation_error(op, std::move(problems));
}

Error validation_error(const Operation& op, std::vector<FieldProblem> problems) {
  Error e = make_error(ErrorKind::validation, "ValidationError",
                       std::to_string(problems.size()) + (problems.size() == 1 ? " problem" : " problems") +
                           " in the arguments; nothing was sent");
  e.operation = op.name;
  e.fields = std::move(problems);
  return e;
}

}  // namespace cloud
