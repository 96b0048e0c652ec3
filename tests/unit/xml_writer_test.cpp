// The XML bodies are written straight into a string (core/model/protocol.cpp), where they
// were built as a pugixml document and saved. These compare the two, byte for byte:
// the reference below is the writer that was replaced, fed the same values, with
// every byte value in element text and in an attribute, empty values and lists, a
// namespace prefix and its attribute, and a 10,000-part completion.
#include <catch2/catch.hpp>
#include <pugixml.hpp>

#include <sstream>
#include <string>

#include "core/model/protocol.h"

using namespace cloud;

namespace {

const Operation& op(const std::string& name) { return *Model::builtin().find(name); }
const Api& api_of(const std::string& name) { return *Model::builtin().api(op(name).api); }

// The replaced writer: a pugixml document, saved raw, a carriage return in text as &#13;.
std::string scalar(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
  return v.dump();
}
void ref_write(pugi::xml_node parent, const Shape& shape, const std::string& name, const json& v);
void ref_members(pugi::xml_node node, const Shape& shape, const json& v) {
  if (!shape.xml_namespace_prefix.empty())
    node.append_attribute(("xmlns:" + shape.xml_namespace_prefix).c_str()) = shape.xml_namespace_uri.c_str();
  for (const Member& m : shape.members) {
    if (m.location != Location::body || !v.contains(m.name) || v[m.name].is_null()) continue;
    if (m.xml_attribute) node.append_attribute(m.wire_name.c_str()) = scalar(v[m.name]).c_str();
    else ref_write(node, *m.shape, m.wire_name, v[m.name]);
  }
}
void ref_write(pugi::xml_node parent, const Shape& shape, const std::string& name, const json& v) {
  if (shape.type == ShapeType::list) {
    pugi::xml_node holder = shape.flattened ? parent : parent.append_child(name.c_str());
    const std::string item = shape.flattened ? name : shape.member_name.empty() ? "member" : shape.member_name;
    for (const json& e : v) ref_write(holder, *shape.member, item, e);
    return;
  }
  pugi::xml_node node = parent.append_child(name.c_str());
  if (shape.type == ShapeType::structure) return ref_members(node, shape, v);
  node.text().set(scalar(v).c_str());
}
std::string reference(const Operation& o, const std::string& ns, const json& v) {
  pugi::xml_document doc;
  pugi::xml_node decl = doc.append_child(pugi::node_declaration);
  decl.append_attribute("version") = "1.0";
  decl.append_attribute("encoding") = "UTF-8";
  pugi::xml_node node = doc.append_child(o.input_root.c_str());
  if (!ns.empty()) node.append_attribute("xmlns") = ns.c_str();
  ref_members(node, *o.input, v);
  std::ostringstream out;
  doc.save(out, "", pugi::format_raw);
  std::string text;
  for (char c : out.str()) text += c == '\r' ? std::string("&#13;") : std::string(1, c);
  return text;
}

// The body serialize_request writes for `input` (unvalidated: any byte may be tried).
std::string written(const std::string& name, const json& input) {
  return serialize_request(api_of(name), op(name), input).body;
}

}  // namespace

TEST_CASE("XML bodies: every byte in element text and in an attribute is written as pugixml wrote it", "[protocol]") {
  const std::string name = "PutObjectAcl";
  const std::string ns = api_of(name).xml_namespace;
  for (int b = 0; b < 256; ++b) {
    std::string text = std::string("a") + static_cast<char>(b) + "z";
    json grantee = {{"Type", text}, {"ID", text}, {"DisplayName", ""}};
    json input = {{"Bucket", "b"},
                  {"Object", "k"},
                  {"Owner", {{"ID", text}}},
                  {"AccessControlList", json::array({{{"Grantee", grantee}, {"Permission", text}}})}};
    INFO("byte " << b);
    CHECK(written(name, input) == reference(op(name), ns, input));
  }
}

TEST_CASE("XML bodies: empty lists, empty structures and empty text are written as pugixml wrote them", "[protocol]") {
  const std::string name = "PutObjectAcl";
  const std::string ns = api_of(name).xml_namespace;
  for (const json& input :
       {json{{"Bucket", "b"}, {"Object", "k"}, {"AccessControlList", json::array()}},
        json{{"Bucket", "b"}, {"Object", "k"}, {"Owner", json::object()}},
        json{{"Bucket", "b"}, {"Object", "k"}, {"Owner", {{"ID", ""}, {"DisplayName", nullptr}}}}}) {
    INFO(input.dump());
    CHECK(written(name, input) == reference(op(name), ns, input));
  }
}

TEST_CASE("XML bodies: a 10,000-part completion is written as pugixml wrote it", "[protocol]") {
  const std::string name = "CompleteMultipartUpload";
  json parts = json::array();
  for (int n = 1; n <= 10000; ++n)
    parts.push_back({{"PartNumber", n}, {"ETag", "\"" + std::to_string(n * 7919) + "\""}});
  json input = {{"Bucket", "b"}, {"Object", "k"}, {"uploadId", "u"}, {"Part", parts}};
  CHECK(written(name, input) == reference(op(name), api_of(name).xml_namespace, input));
}
