// Loads the operation model from its JSON files into a graph of Shapes. Named shapes
// ("shapes" section) are created first and filled second, so files may refer to a
// shape before defining it. A member that names a shape and adds constraints of its
// own gets a private copy of that shape with the additions.
#include "core/model/model.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <set>

#include "core/base/embedded.h"

namespace cloud {

using ojson = nlohmann::ordered_json;

namespace {

// The member `key` of object `o`, or `fallback` when it has none: a reference into the
// document, where ojson::value would copy the member (the whole "shapes" object).
const ojson& member_or(const ojson& o, const char* key, const ojson& fallback) {
  auto it = o.find(key);
  return it == o.end() ? fallback : *it;
}

const ojson& empty_object() {
  static const ojson empty = ojson::object();
  return empty;
}

const ojson& null_value() {
  static const ojson null;
  return null;
}

}  // namespace

// Found by skipping strings and counting brackets, not parsed: the builtin model is read
// one operation at a time through it, and the value texts it gives are what the JSON
// parser then reads (and refuses, when they are not JSON).
std::optional<Members> json_object_members(std::string_view text) {
  constexpr size_t npos = std::string_view::npos;
  auto skip_space = [&](size_t at) { return at >= text.size() ? npos : text.find_first_not_of(" \t\r\n", at); };
  auto string_end = [&](size_t open) {  // just after the closing quote, or npos
    for (size_t at = open + 1; at < text.size(); ++at) {
      if (text[at] == '\\') ++at;
      else if (text[at] == '"') return at + 1;
    }
    return npos;
  };
  auto value_end = [&](size_t at) {  // the ',' or '}' that ends the value at `at`, or npos
    for (int depth = 0; at != npos && at < text.size() && depth >= 0;) {
      char c = text[at];
      if (c == '"') {
        at = string_end(at);
        continue;
      }
      if (depth == 0 && (c == ',' || c == '}')) return at;
      depth += (c == '{' || c == '[') - (c == '}' || c == ']');
      ++at;
    }
    return npos;
  };
  size_t at = skip_space(0);
  if (at == npos || text[at] != '{') return std::nullopt;
  Members members;
  for (at = skip_space(at + 1); at != npos && text[at] == '"';) {
    size_t key_end = string_end(at), colon = key_end == npos ? npos : skip_space(key_end);
    if (colon == npos || text[colon] != ':') return std::nullopt;
    size_t value = skip_space(colon + 1), end = value == npos ? npos : value_end(value);
    if (end == npos) return std::nullopt;
    std::string_view v = text.substr(value, end - value);
    members.emplace_back(text.substr(at + 1, key_end - at - 2), v.substr(0, v.find_last_not_of(" \t\r\n") + 1));
    if (text[end] == '}') return members;
    at = skip_space(end + 1);
  }
  if (at != npos && text[at] == '}' && members.empty()) return members;
  return std::nullopt;
}

namespace {

const std::map<std::string, ShapeType, std::less<>> kShapeTypes = {
    {"structure", ShapeType::structure}, {"list", ShapeType::list},       {"string", ShapeType::string},
    {"integer", ShapeType::integer},     {"boolean", ShapeType::boolean}, {"timestamp", ShapeType::timestamp},
    {"blob", ShapeType::blob},           {"map", ShapeType::map}};

// Keys that describe the member rather than its shape.
bool is_member_key(const std::string& key) {
  static const char* const keys[] = {"in",         "name",        "required",    "nullable",        "requiredWhen",
                                     "absentWhen", "default",     "defaultText", "defaultByRegion", "doc",
                                     "shape",      "xmlAttribute"};
  for (const char* k : keys)
    if (key == k) return true;
  return false;
}

bool has_shape_keys(const ojson& spec) {
  for (auto it = spec.begin(); it != spec.end(); ++it)
    if (!is_member_key(it.key())) return true;
  return false;
}

// The two protocols there are, as data: everything the code asks of them.
const Protocol kJson{"json",
                     Format::json,
                     "application/json",
                     false,
                     {"x-ext-error-type", "x-amzn-errortype"},
                     "ValidationError",
                     "ValidationError",
                     false,
                     false,
                     "",
                     ""};
const Protocol kXml{"xml", Format::xml, "application/xml", true,           {}, "MalformedXML", "InvalidArgument",
                    true,  true,        "AccessDenied",    "Access Denied"};

// The keys of "signing", each with the values it may take (empty: true or false).
const std::map<std::string, std::vector<std::string>, std::less<>> kSigningKeys = {
    {"normalize_path", {}},
    {"double_encode", {}},
    {"payload_hash", {"header", "omitted"}},
    {"wrong_scope", {"SignatureDoesNotMatch", "AuthorizationHeaderMalformed"}}};

// "a, b or c"
std::string one_of(const std::vector<std::string>& words) {
  std::string out;
  for (size_t i = 0; i < words.size(); ++i) out += (i == 0 ? "" : i + 1 == words.size() ? " or " : ", ") + words[i];
  return out;
}

}  // namespace

const Protocol* Protocol::find(std::string_view name) {
  for (const Protocol* p : {&kJson, &kXml})
    if (p->name == name) return p;
  return nullptr;
}

const char* shape_type_name(ShapeType type) {
  for (const auto& [name, t] : kShapeTypes)
    if (t == type) return name.c_str();
  return "?";
}

const Member* Shape::find_member(std::string_view name) const {
  for (const Member& m : members)
    if (m.name == name) return &m;
  return nullptr;
}

std::string snake_case(std::string_view camel) {
  std::string out;
  for (size_t i = 0; i < camel.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(camel[i]);
    if (std::isupper(c) && i > 0) out += '_';
    out += static_cast<char>(std::tolower(c));
  }
  return out;
}

// The loader keeps the file being read and the first error met, so the recursive
// readers stay short; after an error, the rest of the work is skipped.
struct Model::Loader {
  Model& model;
  std::string file;
  std::map<std::string, Shape*> named;
  std::vector<std::pair<const Shape*, std::string>> ordered_lists;  // lists with ascendingBy
  std::optional<Error> error;
  // The builtin file being read, when part of it may have been read already: its
  // header and shapes (then `named` holds them), operations read alone.
  Source* source = nullptr;

  void fail(const std::string& where, const std::string& what) {
    if (!error) error = make_error(ErrorKind::config, "ModelError", file + ": " + where + ": " + what);
  }

  bool failed(const std::string& where, const std::string& what) {
    fail(where, what);
    return false;
  }

  void declare_shapes(const ojson& shapes) {
    for (auto it = shapes.begin(); it != shapes.end(); ++it) {
      model.shapes_.emplace_back();
      model.shapes_.back().name = it.key();
      named[it.key()] = &model.shapes_.back();
    }
  }

  void define_shapes(const ojson& shapes) {
    for (auto it = shapes.begin(); it != shapes.end(); ++it)
      fill_shape(*named[it.key()], it.value(), "shapes." + it.key());
  }

  // A member's shape: a reference, a reference with additions, or inline.
  const Shape* member_shape(const ojson& spec, const std::string& where) {
    const Shape* base = nullptr;
    if (spec.contains("shape")) {
      auto it = named.find(spec["shape"].get<std::string>());
      if (it == named.end()) {
        fail(where, "unknown shape '" + spec["shape"].get<std::string>() + "'");
        return nullptr;
      }
      base = it->second;
      if (!has_shape_keys(spec)) return base;
    }
    model.shapes_.emplace_back(base ? *base : Shape{});
    Shape& shape = model.shapes_.back();
    shape.name.clear();
    fill_shape(shape, spec, where);
    return &shape;
  }

  void fill_shape(Shape& shape, const ojson& spec, const std::string& where) {
    if (spec.contains("shape") && shape.name.size() && named.count(spec["shape"].get<std::string>())) {
      std::string name = shape.name;  // a named shape refining another: start from a copy
      shape = *named[spec["shape"].get<std::string>()];
      shape.name = name;
    }
    if (spec.contains("type")) {
      auto t = kShapeTypes.find(spec["type"].get<std::string>());
      if (t == kShapeTypes.end()) return fail(where, "unknown type " + spec["type"].dump());
      shape.type = t->second;
    } else if (!spec.contains("shape")) {
      return fail(where, "no type and no shape");
    }
    fill_constraints(shape, spec, where);
    if (spec.contains("members")) fill_members(shape, spec["members"], where);
    if (spec.contains("member")) {
      shape.member = member_shape(spec["member"], where + "[]");
      shape.member_name = spec["member"].value("name", "");
    }
    if (spec.contains("key")) shape.key = member_shape(spec["key"], where + ".key");
    if (spec.contains("value")) shape.member = member_shape(spec["value"], where + ".value");
    if (shape.type == ShapeType::list && !shape.member) fail(where, "list without member");
    if (shape.type == ShapeType::map &&
        !(shape.key && shape.member && shape.key->type == ShapeType::string && shape.member->type == ShapeType::string))
      fail(where, "a map needs a key and a value, both strings");
    if (!shape.ascending_by.empty()) ordered_lists.emplace_back(&shape, where);
  }

  // ascendingBy names an integer member of the list's items. Checked once the file is
  // read: the items may be a named shape defined further down.
  void check_ascending_by(const Shape& list, const std::string& where) {
    const Member* key = list.type == ShapeType::list && list.member && list.member->type == ShapeType::structure
                            ? list.member->find_member(list.ascending_by)
                            : nullptr;
    if (!key || key->shape->type != ShapeType::integer)
      fail(where, "ascendingBy '" + list.ascending_by + "' is not an integer member of the list's items");
  }

  void fill_constraints(Shape& shape, const ojson& spec, const std::string& where) {
    if (spec.contains("minLength")) shape.min_length = spec["minLength"].get<long long>();
    if (spec.contains("maxLength")) shape.max_length = spec["maxLength"].get<long long>();
    if (spec.contains("maxBytes")) shape.max_bytes = spec["maxBytes"].get<long long>();
    if (spec.contains("errorCodes")) read_error_codes(shape, spec["errorCodes"], where + ".errorCodes");
    if (spec.contains("min")) shape.min = spec["min"].get<long long>();
    if (spec.contains("max")) shape.max = spec["max"].get<long long>();
    if (spec.contains("enum"))
      for (const ojson& v : spec["enum"]) shape.allowed.push_back(json::parse(v.dump()));
    if (spec.contains("flattened")) shape.flattened = spec["flattened"].get<bool>();
    if (spec.contains("ascendingBy")) shape.ascending_by = spec["ascendingBy"].get<std::string>();
    if (spec.contains("format")) shape.format = spec["format"].get<std::string>();
    if (spec.contains("xmlNamespace")) read_xml_namespace(shape, spec["xmlNamespace"], where + ".xmlNamespace");
    if (spec.contains("patternText")) shape.pattern_text = spec["patternText"].get<std::string>();
    if (spec.contains("otherNames")) read_other_names(shape, spec["otherNames"], where + ".otherNames");
    if (spec.contains("pattern")) {
      Outcome<Pattern> p = Pattern::compile(spec["pattern"].get<std::string>());
      if (p.ok()) shape.pattern = std::move(p.value());
      else fail(where, p.error().message);
    }
  }

  // "errorCodes": { "maxBytes": "KeyTooLongError" }: the code a server answers when a
  // value breaks that rule of the shape, each a rule the shape has.
  void read_error_codes(Shape& shape, const ojson& spec, const std::string& where) {
    static const char* const rules[] = {"minLength", "maxLength", "maxBytes", "min",
                                        "max",       "enum",      "pattern",  "format"};
    if (!spec.is_object()) return fail(where, "must be an object of rule -> error code");
    for (auto it = spec.begin(); it != spec.end(); ++it) {
      bool known = std::find(std::begin(rules), std::end(rules), it.key()) != std::end(rules);
      if (!known || !it.value().is_string())
        return fail(where + "." + it.key(), "not a rule of a shape, or its code not a string");
      shape.error_codes[it.key()] = it.value().get<std::string>();
    }
  }

  // "otherNames": { "Key": { "what": "the object's key", "elsewhere": "S3's Key" } }:
  // the names other APIs give to what a member of this shape holds.
  void read_other_names(Shape& shape, const ojson& spec, const std::string& where) {
    if (!spec.is_object()) return fail(where, "must be an object of name -> { what, elsewhere }");
    for (auto it = spec.begin(); it != spec.end(); ++it) {
      const ojson& v = it.value();
      std::string what = v.is_object() ? v.value("what", "") : "",
                  elsewhere = v.is_object() ? v.value("elsewhere", "") : "";
      if (what.empty() || elsewhere.empty() || v.size() != 2)
        return fail(where + "." + it.key(), "must be { what, elsewhere }, both non-empty text");
      shape.other_names[it.key()] = {what, elsewhere};
    }
  }

  // "xmlNamespace": { "prefix": "xsi", "uri": "..." }, on a structure.
  void read_xml_namespace(Shape& shape, const ojson& spec, const std::string& where) {
    std::string prefix = spec.is_object() ? spec.value("prefix", "") : "";
    std::string uri = spec.is_object() ? spec.value("uri", "") : "";
    if (prefix.empty() || uri.empty() || shape.type != ShapeType::structure)
      return fail(where, "must be { prefix, uri }, both non-empty, on a structure");
    shape.xml_namespace_prefix = prefix, shape.xml_namespace_uri = uri;
  }

  void fill_members(Shape& shape, const ojson& members, const std::string& where) {
    shape.members.clear();
    for (auto it = members.begin(); it != members.end(); ++it)
      shape.members.push_back(read_member(it.key(), it.value(), where + "." + it.key()));
  }

  Member read_member(const std::string& name, const ojson& spec, const std::string& where) {
    Member m;
    m.name = name;
    m.wire_name = spec.value("name", name);
    m.location = read_location(spec.value("in", "body"), where);
    m.required = spec.value("required", false);
    m.nullable = spec.value("nullable", false);
    m.doc = spec.value("doc", "");
    m.default_text = spec.value("defaultText", "");
    if (spec.contains("default")) m.default_value = json::parse(spec["default"].dump());
    if (spec.contains("defaultByRegion"))
      for (auto it = spec["defaultByRegion"].begin(); it != spec["defaultByRegion"].end(); ++it)
        m.default_by_region[it.key()] = json::parse(it.value().dump());
    m.required_when = read_conditions(spec, "requiredWhen");
    m.absent_when = read_conditions(spec, "absentWhen");
    m.shape = member_shape(spec, where);
    m.xml_attribute = spec.value("xmlAttribute", false);
    bool scalar = m.shape && m.shape->type != ShapeType::structure && m.shape->type != ShapeType::list;
    if (m.xml_attribute && (m.location != Location::body || !scalar))
      fail(where + ".xmlAttribute", "only a body member of a scalar shape can be an XML attribute");
    bool is_map = m.shape && m.shape->type == ShapeType::map;
    if (is_map != (m.location == Location::headers))
      fail(where,
           "a map is a member in \"headers\" (a header per entry, its name after the prefix \"name\"), and only a map "
           "is");
    if (m.location == Location::headers && m.wire_name == m.name)
      fail(where, "a member in \"headers\" names its headers' prefix (\"name\": \"x-ext-meta-\")");
    return m;
  }

  Location read_location(const std::string& in, const std::string& where) {
    if (in == "body") return Location::body;
    if (in == "path") return Location::path;
    if (in == "query") return Location::query;
    if (in == "header") return Location::header;
    if (in == "local") return Location::local;
    if (in == "headers") return Location::headers;
    fail(where, "unknown location '" + in + "'");
    return Location::body;
  }

  static std::vector<Condition> read_conditions(const ojson& spec, const char* key) {
    std::vector<Condition> out;
    if (!spec.contains(key)) return out;
    for (auto it = spec[key].begin(); it != spec[key].end(); ++it)
      out.push_back({it.key(), json::parse(it.value().dump())});
    return out;
  }

  // One operation of `api`, listed in api.operations unless `listed` is false (read
  // alone); one read alone before is listed as it is, not read again.
  Operation& read_operation(Api& api, const std::string& name, const ojson& spec, bool listed = true) {
    if (source)
      if (auto it = source->alone.find(name); it != source->alone.end()) {
        if (listed) api.operations.push_back(it->second);
        return *it->second;
      }
    std::string where = "operations." + name;
    model.operations_.emplace_back();
    Operation& op = model.operations_.back();
    op.name = name;
    op.snake_name = snake_case(name);
    op.api = api.name;
    op.method = spec.value("method", "POST");
    read_path(op, spec.value("path", "/"));
    op.idempotent = spec.value("idempotent", true);
    op.doc = spec.value("doc", "");
    op.input_root = spec.value("inputRoot", "");
    op.output_root = spec.value("outputRoot", "");
    op.payload = spec.value("payload", "");
    op.output_payload = spec.value("outputPayload", "");
    op.input = structure_of(member_or(spec, "input", empty_object()), where + ".input");
    op.output = spec.contains("outputShape")
                    ? named_structure(spec["outputShape"], where + ".outputShape")
                    : structure_of(member_or(spec, "output", empty_object()), where + ".output");
    read_file_members(op, spec, where);
    read_errors_by_status(op, spec, where + ".errorsByStatus");
    read_limits(op, spec, where + ".limits");
    op.checksum_required = spec.value("checksumRequired", false);
    if (spec.contains("paginator")) read_paginator(op, spec["paginator"], where + ".paginator");
    mark_greedy_labels(op);
    if (listed) api.operations.push_back(&op);
    return op;
  }

  // An operation of `api` from its own text, not listed in api.operations.
  Operation& read_operation_alone(Api& api, const std::string& name, std::string_view text) {
    Operation& op = read_operation(api, name, ojson::parse(text), false);
    check_ordered_lists();
    return op;
  }

  // The ascendingBy of each list met since the last check (the items' shapes are
  // complete only once everything they name is read).
  void check_ordered_lists() {
    for (const auto& [list, where] : ordered_lists) check_ascending_by(*list, where);
    ordered_lists.clear();
  }

  // payloadFile { path, offset, length }, outputFile and outputFileOffset: each names
  // a local input member of the type it needs, beside a payload (outputPayload) it
  // stands in for.
  void read_file_members(Operation& op, const ojson& spec, const std::string& where) {
    if (spec.contains("payloadFile")) {
      const ojson& f = spec["payloadFile"];
      op.payload_file =
          PayloadFile{f.value("path", ""), f.value("offset", ""), f.value("length", ""), f.value("mediaType", "")};
      if (op.payload.empty()) fail(where + ".payloadFile", "needs a payload it stands in for");
      expect_local(op, op.payload_file->path, ShapeType::string, where + ".payloadFile.path");
      expect_local(op, op.payload_file->offset, ShapeType::integer, where + ".payloadFile.offset");
      expect_local(op, op.payload_file->length, ShapeType::integer, where + ".payloadFile.length");
      const std::string& type = op.payload_file->media_type;
      const Member* m = type.empty() ? nullptr : op.input->find_member(type);
      if (!type.empty() && (!m || m->location != Location::header || m->shape->type != ShapeType::string))
        fail(where + ".payloadFile.mediaType",
             "'" + type + "' must be an input member with \"in\": \"header\" of type string");
    }
    op.output_file = spec.value("outputFile", "");
    if (op.output_file.empty()) return;
    if (op.output_payload.empty()) fail(where + ".outputFile", "needs an outputPayload it stands in for");
    expect_local(op, op.output_file, ShapeType::string, where + ".outputFile");
    op.output_file_offset = spec.value("outputFileOffset", "");
    if (!op.output_file_offset.empty())
      expect_local(op, op.output_file_offset, ShapeType::integer, where + ".outputFileOffset");
    op.output_file_durable = spec.value("outputFileDurable", "");
    if (!op.output_file_durable.empty())
      expect_local(op, op.output_file_durable, ShapeType::boolean, where + ".outputFileDurable");
    op.output_file_beneath = spec.value("outputFileBeneath", "");
    if (!op.output_file_beneath.empty())
      expect_local(op, op.output_file_beneath, ShapeType::string, where + ".outputFileBeneath");
  }

  // errorsByStatus { "404": "NoSuchKey" }: an error status (400-599, or 304) -> the code it means.
  void read_errors_by_status(Operation& op, const ojson& spec, const std::string& where) {
    if (!spec.contains("errorsByStatus")) return;
    const ojson& map = spec["errorsByStatus"];
    if (!map.is_object()) return fail(where, "must be an object of status -> error code");
    for (auto it = map.begin(); it != map.end(); ++it) {
      const std::string& key = it.key();
      bool numeric = key.size() == 3 && key.find_first_not_of("0123456789") == std::string::npos;
      long status = numeric ? std::stol(key) : 0;
      if ((status < 400 || status > 599) && status != 304)
        return fail(where + "." + key,
                    "must be an error status, 400 to 599, or 304 (a conditional request's Not Modified)");
      if (!it.value().is_string() || it.value().get<std::string>().empty())
        return fail(where + "." + key, "must be an error code (a non-empty string)");
      op.errors_by_status[status] = it.value().get<std::string>();
    }
  }

  // limits { "maxSourceBytes": 5368709120 }: names -> non-negative integers.
  void read_limits(Operation& op, const ojson& spec, const std::string& where) {
    if (!spec.contains("limits")) return;
    const ojson& map = spec["limits"];
    if (!map.is_object()) return fail(where, "must be an object of name -> integer");
    for (auto it = map.begin(); it != map.end(); ++it) {
      if (!it.value().is_number_unsigned()) return fail(where + "." + it.key(), "must be an integer >= 0");
      op.limits[it.key()] = it.value().get<std::uint64_t>();
    }
  }

  // "paginator": { input_token, output_token, more_results }; the tokens a name or a
  // list of names, as many outputs as inputs; each checked against the operation.
  void read_paginator(Operation& op, const ojson& spec, const std::string& where) {
    Paginator p;
    p.input_tokens = names_of(spec.value("input_token", ojson()));
    p.output_tokens = names_of(spec.value("output_token", ojson()));
    p.more_results = spec.value("more_results", "");
    if (p.input_tokens.empty() || p.input_tokens.size() != p.output_tokens.size())
      return fail(where, "input_token and output_token must name as many tokens, at least one");
    for (const std::string& name : p.input_tokens)
      if (!op.input->find_member(name)) fail(where + ".input_token", "'" + name + "' is not an input member");
    for (const std::string& paths : p.output_tokens)
      for (const std::string& path : alternatives(paths))
        if (!output_path_to(*op.output, path)) fail(where + ".output_token", "the result has no path '" + path + "'");
    const Shape* more = output_path_to(*op.output, p.more_results);
    if (!more || more->type != ShapeType::boolean)
      fail(where + ".more_results", "'" + p.more_results + "' is not a boolean of the result");
    op.paginator = std::move(p);
  }

  // "a" or ["a", "b"]: the names; anything else is none.
  static std::vector<std::string> names_of(const ojson& v) {
    std::vector<std::string> out;
    if (v.is_string()) out.push_back(v.get<std::string>());
    if (v.is_array())
      for (const ojson& e : v)
        if (e.is_string()) out.push_back(e.get<std::string>());
    return out;
  }

  // "NextMarker || Contents[-1].Key": the paths, spaces trimmed.
  static std::vector<std::string> alternatives(const std::string& text) {
    std::vector<std::string> out;
    for (size_t start = 0; start <= text.size();) {
      size_t bar = text.find("||", start);
      if (bar == std::string::npos) bar = text.size();
      std::string part = text.substr(start, bar - start);
      size_t first = part.find_first_not_of(' '), last = part.find_last_not_of(' ');
      out.push_back(first == std::string::npos ? "" : part.substr(first, last - first + 1));
      start = bar + 2;
    }
    return out;
  }

  // The shape at "a.b[-1].c" in `shape` ("[n]" after a list: its item n, 1-based, or
  // -1 for the last), nullptr when there is none.
  static const Shape* output_path_to(const Shape& shape, const std::string& path) {
    const Shape* s = &shape;
    for (size_t start = 0; start <= path.size();) {
      size_t dot = path.find('.', start);
      if (dot == std::string::npos) dot = path.size();
      std::string part = path.substr(start, dot - start);
      size_t bracket = part.find('[');
      bool indexed = bracket != std::string::npos;
      const Member* m = s->type == ShapeType::structure ? s->find_member(part.substr(0, bracket)) : nullptr;
      if (!m || (indexed && m->shape->type != ShapeType::list)) return nullptr;
      s = indexed ? m->shape->member : m->shape;
      start = dot + 1;
    }
    return s;
  }

  // Fails unless `name` is an input member of location local and of type `type`.
  void expect_local(const Operation& op, const std::string& name, ShapeType type, const std::string& where) {
    const Member* m = op.input->find_member(name);
    if (!m || m->location != Location::local || m->shape->type != type)
      fail(where, "'" + name + "' must be an input member with \"in\": \"local\" of type " + shape_type_name(type));
  }

  // "/{Bucket}/{Object+}?uploads": the path template and the keys that select it.
  static void read_path(Operation& op, const std::string& path) {
    size_t q = path.find('?');
    op.path = path.substr(0, q);
    if (q == std::string::npos) return;
    std::string rest = path.substr(q + 1);
    for (size_t start = 0; start <= rest.size();) {
      size_t amp = rest.find('&', start);
      if (amp == std::string::npos) amp = rest.size();
      if (amp > start) op.fixed_query.push_back(rest.substr(start, amp - start));
      start = amp + 1;
    }
  }

  const Shape* structure_of(const ojson& members, const std::string& where) {
    model.shapes_.emplace_back();
    Shape& shape = model.shapes_.back();
    shape.type = ShapeType::structure;
    fill_members(shape, members, where);
    return &shape;
  }

  // "outputShape": "FirewallGroup": the result is that named structure, not wrapped.
  const Shape* named_structure(const ojson& name, const std::string& where) {
    auto it = name.is_string() ? named.find(name.get<std::string>()) : named.end();
    if (it == named.end() || it->second->type != ShapeType::structure) {
      fail(where, "not a named structure: " + name.dump());
      return &model.shapes_.emplace_back();
    }
    return it->second;
  }

  // One waiter of the "waiters" section, checked against the operation it calls.
  void read_waiter(Api& api, const std::string& name, const ojson& spec) {
    std::string where = "waiters." + name;
    Waiter& w = model.waiters_.emplace_back();
    w.name = name;
    w.api = api.name;
    w.operation = spec.value("operation", "");
    w.delay = spec.value("delay", 0.0);
    w.max_attempts = spec.value("maxAttempts", 0);
    w.doc = spec.value("doc", "");
    w.source = spec.value("source", "");
    w.acceptors = json::parse(spec.value("acceptors", ojson::array()).dump());
    const Operation* op = nullptr;
    for (const Operation* o : api.operations)
      if (o->name == w.operation) op = o;
    if (!op) return fail(where, "operation '" + w.operation + "' is not one of this API's");
    if (w.delay <= 0 || w.max_attempts < 1) return fail(where, "delay must be > 0 and maxAttempts >= 1");
    if (!w.acceptors.is_array() || w.acceptors.empty()) return fail(where, "acceptors must be a non-empty list");
    for (size_t i = 0; i < w.acceptors.size(); ++i)
      check_acceptor(*op->output, w.acceptors[i], where + ".acceptors[" + std::to_string(i + 1) + "]");
    api.waiters.push_back(&w);
  }

  // An acceptor has a known state and either an error code or a path the result has.
  void check_acceptor(const Shape& output, const json& a, const std::string& where) {
    static const std::set<std::string> states = {"success", "failure", "retry"};
    static const std::set<std::string> comparators = {"equals", "allEqual", "anyEqual", "prefix", "empty"};
    if (!a.is_object() || !states.count(a.value("state", "")))
      return fail(where, "state must be success, failure or retry");
    if (a.contains("error")) return;
    if (!comparators.count(a.value("comparator", "")))
      return fail(where, "unknown comparator " + a.value("comparator", json()).dump());
    if (!a.contains("expected") && a["comparator"] != "empty") return fail(where, "expected is missing");
    std::string path = a.value("path", "");
    if (!result_has_path(output, path)) fail(where, "the result has no path '" + path + "'");
  }

  // Whether "a.b[].c" names members of `shape` ("[]" after a list: each item).
  static bool result_has_path(const Shape& shape, const std::string& path) {
    const Shape* s = &shape;
    for (size_t start = 0; start <= path.size();) {
      size_t dot = path.find('.', start);
      if (dot == std::string::npos) dot = path.size();
      std::string part = path.substr(start, dot - start);
      bool each = part.size() > 2 && part.compare(part.size() - 2, 2, "[]") == 0;
      if (each) part.resize(part.size() - 2);
      const Member* m = s->type == ShapeType::structure ? s->find_member(part) : nullptr;
      if (!m || (each && m->shape->type != ShapeType::list)) return false;
      s = each ? m->shape->member : m->shape;
      start = dot + 1;
    }
    return true;
  }

  // {Object+} in the template marks a label whose '/' stay as they are.
  void mark_greedy_labels(Operation& op) {
    Shape& input = const_cast<Shape&>(*op.input);
    for (Member& m : input.members) {
      if (m.location != Location::path) continue;
      m.greedy = op.path.find("{" + m.wire_name + "+}") != std::string::npos;
      if (op.path.find("{" + m.wire_name) == std::string::npos)
        fail("operations." + op.name, "path parameter " + m.name + " not in the path");
    }
  }

  // "signing": every key given, none other, each with a value it may take.
  bool read_signing(const ojson& spec, SigningPolicy& policy) {
    if (!spec.is_object()) return failed("signing", "missing: an object with " + key_list());
    for (auto it = spec.begin(); it != spec.end(); ++it) {
      auto known = kSigningKeys.find(it.key());
      if (known == kSigningKeys.end()) return failed("signing." + it.key(), "unknown key; known: " + key_list());
      const std::vector<std::string>& values = known->second;
      bool fits = values.empty() ? it.value().is_boolean()
                                 : it.value().is_string() &&
                                       std::count(values.begin(), values.end(), it.value().get<std::string>());
      if (!fits)
        return failed("signing." + it.key(), "must be " + (values.empty() ? "true or false" : one_of(values)) +
                                                 " (got " + it.value().dump() + ")");
    }
    for (const auto& [key, values] : kSigningKeys)
      if (!spec.contains(key)) return failed("signing." + key, "missing");
    policy.normalize_path = spec["normalize_path"].get<bool>();
    policy.double_encode = spec["double_encode"].get<bool>();
    policy.payload_hash = spec["payload_hash"] == "header" ? PayloadHash::header : PayloadHash::omitted;
    policy.wrong_scope =
        spec["wrong_scope"] == "AuthorizationHeaderMalformed" ? WrongScope::malformed : WrongScope::mismatch;
    return true;
  }

  // "normalize_path, double_encode, ...": the keys of "signing", for messages.
  static std::string key_list() {
    std::vector<std::string> keys;
    for (const auto& [key, values] : kSigningKeys) keys.push_back(key);
    return one_of(keys);
  }

  // Reads one file into `api`; an api whose name is set already (from the index) must
  // be the file's. A header read before (source->header_read) is not read again: the
  // header's fields are read by calls meanwhile, and `named` holds its shapes.
  void read_file(const std::string& name, std::string_view text, Api& api) {
    file = name;
    ojson doc = ojson::parse(text, nullptr, false);
    if (doc.is_discarded() || !doc.is_object()) return fail("(file)", "not a JSON object");
    bool header = !(source && source->header_read);
    if (header && !read_header(doc, api)) return;
    const ojson& ops = member_or(doc, "operations", empty_object());
    for (auto it = ops.begin(); it != ops.end(); ++it) read_operation(api, it.key(), it.value());
    const ojson& waiters = member_or(doc, "waiters", empty_object());
    for (auto it = waiters.begin(); it != waiters.end(); ++it) read_waiter(api, it.key(), it.value());
    check_ordered_lists();
    if (header) read_signing(member_or(doc, "signing", null_value()), api.signing);
  }

  // The API's own fields and shapes; false when they are broken.
  bool read_header(const ojson& doc, Api& api) {
    std::string api_name = doc.value("api", "");
    if (!api.name.empty() && api.name != api_name)
      return failed("api", "'" + api_name + "' where the index says '" + api.name + "'");
    if (api.name.empty()) api.name = api_name;  // set from the index, it is read by other threads (api_for)
    api.protocol = Protocol::find(doc.value("protocol", "json"));
    if (!api.protocol) return failed("protocol", "must be json or xml (got " + doc["protocol"].dump() + ")");
    api.service = doc.value("service", api.name);
    api.xml_namespace = doc.value("xmlNamespace", "");
    api.doc = doc.value("doc", "");
    if (api.name.empty()) return failed("api", "missing");
    const ojson& shapes = member_or(doc, "shapes", empty_object());
    declare_shapes(shapes);
    define_shapes(shapes);
    return !error;
  }
};

Outcome<std::shared_ptr<Model>> Model::load(const std::vector<std::pair<std::string, std::string>>& files) {
  auto model = std::make_shared<Model>();
  model->apis_.resize(files.size());
  Loader loader{*model, "", {}, {}, std::nullopt};
  try {
    for (size_t i = 0; i < files.size() && !loader.error; ++i) {
      loader.named.clear();
      loader.read_file(files[i].first, files[i].second, model->apis_[i]);
    }
  } catch (const nlohmann::json::exception& e) {
    loader.fail("(value)", e.what());
  }
  if (loader.error) return *loader.error;
  for (size_t i = 0; i < model->apis_.size(); ++i) model->services_.push_back(model->apis_[i].service);
  for (size_t i = 0; i < model->apis_.size(); ++i)
    for (const Operation* op : model->apis_[i].operations) model->index_.push_back({op->name, op->snake_name, i});
  model->index_names();
  return model;
}

const Model& Model::builtin() {
  static const Model* model = [] {
    auto* m = new Model;  // never freed: pointers into it live as long as the process
    for (const EmbeddedFile* f = model_files; f->name; ++f) m->sources_.emplace_back().file = f->name;
    m->apis_.resize(m->sources_.size());
    for (size_t i = 0; i < m->sources_.size(); ++i) m->sources_[i].text = model_files[i].text;
    for (const ModelIndexEntry* e = model_index; e->file; ++e)
      for (size_t i = 0; i < m->sources_.size(); ++i)
        if (m->sources_[i].file == e->file) {
          m->apis_[i].name = e->api;
          m->services_.resize(m->apis_.size());
          m->services_[i] = e->service;
          m->index_.push_back({e->operation, snake_case(e->operation), i});
        }
    m->index_names();
    for (size_t i = 0; i < m->apis_.size(); ++i)
      if (m->apis_[i].name.empty()) m->read_api(i);  // an API without operations is not in the index
    return m;
  }();
  return *model;
}

namespace {

// Runs `read` (a part of the builtin model read by `loader`); a broken builtin model is
// a broken build, reported and ended.
template <typename Loader, typename Read>
void read_builtin(Loader& loader, Read read) {
  try {
    read();
  } catch (const nlohmann::json::exception& e) {
    loader.fail("(value)", e.what());
  }
  if (!loader.error) return;
  fprintf(stderr, "cloudlua: built-in model is broken: %s\n", loader.error->message.c_str());
  abort();
}

}  // namespace

// Reads API i's file, the first time only (a no-op for a model read all at once); what
// was read of it one operation at a time is kept, not read again.
void Model::read_api(size_t i) const {
  if (sources_.empty()) return;
  Source& source = const_cast<Source&>(sources_[i]);
  std::call_once(source.once, [this, &source, i] {
    std::lock_guard<std::mutex> lock(load_mutex_);
    Loader loader{const_cast<Model&>(*this), "", source.shapes, {}, std::nullopt, &source};
    read_builtin(loader, [&] { loader.read_file(source.file, source.text, apis_[i]); });
    source.whole = true;
  });
}

// Splits API i's file, once (under load_mutex_): each operation's text, and the rest
// but the waiters (which name operations) as `base`. Left unsplit when the file is not
// written plainly enough for json_object_members: the whole file is read then.
void Model::split_source(size_t i) const {
  Source& source = const_cast<Source&>(sources_[i]);
  if (source.split) return;
  source.split = true;
  std::optional<Members> top = json_object_members(source.text);
  if (!top) return;
  std::string base;
  std::map<std::string, std::string_view, std::less<>> operations;
  for (const auto& [key, value] : *top) {
    if (key == "operations") {
      std::optional<Members> ops = json_object_members(value);
      if (!ops) return;
      for (const auto& [name, text] : *ops) operations.emplace(std::string(name), text);
    } else if (key != "waiters") {
      base.append(base.empty() ? "{\"" : ",\"").append(key).append("\":").append(value);
    }
  }
  source.base = base + "}";
  source.operation_texts = std::move(operations);
}

// API i's header and shapes from its base text, once (under load_mutex_).
void Model::read_header(size_t i) const {
  Source& source = const_cast<Source&>(sources_[i]);
  if (source.header_read) return;
  Loader loader{const_cast<Model&>(*this), "", {}, {}, std::nullopt};
  read_builtin(loader, [&] { loader.read_file(source.file, source.base, apis_[i]); });
  source.shapes = loader.named;
  source.header_read = true;
}

// The operation of entry `e` read from its own text, its API's header and shapes with
// it: a call reads a fifth of the storage API's file, not all of it. nullptr when the
// whole file is read, or must be (a model read all at once; a file left unsplit).
const Operation* Model::read_alone(const Entry& e) const {
  if (sources_.empty()) return nullptr;
  std::lock_guard<std::mutex> lock(load_mutex_);
  Source& source = const_cast<Source&>(sources_[e.api]);
  if (source.whole) return nullptr;
  if (auto it = source.alone.find(e.name); it != source.alone.end()) return it->second;
  split_source(e.api);
  auto text = source.operation_texts.find(e.name);
  if (text == source.operation_texts.end()) return nullptr;
  read_header(e.api);
  Loader loader{const_cast<Model&>(*this), source.file, source.shapes, {}, std::nullopt};
  Operation* op = nullptr;
  read_builtin(loader, [&] { op = &loader.read_operation_alone(apis_[e.api], e.name, text->second); });
  source.alone[e.name] = op;
  return op;
}

void Model::index_names() {
  by_name_.clear();
  for (size_t i = 0; i < index_.size(); ++i) {
    by_name_.emplace(index_[i].name, i);  // the first entry of a name wins, as a scan in order finds it
    by_name_.emplace(index_[i].snake_name, i);
  }
}

const Model::Entry* Model::entry(std::string_view name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : &index_[it->second];
}

const Operation* Model::find(std::string_view name) const {
  const Entry* e = entry(name);
  if (!e) return nullptr;
  if (const Operation* op = read_alone(*e)) return op;
  read_api(e->api);
  for (const Operation* op : apis_[e->api].operations)
    if (op->name == e->name) return op;
  return nullptr;
}

const Api& Model::api_for(const Operation& op) const {
  for (const Api& a : apis_)
    if (a.name == op.api) return a;
  return *api(op.api);  // not reached: every operation's API is in apis_
}

const Api* Model::api(std::string_view name) const {
  for (size_t i = 0; i < apis_.size(); ++i)
    if (apis_[i].name == name) {
      read_api(i);
      return &apis_[i];
    }
  return nullptr;
}

const std::vector<Api>& Model::apis() const {
  for (size_t i = 0; i < apis_.size(); ++i) read_api(i);
  return apis_;
}

std::vector<std::string> Model::api_names() const {
  std::vector<std::string> out;
  for (const Api& a : apis_) out.push_back(a.name);
  return out;
}

std::vector<std::string> Model::operation_names(std::string_view api) const {
  std::vector<std::string> out;
  for (const Entry& e : index_)
    if (apis_[e.api].name == api) out.push_back(e.name);
  return out;
}

bool Model::has_api(std::string_view api) const {
  for (const Api& a : apis_)
    if (a.name == api) return true;
  return false;
}

std::string Model::default_service(std::string_view api) const {
  for (size_t i = 0; i < apis_.size(); ++i)
    if (apis_[i].name == api)
      return i < services_.size() && !services_[i].empty() ? services_[i] : this->api(api)->service;
  return "";
}

std::string Model::api_of(std::string_view operation) const {
  const Entry* e = entry(operation);
  return e ? apis_[e->api].name : "";
}

const Waiter* Model::waiter(std::string_view name) const {
  for (const Waiter* w : waiters())
    if (w->name == name) return w;
  return nullptr;
}

std::vector<const Waiter*> Model::waiters() const {
  std::vector<const Waiter*> out;
  for (const Api& a : apis()) out.insert(out.end(), a.waiters.begin(), a.waiters.end());
  return out;
}

std::vector<const Operation*> Model::operations() const {
  std::vector<const Operation*> out;
  for (const Api& a : apis()) out.insert(out.end(), a.operations.begin(), a.operations.end());
  return out;
}

}  // namespace cloud
