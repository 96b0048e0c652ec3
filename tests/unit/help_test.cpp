// core/model/help on a small model written here: each kind of limit in words, conditions,
// defaults, nested fields under list elements, and the text laid out within a width.
#include <catch2/catch.hpp>

#include <sstream>

#include "core/model/help.h"

using namespace cloud;

namespace {

const char* const kModel = R"({
  "api": "shop", "protocol": "json", "service": "shop", "doc": "A shop.",
  "signing": { "normalize_path": true, "double_encode": true, "payload_hash": "omitted", "wrong_scope": "SignatureDoesNotMatch" },
  "operations": {
    "PutThing": {
      "method": "PUT", "path": "/v1/things/{ThingName}?select", "idempotent": false, "doc": "Stores a thing.",
      "input": {
        "ThingName": { "in": "path", "type": "string", "minLength": 1, "required": true, "doc": "Name." },
        "token": { "in": "header", "name": "x-token", "type": "string", "minLength": 8, "maxLength": 8 },
        "size": { "type": "integer", "min": 1, "max": 10, "default": 5, "doc": "How big." },
        "zone": { "type": "string", "enum": ["a", "b"], "defaultText": "depends on the region" },
        "parts": { "type": "list", "maxLength": 3, "member": { "type": "structure", "members": {
          "kind": { "type": "string", "enum": ["TCP", "ICMP"] },
          "port": { "type": "integer", "requiredWhen": { "kind": "TCP" }, "absentWhen": { "kind": "ICMP" } }
        } } },
        "cidrs": { "type": "list", "member": { "type": "string", "format": "cidr" } }
      },
      "output": { "thing": { "type": "structure", "members": { "at": { "type": "timestamp" } } } }
    }
  }
})";

const Model& shop() {
  static std::shared_ptr<Model> model = [] {
    auto loaded = Model::load({{"shop.json", kModel}});
    REQUIRE(loaded.ok());
    return loaded.value();
  }();
  return *model;
}

const FieldHelp& field(const std::vector<FieldHelp>& fields, const std::string& path) {
  for (const FieldHelp& f : fields)
    if (f.path == path) return f;
  FAIL("no field " << path);
  throw;
}

}  // namespace

TEST_CASE("describe_operation states each limit in words") {
  OperationHelp help = describe_operation(*shop().find("PutThing"));
  const FieldHelp& name = field(help.parameters, "ThingName");
  CHECK(name.location == "path");
  CHECK(name.required);
  CHECK(name.rules == std::vector<std::string>{"at least 1 character"});
  const FieldHelp& token = field(help.parameters, "token");
  CHECK(token.wire_name == "x-token");
  CHECK(token.rules == std::vector<std::string>{"exactly 8 characters"});
  const FieldHelp& size = field(help.parameters, "size");
  CHECK(size.rules == std::vector<std::string>{"1 to 10"});
  CHECK(size.default_value == json(5));
  const FieldHelp& zone = field(help.parameters, "zone");
  CHECK(zone.allowed == std::vector<json>{"a", "b"});
  CHECK(zone.default_text == "depends on the region");
  CHECK(field(help.parameters, "parts").type == "list of tables");
  CHECK(field(help.parameters, "parts").rules == std::vector<std::string>{"at most 3 items"});
  CHECK(field(help.parameters, "cidrs").rules ==
        std::vector<std::string>{"each an IPv4 CIDR block such as 192.168.0.10/24"});
  CHECK(field(help.results, "thing.at").type == "time (ISO 8601 string)");
}

TEST_CASE("describe_operation flattens list elements and keeps conditions") {
  OperationHelp help = describe_operation(*shop().find("PutThing"));
  const FieldHelp& port = field(help.parameters, "parts[].port");
  CHECK(port.depth == 1);
  CHECK(port.rules == std::vector<std::string>{"required when kind is TCP", "left out when kind is ICMP"});
  CHECK(field(help.parameters, "parts[].kind").allowed.size() == 2);
}

TEST_CASE("format_operation_help lays the help out within the width") {
  std::string text = format_operation_help(describe_operation(*shop().find("PutThing")), "shop.put_thing", 60);
  CHECK(text.find("shop.put_thing{...}  (PutThing, shop API)\n") == 0);
  CHECK(text.find("  PUT /v1/things/{ThingName}?select\n") != std::string::npos);
  CHECK(text.find("Not idempotent") != std::string::npos);
  CHECK(text.find("  size: integer, 1 to 10, default 5\n      How big.\n") != std::string::npos);
  CHECK(text.find("  token: string, header x-token, exactly 8 characters\n") != std::string::npos);
  CHECK(text.find("    port: integer, required when kind is TCP, left out when\n        kind is ICMP\n") !=
        std::string::npos);
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) CHECK(line.size() <= 60);
}

TEST_CASE("format_model_help lists every operation under its API") {
  std::string text = format_model_help(shop(), "x.");
  CHECK(text == "shop: A shop.\n  x.shop.put_thing (PutThing)\n      Stores a thing.\n");
}
