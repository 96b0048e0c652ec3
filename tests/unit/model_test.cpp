// Model tests: the built-in model loads with every operation, and validation walks
// every limit of the spec (Limits table and Endpoints tables): the largest valid value
// passes, one past it fails with the field path and a message naming the rule. Each case
// starts from valid arguments for its operation and changes one field (a JSON pointer).
#include <catch2/catch.hpp>

#include <algorithm>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "core/base/embedded.h"
#include "core/base/suggest.h"
#include "core/model/model.h"
#include "core/model/validate.h"
#include "validation_helpers.h"

using namespace cloud;
using namespace validation_helpers;

namespace {

// A JSON API's "signing", as the model files spell it.
const std::string kSigning =
    R"("signing":{"normalize_path":true,"double_encode":true,"payload_hash":"omitted","wrong_scope":"SignatureDoesNotMatch"})";

// A one-operation model file whose "signing" is `signing` (a JSON text), loaded.
Outcome<std::shared_ptr<Model>> with_signing(const std::string& signing) {
  return Model::load({{"s.json", R"({"api":"x","signing":)" + signing + R"(,"operations":{"A":{}}})"}});
}

}  // namespace

// ---------------------------------------------------------------- the model itself

TEST_CASE("the build-time index agrees with the model files it was read from", "[model]") {
  // A model read at once, from the same texts, beside the built-in one read per API.
  std::vector<std::pair<std::string, std::string>> files;
  for (const EmbeddedFile* f = model_files; f->name; ++f) files.emplace_back(f->name, f->text);
  auto loaded = Model::load(files);
  REQUIRE(loaded.ok());
  const Model& whole = *loaded.value();
  const Model& lazy = Model::builtin();
  CHECK(lazy.api_names() == whole.api_names());
  for (const Api& api : whole.apis()) {
    std::vector<std::string> names;
    for (const Operation* op : api.operations) {
      names.push_back(op->name);
      CHECK(lazy.api_of(op->name) == api.name);
      CHECK(lazy.api_of(op->snake_name) == api.name);
    }
    std::vector<std::string> indexed = lazy.operation_names(api.name);
    std::sort(names.begin(), names.end());
    std::sort(indexed.begin(), indexed.end());
    CHECK(indexed == names);
    CHECK(lazy.default_service(api.name) == api.service);
    CHECK(lazy.has_api(api.name));
  }
  CHECK(lazy.api_of("NoSuchOperation").empty());
  CHECK_FALSE(lazy.has_api("nosuch"));
  CHECK(lazy.default_service("nosuch").empty());
  REQUIRE(lazy.operations().size() == whole.operations().size());
  for (size_t i = 0; i < whole.operations().size(); ++i)
    CHECK(lazy.operations()[i]->name == whole.operations()[i]->name);
}

TEST_CASE("an API's file read on first use is read once, whichever thread asks first", "[model]") {
  const Model& model = Model::builtin();
  std::vector<const Operation*> seen(4);
  std::vector<std::thread> threads;
  for (size_t i = 0; i < seen.size(); ++i)
    threads.emplace_back([&seen, &model, i] { seen[i] = model.find("upgrade_meshplatform_service_mesh_version"); });
  for (std::thread& t : threads) t.join();
  REQUIRE(seen[0]);
  for (const Operation* op : seen) CHECK(op == seen[0]);
  CHECK(model.api("catalog")->operations.size() == model.operation_names("catalog").size());
}

TEST_CASE("the built-in model loads with every operation and the four storage helpers", "[model]") {
  const Model& model = Model::builtin();
  struct Expected {
    const char* name;
    const char* snake;
    const char* api;
  };
  const Expected expected[] = {
      {"CompleteMultipartUpload", "complete_multipart_upload", "storage"},
      {"CreateMultipartUpload", "create_multipart_upload", "storage"},
      {"UploadPart", "upload_part", "storage"},
      {"AbortMultipartUpload", "abort_multipart_upload", "storage"},
      {"ListParts", "list_parts", "storage"},
      {"AuthorizeFirewallRules", "authorize_firewall_rules", "devops"},
      {"RestoreInstance", "restore_instance", "devops"},
      {"RestoreClusterFromSnapshot", "restore_cluster_from_snapshot", "cluster"},
      {"UpdateSnapshot", "update_snapshot", "cluster"},
      {"UpgradeMeshplatformServiceMeshVersion", "upgrade_meshplatform_service_mesh_version", "catalog"},
      {"CreateBucket", "create_bucket", "storage"},
      {"PutObject", "put_object", "storage"},
      {"GetObject", "get_object", "storage"},
      {"HeadObject", "head_object", "storage"},
      {"GetInstance", "get_instance", "devops"},
      {"GetFirewallGroup", "get_firewall_group", "devops"},
      {"GetCluster", "get_cluster", "cluster"},
      {"GetSnapshot", "get_snapshot", "cluster"},
      {"GetMeshplatformCluster", "get_meshplatform_cluster", "catalog"},
      {"ListBuckets", "list_buckets", "storage"},
      {"HeadBucket", "head_bucket", "storage"},
      {"GetBucketLocation", "get_bucket_location", "storage"},
      {"DeleteBucket", "delete_bucket", "storage"},
      {"ListObjectsV2", "list_objects_v2", "storage"},
      {"ListObjects", "list_objects", "storage"},
      {"DeleteObject", "delete_object", "storage"},
      {"DeleteObjects", "delete_objects", "storage"},
      {"ListMultipartUploads", "list_multipart_uploads", "storage"},
      {"CopyObject", "copy_object", "storage"},
      {"UploadPartCopy", "upload_part_copy", "storage"},
      {"GetObjectAcl", "get_object_acl", "storage"},
      {"PutObjectAcl", "put_object_acl", "storage"},
      {"GetBucketAcl", "get_bucket_acl", "storage"},
      {"PutBucketAcl", "put_bucket_acl", "storage"},
  };
  CHECK(model.operations().size() == std::size(expected));
  for (const Expected& e : expected) {
    INFO(e.name);
    const Operation* o = model.find(e.name);
    REQUIRE(o != nullptr);
    CHECK(o->snake_name == e.snake);
    CHECK(o->api == e.api);
    CHECK(model.find(e.snake) == o);
    CHECK_FALSE(o->doc.empty());
    const Api* api = model.api(e.api);
    REQUIRE(api != nullptr);
    CHECK(std::find(api->operations.begin(), api->operations.end(), o) != api->operations.end());
  }
}

TEST_CASE("the four APIs carry protocol, signing service and namespace", "[model]") {
  const Model& model = Model::builtin();
  REQUIRE(model.apis().size() == 4);
  CHECK(model.api("storage")->protocol->name == "xml");
  CHECK(model.api("storage")->service == "s3");
  CHECK(model.api("storage")->xml_namespace == "http://s3.amazonaws.com/doc/2006-03-01/");
  for (const char* name : {"devops", "cluster", "catalog"}) {
    INFO(name);
    REQUIRE(model.api(name) != nullptr);
    CHECK(model.api(name)->protocol->name == "json");
    CHECK(model.api(name)->service == name);
    CHECK(model.api(name)->xml_namespace.empty());
  }
}

TEST_CASE("each API's protocol is resolved once into its descriptor, and its signing read from its file", "[model]") {
  const Model& model = Model::builtin();
  const Api& storage = *model.api("storage");
  CHECK(storage.protocol == Protocol::find("xml"));
  CHECK(storage.protocol->format == Format::xml);
  CHECK(storage.protocol->content_type == "application/xml");
  CHECK(storage.protocol->error_in_200);
  CHECK_FALSE(storage.signing.normalize_path);
  CHECK_FALSE(storage.signing.double_encode);
  CHECK(storage.signing.payload_hash == PayloadHash::header);
  CHECK(storage.signing.wrong_scope == WrongScope::malformed);
  for (const char* name : {"devops", "cluster", "catalog"}) {
    const Api& api = *model.api(name);
    INFO(name);
    CHECK(api.protocol == Protocol::find("json"));
    CHECK_FALSE(api.protocol->error_in_200);
    CHECK(api.signing.normalize_path);
    CHECK(api.signing.double_encode);
    CHECK(api.signing.payload_hash == PayloadHash::omitted);
    CHECK(api.signing.wrong_scope == WrongScope::mismatch);
  }
}

TEST_CASE("signing: every key given, none unknown, each with a value it may take", "[model]") {
  CHECK(with_signing(kSigning.substr(kSigning.find('{'))).ok());
  auto fails = [](const std::string& signing, const std::string& message) {
    auto loaded = with_signing(signing);
    INFO(signing);
    REQUIRE_FALSE(loaded.ok());
    CHECK(loaded.error().code == "ModelError");
    CHECK_THAT(loaded.error().message, Catch::Contains("s.json: ") && Catch::Contains(message));
  };
  const std::string rest = R"("payload_hash":"omitted","wrong_scope":"SignatureDoesNotMatch")";
  fails(R"({"normalize_path":true,"double_encode":true,)" + rest + R"(,"sign_body":true})",
        "signing.sign_body: unknown key; known: double_encode, normalize_path, payload_hash or wrong_scope");
  fails(R"({"normalize_path":"yes","double_encode":true,)" + rest + "}",
        R"(signing.normalize_path: must be true or false (got "yes"))");
  fails(R"({"normalize_path":true,"double_encode":true,"payload_hash":"body","wrong_scope":"SignatureDoesNotMatch"})",
        R"(signing.payload_hash: must be header or omitted (got "body"))");
  fails(R"({"normalize_path":true,"double_encode":true,"payload_hash":"header","wrong_scope":403})",
        "signing.wrong_scope: must be SignatureDoesNotMatch or AuthorizationHeaderMalformed (got 403)");
  fails(R"({"normalize_path":true,)" + rest + "}", "signing.double_encode: missing");
  fails("null", "signing: missing: an object with");
  auto soap = Model::load({{"s.json", R"({"api":"x","protocol":"soap",)" + kSigning + "}"}});
  REQUIRE_FALSE(soap.ok());
  CHECK_THAT(soap.error().message, Catch::Contains(R"(protocol: must be json or xml (got "soap"))"));
}

namespace {

// The keys repeated inside one object of the JSON `text`: a parser keeps the last of
// them, so a model file that repeats one (two "input"s, two operations of one name)
// would lose the first without a word.
std::vector<std::string> repeated_keys(const std::string& text) {
  using Event = nlohmann::json::parse_event_t;
  std::vector<std::set<std::string>> open;
  std::vector<std::string> repeated;
  nlohmann::json doc = nlohmann::json::parse(text, [&](int, Event event, nlohmann::json& value) {
    if (event == Event::object_start) open.emplace_back();
    if (event == Event::object_end) open.pop_back();
    if (event == Event::key && !open.back().insert(value.get<std::string>()).second)
      repeated.push_back(value.get<std::string>());
    return true;
  });
  CHECK(doc.is_object());
  return repeated;
}

}  // namespace

TEST_CASE("no model file repeats a key within an object", "[model]") {
  CHECK(repeated_keys(R"({"a":1,"b":{"c":1,"d":{"c":3},"c":2}})") == std::vector<std::string>{"c"});
  for (const EmbeddedFile* f = model_files; f->name; ++f) {
    INFO(f->name);
    CHECK(repeated_keys(f->text).empty());
  }
}

TEST_CASE("each model file loads on its own, and a broken one is named", "[model]") {
  int files = 0;
  for (const EmbeddedFile* f = model_files; f->name; ++f, ++files) {
    INFO(f->name);
    auto loaded = Model::load({{f->name, f->text}});
    CHECK(loaded.ok());
  }
  CHECK(files == 4);
  auto broken = Model::load({{"broken.json", R"({"api":"x","operations":{"A":{"input":{"a":{"shape":"Nope"}}}}})"}});
  REQUIRE_FALSE(broken.ok());
  CHECK(broken.error().kind == ErrorKind::config);
  CHECK_THAT(broken.error().message, Catch::Contains("broken.json") && Catch::Contains("unknown shape 'Nope'"));
}

TEST_CASE("XML attributes: a scalar body member, its structure declaring the namespace of its prefix", "[model]") {
  const Shape& grantee =
      *op("GetObjectAcl").output->find_member("AccessControlList")->shape->member->find_member("Grantee")->shape;
  CHECK(grantee.xml_namespace_prefix == "xsi");
  CHECK(grantee.xml_namespace_uri == "http://www.w3.org/2001/XMLSchema-instance");
  const Member* type = grantee.find_member("Type");
  REQUIRE(type != nullptr);
  CHECK(type->xml_attribute);
  CHECK(type->wire_name == "xsi:type");
  CHECK_FALSE(grantee.find_member("ID")->xml_attribute);

  auto load = [](const std::string& shape) {
    return Model::load(
        {{"a.json", R"({"api":"x",)" + kSigning + R"(,"operations":{"A":{"output":{"g":)" + shape + "}}}}"}});
  };
  CHECK(
      load(
          R"({"type":"structure","xmlNamespace":{"prefix":"p","uri":"u"},"members":{"t":{"type":"string","xmlAttribute":true}}})")
          .ok());
  auto on_structure = load(R"({"type":"structure","members":{"t":{"type":"structure","xmlAttribute":true}}})");
  REQUIRE_FALSE(on_structure.ok());
  CHECK_THAT(on_structure.error().message, Catch::Contains("g.t.xmlAttribute: only a body member of a scalar shape"));
  auto in_header = load(R"({"type":"structure","members":{"t":{"in":"header","type":"string","xmlAttribute":true}}})");
  REQUIRE_FALSE(in_header.ok());
  CHECK_THAT(in_header.error().message, Catch::Contains("g.t.xmlAttribute: only a body member of a scalar shape"));
  auto no_uri = load(R"({"type":"structure","xmlNamespace":{"prefix":"p"},"members":{}})");
  REQUIRE_FALSE(no_uri.ok());
  CHECK_THAT(no_uri.error().message, Catch::Contains("g.xmlNamespace: must be { prefix, uri }"));
  auto on_string = load(R"({"type":"string","xmlNamespace":{"prefix":"p","uri":"u"}})");
  REQUIRE_FALSE(on_string.ok());
  CHECK_THAT(on_string.error().message, Catch::Contains("g.xmlNamespace: must be { prefix, uri }"));
}

TEST_CASE("storage operations: paths, roots, payload and header members", "[model]") {
  const Operation& complete = op("CompleteMultipartUpload");
  CHECK(complete.method == "POST");
  CHECK(complete.path == "/{Bucket}/{Object+}");
  CHECK(complete.fixed_query.empty());
  CHECK(complete.input_root == "CompleteMultipartUpload");
  CHECK(complete.output_root == "CompleteMultipartUploadResult");
  CHECK(complete.idempotent);
  CHECK(input_member("CompleteMultipartUpload", "Object").greedy);
  CHECK_FALSE(input_member("CompleteMultipartUpload", "Bucket").greedy);
  CHECK(input_member("CompleteMultipartUpload", "uploadId").location == Location::query);
  const Shape& parts = *input_member("CompleteMultipartUpload", "Part").shape;
  CHECK(parts.type == ShapeType::list);
  CHECK(parts.flattened);
  CHECK(parts.min_length == 1);

  // Body members in the spec's order, then the response headers that describe the object.
  std::vector<std::string> names;
  for (const Member& m : complete.output->members) names.push_back(m.name);
  CHECK(names == std::vector<std::string>{"Location", "Bucket", "Key", "ETag", "ChecksumCRC32", "ChecksumCRC32C",
                                          "ChecksumCRC64NVME", "ChecksumSHA1", "ChecksumSHA256", "Expiration",
                                          "ServerSideEncryption", "SSEKMSKeyId", "SSECustomerAlgorithm", "VersionId"});
  // A completed part: its ETag and number, and the checksums current SDKs send beside them.
  std::vector<std::string> part_members;
  for (const Member& m : parts.member->members) part_members.push_back(m.name);
  CHECK(part_members == std::vector<std::string>{"ETag", "PartNumber", "ChecksumCRC32", "ChecksumCRC32C",
                                                 "ChecksumCRC64NVME", "ChecksumSHA1", "ChecksumSHA256"});
  const Member* version = complete.output->find_member("VersionId");
  CHECK(version->location == Location::header);
  CHECK(version->wire_name == "x-ext-version-id");
  CHECK(complete.output->find_member("SSEKMSKeyId")->wire_name == "x-ext-server-side-encryption-aws-kms-key-id");

  const Operation& create = op("CreateMultipartUpload");
  CHECK(create.method == "POST");
  CHECK(create.path == "/{Bucket}/{Object+}");
  CHECK(create.fixed_query == std::vector<std::string>{"uploads"});
  CHECK(create.output_root == "InitiateMultipartUploadResult");
  CHECK(create.output->find_member("UploadId") != nullptr);

  const Operation& upload = op("UploadPart");
  CHECK(upload.method == "PUT");
  CHECK(upload.payload == "body");
  CHECK(input_member("UploadPart", "body").shape->type == ShapeType::blob);
  CHECK(input_member("UploadPart", "partNumber").shape->type == ShapeType::integer);
  CHECK(upload.output->find_member("ETag")->location == Location::header);
  CHECK(upload.output->find_member("ETag")->wire_name == "ETag");

  const Operation& abort = op("AbortMultipartUpload");
  CHECK(abort.method == "DELETE");
  CHECK(abort.output->members.empty());
}

TEST_CASE("JSON operations: methods, paths, idempotence, defaults", "[model]") {
  CHECK(op("AuthorizeFirewallRules").path == "/v1/firewallGroups/{FirewallGroupName}/rules");
  CHECK(op("RestoreInstance").path == "/v1/instances:restore");
  CHECK(op("RestoreClusterFromSnapshot").path == "/v1/snapshots/{SnapshotName}:restore");
  CHECK(op("UpdateSnapshot").method == "PUT");
  CHECK(
      op("UpgradeMeshplatformServiceMeshVersion").path ==
      "/v1/resource-groups/{ResourceGroupName}/meshplatform/clusters/{ClusterName}/meshplatform-service-mesh:upgrade");
  // The restores must never be resent once they may have reached the server.
  CHECK_FALSE(op("RestoreInstance").idempotent);
  CHECK_FALSE(op("RestoreClusterFromSnapshot").idempotent);
  CHECK(op("UpdateSnapshot").idempotent);

  CHECK(input_member("RestoreInstance", "instanceType").default_value == json("e-large"));
  const std::string& zone_default = input_member("RestoreInstance", "availabilityZone").default_text;
  for (const char* pair : {"jp-east-1 east-11", "jp-east-3 east-31", "jp-west-1 west-12", "jp-west-2 jp-west-21"})
    CHECK_THAT(zone_default, Catch::Contains(pair));
  const Shape& cluster = *input_member("RestoreClusterFromSnapshot", "cluster").shape;
  CHECK(cluster.find_member("networkConfig")->shape->find_member("networkId")->default_value ==
        json("net-COMMON_PRIVATE"));
  CHECK(input_member("UpdateSnapshot", "snapshot").shape->find_member("expirationTime")->shape->type ==
        ShapeType::timestamp);
}

TEST_CASE("every path parameter is required and every operation input is documented", "[model]") {
  for (const Operation* o : Model::builtin().operations()) {
    for (const Member& m : o->input->members) {
      INFO(o->name << "." << m.name);
      if (m.location == Location::path) CHECK(m.required);
      CHECK_FALSE(m.doc.empty());
    }
  }
}

TEST_CASE("output value sets of the spec are in the model", "[model]") {
  const Shape& group = *op("AuthorizeFirewallRules").output;
  CHECK(group.find_member("state")->shape->allowed == std::vector<json>{"APPLIED", "PROCESSING", "FAILED"});
  const Shape& rule = *group.find_member("rules")->shape->member;
  CHECK(rule.find_member("state")->shape->allowed.size() == 5);

  const Shape& server = *op("RestoreInstance").output->find_member("instance")->shape;
  const auto& states = server.find_member("state")->shape->allowed;
  CHECK(std::find(states.begin(), states.end(), json("DELETEING")) != states.end());
  CHECK(std::find(states.begin(), states.end(), json("RESTORING")) != states.end());
  const Shape& status = *server.find_member("status")->shape;
  CHECK(status.find_member("code")->shape->allowed == std::vector<json>{100, 200, 300, 400});
  CHECK(status.find_member("name")->shape->allowed.size() == 24);
  CHECK(server.find_member("upgradableCodehostVersions")->shape->type == ShapeType::list);

  // The mesh node group's volumeSize is output-only: its limit (100) is data, not validation.
  const Shape& mesh = *op("UpgradeMeshplatformServiceMeshVersion").output;
  CHECK(mesh.find_member("status")->shape->allowed.size() == 6);
  const Shape& node_group = *mesh.find_member("controlPlane")->shape;
  CHECK(node_group.find_member("volumeSize")->shape->allowed == std::vector<json>{100});
  CHECK(node_group.find_member("instanceType")->shape->allowed.size() == 22);
  CHECK(node_group.find_member("volumeType")->shape->allowed.size() == 4);
  CHECK(mesh.find_member("nodePools")->shape->member == &node_group);
  CHECK(mesh.find_member("controlPlaneLoadBalancer")->shape->find_member("type")->shape->allowed ==
        std::vector<json>{"elastic-load-balancer"});
}

// ---------------------------------------------------------------- CompleteMultipartUpload and friends

TEST_CASE("CompleteMultipartUpload: parts, part numbers 1..10000, required fields", "[validate]") {
  const char* op = "CompleteMultipartUpload";
  passes(op, complete_args());
  passes(op, with(complete_args(), "/Part/1/PartNumber", 10000));
  passes(op, with(complete_args(), "/Part", R"([{ "ETag": "x", "PartNumber": 1 }])"_json));
  fails(op, with(complete_args(), "/Part/0/PartNumber", 0), "Part[1].PartNumber", "at least 1 (got 0)");
  fails(op, with(complete_args(), "/Part/1/PartNumber", 10001), "Part[2].PartNumber", "at most 10000 (got 10001)");
  fails(op, with(complete_args(), "/Part/0/PartNumber", "1"), "Part[1].PartNumber", "integer expected, got string");
  fails(op, without(complete_args(), "/Part/1/ETag"), "Part[2].ETag", "required");
  fails(op, without(complete_args(), "/Part/0/PartNumber"), "Part[1].PartNumber", "required");
  fails(op, with(complete_args(), "/Part", json::array()), "Part", "at least 1 item (got 0)");
  fails(op, without(complete_args(), "/Part"), "Part", "required");
  fails(op, without(complete_args(), "/uploadId"), "uploadId", "required");
  fails(op, without(complete_args(), "/Bucket"), "Bucket", "required");
  fails(op, without(complete_args(), "/Object"), "Object", "required");
  fails(op, with(complete_args(), "/Object", ""), "Object", "at least 1 character (got 0)");
}

TEST_CASE("CompleteMultipartUpload: parts in ascending PartNumber order, none repeated", "[validate]") {
  const char* op = "CompleteMultipartUpload";
  json parts = json::array();
  for (int n : {1, 2, 5, 9, 10000}) parts.push_back({{"ETag", "\"e\""}, {"PartNumber", n}});  // gaps are allowed
  passes(op, with(complete_args(), "/Part", parts));
  fails(op, with(with(complete_args(), "/Part/0/PartNumber", 2), "/Part/1/PartNumber", 1), "Part[2].PartNumber",
        "must be greater than the previous part's (2)");
  fails(op, with(complete_args(), "/Part/1/PartNumber", 1), "Part[2].PartNumber",
        "must be greater than the previous part's (1)");
  fails(op, with(complete_args(), "/Part", with(parts, "/3/PartNumber", 5)), "Part[4].PartNumber",
        "must be greater than the previous part's (5)");

  // Each item out of place is named, compared with the one listed just before it.
  json shuffled = R"({ "Bucket": "bkt", "Object": "o", "uploadId": "u", "Part": [
      { "ETag": "a", "PartNumber": 3 }, { "ETag": "b", "PartNumber": 1 }, { "ETag": "c", "PartNumber": 2 },
      { "ETag": "d", "PartNumber": 2 } ] })"_json;
  Outcome<json> r = validate_input(validation_helpers::op(op), shuffled);
  REQUIRE_FALSE(r.ok());
  INFO(r.error().describe());
  CHECK(r.error().fields.size() == 2);
  CHECK(reports(r.error(), "Part[2].PartNumber", "must be greater than the previous part's (3)"));
  CHECK(reports(r.error(), "Part[4].PartNumber", "must be greater than the previous part's (2)"));

  // A part whose number is missing or mistyped is reported once, for what it is.
  fails(op, with(complete_args(), "/Part/1/PartNumber", "1"), "Part[2].PartNumber", "integer expected, got string");

  // The emulator leaves the order to its handler, which answers InvalidPartOrder as S3 does.
  CHECK(validate_input(validation_helpers::op(op), shuffled, Checker::server).ok());
}

TEST_CASE("ascendingBy must name an integer member of the list's items", "[model]") {
  auto bad = Model::load({{"bad.json", R"({"api":"x","operations":{"A":{"input":{
      "L": { "type": "list", "ascendingBy": "N", "member": { "shape": "Item" } } }}},
      "shapes": { "Item": { "type": "structure", "members": { "N": { "type": "string" } } } }})"}});
  REQUIRE_FALSE(bad.ok());
  CHECK_THAT(bad.error().message, Catch::Contains("bad.json") && Catch::Contains("ascendingBy 'N'"));
  auto good = Model::load({{"good.json", R"({"api":"x",)" + kSigning + R"(,"operations":{"A":{"input":{
      "L": { "type": "list", "ascendingBy": "N", "member": { "shape": "Item" } } }}},
      "shapes": { "Item": { "type": "structure", "members": { "N": { "type": "integer" } } } }})"}});
  CHECK(good.ok());
}

TEST_CASE("waiters: each checked against its operation's result, outputShape names a structure", "[model]") {
  const std::string head =
      R"({"api":"x",)" + kSigning + R"(,"operations":{"GetA":{"method":"GET","path":"/a","outputShape":"A"}},
    "shapes":{"A":{"type":"structure","members":{"status":{"type":"string"},
                                                  "items":{"type":"list","member":{"type":"structure","members":{"state":{"type":"string"}}}}}}},
    "waiters":{"W":{"operation":"GetA","delay":5,"maxAttempts":3,"acceptors":[)";
  auto load = [&](const std::string& acceptors) { return Model::load({{"w.json", head + acceptors + "]}}}"}}); };
  auto good = load(R"({"state":"success","path":"status","comparator":"equals","expected":"UP"},
                      {"state":"retry","path":"items[].state","comparator":"allEqual","expected":"x"},
                      {"state":"failure","error":"Client.Gone"})");
  REQUIRE(good.ok());
  const Waiter* w = good.value()->waiter("W");
  REQUIRE(w != nullptr);
  CHECK((w->operation == "GetA" && w->delay == 5 && w->max_attempts == 3 && w->acceptors.size() == 3));
  CHECK(good.value()->api("x")->waiters.size() == 1);
  CHECK(good.value()->find("GetA")->output->find_member("status") != nullptr);
  auto bad_path = load(R"({"state":"success","path":"stauts","comparator":"equals","expected":"UP"})");
  REQUIRE_FALSE(bad_path.ok());
  CHECK(bad_path.error().message == "w.json: waiters.W.acceptors[1]: the result has no path 'stauts'");
  auto not_a_list = load(R"({"state":"success","path":"status[]","comparator":"anyEqual","expected":"UP"})");
  CHECK_FALSE(not_a_list.ok());
  auto bad_state = load(R"({"state":"done","error":"X"})");
  CHECK_FALSE(bad_state.ok());
  auto bad_comparator = load(R"({"state":"success","path":"status","comparator":"like","expected":"UP"})");
  CHECK_FALSE(bad_comparator.ok());
  auto no_acceptors = load("");
  CHECK_FALSE(no_acceptors.ok());
  auto bad_shape = Model::load({{"s.json", R"({"api":"x","operations":{"A":{"outputShape":"Nope"}}})"}});
  REQUIRE_FALSE(bad_shape.ok());
  CHECK(bad_shape.error().message == "s.json: operations.A.outputShape: not a named structure: \"Nope\"");
}

TEST_CASE("UploadPart: partNumber 1..10000, the body is bytes", "[validate]") {
  const char* op = "UploadPart";
  passes(op, upload_part_args());
  passes(op, with(upload_part_args(), "/partNumber", 10000));
  passes(op, with(upload_part_args(), "/body", std::string("\xff\x00\xfe", 3)));  // not UTF-8: fine for bytes
  passes(op, without(upload_part_args(), "/body"));
  fails(op, with(upload_part_args(), "/partNumber", 0), "partNumber", "at least 1 (got 0)");
  fails(op, with(upload_part_args(), "/partNumber", 10001), "partNumber", "at most 10000 (got 10001)");
  fails(op, without(upload_part_args(), "/partNumber"), "partNumber", "required");
  fails(op, without(upload_part_args(), "/uploadId"), "uploadId", "required");
  fails(op, with(upload_part_args(), "/body", 5), "body", "string expected, got integer");
}

TEST_CASE("CreateMultipartUpload and AbortMultipartUpload: bucket, object, upload id", "[validate]") {
  passes("CreateMultipartUpload", R"({ "Bucket": "bkt", "Object": "a/b c/ü.txt" })"_json);
  fails("CreateMultipartUpload", R"({ "Bucket": "bkt" })"_json, "Object", "required");
  passes("AbortMultipartUpload", R"({ "Bucket": "bkt", "Object": "k", "uploadId": "u-1" })"_json);
  fails("AbortMultipartUpload", R"({ "Bucket": "bkt", "Object": "k" })"_json, "uploadId", "required");
}

// ---------------------------------------------------------------- AuthorizeFirewallRules

TEST_CASE("AuthorizeFirewallRules: description at most 40 characters, full-width or half-width", "[validate]") {
  const char* op = "AuthorizeFirewallRules";
  passes(op, rules_args());
  passes(op, with(rules_args(), "/rules/0/description", rep("あ", 40)));
  passes(op, with(rules_args(), "/rules/0/description", rep("a", 40)));
  passes(op, with(rules_args(), "/rules/0/description", rep("あ", 20) + rep("a", 20)));
  passes(op, with(rules_args(), "/rules/0/description", ""));
  fails(op, with(rules_args(), "/rules/0/description", rep("あ", 41)), "rules[1].description",
        "at most 40 characters (got 41)");
  fails(op, with(rules_args(), "/rules/1/description", rep("a", 41)), "rules[2].description",
        "at most 40 characters (got 41)");
  fails(op, with(rules_args(), "/rules/0/description", std::string("\xff")), "rules[1].description", "not valid UTF-8");
}

TEST_CASE("AuthorizeFirewallRules: port 22 or 443, required for TCP, left out for ICMP", "[validate]") {
  const char* op = "AuthorizeFirewallRules";
  passes(op, with(rules_args(), "/rules/0/port", 22));
  passes(op, with(rules_args(), "/rules/0/port", 443));
  passes(op, with(rules_args(), "/rules/1/port", nullptr));  // cloud.null: the ICMP port the service returns
  fails(op, with(rules_args(), "/rules/0/port", 80), "rules[1].port",
        "must be 22 or 443 when protocol is TCP (got 80)");
  fails(op, with(rules_args(), "/rules/0/port", "22"), "rules[1].port", "integer expected, got string");
  fails(op, without(rules_args(), "/rules/0/port"), "rules[1].port", "required when protocol is TCP");
  fails(op, with(rules_args(), "/rules/1/port", 22), "rules[2].port", "must be left out when protocol is ICMP");
  fails(op, with(rules_args(), "/rules/0/protocol", "UDP"), "rules[1].protocol", "must be TCP or ICMP (got 'UDP')");
  fails(op, with(rules_args(), "/rules/0/protocol", "tcp"), "rules[1].protocol", "must be TCP or ICMP");
}

TEST_CASE("AuthorizeFirewallRules: cidrIp is an IPv4 address or IPv4 CIDR only", "[validate]") {
  const char* op = "AuthorizeFirewallRules";
  for (const char* ok : {"10.0.0.0/8", "192.168.1.1", "0.0.0.0/0", "255.255.255.255/32", "203.0.113.0/24"})
    passes(op, with(rules_args(), "/rules/0/cidrIp", ok));
  for (const char* bad :
       {"10.0.0.0/33", "300.1.1.1", "::1", "2001:db8::/32", "10.0.0", "10.0.0.0/", "host", "1.2.3.4 ", ""})
    fails(op, with(rules_args(), "/rules/0/cidrIp", bad), "rules[1].cidrIp", "must be an IPv4 address or CIDR block");
}

TEST_CASE("AuthorizeFirewallRules: group name and the rules list", "[validate]") {
  const char* op = "AuthorizeFirewallRules";
  fails(op, without(rules_args(), "/FirewallGroupName"), "FirewallGroupName", "required");
  fails(op, with(rules_args(), "/rules", "tcp/22"), "rules", "list expected, got string");
  fails(op, with(rules_args(), "/rules/0", "TCP"), "rules[1]", "table expected, got string");
}

// ---------------------------------------------------------------- RestoreInstance

TEST_CASE("RestoreInstance: every field valid", "[validate]") { passes("RestoreInstance", instance_args()); }

TEST_CASE("RestoreInstance: backupId is exactly 32 lowercase letters and digits", "[validate]") {
  const char* op = "RestoreInstance";
  passes(op, with(instance_args(), "/backupId", rep("a", 32)));
  passes(op, with(instance_args(), "/backupId", rep("0", 32)));
  fails(op, with(instance_args(), "/backupId", rep("a", 31)), "backupId", "at least 32 characters (got 31)");
  fails(op, with(instance_args(), "/backupId", rep("a", 33)), "backupId", "at most 32 characters (got 33)");
  fails(op, with(instance_args(), "/backupId", "A" + rep("a", 31)), "backupId", "must be lowercase letters and digits");
  fails(op, with(instance_args(), "/backupId", "-" + rep("a", 31)), "backupId", "must be lowercase letters and digits");
}

TEST_CASE("RestoreInstance: instanceId at most 30, lowercase, digits, inner hyphens", "[validate]") {
  const char* op = "RestoreInstance";
  passes(op, with(instance_args(), "/instanceId", rep("a", 30)));
  passes(op, with(instance_args(), "/instanceId", "a"));
  passes(op, with(instance_args(), "/instanceId", "a-1-b"));
  fails(op, with(instance_args(), "/instanceId", rep("a", 31)), "instanceId", "at most 30 characters (got 31)");
  fails(op, with(instance_args(), "/instanceId", "-abc"), "instanceId", kPlainNameRule);
  fails(op, with(instance_args(), "/instanceId", "abc-"), "instanceId", kPlainNameRule);
  fails(op, with(instance_args(), "/instanceId", "Abc"), "instanceId", "(got 'Abc')");
  fails(op, with(instance_args(), "/instanceId", "a_b"), "instanceId", kPlainNameRule);
}

TEST_CASE("RestoreInstance: every instanceType passes, others fail", "[validate]") {
  const char* op = "RestoreInstance";
  CHECK(input_member(op, "instanceType").shape->allowed.size() == kSpecInstanceTypes.size());
  for (const std::string& t : kSpecInstanceTypes) passes(op, with(instance_args(), "/instanceType", t));
  fails(op, with(instance_args(), "/instanceType", "e-huge"), "instanceType", "(got 'e-huge')");
  fails(op, with(instance_args(), "/instanceType", "e-huge"), "instanceType", "must be c-large, c-large8, e-large");
  fails(op, with(instance_args(), "/instanceType", "E-LARGE"), "instanceType", "(got 'E-LARGE')");
}

TEST_CASE("RestoreInstance: firewallGroupName and parameterGroupName at most 63", "[validate]") {
  const char* op = "RestoreInstance";
  for (const char* field : {"firewallGroupName", "parameterGroupName"}) {
    std::string at = std::string("/") + field;
    passes(op, with(instance_args(), at, rep("a", 63)));
    passes(op, with(instance_args(), at, "a" + rep("-", 61) + "z"));
    fails(op, with(instance_args(), at, rep("a", 64)), field, "at most 63 characters (got 64)");
    fails(op, with(instance_args(), at, "-fw"), field, kPlainNameRule);
    fails(op, with(instance_args(), at, "fw-"), field, kPlainNameRule);
    fails(op, with(instance_args(), at, "FW"), field, kPlainNameRule);
  }
}

TEST_CASE("RestoreInstance: diskSize 100, 200, 300 or 400", "[validate]") {
  const char* op = "RestoreInstance";
  for (int size : {100, 200, 300, 400}) passes(op, with(instance_args(), "/diskSize", size));
  fails(op, with(instance_args(), "/diskSize", 500), "diskSize", "must be 100, 200, 300 or 400 (got 500)");
  fails(op, with(instance_args(), "/diskSize", 150), "diskSize", "must be 100, 200, 300 or 400 (got 150)");
  fails(op, with(instance_args(), "/diskSize", "100"), "diskSize", "integer expected, got string");
  fails(op, with(instance_args(), "/diskSize", 100.5), "diskSize", "integer expected, got number");
}

TEST_CASE("RestoreInstance: availabilityZone values", "[validate]") {
  const char* op = "RestoreInstance";
  for (const char* zone : {"east-11", "east-12", "east-13", "east-14", "east-31", "west-12", "west-13", "jp-west-21"})
    passes(op, with(instance_args(), "/availabilityZone", zone));
  for (const char* zone : {"east-15", "west-11", "jp-east-1", ""})
    fails(op, with(instance_args(), "/availabilityZone", zone), "availabilityZone", "must be east-11, east-12");
}

TEST_CASE("RestoreInstance: description at most 255 characters", "[validate]") {
  const char* op = "RestoreInstance";
  passes(op, with(instance_args(), "/description", rep("あ", 255)));
  fails(op, with(instance_args(), "/description", rep("あ", 256)), "description", "at most 255 characters (got 256)");
  fails(op, with(instance_args(), "/description", rep("a", 256)), "description", "at most 255 characters (got 256)");
}

TEST_CASE("RestoreInstance: networkConfig.privateAddress is CIDR notation", "[validate]") {
  const char* op = "RestoreInstance";
  passes(op, with(instance_args(), "/networkConfig/privateAddress", "10.1.2.3/16"));
  passes(op, with(instance_args(), "/networkConfig", json::object()));
  fails(op, with(instance_args(), "/networkConfig/privateAddress", "192.168.0.10"), "networkConfig.privateAddress",
        "must be an IPv4 CIDR block");
  fails(op, with(instance_args(), "/networkConfig/privateAddress", "192.168.0.10/40"), "networkConfig.privateAddress",
        "must be an IPv4 CIDR block");
  fails(op, with(instance_args(), "/networkConfig/networkId", 7), "networkConfig.networkId",
        "string expected, got integer");
}

TEST_CASE("RestoreInstance: objectStorageConfig.account 1 to 128 half-width letters and digits", "[validate]") {
  const char* op = "RestoreInstance";
  const std::string at = "/objectStorageConfig/account";
  const std::string path = "objectStorageConfig.account";
  passes(op, with(instance_args(), at, "a"));
  passes(op, with(instance_args(), at, rep("Ab1", 42) + "Zz"));  // 128
  fails(op, with(instance_args(), at, ""), path, "at least 1 character (got 0)");
  fails(op, with(instance_args(), at, rep("a", 129)), path, "at most 128 characters (got 129)");
  fails(op, with(instance_args(), at, "acct_01"), path, "must be half-width letters and digits");
  fails(op, with(instance_args(), at, "ＡＢＣ"), path, "must be half-width letters and digits");
}

TEST_CASE("RestoreInstance: objectStorageConfig.region jp-east-1 or jp-west-2", "[validate]") {
  const char* op = "RestoreInstance";
  passes(op, with(instance_args(), "/objectStorageConfig/region", "jp-east-1"));
  passes(op, with(instance_args(), "/objectStorageConfig/region", "jp-west-2"));
  fails(op, with(instance_args(), "/objectStorageConfig/region", "jp-east-3"), "objectStorageConfig.region",
        "must be jp-east-1 or jp-west-2 (got 'jp-east-3')");
}

TEST_CASE("RestoreInstance: bucket names 3 to 32, lowercase, digits, inner hyphens", "[validate]") {
  const char* op = "RestoreInstance";
  for (const char* bucket : {"lfs", "packages", "containerRegistry"}) {
    std::string at = std::string("/objectStorageConfig/bucketUseObjects/") + bucket;
    std::string path = std::string("objectStorageConfig.bucketUseObjects.") + bucket;
    passes(op, with(instance_args(), at, "abc"));
    passes(op, with(instance_args(), at, "a-" + rep("b", 29) + "9"));  // 32
    fails(op, with(instance_args(), at, "ab"), path, "at least 3 characters (got 2)");
    fails(op, with(instance_args(), at, rep("a", 33)), path, "at most 32 characters (got 33)");
    fails(op, with(instance_args(), at, "-abc"), path, kPlainNameRule);
    fails(op, with(instance_args(), at, "abc-"), path, kPlainNameRule);
    fails(op, with(instance_args(), at, "Bucket"), path, kPlainNameRule);
    fails(op, with(instance_args(), at, "a.bc"), path, kPlainNameRule);
  }
}

// ---------------------------------------------------------------- RestoreClusterFromSnapshot, UpdateSnapshot

TEST_CASE("RestoreClusterFromSnapshot: cluster name at most 40, lowercase, inner hyphens", "[validate]") {
  const char* op = "RestoreClusterFromSnapshot";
  passes(op, restore_cluster_args());
  passes(op, with(restore_cluster_args(), "/cluster/name", rep("c", 40)));
  fails(op, with(restore_cluster_args(), "/cluster/name", rep("c", 41)), "cluster.name",
        "at most 40 characters (got 41)");
  fails(op, with(restore_cluster_args(), "/cluster/name", "-x"), "cluster.name",
        std::string(kPlainNameRule) + " (got '-x')");
  fails(op, with(restore_cluster_args(), "/cluster/name", "x-"), "cluster.name", kPlainNameRule);
  fails(op, with(restore_cluster_args(), "/cluster/name", "Cluster"), "cluster.name", kPlainNameRule);
  fails(op, without(restore_cluster_args(), "/SnapshotName"), "SnapshotName", "required");
}

TEST_CASE("RestoreClusterFromSnapshot: description 255, tag key 128, tag value 256", "[validate]") {
  const char* op = "RestoreClusterFromSnapshot";
  passes(op, with(restore_cluster_args(), "/cluster/description", rep("é", 255)));
  fails(op, with(restore_cluster_args(), "/cluster/description", rep("é", 256)), "cluster.description",
        "at most 255 characters (got 256)");
  passes(op, with(restore_cluster_args(), "/cluster/tags/0/key", rep("鍵", 128)));
  fails(op, with(restore_cluster_args(), "/cluster/tags/0/key", rep("鍵", 129)), "cluster.tags[1].key",
        "at most 128 characters (got 129)");
  passes(op, with(restore_cluster_args(), "/cluster/tags/0/value", rep("v", 256)));
  fails(op, with(restore_cluster_args(), "/cluster/tags/1", json{{"key", "k"}, {"value", rep("v", 257)}}),
        "cluster.tags[2].value", "at most 256 characters (got 257)");
}

TEST_CASE("RestoreClusterFromSnapshot: other body fields and types", "[validate]") {
  const char* op = "RestoreClusterFromSnapshot";
  passes(op, with(restore_cluster_args(), "/cluster/addonsConfig/httpLoadBalancing/disabled", true));
  fails(op, with(restore_cluster_args(), "/cluster/addonsConfig/httpLoadBalancing/disabled", "yes"),
        "cluster.addonsConfig.httpLoadBalancing.disabled", "boolean expected, got string");
  fails(op, with(restore_cluster_args(), "/cluster/locations", "east-11"), "cluster.locations",
        "list expected, got string");
  fails(op, with(restore_cluster_args(), "/cluster/locations/0", 11), "cluster.locations[1]",
        "string expected, got integer");
  // Empty tables for lists become [] on the wire.
  Outcome<json> r = validate_input(
      validation_helpers::op(op),
      with(with(restore_cluster_args(), "/cluster/tags", json::object()), "/cluster/locations", json::object()));
  REQUIRE(r.ok());
  CHECK(r.value()["cluster"]["tags"] == json::array());
  CHECK(r.value()["cluster"]["locations"] == json::array());
}

TEST_CASE("UpdateSnapshot: new name at most 40, lowercase, inner hyphens", "[validate]") {
  const char* op = "UpdateSnapshot";
  passes(op, update_snapshot_args());
  passes(op, with(update_snapshot_args(), "/snapshot/name", rep("s", 40)));
  fails(op, with(update_snapshot_args(), "/snapshot/name", rep("s", 41)), "snapshot.name",
        "at most 40 characters (got 41)");
  fails(op, with(update_snapshot_args(), "/snapshot/name", "-snap"), "snapshot.name", kPlainNameRule);
  fails(op, with(update_snapshot_args(), "/snapshot/name", "snap-"), "snapshot.name", kPlainNameRule);
  fails(op, with(update_snapshot_args(), "/snapshot/name", "Snap"), "snapshot.name", kPlainNameRule);
  fails(op, without(update_snapshot_args(), "/SnapshotName"), "SnapshotName", "required");
  fails(op, with(update_snapshot_args(), "/SnapshotName", ""), "SnapshotName", "at least 1 character");
}

TEST_CASE("UpdateSnapshot: description 255, tag key 128, tag value 256", "[validate]") {
  const char* op = "UpdateSnapshot";
  passes(op, with(update_snapshot_args(), "/snapshot/description", rep("あ", 255)));
  fails(op, with(update_snapshot_args(), "/snapshot/description", rep("あ", 256)), "snapshot.description",
        "at most 255 characters (got 256)");
  passes(op, with(update_snapshot_args(), "/snapshot/tags/0/key", rep("k", 128)));
  fails(op, with(update_snapshot_args(), "/snapshot/tags/0/key", rep("k", 129)), "snapshot.tags[1].key",
        "at most 128 characters (got 129)");
  passes(op, with(update_snapshot_args(), "/snapshot/tags/0/value", rep("値", 256)));
  fails(op, with(update_snapshot_args(), "/snapshot/tags/0/value", rep("値", 257)), "snapshot.tags[1].value",
        "at most 256 characters (got 257)");
}

TEST_CASE("UpdateSnapshot: expirationTime is an ISO 8601 time", "[validate]") {
  const char* op = "UpdateSnapshot";
  passes(op, with(update_snapshot_args(), "/snapshot/expirationTime", "2026-12-31T23:59:59Z"));
  passes(op, with(update_snapshot_args(), "/snapshot/expirationTime", "2026-12-31T23:59:59.123+09:00"));
  for (const char* bad : {"2026-12-31", "tomorrow", "2026-12-31 23:59:59 UTC", "20261231T235959Z"})
    fails(op, with(update_snapshot_args(), "/snapshot/expirationTime", bad), "snapshot.expirationTime",
          "must be an ISO 8601 time");
}

// ---------------------------------------------------------------- UpgradeMeshplatformServiceMeshVersion

TEST_CASE("UpgradeMeshplatformServiceMeshVersion: path parameters and version", "[validate]") {
  const char* op = "UpgradeMeshplatformServiceMeshVersion";
  passes(op, upgrade_args());
  passes(op, without(upgrade_args(), "/version"));
  fails(op, without(upgrade_args(), "/ResourceGroupName"), "ResourceGroupName", "required");
  fails(op, without(upgrade_args(), "/ClusterName"), "ClusterName", "required");
  fails(op, with(upgrade_args(), "/version", 1.2), "version", "string expected, got number");
}

// ---------------------------------------------------------------- what the platform needs

TEST_CASE("what the platform needs is required by the model, on both sides", "[validate]") {
  for (Checker checker : {Checker::client, Checker::server}) {
    INFO((checker == Checker::client ? "client" : "server"));
    // restore_instance{}: the backup to restore and the new server's name
    Outcome<json> r = validate_input(op("RestoreInstance"), json::object(), checker);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().fields.size() == 2);
    CHECK(reports(r.error(), "backupId", "required"));
    CHECK(reports(r.error(), "instanceId", "required"));
  }
  fails("RestoreInstance", without(instance_args(), "/instanceId"), "instanceId", "required");
  // authorize_firewall_rules{ rules = {} }: at least one rule, each with a protocol and a source
  fails("AuthorizeFirewallRules", with(rules_args(), "/rules", json::object()), "rules", "at least 1 item (got 0)");
  fails("AuthorizeFirewallRules", without(rules_args(), "/rules"), "rules", "required");
  fails("AuthorizeFirewallRules", without(rules_args(), "/rules/1/protocol"), "rules[2].protocol", "required");
  fails("AuthorizeFirewallRules", without(rules_args(), "/rules/0/cidrIp"), "rules[1].cidrIp", "required");
  // restore_cluster_from_snapshot{ cluster = {} }: the new cluster's name
  fails("RestoreClusterFromSnapshot", with(restore_cluster_args(), "/cluster", json::object()), "cluster.name",
        "required");
  fails("RestoreClusterFromSnapshot", without(restore_cluster_args(), "/cluster"), "cluster", "required");
}

TEST_CASE("cloud.null where a value is needed is refused, on both sides", "[validate]") {
  struct Case {
    const char* op;
    json args;
    const char* path;
    const char* problem;
  };
  const Case cases[] = {
      {"UpdateSnapshot", with(update_snapshot_args(), "/snapshot", nullptr), "snapshot",
       "table expected, got cloud.null"},
      {"UpdateSnapshot", with(update_snapshot_args(), "/snapshot/tags/0/key", nullptr), "snapshot.tags[1].key",
       "string expected, got cloud.null"},
      {"UpdateSnapshot", with(update_snapshot_args(), "/snapshot/tags/0", nullptr), "snapshot.tags[1]",
       "table expected, got cloud.null"},
      {"UpdateSnapshot", with(update_snapshot_args(), "/snapshot/tags", nullptr), "snapshot.tags",
       "list expected, got cloud.null"},
      {"RestoreInstance", with(instance_args(), "/backupId", nullptr), "backupId", "string expected, got cloud.null"},
      {"RestoreInstance", with(instance_args(), "/diskSize", nullptr), "diskSize", "integer expected, got cloud.null"},
      {"RestoreClusterFromSnapshot", with(restore_cluster_args(), "/cluster/tags/0/key", nullptr),
       "cluster.tags[1].key", "string expected, got cloud.null"},
      {"UpgradeMeshplatformServiceMeshVersion", with(upgrade_args(), "/version", nullptr), "version",
       "string expected, got cloud.null"},
      {"UploadPart", with(upload_part_args(), "/partNumber", nullptr), "partNumber",
       "integer expected, got cloud.null"},
  };
  for (const Case& c : cases) {
    fails(c.op, c.args, c.path, c.problem);
    Outcome<json> server = validate_input(op(c.op), c.args, Checker::server);
    REQUIRE_FALSE(server.ok());
    CHECK(reports(server.error(), c.path, c.problem));
  }
  // Where the model says `nullable`, cloud.null is the member left out: the ICMP rule's
  // port, as the platform returns it; a TCP rule still needs its port.
  passes("AuthorizeFirewallRules", with(rules_args(), "/rules/1/port", nullptr));
  fails("AuthorizeFirewallRules", with(rules_args(), "/rules/0/port", nullptr), "rules[1].port",
        "required when protocol is TCP");
}

// ---------------------------------------------------------------- how problems are reported

TEST_CASE("unknown fields are rejected with a suggestion", "[validate]") {
  fails("AuthorizeFirewallRules", with(rules_args(), "/rules/0/protcol", "TCP"), "rules[1].protcol",
        "unknown field, did you mean 'protocol'?");
  fails("AuthorizeFirewallRules", with(rules_args(), "/rule", json::array()), "rule", "did you mean 'rules'?");
  fails("RestoreInstance", with(instance_args(), "/instanceTyp", "e-large"), "instanceTyp",
        "did you mean 'instanceType'?");
  fails("UpdateSnapshot", with(update_snapshot_args(), "/snapshot/tags/0/vaule", "x"), "snapshot.tags[1].vaule",
        "did you mean 'value'?");
  fails("AuthorizeFirewallRules", with(rules_args(), "/zzzzzz", 1), "zzzzzz",
        "unknown field (known: FirewallGroupName, rules)");
}

TEST_CASE("one wording of an unknown field and of an unknown name, for every surface", "[suggest]") {
  CHECK(cloud::unknown_field("dleete", {"delete", "dry_run"}) == "unknown field 'dleete', did you mean 'delete'?");
  CHECK(cloud::unknown_field("zzz", {"delete"}) == "unknown field 'zzz'");
  CHECK(cloud::unknown_field("zzz", {"delete"}, "known: delete") == "unknown field 'zzz' (known: delete)");
  CHECK(cloud::unknown_field("nmae", {"name"}, "", cloud::Named::by_path) == "unknown field, did you mean 'name'?");
  CHECK(cloud::unknown_name("waiter", "ClusterRuning", {"ClusterRunning"}, "cloud.waiters() lists them") ==
        "no waiter named 'ClusterRuning'; did you mean 'ClusterRunning'?");
  CHECK(cloud::unknown_name("waiter", "zzz", {"ClusterRunning"}, "cloud.waiters() lists them") ==
        "no waiter named 'zzz'; cloud.waiters() lists them");
}

TEST_CASE("a field named as another API names it is told the name here (the model's otherNames)", "[validate]") {
  const std::string told = "unknown field (the object's key is 'Object' here, S3's Key)";
  for (const char* name : {"GetObject", "PutObject", "HeadObject", "CreateMultipartUpload"}) {
    INFO(name);
    Outcome<json> r = validate_input(op(name), R"({ "Bucket": "bkt", "Key": "a.txt" })"_json);
    REQUIRE_FALSE(r.ok());
    CHECK(reports(r.error(), "Key", told));
    CHECK(reports(r.error(), "Object", "required"));
  }
  fails("GetObject", R"({ "Bucket": "bkt", "Object": "a", "Key": "a" })"_json, "Key", told);
  passes("DeleteObjects", R"({ "Bucket": "bkt", "Object": [ { "Key": "a" } ] })"_json);  // Key is the item's name there

  auto load = [](const std::string& other_names) {
    return Model::load(
        {{"a.json", R"({"api":"x",)" + kSigning + R"(,"operations":{"A":{"input":{"Object":{"shape":"K"}}}},)" +
                        R"("shapes":{"K":{"type":"string","otherNames":)" + other_names + "}}}"}});
  };
  auto good = load(R"({"Key":{"what":"the object's key","elsewhere":"S3's Key"}})");
  REQUIRE(good.ok());
  Outcome<json> r = validate_input(*good.value()->find("A"), R"({ "Key": "a" })"_json);
  REQUIRE_FALSE(r.ok());
  CHECK(reports(r.error(), "Key", told));
  auto bad = load(R"({"Key":"S3's Key"})");
  REQUIRE_FALSE(bad.ok());
  CHECK_THAT(bad.error().message, Catch::Contains("K.otherNames.Key: must be { what, elsewhere }"));
}

TEST_CASE("arguments that are not a table are named", "[validate]") {
  fails("UpdateSnapshot", json("snap-1"), "(arguments)", "table expected, got string");
  fails("UpdateSnapshot", with(update_snapshot_args(), "/snapshot", json::array({1})), "snapshot",
        "table expected, got list");
}

TEST_CASE("several problems are all reported in one validation error", "[validate]") {
  json args = instance_args();
  args["backupId"] = "short";
  args["diskSize"] = 500;
  args["instanceTyp"] = "e-large";
  args["objectStorageConfig"]["bucketUseObjects"]["lfs"] = "-x";
  Outcome<json> r = validate_input(op("RestoreInstance"), args);
  REQUIRE_FALSE(r.ok());
  const Error& e = r.error();
  INFO(e.describe());
  CHECK(e.kind == ErrorKind::validation);
  CHECK(e.code == "ValidationError");
  CHECK(e.operation == "RestoreInstance");
  CHECK(e.fields.size() == 5);  // the bucket name breaks both its length and its pattern
  CHECK(e.message == "5 problems in the arguments; nothing was sent");
  CHECK(reports(e, "backupId", "at least 32 characters (got 5)"));
  CHECK(reports(e, "diskSize", "must be 100, 200, 300 or 400"));
  CHECK(reports(e, "instanceTyp", "did you mean 'instanceType'?"));
  CHECK(reports(e, "objectStorageConfig.bucketUseObjects.lfs", "at least 3 characters (got 2)"));
  CHECK(reports(e, "objectStorageConfig.bucketUseObjects.lfs", kPlainNameRule));
  CHECK_THAT(e.describe(), Catch::StartsWith("validation error in RestoreInstance: ValidationError: 5 problems") &&
                               Catch::Contains("\n  diskSize: must be 100, 200, 300 or 400 (got 500)"));
}

TEST_CASE("problems in several list elements are reported with their 1-based positions", "[validate]") {
  json args = R"({ "rules": [
      { "protocol": "TCP", "port": 80, "cidrIp": "10.0.0.0/8" },
      { "protocol": "ICMP", "port": 22, "cidrIp": "::1" },
      { "protocol": "TCP", "cidrIp": "10.0.0.1" } ] })"_json;
  args["rules"][2]["description"] = rep("あ", 41);
  Outcome<json> r = validate_input(op("AuthorizeFirewallRules"), args);
  REQUIRE_FALSE(r.ok());
  const Error& e = r.error();
  INFO(e.describe());
  CHECK(e.kind == ErrorKind::validation);
  CHECK(e.operation == "AuthorizeFirewallRules");
  CHECK(e.fields.size() == 6);
  CHECK(reports(e, "FirewallGroupName", "required"));
  CHECK(reports(e, "rules[1].port", "must be 22 or 443 when protocol is TCP (got 80)"));
  CHECK(reports(e, "rules[2].port", "must be left out when protocol is ICMP"));
  CHECK(reports(e, "rules[2].cidrIp", "IPv4 address or CIDR"));
  CHECK(reports(e, "rules[3].port", "required when protocol is TCP"));
  CHECK(reports(e, "rules[3].description", "at most 40 characters (got 41)"));
}

TEST_CASE("a single problem says so", "[validate]") {
  Outcome<json> r = validate_input(op("UploadPart"), with(upload_part_args(), "/partNumber", 0));
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().message == "1 problem in the arguments; nothing was sent");
  CHECK(r.error().operation == "UploadPart");
  CHECK(r.error().kind == ErrorKind::validation);
}

TEST_CASE("errorsByStatus: error statuses mapped to codes, anything else is a model error", "[model]") {
  auto load = [](const std::string& map) {
    return Model::load(
        {{"s.json", R"({"api":"x",)" + kSigning + R"(,"operations":{"A":{"errorsByStatus":)" + map + "}}}"}});
  };
  auto ok = load(R"({"404":"NoSuchThing","409":"Busy"})");
  REQUIRE(ok.ok());
  CHECK((*ok)->find("A")->errors_by_status == std::map<long, std::string>{{404, "NoSuchThing"}, {409, "Busy"}});
  for (const char* bad : {R"("x")", R"({"200":"Fine"})", R"({"4o4":"X"})", R"({"404":""})", R"({"404":3})"}) {
    INFO(bad);
    auto loaded = load(bad);
    REQUIRE_FALSE(loaded.ok());
    CHECK(loaded.error().code == "ModelError");
    CHECK_THAT(loaded.error().message, Catch::Contains("errorsByStatus"));
  }
}

TEST_CASE("the S3 listings: paginators, list-type=2, checksumRequired, a list's item name", "[model]") {
  const Operation& v2 = op("ListObjectsV2");
  REQUIRE(v2.paginator);
  CHECK(v2.paginator->input_tokens == std::vector<std::string>{"ContinuationToken"});
  CHECK(v2.paginator->output_tokens == std::vector<std::string>{"NextContinuationToken"});
  CHECK(v2.paginator->more_results == "IsTruncated");
  CHECK(v2.fixed_query == std::vector<std::string>{"list-type=2"});
  CHECK(op("ListObjects").paginator->output_tokens == std::vector<std::string>{"NextMarker || Contents[-1].Key"});
  CHECK(op("ListMultipartUploads").paginator->input_tokens == std::vector<std::string>{"KeyMarker", "UploadIdMarker"});
  CHECK_FALSE(op("GetObject").paginator);
  CHECK(op("DeleteObjects").checksum_required);
  CHECK_FALSE(op("PutObject").checksum_required);
  CHECK(op("ListBuckets").output->find_member("Buckets")->shape->member_name == "Bucket");
  CHECK(input_member("CopyObject", "CopySource").location == Location::header);
  CHECK(input_member("CopyObject", "CopySource").required);
}

TEST_CASE("a paginator names input members, result paths and a boolean of the result", "[model]") {
  auto load = [](const std::string& paginator) {
    return Model::load(
        {{"p.json", R"({"api":"x",)" + kSigning +
                        R"(,"operations":{"L":{"input":{"T":{"in":"query","type":"string"}},)"
                        R"("output":{"N":{"type":"string"},"More":{"type":"boolean"},)"
                        R"("Items":{"type":"list","member":{"shape":"Item"}}},"paginator":)" +
                        paginator +
                        R"(}},"shapes":{"Item":{"type":"structure","members":{"K":{"type":"string"}}}}})"}});
  };
  CHECK(load(R"({"input_token":"T","output_token":"N","more_results":"More"})").ok());
  CHECK(load(R"({"input_token":["T"],"output_token":["N || Items[-1].K"],"more_results":"More"})").ok());
  for (const auto& [paginator, says] : std::vector<std::pair<std::string, std::string>>{
           {R"({"input_token":"X","output_token":"N","more_results":"More"})", "'X' is not an input member"},
           {R"({"input_token":"T","output_token":"Nope","more_results":"More"})", "the result has no path 'Nope'"},
           {R"({"input_token":"T","output_token":"N || Items.K[-1]","more_results":"More"})", "no path 'Items.K[-1]'"},
           {R"({"input_token":"T","output_token":"N","more_results":"N"})", "'N' is not a boolean of the result"},
           {R"({"input_token":["T","T"],"output_token":"N","more_results":"More"})", "as many tokens"},
           {R"({"output_token":"N","more_results":"More"})", "as many tokens"}}) {
    INFO(paginator);
    auto loaded = load(paginator);
    REQUIRE_FALSE(loaded.ok());
    CHECK_THAT(loaded.error().message, Catch::Contains("operations.L.paginator") && Catch::Contains(says));
  }
}

TEST_CASE("json_object_members: each member's key and value text, as written, in order", "[model]") {
  auto members =
      json_object_members(R"( { "a" : {"b": [1, {"c": "}]"}]} , "q\"{": "x\\\"}", "n": 12,"e":{} } trailing)");
  REQUIRE(members.has_value());
  CHECK(*members == Members{{"a", R"({"b": [1, {"c": "}]"}]})"}, {R"(q\"{)", R"("x\\\"}")"}, {"n", "12"}, {"e", "{}"}});
  CHECK(json_object_members("{}") == Members{});
  CHECK(json_object_members(" { } ") == Members{});
  for (const char* bad :
       {"", "[]", "{", R"({"a")", R"({"a":)", R"({"a":1)", R"({"a":1,)", R"({"a": "open})", R"({a:1})"})
    CHECK_FALSE(json_object_members(bad).has_value());
  // Values are not parsed: a value that is no JSON is given as written, for the parser to refuse.
  CHECK(json_object_members(R"({"a":1 "b":2})") == Members{{"a", R"(1 "b":2)"}});
}

TEST_CASE("a map is a member in headers (a prefix), of string names and values, and only a map is", "[model]") {
  auto load = [](const std::string& member) {
    return Model::load(
        {{"m.json", R"({"api":"x",)" + kSigning + R"(,"operations":{"A":{"input":{"m":)" + member + "}}}}"}});
  };
  const std::string map = R"("type":"map","key":{"type":"string"},"value":{"type":"string"})";
  auto good = load(R"({"in":"headers","name":"x-ext-meta-",)" + map + "}");
  REQUIRE(good.ok());
  const Member& m = *good.value()->find("A")->input->find_member("m");
  CHECK(m.location == Location::headers);
  CHECK(m.wire_name == "x-ext-meta-");
  CHECK(m.shape->type == ShapeType::map);
  auto in_body = load("{" + map + "}");
  REQUIRE_FALSE(in_body.ok());
  CHECK_THAT(in_body.error().message, Catch::Contains("A.input.m: a map is a member in \"headers\""));
  auto not_map = load(R"({"in":"headers","name":"x-","type":"string"})");
  REQUIRE_FALSE(not_map.ok());
  CHECK_THAT(not_map.error().message, Catch::Contains("and only a map is"));
  auto no_prefix = load(R"({"in":"headers",)" + map + "}");
  REQUIRE_FALSE(no_prefix.ok());
  CHECK_THAT(no_prefix.error().message, Catch::Contains("names its headers' prefix"));
  auto no_value = load(R"({"in":"headers","name":"x-","type":"map","key":{"type":"string"}})");
  REQUIRE_FALSE(no_value.ok());
  CHECK_THAT(no_value.error().message, Catch::Contains("a map needs a key and a value, both strings"));
}
