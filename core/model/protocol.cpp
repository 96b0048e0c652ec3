// Model-driven wire formats. One reader and one writer per body format (JSON, XML),
// each with one small case per shape type; the path/query/header placement is shared.
#include "core/model/protocol.h"

#include <pugixml.hpp>
#include <algorithm>
#include <cerrno>
#include <map>
#include <mutex>
#include <optional>
#include <sstream>
#include <string_view>

#include "core/model/body.h"
#include "core/base/crypto.h"
#include "core/base/limits.h"
#include "core/base/pattern.h"
#include "core/wire/uri.h"

namespace cloud {

namespace {

// ---------------------------------------------------------------- scalars as text

std::string scalar_text(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
  if (v.is_number_unsigned()) return std::to_string(v.get<std::uint64_t>());  // as dump() writes them,
  if (v.is_number_integer()) return std::to_string(v.get<std::int64_t>());    // without its serializer
  return v.dump();
}

// Text from a header, a query string or an XML element, typed by the model; text
// that is no value of the type (an integer out of range among them) stays text, for
// the check of an answer (check_answer) or of a request (validation) to refuse.
json typed_scalar(const Shape& shape, const std::string& text) {
  if (shape.type == ShapeType::integer) {
    char* end = nullptr;
    errno = 0;
    long long n = std::strtoll(text.c_str(), &end, 10);
    if (!text.empty() && end && *end == '\0' && errno != ERANGE) return n;
  }
  if (shape.type == ShapeType::boolean && (text == "true" || text == "false")) return text == "true";
  return text;
}

// ---------------------------------------------------------------- paths

// "/v1/snapshots/{SnapshotName}:restore" with the labels filled in, encoded.
std::string expand_path(const Operation& op, const json& input) {
  std::string out;
  const std::string& t = op.path;
  for (size_t i = 0; i < t.size();) {
    if (t[i] != '{') {
      out += t[i++];
      continue;
    }
    size_t close = t.find('}', i);
    std::string label = t.substr(i + 1, close - i - 1);
    bool greedy = !label.empty() && label.back() == '+';
    if (greedy) label.pop_back();
    for (const Member& m : op.input->members)
      if (m.location == Location::path && m.wire_name == label && input.contains(m.name))
        out += uri_encode(scalar_text(input[m.name]), greedy);
    i = close + 1;
  }
  return out;
}

// A path template as a pattern: plain labels match one segment, greedy ones the rest.
// Bytes, not UTF-8: a hostile target need not be valid text.
struct PathPattern {
  Pattern pattern;
  std::vector<std::string> labels;  // in the order of the pattern's groups
};

PathPattern compile_path(const std::string& t) {
  std::vector<std::string> labels;
  std::string re;
  for (size_t i = 0; i < t.size();) {
    size_t open = t.find('{', i);
    if (open == std::string::npos) {
      re += Pattern::quote(t.substr(i));
      break;
    }
    re += Pattern::quote(t.substr(i, open - i));
    size_t close = t.find('}', open);
    std::string label = t.substr(open + 1, close - open - 1);
    bool greedy = label.back() == '+';
    if (greedy) label.pop_back();
    labels.push_back(label);
    re += greedy ? "(.+)" : "([^/]+)";
    i = close + 1;
  }
  return {Pattern::builtin("(?s)" + re, Pattern::Text::bytes), std::move(labels)};
}

// Compiled once per template and shared by the server's threads: compiling costs far
// more than matching, and a Pattern may be matched from many threads at once.
const PathPattern& path_pattern(const std::string& path_template) {
  static std::mutex mutex;
  static std::map<std::string, PathPattern> patterns;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = patterns.find(path_template);
  if (it == patterns.end()) it = patterns.emplace(path_template, compile_path(path_template)).first;
  return it->second;
}

// ---------------------------------------------------------------- query and headers

std::string build_query(const Operation& op, const json& input) {
  std::string q;
  auto add = [&q](const std::string& part) { q += (q.empty() ? "" : "&") + part; };
  for (const std::string& key : op.fixed_query) add(key);
  for (const Member& m : op.input->members)
    if (m.location == Location::query && input.contains(m.name) && !input[m.name].is_null())
      add(uri_encode(m.wire_name) + "=" + uri_encode(scalar_text(input[m.name])));
  return q;
}

std::map<std::string, std::string> query_map(const std::string& query) {
  std::map<std::string, std::string> out;
  for (const auto& [k, v] : split_query(query)) out[uri_decode(k)] = uri_decode(v);
  return out;
}

// ---------------------------------------------------------------- JSON bodies

// The JSON object of the members of `shape` that `input` gives and the body carries,
// written as json::dump() writes the object holding them (its keys in order), without
// the copy of each member's value that object took (a tenth of a JSON request served).
std::string body_members_text(const Shape& shape, const json& input) {
  std::string out = "{";
  if (input.is_object())
    for (auto it = input.begin(); it != input.end(); ++it) {
      const Member* m = shape.find_member(it.key());
      if (!m || m->location != Location::body) continue;
      if (out.size() > 1) out += ',';
      out += json(it.key()).dump();
      out += ':';
      out += it.value().dump();
    }
  return out += '}';
}

// ---------------------------------------------------------------- XML bodies
//
// Written straight into one string, byte for byte as pugixml's format_raw writes the
// same document (tests/unit/xml_writer_test compares the two over every byte), without
// building the document first: for a 10,000-part completion, building it cost as much
// as writing it. Values end at a NUL, as the C strings pugixml takes did.

}  // namespace

// Appends `s` escaped as pugixml escapes an element's text (`attribute` false) or an
// attribute's value: & and < always, > in text, " in attributes, control characters
// as two-digit references (tab and line feed are left in text). A carriage return in
// text is written as the reference &#13; too: written as it is, an XML reader turns it
// into a line feed (end-of-line handling), and "a\r\nb" would arrive as "a\nb".
void xml_escape(std::string& out, std::string_view s, bool attribute) {
  for (char c : s) {
    auto u = static_cast<unsigned char>(c);
    if (c == '\0') return;
    if (c == '&') out += "&amp;";
    else if (c == '<') out += "&lt;";
    else if (c == '>' && !attribute) out += "&gt;";
    else if (c == '"' && attribute) out += "&quot;";
    else if (u < 32 && (attribute || (c != '\t' && c != '\n'))) {
      out += "&#";
      out += static_cast<char>('0' + u / 10);
      out += static_cast<char>('0' + u % 10);
      out += ';';
    } else {
      out += c;
    }
  }
}

namespace {

// Appends ` name="value"`.
void xml_attribute_text(std::string& out, const std::string& name, std::string_view value) {
  out += ' ';
  out += name;
  out += "=\"";
  xml_escape(out, value, true);
  out += '"';
}

// Ends a start tag written up to its attributes: `>` when children follow (written by
// `children`), else `/>` as pugixml writes an empty element.
template <class Children>
void xml_close(std::string& out, const std::string& name, Children&& children) {
  size_t open = out.size();
  out += '>';
  children();
  if (out.size() == open + 1) {
    out.back() = '/';
    out += '>';
    return;
  }
  out += "</";
  out += name;
  out += '>';
}

void xml_write(std::string& out, const Shape& shape, const std::string& name, const json& v);

// The attributes of a structure's element (the namespace declaration its members'
// prefix needs, then the members the model makes attributes), then, by xml_close, its
// members as child elements.
void xml_write_members(std::string& out, const std::string& name, const Shape& shape, const json& v) {
  if (!shape.xml_namespace_prefix.empty())
    xml_attribute_text(out, "xmlns:" + shape.xml_namespace_prefix, shape.xml_namespace_uri);
  auto given = [&v](const Member& m) -> const json* {  // the member's value when it is sent
    if (m.location != Location::body) return nullptr;
    auto it = v.find(m.name);
    return it == v.end() || it->is_null() ? nullptr : &*it;
  };
  for (const Member& m : shape.members)
    if (const json* value = m.xml_attribute ? given(m) : nullptr)
      xml_attribute_text(out, m.wire_name, scalar_text(*value));
  xml_close(out, name, [&] {
    for (const Member& m : shape.members)
      if (const json* value = m.xml_attribute ? nullptr : given(m)) xml_write(out, *m.shape, m.wire_name, *value);
  });
}

// One value as the element `name` (a list: its items, inside `name` unless flattened).
void xml_write(std::string& out, const Shape& shape, const std::string& name, const json& v) {
  if (shape.type == ShapeType::list) {
    const std::string& item = shape.flattened ? name : shape.member_name.empty() ? "member" : shape.member_name;
    auto items = [&] {
      for (const json& e : v) xml_write(out, *shape.member, item, e);
    };
    if (shape.flattened) return items();
    out += '<';
    out += name;
    return xml_close(out, name, items);
  }
  out += '<';
  out += name;
  if (shape.type == ShapeType::structure) return xml_write_members(out, name, shape, v);
  out += '>';  // text, even empty, makes the element's one child: never <name/>
  xml_escape(out, v.is_string() ? std::string_view(v.get_ref<const std::string&>()) : std::string_view(scalar_text(v)),
             false);
  out += "</";
  out += name;
  out += '>';
}

std::string local_name(const char* qualified) {
  std::string s = qualified;
  size_t colon = s.find(':');
  return colon == std::string::npos ? s : s.substr(colon + 1);
}

json xml_read(pugi::xml_node node, const Shape& shape);

json xml_read_list(pugi::xml_node parent, const std::string& name, const Shape& shape) {
  json out = json::array();
  if (shape.flattened) {
    for (pugi::xml_node c : parent.children())
      if (local_name(c.name()) == name) out.push_back(xml_read(c, *shape.member));
    return out;
  }
  for (pugi::xml_node c : parent.children())
    if (local_name(c.name()) == name)
      for (pugi::xml_node item : c.children())
        if (item.type() == pugi::node_element) out.push_back(xml_read(item, *shape.member));
  return out;
}

// The attribute of `node` a member is, by its local name (xsi:type is "type" under
// any prefix); namespace declarations are not attributes of the model.
pugi::xml_attribute xml_attribute_of(pugi::xml_node node, const Member& m) {
  std::string name = local_name(m.wire_name.c_str());
  for (pugi::xml_attribute a : node.attributes()) {
    std::string qualified = a.name();
    if (qualified != "xmlns" && qualified.rfind("xmlns:", 0) != 0 && local_name(a.name()) == name) return a;
  }
  return {};
}

// A structure's members by their element (or attribute) names; elements the model
// does not know are kept as text so that nothing the server said is lost.
json xml_read_structure(pugi::xml_node node, const Shape& shape) {
  json out = json::object();
  for (const Member& m : shape.members) {
    if (m.location != Location::body) continue;
    if (m.xml_attribute) {
      if (pugi::xml_attribute a = xml_attribute_of(node, m)) out[m.name] = typed_scalar(*m.shape, a.value());
      continue;
    }
    if (m.shape->type == ShapeType::list) {
      json list = xml_read_list(node, m.wire_name, *m.shape);
      if (!list.empty() || node.child(m.wire_name.c_str())) out[m.name] = list;
      continue;
    }
    for (pugi::xml_node c : node.children())
      if (local_name(c.name()) == m.wire_name) {
        out[m.name] = xml_read(c, *m.shape);
        break;
      }
  }
  for (pugi::xml_node c : node.children()) {
    std::string n = local_name(c.name());
    if (c.type() == pugi::node_element && !shape.find_member(n) && !out.contains(n)) out[n] = c.text().get();
  }
  return out;
}

json xml_read(pugi::xml_node node, const Shape& shape) {
  if (shape.type == ShapeType::structure) return xml_read_structure(node, shape);
  return typed_scalar(shape, node.text().get());
}

// A document as text, with each carriage return in text written as the reference
// &#13;: written as it is, an XML reader turns it into a line feed (end-of-line
// handling), and "a\r\nb" would arrive as "a\nb". pugixml writes control characters
// other than tab, line feed and carriage return as references itself, and escapes
// them all in attributes, so a raw '\r' in its output can only be text.
std::string xml_text(const pugi::xml_document& doc) {
  std::ostringstream out;
  doc.save(out, "", pugi::format_raw);
  std::string raw = out.str(), text;
  text.reserve(raw.size());
  for (char c : raw) {
    if (c == '\r') text += "&#13;";
    else text += c;
  }
  return text;
}

// How XML bodies are read: pugixml's defaults, and text of whitespace only kept
// where it is an element's only content (<ETag> </ETag> is " ", not ""), while the
// whitespace between elements (indentation) is still dropped.
constexpr unsigned kXmlParse = pugi::parse_default | pugi::parse_ws_pcdata_single;

// The member a document's root element is, when the root holds a value and not
// members: an output member of a scalar shape named as the root (GetBucketLocation's
// <LocationConstraint>region</LocationConstraint>); nullptr otherwise.
const Member* root_value_member(const Shape& shape, const std::string& root) {
  const Member* m = shape.find_member(root);
  bool scalar =
      m && m->location == Location::body && m->shape->type != ShapeType::structure && m->shape->type != ShapeType::list;
  return scalar ? m : nullptr;
}

std::string xml_document(const std::string& root, const std::string& ns, const Shape& shape, const json& v) {
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?><" + root;
  if (!ns.empty()) xml_attribute_text(out, "xmlns", ns);
  if (const Member* value = root_value_member(shape, root)) {
    if (!v.contains(value->name)) return out + "/>";
    out += '>';
    xml_escape(out, scalar_text(v[value->name]), false);
    return out + "</" + root + ">";
  }
  xml_write_members(out, root, shape, v);
  return out;
}

// ---------------------------------------------------------------- header members

// The model names the platform's x-ext-* headers; an S3-compatible server in the aws
// dialect sends the same headers as x-amz-*.
const std::string* header_in(const Headers& headers, std::string_view name) {
  if (const std::string* value = find_header(headers, name)) return value;
  constexpr std::string_view ext = "x-ext-", aws = "x-amz-";
  if (name.size() <= ext.size() || !iequals(name.substr(0, ext.size()), ext)) return nullptr;
  for (const Header& h : headers)
    if (h.first.size() == name.size() && iequals(std::string_view(h.first).substr(0, aws.size()), aws) &&
        iequals(std::string_view(h.first).substr(aws.size()), name.substr(ext.size())))
      return &h.second;
  return nullptr;
}

// The name after `prefix` of a header of the map member whose headers it begins
// (x-ext-meta-, or x-amz-meta- in the aws dialect), lower-cased as S3 answers it;
// nullopt when the header is no entry of it.
std::optional<std::string> entry_name(std::string_view header, std::string_view prefix) {
  constexpr std::string_view ext = "x-ext-", aws = "x-amz-";
  if (header.size() <= prefix.size()) return std::nullopt;
  bool same = iequals(header.substr(0, prefix.size()), prefix);
  bool dialect = !same && prefix.size() > ext.size() && iequals(prefix.substr(0, ext.size()), ext) &&
                 iequals(header.substr(0, aws.size()), aws) &&
                 iequals(header.substr(aws.size(), prefix.size() - ext.size()), prefix.substr(ext.size()));
  if (!same && !dialect) return std::nullopt;
  return to_lower(std::string(header.substr(prefix.size())));
}

// A map member's entries: every header that begins with its prefix (an empty table
// when none does, so that r.Metadata.foo reads nil rather than failing).
json read_map_member(const Member& m, const Headers& headers) {
  json map = json::object();
  for (const Header& h : headers)
    if (std::optional<std::string> name = entry_name(h.first, m.wire_name)) map[*name] = h.second;
  return map;
}

void read_header_members(const Shape& shape, const Headers& headers, json& out) {
  for (const Member& m : shape.members) {
    if (m.location == Location::header)
      if (const std::string* value = header_in(headers, m.wire_name)) out[m.name] = typed_scalar(*m.shape, *value);
    if (m.location == Location::headers) out[m.name] = read_map_member(m, headers);
  }
}

// The header members of `v` as headers (a map member: one header per entry).
void write_header_members(const Shape& shape, const json& v, Headers& headers) {
  for (const Member& m : shape.members) {
    auto it = v.find(m.name);
    if (it == v.end() || it->is_null()) continue;
    if (m.location == Location::header) headers.emplace_back(m.wire_name, scalar_text(*it));
    if (m.location == Location::headers && it->is_object())
      for (auto entry = it->begin(); entry != it->end(); ++entry)
        headers.emplace_back(m.wire_name + entry.key(), scalar_text(entry.value()));
  }
}

}  // namespace

std::string too_deep_message(const std::string& what) {
  return what + " is nested more than " + std::to_string(kMaxDepth) + " levels deep (the limit for any document)";
}

// A JSON text parsed with its depth watched: the parser is not recursive, but copying,
// dumping or pushing a document to Lua is, so a document deeper than kMaxDepth is
// dropped as it is read (`too_deep` set) and never walked.
// Whether `text` may open more than kMaxDepth containers one inside another: brackets
// counted outside strings. It never counts fewer than the parser meets before it
// stops, so a text it passes cannot be too deep for the parser either.
bool may_be_too_deep(std::string_view text) {
  int depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (in_string) {
      if (c == '\\') ++i;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (depth++ >= kMaxDepth) return true;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return false;
}

json parse_json_text(const std::string& text, bool& too_deep) {
  too_deep = false;
  // The parser with a callback costs several times the plain one on a small answer;
  // it is needed only when the text might be too deep.
  if (!may_be_too_deep(text)) return json::parse(text, nullptr, false);
  auto within = [&too_deep](int depth, json::parse_event_t event, json&) {
    bool opens = event == json::parse_event_t::object_start || event == json::parse_event_t::array_start;
    if (opens && depth >= kMaxDepth) too_deep = true;
    return !too_deep;
  };
  return json::parse(text, within, false);
}

namespace {

Outcome<json> parse_json_object(const std::string& body, const std::string& what) {
  if (body.empty()) return json::object();
  bool too_deep = false;
  json doc = parse_json_text(body, too_deep);
  if (too_deep) return make_error(ErrorKind::api, "DocumentTooDeep", too_deep_message(what));
  if (doc.is_discarded() || !doc.is_object())
    return make_error(ErrorKind::api, "MalformedResponse", what + " is not a JSON object: " + body.substr(0, 200));
  return doc;
}

// The reason of a JSON parse error without nlohmann's prefix and position ("syntax
// error while parsing value - invalid literal; last read: 'x'").
std::string parse_reason(const json::parse_error& e) {
  std::string what = e.what();
  size_t column = what.find("column ");
  size_t colon = what.find(": ", column == std::string::npos ? 0 : column);
  return colon == std::string::npos ? what : what.substr(colon + 2);
}

// Where the parser stops on a text, and the token it read last: its SAX interface
// alone tells where a refusal other than a syntax error sits (a number beyond a
// double's range: nlohmann's out_of_range 406, which carries no position). Every
// event is accepted; only the error is kept.
struct ErrorSpot : nlohmann::json_sax<json> {
  size_t end = 0;     // the byte (from 1) the parser stopped at: a token's last
  std::string token;  // the token read last, as the text has it
  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t) override { return true; }
  bool number_float(number_float_t, const string_t&) override { return true; }
  bool string(string_t&) override { return true; }
  bool binary(binary_t&) override { return true; }
  bool start_object(size_t) override { return true; }
  bool key(string_t&) override { return true; }
  bool end_object() override { return true; }
  bool start_array(size_t) override { return true; }
  bool end_array() override { return true; }
  bool parse_error(size_t position, const std::string& last, const json::exception&) override {
    end = position, token = last;
    return false;
  }
};

// The InvalidJSON error of a text the parser refused for a reason other than its
// syntax: the number out of range, named with the byte it starts at.
Error out_of_range_json(const std::string& text, const std::string& what) {
  ErrorSpot spot;
  json::sax_parse(text, &spot);
  size_t start = spot.end >= spot.token.size() ? spot.end - spot.token.size() + 1 : spot.end;
  std::string number = spot.token.size() > 40 ? spot.token.substr(0, 40) + "..." : spot.token;
  return make_error(ErrorKind::validation, "InvalidJSON",
                    what + " is not JSON: at byte " + std::to_string(start) + ": the number " + number +
                        " is out of range (a JSON number here is at most about 1.8e308 in size)");
}

// True when an element sits more than kMaxDepth levels deep (the root is level 1).
// pugixml parses and walks without recursion; the model-driven reader would stop at
// the model's depth, but one limit for every document keeps the rule simple.
bool xml_too_deep(pugi::xml_document& doc) {
  struct Walker : pugi::xml_tree_walker {
    bool deep = false;
    bool for_each(pugi::xml_node& node) override {
      deep = node.type() == pugi::node_element && depth() >= kMaxDepth;
      return !deep;
    }
  } walker;
  doc.traverse(walker);
  return walker.deep;
}

}  // namespace

Outcome<json> parse_json_document(const std::string& text, const std::string& what) {
  bool too_deep = false;
  auto within = [&too_deep](int depth, json::parse_event_t event, json&) {
    bool opens = event == json::parse_event_t::object_start || event == json::parse_event_t::array_start;
    if (opens && depth >= kMaxDepth) too_deep = true;
    return !too_deep;
  };
  try {
    json doc = may_be_too_deep(text) ? json::parse(text, within) : json::parse(text);
    if (too_deep) return make_error(ErrorKind::validation, "DocumentTooDeep", too_deep_message(what));
    return doc;
  } catch (const json::parse_error& e) {
    if (too_deep) return make_error(ErrorKind::validation, "DocumentTooDeep", too_deep_message(what));
    return make_error(ErrorKind::validation, "InvalidJSON",
                      what + " is not JSON: at byte " + std::to_string(e.byte) + ": " + parse_reason(e));
  } catch (const json::exception&) {  // the parser's one other refusal: a number beyond a double
    if (too_deep) return make_error(ErrorKind::validation, "DocumentTooDeep", too_deep_message(what));
    return out_of_range_json(text, what);
  }
}

const char* content_type_of(const Api& api) { return api.protocol->content_type.c_str(); }

std::string request_id_of(const Headers& headers) {
  for (const char* name : {"x-ext-request-id", "x-amz-request-id", "x-amzn-requestid"})
    if (has_header(headers, name)) return header_value(headers, name);
  return {};
}

namespace {

// Whether an XML operation's document has anything to carry: a body member given.
// Without one nothing is sent (PutObjectAcl with a canned ACL in a header only).
bool has_body_member(const Operation& op, const json& input) {
  if (op.input_root.empty()) return false;
  for (const Member& m : op.input->members)
    if (m.location == Location::body && input.contains(m.name) && !input[m.name].is_null()) return true;
  return false;
}

// Whether an XML operation may come without its document: none of its body members
// is required.
bool body_optional(const Operation& op) {
  for (const Member& m : op.input->members)
    if (m.location == Location::body && m.required) return false;
  return true;
}

// The request of `input`, whose payload member (the object's bytes) is given apart
// so that it can be moved rather than copied.
WireRequest serialize_with_payload(const Api& api, const Operation& op, const json& input, std::string payload) {
  WireRequest w;
  w.method = op.method;
  w.path = expand_path(op, input);
  w.query = build_query(op, input);
  write_header_members(*op.input, input, w.headers);
  if (!op.payload.empty()) {
    std::vector<FieldProblem> validated;  // already reported by validate_input
    w.files.upload = payload_file_range(op, input, validated);
    w.body = std::move(payload);
  } else if (api.protocol->format == Format::xml) {
    if (has_body_member(op, input)) w.body = xml_document(op.input_root, api.xml_namespace, *op.input, input);
  } else if (op.method != "GET" && op.method != "DELETE" && op.method != "HEAD") {
    w.body = body_members_text(*op.input, input);
  }
  if (!w.body.empty() && op.payload.empty()) w.headers.emplace_back("Content-Type", content_type_of(api));
  if (op.checksum_required) w.headers.emplace_back("Content-MD5", base64(md5(w.body)));
  if (!op.output_file.empty() && input.contains(op.output_file))
    w.files.download_to = input[op.output_file].get<std::string>();
  if (!op.output_file_offset.empty() && input.contains(op.output_file_offset))
    w.files.download_at = input[op.output_file_offset].get<std::uint64_t>();
  if (!op.output_file_durable.empty() && input.contains(op.output_file_durable))
    w.files.durable = input[op.output_file_durable].get<bool>();
  if (!op.output_file_beneath.empty() && input.contains(op.output_file_beneath))
    w.files.beneath = input[op.output_file_beneath].get<std::string>();
  return w;
}

// Where the payload member's bytes are in `input`, or null when they are not given.
template <class Json>
Json* payload_member(const Operation& op, Json& input) {
  auto it = op.payload.empty() ? input.end() : input.find(op.payload);
  return it != input.end() && it->is_string() ? &*it : nullptr;
}

}  // namespace

WireRequest serialize_request(const Api& api, const Operation& op, const json& input) {
  const json* payload = payload_member(op, input);
  return serialize_with_payload(api, op, input, payload ? payload->get<std::string>() : std::string());
}

WireRequest serialize_request(const Api& api, const Operation& op, json&& input) {
  json* payload = payload_member(op, input);
  return serialize_with_payload(api, op, input, payload ? std::move(payload->get_ref<std::string&>()) : std::string());
}

namespace {

// ---------------------------------------------------------------- answers against the model

// What a value of `shape`'s type is called in messages.
const char* type_words(ShapeType type) {
  switch (type) {
    case ShapeType::structure:
    case ShapeType::map: return "an object";
    case ShapeType::list: return "a list";
    case ShapeType::integer: return "an integer";
    case ShapeType::boolean: return "a boolean";
    case ShapeType::timestamp: return "a timestamp";
    case ShapeType::string:
    case ShapeType::blob: return "a string";
  }
  return "a value";
}

// Whether `v` is a value of `shape`'s type as an answer carries it: an integer that
// fits 64 bits, true or false, a string (a timestamp may also be a number); null
// stands for any type (JSON's "no value").
bool has_type(const Shape& shape, const json& v) {
  if (v.is_null()) return true;
  switch (shape.type) {
    case ShapeType::structure:
    case ShapeType::map: return v.is_object();
    case ShapeType::list: return v.is_array();
    case ShapeType::integer:
      return v.is_number_integer() && !(v.is_number_unsigned() && v.get<std::uint64_t>() > std::uint64_t(INT64_MAX));
    case ShapeType::boolean: return v.is_boolean();
    case ShapeType::timestamp: return v.is_string() || v.is_number();
    case ShapeType::string:
    case ShapeType::blob: return v.is_string();
  }
  return true;
}

// The first value of an answer (`v`, at `path`) of a type other than its shape's
// ("Contents[2].Size"): the problem, or "" when every member the model knows has its
// type. Members the model does not know are not looked at.
std::string type_problem(const Shape& shape, const json& v, const std::string& path) {
  if (!has_type(shape, v)) {
    std::string shown = v.is_string() ? "\"" + v.get<std::string>().substr(0, 40) + "\"" : v.dump();
    return path + " is " + shown.substr(0, 60) + ", not " + type_words(shape.type);
  }
  if (shape.type == ShapeType::list && v.is_array())
    for (size_t i = 0; i < v.size(); ++i)
      if (std::string p = type_problem(*shape.member, v[i], path + "[" + std::to_string(i + 1) + "]"); !p.empty())
        return p;
  if (shape.type == ShapeType::structure && v.is_object())
    for (const Member& m : shape.members)
      if (auto it = v.find(m.name); it != v.end())
        if (std::string p = type_problem(*m.shape, *it, path.empty() ? m.name : path + "." + m.name); !p.empty())
          return p;
  return "";
}

// An answer whose values do not have the model's types is no answer of the API: an
// api error MalformedResponse naming the first such field.
Outcome<json> checked_answer(const Operation& op, json result) {
  std::string problem = type_problem(*op.output, result, "");
  if (problem.empty()) return result;
  return make_error(ErrorKind::api, "MalformedResponse", "the answer does not fit the API: " + problem);
}

// Every list the model knows in `v` (of `shape`) made a list: a list member the answer
// left out (an XML element or JSON member servers omit when empty) or gave as null
// becomes [], in nested structures, list items and map values too, so that a script
// can always loop over a result's lists.
void fill_lists(const Shape& shape, json& v) {
  if (shape.type == ShapeType::list && v.is_array())
    for (json& item : v) fill_lists(*shape.member, item);
  if (shape.type == ShapeType::map && v.is_object())
    for (auto& [name, value] : v.items()) fill_lists(*shape.member, value);
  if (shape.type != ShapeType::structure || !v.is_object()) return;
  for (const Member& m : shape.members) {
    auto it = v.find(m.name);
    if (m.shape->type == ShapeType::list && (it == v.end() || it->is_null())) v[m.name] = json::array();
    else if (it != v.end()) fill_lists(*m.shape, *it);
  }
}

}  // namespace

Outcome<json> parse_result(const Api& api, const Operation& op, const HttpResponse& response) {
  json result = json::object();
  if (!op.output_payload.empty()) {
    if (response.body_file.empty()) result[op.output_payload] = response.body;
    else result[op.output_file] = response.body_file;  // written to a file (get_object{file=})
  } else if (api.protocol->format == Format::xml && !op.output_root.empty()) {
    pugi::xml_document doc;
    if (!doc.load_string(response.body.c_str(), kXmlParse) ||
        local_name(doc.document_element().name()) != op.output_root)
      return make_error(ErrorKind::api, "MalformedResponse",
                        "expected an XML " + op.output_root + " body, got: " + response.body.substr(0, 200));
    if (xml_too_deep(doc)) return make_error(ErrorKind::api, "DocumentTooDeep", too_deep_message("the answer"));
    if (const Member* value = root_value_member(*op.output, op.output_root))
      result[value->name] = typed_scalar(*value->shape, doc.document_element().text().get());
    else result = xml_read_structure(doc.document_element(), *op.output);
  } else if (api.protocol->format == Format::json) {
    auto parsed = parse_json_object(response.body, "the answer");
    if (!parsed.ok()) return parsed.error();
    result = std::move(parsed.value());
  }
  read_header_members(*op.output, response.headers, result);
  fill_lists(*op.output, result);
  return checked_answer(op, std::move(result));
}

namespace {

// The field problems an error answer lists ("fields": [{ "path", "problem" }] in
// JSON, <Fields><Field><Path/><Problem/></Field></Fields> in XML): the emulator sends
// them with a request its validation refused, and they become the error's fields.
void read_fields(const json& list, std::vector<FieldProblem>& out) {
  if (!list.is_array()) return;
  for (const json& f : list)
    if (f.is_object() && f.value("path", json()).is_string() && f.value("problem", json()).is_string())
      out.push_back({f["path"].get<std::string>(), f["problem"].get<std::string>()});
}

void read_fields(pugi::xml_node list, std::vector<FieldProblem>& out) {
  for (pugi::xml_node f : list.children("Field")) out.push_back({f.child_value("Path"), f.child_value("Problem")});
}

void write_fields(pugi::xml_node parent, const json& list) {
  pugi::xml_node node = parent.append_child("Fields");
  for (const json& f : list) {
    pugi::xml_node field = node.append_child("Field");
    field.append_child("Path").text().set(f.value("path", "").c_str());
    field.append_child("Problem").text().set(f.value("problem", "").c_str());
  }
}

// `text` with each byte that is not part of valid UTF-8 replaced by U+FFFD: an error
// answer quotes what arrived, and must stay well-formed text itself.
std::string valid_utf8(const std::string& text) {
  return json::parse(json(text).dump(-1, ' ', false, json::error_handler_t::replace)).get<std::string>();
}

// An error code as a JSON API gives it ("ns#Code", "Code:http://..." in the error-type
// header) put into `code`; an empty one leaves the code it has (HTTPnnn at least).
void take_code(std::string given, std::string& code) {
  size_t hash = given.rfind('#');
  if (hash != std::string::npos) given = given.substr(hash + 1);
  given = given.substr(0, given.find(':'));
  if (!given.empty()) code = given;
}

// The reason phrase of an error status ("Not Found"), "" for one not listed here.
std::string reason_phrase(long status) {
  static const std::map<long, const char*> phrases = {{400, "Bad Request"},
                                                      {401, "Unauthorized"},
                                                      {403, "Forbidden"},
                                                      {404, "Not Found"},
                                                      {405, "Method Not Allowed"},
                                                      {408, "Request Timeout"},
                                                      {409, "Conflict"},
                                                      {411, "Length Required"},
                                                      {412, "Precondition Failed"},
                                                      {413, "Payload Too Large"},
                                                      {416, "Range Not Satisfiable"},
                                                      {429, "Too Many Requests"},
                                                      {500, "Internal Server Error"},
                                                      {501, "Not Implemented"},
                                                      {502, "Bad Gateway"},
                                                      {503, "Service Unavailable"},
                                                      {504, "Gateway Timeout"}};
  auto it = phrases.find(status);
  return it == phrases.end() ? "" : it->second;
}

// Whether an answer is an HTML page: its Content-Type says so, or its body begins as one.
bool is_html(const HttpResponse& r) {
  if (to_lower(header_value(r.headers, "Content-Type")).find("text/html") != std::string::npos) return true;
  size_t start = r.body.find_first_not_of(" \t\r\n");
  if (start == std::string::npos) return false;
  std::string head = to_lower(std::string_view(r.body).substr(start, 14));
  return head.rfind("<!doctype html", 0) == 0 || head.rfind("<html", 0) == 0;
}

// At most `limit` bytes of `text`, "..." marking a cut; a character cut in two
// becomes U+FFFD.
std::string cut(const std::string& text, size_t limit) {
  return text.size() <= limit ? text : valid_utf8(text.substr(0, limit)) + "...";
}

// The text of an HTML page's <title>, else of its first heading, without tags and with
// white space collapsed, cut to a line's length; "" when the page has neither.
std::string html_summary(const std::string& body) {
  static const Pattern title = Pattern::builtin("(?is)<title[^>]*>(.*?)</title>", Pattern::Text::bytes);
  static const Pattern heading = Pattern::builtin("(?is)<h[1-6][^>]*>(.*?)</h[1-6]>", Pattern::Text::bytes);
  static const Pattern tag = Pattern::builtin("<[^>]*>", Pattern::Text::bytes);
  static const Pattern space = Pattern::builtin("\\s+", Pattern::Text::bytes);
  std::string page = body.substr(0, 64 * 1024);  // the title is near the top
  std::vector<std::string> found = title.find_all(page);
  if (found.empty() || found[0].find_first_not_of(" \t\r\n") == std::string::npos) found = heading.find_all(page);
  if (found.empty()) return "";
  std::string text = found[0];
  tag.replace_all(text, " ");
  space.replace_all(text, " ");
  size_t first = text.find_first_not_of(' '), last = text.find_last_not_of(' ');
  return first == std::string::npos ? "" : cut(text.substr(first, last - first + 1), 120);
}

// The error code the operation's model gives an answer of `status` naming none, or "".
std::string code_by_status(const Operation* op, long status) {
  if (!op) return "";
  auto it = op->errors_by_status.find(status);
  return it == op->errors_by_status.end() ? "" : it->second;
}

// The message of an answer that does not explain itself: its status, then an HTML
// page's title or the start of another body, and the request it answers.
std::string unexplained(const HttpResponse& r, const AnsweredRequest& request) {
  std::string phrase = reason_phrase(r.status);
  std::string status =
      phrase.empty() ? "HTTP " + std::to_string(r.status) : phrase + " (" + std::to_string(r.status) + ")";
  std::string to = request.method.empty() ? "" : " from " + request.host + " for " + request.method + " " + request.url;
  if (r.body.empty() && r.body_file.empty()) return status + ", no body" + (to.empty() ? "" : "," + to);
  if (!is_html(r)) return cut(r.body, 300);
  std::string title = html_summary(r.body);
  return status + ", an HTML page" + (title.empty() ? "" : " titled \"" + title + "\"") + to +
         ": not an answer of the API; check the endpoint and any proxy in between";
}

}  // namespace

Error parse_error(const Api& api, const HttpResponse& response, const AnsweredRequest& request) {
  Error e = make_error(ErrorKind::api, "HTTP" + std::to_string(response.status), "");
  e.status = response.status;
  e.request_id = request_id_of(response.headers);
  if (api.protocol->format == Format::xml) {
    pugi::xml_document doc;
    // Read with pugixml's defaults: a Code or Message of whitespace only says nothing,
    // and is dropped, so that the status names the error and the message explains it.
    if (doc.load_string(response.body.c_str()) && local_name(doc.document_element().name()) == "Error") {
      pugi::xml_node root = doc.document_element();
      if (*root.child_value("Code")) e.code = root.child_value("Code");
      e.message = root.child_value("Message");
      if (*root.child_value("RequestId")) e.request_id = root.child_value("RequestId");
      read_fields(root.child("Fields"), e.fields);
    }
  } else {
    bool too_deep = false;
    json doc = parse_json_text(response.body, too_deep);
    if (!too_deep && doc.is_object()) {
      for (const char* k : {"code", "Code", "__type"})
        if (doc.contains(k) && doc[k].is_string()) {
          take_code(doc[k].get<std::string>(), e.code);
          break;
        }
      for (const char* k : {"message", "Message"})
        if (doc.contains(k) && doc[k].is_string()) {
          e.message = doc[k].get<std::string>();
          break;
        }
      read_fields(doc.value("fields", json()), e.fields);
    }
  }
  for (const std::string& h : api.protocol->error_code_headers)
    if (has_header(response.headers, h)) take_code(header_value(response.headers, h), e.code);
  if (std::string meant = code_by_status(request.op, e.status);
      !meant.empty() && e.code == "HTTP" + std::to_string(e.status))
    e.code = meant;  // the answer named no code: the model says what its status means
  if (e.message.empty()) e.message = unexplained(response, request);
  return e;
}

namespace {

// Whether a request carries what selects operation `op`: the template's fixed query
// keys (?uploads; ?list-type=2 with that value), the required query members
// (UploadPart's partNumber and uploadId) and the required header members (CopyObject's
// copy source, in either dialect's name).
bool selects(const Operation& op, const std::map<std::string, std::string>& q, const Headers& headers) {
  for (const std::string& fixed : op.fixed_query) {
    size_t eq = fixed.find('=');
    auto it = q.find(fixed.substr(0, eq));
    if (it == q.end() || (eq != std::string::npos && it->second != fixed.substr(eq + 1))) return false;
  }
  for (const Member& m : op.input->members) {
    bool found = true;
    if (m.required && m.location == Location::query) found = q.count(m.wire_name) > 0;
    if (m.required && m.location == Location::header) found = header_in(headers, m.wire_name) != nullptr;
    if (!found) return false;
  }
  return true;
}

// How many things select `op`: of two operations a request fits, the one it carries
// more of is meant (UploadPart over PutObject, ListObjectsV2 over ListObjects).
size_t selection_size(const Operation& op) {
  size_t n = op.fixed_query.size();
  for (const Member& m : op.input->members)
    n += m.required && (m.location == Location::query || m.location == Location::header);
  return n;
}

// Whether `path` fits the template, the labels' raw text into `groups`. Where the
// protocol says so, a template ending in a one-segment label fits with a '/' after it.
bool path_fits(const Api& api, const std::string& path_template, const std::string& path,
               std::vector<std::string>& groups) {
  const PathPattern& pattern = path_pattern(path_template);
  if (pattern.pattern.full_match(path, &groups)) return true;
  bool one_segment_last =
      path_template.size() > 2 && path_template.back() == '}' && path_template[path_template.size() - 2] != '+';
  return api.protocol->trailing_slash && one_segment_last && path.size() > 1 && path.back() == '/' &&
         pattern.pattern.full_match(path.substr(0, path.size() - 1), &groups);
}

}  // namespace

const Operation* match_operation(const Api& api, const std::string& method, const std::string& path,
                                 const std::string& query, std::map<std::string, std::string>& labels,
                                 const Headers& headers) {
  std::map<std::string, std::string> q = query_map(query);
  const Operation* best = nullptr;
  for (const Operation* op : api.operations) {
    if (op->method != method || !selects(*op, q, headers)) continue;
    std::vector<std::string> groups;
    if (!path_fits(api, op->path, path, groups)) continue;
    if (best && selection_size(*best) >= selection_size(*op)) continue;  // the most specific wins
    best = op;
    const PathPattern& pattern = path_pattern(op->path);
    labels.clear();
    for (size_t i = 0; i < pattern.labels.size(); ++i) labels[pattern.labels[i]] = uri_decode(groups[i]);
  }
  return best;
}

std::string untaken_subresource(const Operation& op, const std::string& query) {
  for (size_t start = 0, end = 0; start < query.size(); start = end + 1) {
    end = std::min(query.find('&', start), query.size());
    std::string_view piece(query.data() + start, end - start);
    if (piece.empty() || piece.find('=') != std::string_view::npos) continue;
    std::string key = uri_decode(piece);
    bool taken = std::find(op.fixed_query.begin(), op.fixed_query.end(), key) != op.fixed_query.end();
    for (const Member& m : op.input->members) taken = taken || (m.location == Location::query && m.wire_name == key);
    if (!taken) return key;
  }
  return {};
}

Outcome<json> parse_request(const Api& api, const Operation& op, const std::map<std::string, std::string>& labels,
                            const std::string& query, const Headers& headers, const std::string& body) {
  json input = json::object();
  if (!op.payload.empty()) {
    input[op.payload] = body;
  } else if (api.protocol->format == Format::xml && !op.input_root.empty() && !(body.empty() && body_optional(op))) {
    pugi::xml_document doc;
    if (!doc.load_string(body.c_str(), kXmlParse) || local_name(doc.document_element().name()) != op.input_root)
      return make_error(ErrorKind::validation, "MalformedXML", "the body is not a " + op.input_root + " document");
    if (xml_too_deep(doc)) return make_error(ErrorKind::validation, "MalformedXML", too_deep_message("the body"));
    input = xml_read_structure(doc.document_element(), *op.input);
  } else if (api.protocol->format == Format::json && !body.empty()) {
    auto parsed = parse_json_object(body, "the request body");
    if (!parsed.ok()) return make_error(ErrorKind::validation, "SerializationException", parsed.error().message);
    input = std::move(parsed.value());
  }
  std::map<std::string, std::string> q = query_map(query);
  for (const Member& m : op.input->members) {
    if (m.location == Location::path && labels.count(m.wire_name)) input[m.name] = labels.at(m.wire_name);
    if (m.location == Location::query && q.count(m.wire_name)) input[m.name] = typed_scalar(*m.shape, q[m.wire_name]);
  }
  read_header_members(*op.input, headers, input);
  return input;
}

std::string serialize_result(const Api& api, const Operation& op, const json& result, Headers& headers) {
  write_header_members(*op.output, result, headers);
  if (!op.output_payload.empty()) return result.value(op.output_payload, "");
  if (api.protocol->format == Format::xml)
    return op.output_root.empty() ? "" : xml_document(op.output_root, api.xml_namespace, *op.output, result);
  return body_members_text(*op.output, result);
}

std::string serialize_error(const Api& api, const std::string& code, const std::string& message,
                            const std::string& request_id, const json& details) {
  if (api.protocol->format == Format::json) {
    json body = {{"code", code}, {"message", message}, {"requestId", request_id}};
    for (auto it = details.begin(); it != details.end(); ++it) body[it.key()] = it.value();
    return body.dump(-1, ' ', false, json::error_handler_t::replace);
  }
  pugi::xml_document doc;
  pugi::xml_node root = doc.append_child("Error");
  root.append_child("Code").text().set(code.c_str());
  root.append_child("Message").text().set(message.c_str());
  for (auto it = details.begin(); it != details.end(); ++it) {
    if (it.key() == "fields") write_fields(root, it.value());
    else root.append_child(it.key().c_str()).text().set(scalar_text(it.value()).c_str());
  }
  root.append_child("RequestId").text().set(request_id.c_str());
  return valid_utf8(xml_text(doc));
}

}  // namespace cloud
