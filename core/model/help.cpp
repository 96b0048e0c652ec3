// Help from the operation model. describe_operation flattens an operation's input
// and output shapes into rows (one per field, nested fields under their parent);
// the format_* functions lay the rows out as text wrapped to a width. The wording of
// limits follows the validation messages ("at most 40 characters", "1 to 10000").
#include "core/model/help.h"

#include <cstdio>

namespace cloud {

namespace {

constexpr int kMaxNesting = 12;  // the model has no recursive shapes; this only guards

const char* location_name(Location l) {
  switch (l) {
    case Location::body: return "body";
    case Location::path: return "path";
    case Location::query: return "query";
    case Location::header: return "header";
    case Location::local: return "local";
    case Location::headers: return "headers";
  }
  return "body";
}

std::string show(const json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

std::string count_of(long long n, const std::string& noun) {
  return std::to_string(n) + " " + noun + (n == 1 ? "" : "s");
}

// "exactly 32 characters", "1 to 63 characters", "at most 255 characters", ...
std::string length_rule(const std::optional<long long>& min, const std::optional<long long>& max,
                        const std::string& noun) {
  if (min && max && *min == *max) return "exactly " + count_of(*max, noun);
  if (min && max) return std::to_string(*min) + " to " + count_of(*max, noun);
  if (max) return "at most " + count_of(*max, noun);
  if (min) return "at least " + count_of(*min, noun);
  return "";
}

std::string value_rule(const std::optional<long long>& min, const std::optional<long long>& max) {
  if (min && max) return std::to_string(*min) + " to " + std::to_string(*max);
  if (max) return "at most " + std::to_string(*max);
  if (min) return "at least " + std::to_string(*min);
  return "";
}

std::string format_rule(const std::string& format) {
  if (format == "ipv4-or-cidr") return "an IPv4 address or CIDR block such as 203.0.113.0/24";
  if (format == "cidr") return "an IPv4 CIDR block such as 192.168.0.10/24";
  if (format == "iso8601") return "an ISO 8601 time such as 2026-12-31T23:59:59Z";
  return format;
}

std::string type_text(const Shape& s);

std::string plural_type_text(const Shape& s) {
  switch (s.type) {
    case ShapeType::structure: return "tables";
    case ShapeType::list: return "lists";
    case ShapeType::timestamp: return "times (ISO 8601 strings)";
    case ShapeType::blob: return "byte strings";
    default: return type_text(s) + "s";
  }
}

std::string type_text(const Shape& s) {
  switch (s.type) {
    case ShapeType::structure: return "table";
    case ShapeType::map: return "table of " + plural_type_text(*s.member) + " by name";
    case ShapeType::list: return "list of " + plural_type_text(*s.member);
    case ShapeType::string: return "string";
    case ShapeType::integer: return "integer";
    case ShapeType::boolean: return "boolean";
    case ShapeType::timestamp: return "time (ISO 8601 string)";
    case ShapeType::blob: return "string (bytes)";
  }
  return shape_type_name(s.type);
}

// The limits of a value of this shape, in words.
std::vector<std::string> shape_rules(const Shape& s) {
  std::vector<std::string> rules;
  auto add = [&rules](const std::string& r) {
    if (!r.empty()) rules.push_back(r);
  };
  if (s.type == ShapeType::string) add(length_rule(s.min_length, s.max_length, "character"));
  if (s.type == ShapeType::list) add(length_rule(s.min_length, s.max_length, "item"));
  if (s.type == ShapeType::integer) add(value_rule(s.min, s.max));
  if (s.type == ShapeType::map && s.max_bytes)
    add("at most " + count_of(*s.max_bytes, "byte") + " of names and values");
  add(s.pattern_text);
  if (!s.format.empty()) add(format_rule(s.format));
  return rules;
}

std::string condition_text(const Condition& c) { return c.field + " is " + show(c.value); }

FieldHelp field_row(const Member& m, const std::string& path, int depth) {
  FieldHelp f;
  f.path = path;
  f.location = location_name(m.location);
  if (m.location == Location::query || m.location == Location::header)
    if (m.wire_name != m.name) f.wire_name = m.wire_name;
  if (m.location == Location::headers) f.wire_name = m.wire_name + "<name>";
  f.type = type_text(*m.shape);
  f.required = m.required;
  for (const Condition& c : m.required_when) f.rules.push_back("required when " + condition_text(c));
  for (const Condition& c : m.absent_when) f.rules.push_back("left out when " + condition_text(c));
  for (const std::string& r : shape_rules(*m.shape)) f.rules.push_back(r);
  const Shape* element =
      m.shape->type == ShapeType::list || m.shape->type == ShapeType::map ? m.shape->member : nullptr;
  if (m.shape->type == ShapeType::map)
    for (const std::string& r : shape_rules(*m.shape->key)) f.rules.push_back("each name " + r);
  if (element && element->type != ShapeType::structure)
    for (const std::string& r : shape_rules(*element)) f.rules.push_back("each " + r);
  f.allowed = element ? element->allowed : m.shape->allowed;
  f.default_value = m.default_value;
  f.default_text = m.default_text;
  f.doc = m.doc;
  f.depth = depth;
  return f;
}

// Appends a row per member of `shape`, each followed by the rows of its own fields.
void add_rows(const Shape& shape, const std::string& prefix, int depth, std::vector<FieldHelp>& out) {
  if (depth > kMaxNesting) return;
  for (const Member& m : shape.members) {
    std::string path = prefix.empty() ? m.name : prefix + "." + m.name;
    out.push_back(field_row(m, path, depth));
    const Shape* inner = m.shape;
    while (inner->type == ShapeType::list) inner = inner->member, path += "[]";
    if (inner->type == ShapeType::structure) add_rows(*inner, path, depth + 1, out);
  }
}

// `text` broken at spaces into lines of at most `width` columns (a longer word keeps
// its own line); the first line starts with `first`, the others with `rest`.
std::string wrap(const std::string& text, const std::string& first, const std::string& rest, size_t width) {
  std::string out, line;
  const std::string* indent = &first;
  size_t start = 0;
  while (start < text.size()) {
    size_t space = text.find(' ', start);
    std::string word = text.substr(start, space == std::string::npos ? std::string::npos : space - start);
    start = space == std::string::npos ? text.size() : space + 1;
    if (!line.empty() && indent->size() + line.size() + 1 + word.size() > width) {
      out += *indent + line + "\n";
      line.clear();
      indent = &rest;
    }
    line += (line.empty() ? "" : " ") + word;
  }
  if (!line.empty()) out += *indent + line + "\n";
  return out;
}

std::string wrap(const std::string& text, const std::string& indent, size_t width) {
  return wrap(text, indent, indent, width);
}

std::string join(const std::vector<std::string>& parts, const std::string& sep) {
  std::string out;
  for (const std::string& p : parts) out += (out.empty() ? "" : sep) + p;
  return out;
}

// "instanceType: string, default "e-large"" and, below it, the allowed values and
// the doc. A nested field is indented under its parent and named by its last part.
std::string format_field(const FieldHelp& f, size_t width) {
  std::vector<std::string> facts{f.type};
  if (f.required) facts.push_back("required");
  if (f.location == "local") facts.push_back("not sent (read by cloudlua)");
  else if (f.location != "body")
    facts.push_back(f.wire_name.empty() ? "in the " + f.location : f.location + " " + f.wire_name);
  facts.insert(facts.end(), f.rules.begin(), f.rules.end());
  if (f.default_value) facts.push_back("default " + f.default_value->dump());
  if (!f.default_text.empty()) facts.push_back("default: " + f.default_text);
  std::string indent(2 + 2 * static_cast<size_t>(f.depth), ' ');
  std::string more = indent + "    ";
  std::string name = f.path.substr(f.path.rfind('.') + 1);
  std::string out = wrap(name + ": " + join(facts, ", "), indent, more, width);
  if (!f.allowed.empty()) {
    std::vector<std::string> values;
    for (const json& v : f.allowed) values.push_back(show(v));
    out += wrap("one of " + join(values, ", "), more, width);
  }
  if (!f.doc.empty()) out += wrap(f.doc, more, width);
  return out;
}

std::string format_fields(const std::vector<FieldHelp>& fields, size_t width) {
  if (fields.empty()) return "  (none)\n";
  std::string out;
  for (const FieldHelp& f : fields) out += format_field(f, width);
  return out;
}

}  // namespace

// "Paged: cloud.pages("ListObjectsV2", args) calls it while IsTruncated is true, each
// time with ContinuationToken = NextContinuationToken of the answer before."
static std::string paginator_text(const Operation& op) {
  const Paginator& p = *op.paginator;
  std::string tokens;
  for (size_t i = 0; i < p.input_tokens.size(); ++i)
    tokens += (i ? ", " : "") + p.input_tokens[i] + " = " + p.output_tokens[i];
  return "Paged: cloud.pages(\"" + op.name + "\", args) calls it while " + p.more_results +
         " is true, each time with " + tokens + " of the answer before.";
}

OperationHelp describe_operation(const Operation& op) {
  OperationHelp help;
  help.operation = &op;
  add_rows(*op.input, "", 0, help.parameters);
  add_rows(*op.output, "", 0, help.results);
  return help;
}

std::string format_operation_help(const OperationHelp& help, const std::string& call_name, size_t width) {
  const Operation& op = *help.operation;
  std::string out = call_name + "{...}  (" + op.name + ", " + op.api + " API)\n";
  out += wrap(op.doc, "  ", width);
  out += "  " + op.method + " " + op.path;
  for (size_t i = 0; i < op.fixed_query.size(); ++i) out += (i ? "&" : "?") + op.fixed_query[i];
  out += "\n";
  if (!op.idempotent) out += wrap("Not idempotent: never resent once it may have reached the server.", "  ", width);
  if (op.paginator) out += wrap(paginator_text(op), "  ", width);
  out += "\nArguments:\n" + format_fields(help.parameters, width);
  out += "\nResult:\n" + format_fields(help.results, width);
  return out;
}

std::string format_api_help(const Api& api, const std::string& prefix, size_t width) {
  std::string out = wrap(api.name + ": " + api.doc, "", std::string(api.name.size() + 2, ' '), width);
  for (const Operation* op : api.operations) {
    out += wrap(prefix + api.name + "." + op->snake_name + " (" + op->name + ")", "  ", "      ", width);
    out += wrap(op->doc, "      ", width);
  }
  return out;
}

// One acceptor in words: "success when cluster.status equals "RUNNING"".
static std::string acceptor_text(const json& a) {
  std::string when = a.contains("error") ? "the call fails with " + a["error"].get<std::string>()
                                         : a.value("path", "") + " " + a.value("comparator", "");
  if (a.contains("expected")) when += " " + a["expected"].dump();
  return a.value("state", "") + " when " + when;
}

std::string format_waiter_help(const Waiter& w, const std::string& prefix, size_t width) {
  char every[64];
  snprintf(every, sizeof every, "%g s, at most %d tries", w.delay, w.max_attempts);
  std::string out =
      wrap(prefix + "wait_for(\"" + w.name + "\", args, { delay =, max_attempts =, progress = })", "", "    ", width);
  out += wrap(w.doc, "  ", width);
  out += wrap("Calls " + prefix + w.api + "." + snake_case(w.operation) + " (" + w.operation + ") every " + every +
                  "; the first acceptor that holds ends the wait:",
              "  ", width);
  for (size_t i = 0; i < w.acceptors.size(); ++i)
    out += wrap(std::to_string(i + 1) + ". " + acceptor_text(w.acceptors[i]), "    ", "       ", width);
  out += wrap("Source: " + w.source, "  ", "    ", width);
  return out;
}

std::string format_model_help(const Model& model, const std::string& prefix, size_t width) {
  std::string out;
  for (const Api& api : model.apis()) out += (out.empty() ? "" : "\n") + format_api_help(api, prefix, width);
  return out;
}

}  // namespace cloud
