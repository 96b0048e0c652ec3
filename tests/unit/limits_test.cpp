// Every limit of the model, walked from the model itself: for each input field with a
// length, range, value set, pattern, condition or default, the largest (and smallest)
// valid value passes and one past it fails, with the field's path and the rule's
// words. A second table holds the spec's limits as the spec states them, so a limit
// dropped from the model fails here even though the walk would no longer see it.
// Hand-written cases for single fields (formats, patterns in detail, messages) live in
// model_test.cpp.
#include <catch2/catch.hpp>

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "core/model/model.h"
#include "core/base/utf8.h"
#include "core/model/validate.h"
#include "emulator/service.h"
#include "validation_helpers.h"

using namespace cloud;
using namespace validation_helpers;

namespace {

// Valid arguments for every operation, each field with a limit present (list
// elements included), so that the walk can change any one of them.
json valid_args(const std::string& op_name) {
  static const std::map<std::string, std::function<json()>> args = {
      {"CompleteMultipartUpload", complete_args},
      {"UploadPart", upload_part_args},
      {"AuthorizeFirewallRules", rules_args},
      {"RestoreInstance", instance_args},
      {"RestoreClusterFromSnapshot", restore_cluster_args},
      {"UpdateSnapshot", update_snapshot_args},
      {"UpgradeMeshplatformServiceMeshVersion", upgrade_args},
      {"CreateMultipartUpload",
       [] {
         return json{{"Bucket", "bkt"}, {"Object", "k"}};
       }},
      {"AbortMultipartUpload",
       [] {
         return json{{"Bucket", "bkt"}, {"Object", "k"}, {"uploadId", "u-1"}};
       }},
      {"ListParts",
       [] {
         return json{
             {"Bucket", "bkt"}, {"Object", "k"}, {"uploadId", "u-1"}, {"MaxParts", 10}, {"PartNumberMarker", 2}};
       }},
      {"CreateBucket",
       [] {
         return json{{"Bucket", "bkt"}};
       }},
      {"PutObject",
       [] {
         return json{{"Bucket", "bkt"}, {"Object", "k"}, {"Body", "bytes"}};
       }},
      {"GetObject",
       [] {
         return json{{"Bucket", "bkt"}, {"Object", "k"}, {"Range", "bytes=0-1"}};
       }},
      {"HeadObject",
       [] {
         return json{{"Bucket", "bkt"}, {"Object", "k"}, {"Range", "bytes=0-1"}};
       }},
      {"GetInstance",
       [] {
         return json{{"InstanceId", "code-1"}};
       }},
      {"GetFirewallGroup",
       [] {
         return json{{"FirewallGroupName", "fw-1"}};
       }},
      {"GetCluster",
       [] {
         return json{{"ClusterName", "c1"}};
       }},
      {"GetSnapshot",
       [] {
         return json{{"SnapshotName", "snap-1"}};
       }},
      {"GetMeshplatformCluster",
       [] {
         return json{{"ResourceGroupName", "rg-1"}, {"ClusterName", "mesh-1"}};
       }},
      {"ListBuckets", [] { return json::object(); }},
      {"HeadBucket",
       [] {
         return json{{"Bucket", "bkt"}};
       }},
      {"GetBucketLocation",
       [] {
         return json{{"Bucket", "bkt"}};
       }},
      {"DeleteBucket",
       [] {
         return json{{"Bucket", "bkt"}};
       }},
      {"ListObjectsV2",
       [] {
         return json{{"Bucket", "bkt"}, {"MaxKeys", 10}, {"EncodingType", "url"}};
       }},
      {"ListObjects",
       [] {
         return json{{"Bucket", "bkt"}, {"MaxKeys", 10}, {"EncodingType", "url"}};
       }},
      {"DeleteObject",
       [] {
         return json{{"Bucket", "bkt"}, {"Object", "k"}};
       }},
      {"DeleteObjects",
       [] {
         return json{{"Bucket", "bkt"}, {"Object", json::array({{{"Key", "k"}}})}};
       }},
      {"ListMultipartUploads",
       [] {
         return json{{"Bucket", "bkt"}, {"MaxUploads", 10}, {"EncodingType", "url"}};
       }},
      {"CopyObject",
       [] {
         return json{{"Bucket", "bkt"}, {"Object", "k"}, {"CopySource", "src/k"}, {"MetadataDirective", "COPY"}};
       }},
      {"UploadPartCopy",
       [] {
         return json{{"Bucket", "bkt"}, {"Object", "k"},         {"partNumber", 1},
                     {"uploadId", "u"}, {"CopySource", "src/k"}, {"CopySourceRange", "bytes=0-9"}};
       }},
      {"GetObjectAcl",
       [] {
         return json{{"Bucket", "bkt"}, {"Object", "k"}};
       }},
      {"PutObjectAcl",
       [] {
         return json{
             {"Bucket", "bkt"},
             {"Object", "k"},
             {"ACL", "private"},
             {"Owner", {{"ID", "1a"}}},
             {"AccessControlList", {{{"Grantee", {{"Type", "CanonicalUser"}, {"ID", "1a"}}}, {"Permission", "READ"}}}}};
       }},
      {"GetBucketAcl",
       [] {
         return json{{"Bucket", "bkt"}};
       }},
      {"PutBucketAcl",
       [] {
         return json{
             {"Bucket", "bkt"},
             {"ACL", "private"},
             {"Owner", {{"ID", "1a"}}},
             {"AccessControlList", {{{"Grantee", {{"Type", "CanonicalUser"}, {"ID", "1a"}}}, {"Permission", "READ"}}}}};
       }},
  };
  auto it = args.find(op_name);
  INFO("valid arguments for " << op_name);
  REQUIRE(it != args.end());
  return it->second();
}

// One input field met on the walk: where it sits in the arguments (JSON pointer,
// list elements at /0) and in problems (Lua's path), its member and the structure
// holding it.
struct Field {
  std::string pointer;
  std::string path;
  const Member* member;
  std::string parent_pointer;
  const Shape* parent;
};

void walk(const Shape& structure, const std::string& pointer, const std::string& path, std::vector<Field>& out) {
  for (const Member& m : structure.members) {
    std::string p = pointer + "/" + m.name;
    std::string lua = path.empty() ? m.name : path + "." + m.name;
    out.push_back({p, lua, &m, pointer, &structure});
    const Shape* s = m.shape;
    if (s->type == ShapeType::list && s->member->type == ShapeType::structure)
      walk(*s->member, p + "/0", lua + "[1]", out);
    else if (s->type == ShapeType::structure) walk(*s, p, lua, out);
  }
}

std::vector<Field> input_fields(const Operation& o) {
  std::vector<Field> out;
  walk(*o.input, "", "", out);
  return out;
}

// A value as messages show it: strings bare, the rest as JSON.
std::string text(const json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

// The arguments with every list cut to its first item, so that any value of one
// item's field stands on its own (an order across items is model_test.cpp's).
json first_items_only(const json& v) {
  if (v.is_array()) return v.empty() ? v : json::array({first_items_only(v[0])});
  if (!v.is_object()) return v;
  json out = json::object();
  for (auto it = v.begin(); it != v.end(); ++it) out[it.key()] = first_items_only(it.value());
  return out;
}

// The arguments with the field set to `v`, and its siblings made to agree: a sibling
// that must be left out when the field has this value is dropped, one that is
// required then is given its first allowed value (protocol ICMP drops the port).
json with_field(const json& base, const Field& f, const json& v) {
  json args = with(base, f.pointer, v);
  for (const Member& sibling : f.parent->members) {
    std::string at = f.parent_pointer + "/" + sibling.name;
    for (const Condition& c : sibling.absent_when)
      if (c.field == f.member->name && c.value == v && args.contains(json::json_pointer(at))) args = without(args, at);
    for (const Condition& c : sibling.required_when)
      if (c.field == f.member->name && c.value == v && !args.contains(json::json_pointer(at)))
        args = with(args, at, sibling.shape->allowed.front());
  }
  return args;
}

bool has_limit(const Shape& s) {
  return s.max_length || s.min_length || s.max_bytes || s.min || s.max || !s.allowed.empty() || s.pattern;
}

// Validation fails, every problem at `path`, one of them containing `text`.
// (A string one past a length limit may break the pattern too: "" is too short and
// not a name.)
void fails_at(const std::string& op_name, const json& args, const std::string& path, const std::string& text) {
  Outcome<json> r = validate_input(op(op_name), args);
  INFO(op_name << " " << show(args).substr(0, 300));
  REQUIRE_FALSE(r.ok());
  INFO(r.error().describe());
  CHECK(reports(r.error(), path, text));
  for (const FieldProblem& f : r.error().fields) CHECK(f.path == path);
}

// A string of `n` copies of the first character the field's pattern accepts, a
// full-width one first so that lengths are seen to count characters, not bytes.
std::string filler(const Shape& s, long long n) {
  for (const char* c : {"あ", "a", "A", "0"}) {
    std::string text = rep(c, static_cast<size_t>(n));
    if (!s.pattern || s.pattern->full_match(text)) return text;
  }
  FAIL("no filler character matches the pattern " << s.pattern_text);
  return {};
}

std::string count(long long n, const char* noun) { return std::to_string(n) + " " + noun + (n == 1 ? "" : "s"); }

void check_string_lengths(const std::string& op_name, const Field& f, const json& base) {
  const Shape& s = *f.member->shape;
  if (s.max_length) {
    passes(op_name, with(base, f.pointer, filler(s, *s.max_length)));
    if (!s.pattern) passes(op_name, with(base, f.pointer, rep("a", static_cast<size_t>(*s.max_length))));
    fails_at(op_name, with(base, f.pointer, filler(s, *s.max_length + 1)), f.path,
             "at most " + count(*s.max_length, "character") + " (got " + std::to_string(*s.max_length + 1) + ")");
    if (!s.pattern)
      fails_at(op_name, with(base, f.pointer, rep("a", static_cast<size_t>(*s.max_length + 1))), f.path, "at most");
  }
  if (s.max_bytes) {  // bytes, not characters: the limit of a key of one-byte characters
    passes(op_name, with(base, f.pointer, rep("a", static_cast<size_t>(*s.max_bytes))));
    fails_at(op_name, with(base, f.pointer, rep("a", static_cast<size_t>(*s.max_bytes + 1))), f.path,
             "at most " + count(*s.max_bytes, "byte") + " (got " + std::to_string(*s.max_bytes + 1) + ")");
  }
  if (s.min_length && *s.min_length > 0) {
    passes(op_name, with(base, f.pointer, filler(s, *s.min_length)));
    fails_at(op_name, with(base, f.pointer, filler(s, *s.min_length - 1)), f.path,
             "at least " + count(*s.min_length, "character") + " (got " + std::to_string(*s.min_length - 1) + ")");
  }
}

void check_integer_range(const std::string& op_name, const Field& f, const json& base) {
  const Shape& s = *f.member->shape;
  if (s.max) {
    passes(op_name, with(base, f.pointer, *s.max));
    fails_at(op_name, with(base, f.pointer, *s.max + 1), f.path, "at most " + std::to_string(*s.max));
  }
  if (s.min) {
    passes(op_name, with(base, f.pointer, *s.min));
    fails_at(op_name, with(base, f.pointer, *s.min - 1), f.path, "at least " + std::to_string(*s.min));
  }
}

// Every allowed value passes; next to the set (the largest integer plus one, a
// string in another case or with a letter more) fails, naming the set.
void check_allowed_values(const std::string& op_name, const Field& f, const json& base) {
  const Shape& s = *f.member->shape;
  for (const json& v : s.allowed) passes(op_name, with_field(base, f, v));
  std::vector<json> outside;
  if (s.type == ShapeType::integer) {
    long long largest = 0;
    for (const json& v : s.allowed) largest = std::max(largest, v.get<long long>());
    outside = {largest + 1, s.allowed.front().get<long long>() - 1};
  } else {
    std::string first = s.allowed.front().get<std::string>();
    std::string upper = first;
    for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    outside = {first + "x", upper == first ? "x" + first : upper};
  }
  for (const json& v : outside)
    fails_at(op_name, with(base, f.pointer, v), f.path, "must be " + text(s.allowed.front()));
}

// The filler already matches; a value with a character the pattern refuses fails
// (the filler's first character replaced, or a control character added; text only).
void check_pattern(const std::string& op_name, const Field& f, const json& base) {
  const Shape& s = *f.member->shape;
  long long n = s.min_length ? std::max(*s.min_length, 2LL) : 2;
  std::string good = filler(s, n);
  passes(op_name, with(base, f.pointer, good));
  int refused = 0;
  for (const std::string& bad : {"_" + good.substr(1), "-" + good.substr(1), good.substr(1) + "-", "ä" + good.substr(2),
                                 std::string(1, '\0') + good, "\x01" + good})
    if (utf8_length(bad) >= 0 && !s.pattern->full_match(bad)) {
      fails_at(op_name, with(base, f.pointer, bad), f.path, "must be " + s.pattern_text);
      ++refused;
    }
  CHECK(refused > 0);
}

// requiredWhen and absentWhen, as the sibling's value makes them hold.
void check_conditions(const std::string& op_name, const Field& f, const json& base) {
  for (const Condition& c : f.member->required_when) {
    json args = with(base, f.parent_pointer + "/" + c.field, c.value);
    fails_at(op_name, without(args, f.pointer), f.path, "required when " + c.field + " is " + text(c.value));
    if (!f.member->shape->allowed.empty() && f.member->shape->type == ShapeType::integer)  // 22 or 443 when TCP
      fails_at(op_name, with(args, f.pointer, 1), f.path, " when " + c.field + " is " + text(c.value) + " (got 1)");
  }
  for (const Condition& c : f.member->absent_when) {
    json args = with(base, f.parent_pointer + "/" + c.field, c.value);
    json present = f.member->shape->allowed.empty() ? json("x") : f.member->shape->allowed.front();
    fails_at(op_name, with(args, f.pointer, present), f.path,
             "must be left out when " + c.field + " is " + text(c.value));
    passes(op_name, without(args, f.pointer));
  }
}

// Defaults, fixed or per region, are values the field itself accepts.
void check_defaults(const Field& f) {
  INFO(f.path);
  std::vector<FieldProblem> problems;
  if (f.member->default_value) validate_value(*f.member->shape, *f.member->default_value, f.path, problems);
  for (const auto& [region, value] : f.member->default_by_region)
    validate_value(*f.member->shape, value, f.path, problems);
  CHECK(problems.empty());
}

}  // namespace

TEST_CASE("every limit of the model: the largest valid value passes, one past it fails", "[validate][limits]") {
  int limited = 0, conditional = 0;
  for (const Operation* o : Model::builtin().operations()) {
    json base = first_items_only(valid_args(o->name));
    passes(o->name, base);
    for (const Field& f : input_fields(*o)) {
      if (f.member->location == Location::local) continue;  // cloudlua's own (file, offset): body_test.cpp
      INFO(o->name << " " << f.path);
      REQUIRE(base.contains(json::json_pointer(f.parent_pointer.empty() ? "" : f.parent_pointer)));
      const Shape& s = *f.member->shape;
      if (f.member->required) fails_at(o->name, without(base, f.pointer), f.path, "required");
      check_conditions(o->name, f, base);
      check_defaults(f);
      conditional += !f.member->required_when.empty() + !f.member->absent_when.empty();
      if (!has_limit(s)) continue;
      ++limited;
      if (s.type == ShapeType::string && s.allowed.empty()) check_string_lengths(o->name, f, base);
      if (s.type == ShapeType::integer) check_integer_range(o->name, f, base);
      if (!s.allowed.empty()) check_allowed_values(o->name, f, base);
      if (s.pattern) check_pattern(o->name, f, base);
    }
  }
  // The walk saw the fields it should: a model that lost its limits fails here.
  CHECK(limited >= 47);
  CHECK(conditional == 2);  // port: required for TCP, left out for ICMP
}

TEST_CASE("list lengths: Part holds at least one part, at most 10,000 by number", "[validate][limits]") {
  const Shape& parts = *input_member("CompleteMultipartUpload", "Part").shape;
  REQUIRE(parts.min_length == 1);
  json one = with(complete_args(), "/Part", json::array({{{"ETag", "e"}, {"PartNumber", 10000}}}));
  passes("CompleteMultipartUpload", one);
  fails_at("CompleteMultipartUpload", with(complete_args(), "/Part", json::array()), "Part", "at least 1 item (got 0)");
  json all = json::array();
  for (int n = 1; n <= 10000; ++n) all.push_back({{"ETag", "e"}, {"PartNumber", n}});
  passes("CompleteMultipartUpload", with(complete_args(), "/Part", all));
  all.push_back({{"ETag", "e"}, {"PartNumber", 10001}});
  fails_at("CompleteMultipartUpload", with(complete_args(), "/Part", all), "Part[10001].PartNumber", "at most 10000");
}

// The spec's limits, as its Limits and Endpoints tables state them. Paths are the
// model's members, `[]` stepping into a list's items.
TEST_CASE("the spec's limits are all in the model", "[model][limits]") {
  struct Limit {
    const char* op;
    const char* path;
    const char* key;
    json value;
  };
  const json types = kSpecInstanceTypes;
  const json zones = {"east-11", "east-12", "east-13", "east-14", "east-31", "west-12", "west-13", "jp-west-21"};
  const json name_pattern = "lowercase letters, digits and hyphen, not starting or ending with a hyphen";
  const Limit limits[] = {
      {"CompleteMultipartUpload", "Part", "minLength", 1},
      {"CompleteMultipartUpload", "Part", "ascendingBy", "PartNumber"},
      {"CompleteMultipartUpload", "Part[].PartNumber", "min", 1},
      {"CompleteMultipartUpload", "Part[].PartNumber", "max", 10000},
      {"CompleteMultipartUpload", "Part[].ETag", "required", true},
      {"CompleteMultipartUpload", "Part[].PartNumber", "required", true},
      {"CompleteMultipartUpload", "uploadId", "required", true},
      {"UploadPart", "partNumber", "max", 10000},
      {"PutObject", "Object", "maxBytes", 1024},
      {"CreateBucket", "Bucket", "minLength", 3},
      {"CreateBucket", "Bucket", "maxLength", 63},
      {"AuthorizeFirewallRules", "rules[].protocol", "enum", {"TCP", "ICMP"}},
      {"AuthorizeFirewallRules", "rules[].port", "enum", {22, 443}},
      {"AuthorizeFirewallRules", "rules[].port", "requiredWhen", {{"protocol", "TCP"}}},
      {"AuthorizeFirewallRules", "rules[].port", "absentWhen", {{"protocol", "ICMP"}}},
      {"AuthorizeFirewallRules", "rules[].cidrIp", "format", "ipv4-or-cidr"},
      {"AuthorizeFirewallRules", "rules[].description", "maxLength", 40},
      {"RestoreInstance", "backupId", "minLength", 32},
      {"RestoreInstance", "backupId", "maxLength", 32},
      {"RestoreInstance", "backupId", "patternText", "lowercase letters and digits"},
      {"RestoreInstance", "instanceId", "maxLength", 30},
      {"RestoreInstance", "instanceId", "patternText", name_pattern},
      {"RestoreInstance", "instanceType", "enum", types},
      {"RestoreInstance", "instanceType", "default", "e-large"},
      {"RestoreInstance", "firewallGroupName", "maxLength", 63},
      {"RestoreInstance", "firewallGroupName", "patternText", name_pattern},
      {"RestoreInstance", "parameterGroupName", "maxLength", 63},
      {"RestoreInstance", "parameterGroupName", "patternText", name_pattern},
      {"RestoreInstance", "diskSize", "enum", {100, 200, 300, 400}},
      {"RestoreInstance", "availabilityZone", "enum", zones},
      {"RestoreInstance",
       "availabilityZone",
       "defaultByRegion",
       {{"jp-east-1", "east-11"}, {"jp-east-3", "east-31"}, {"jp-west-1", "west-12"}, {"jp-west-2", "jp-west-21"}}},
      {"RestoreInstance", "description", "maxLength", 255},
      {"RestoreInstance", "networkConfig.privateAddress", "format", "cidr"},
      {"RestoreInstance", "objectStorageConfig.account", "minLength", 1},
      {"RestoreInstance", "objectStorageConfig.account", "maxLength", 128},
      {"RestoreInstance", "objectStorageConfig.account", "patternText", "half-width letters and digits"},
      {"RestoreInstance", "objectStorageConfig.region", "enum", {"jp-east-1", "jp-west-2"}},
      {"RestoreInstance", "objectStorageConfig.bucketUseObjects.lfs", "minLength", 3},
      {"RestoreInstance", "objectStorageConfig.bucketUseObjects.lfs", "maxLength", 32},
      {"RestoreInstance", "objectStorageConfig.bucketUseObjects.packages", "maxLength", 32},
      {"RestoreInstance", "objectStorageConfig.bucketUseObjects.containerRegistry", "minLength", 3},
      {"RestoreInstance", "objectStorageConfig.bucketUseObjects.containerRegistry", "patternText", name_pattern},
      {"RestoreClusterFromSnapshot", "cluster.name", "maxLength", 40},
      {"RestoreClusterFromSnapshot", "cluster.name", "patternText", name_pattern},
      {"RestoreClusterFromSnapshot", "cluster.description", "maxLength", 255},
      {"RestoreClusterFromSnapshot", "cluster.addonsConfig.httpLoadBalancing.disabled", "default", false},
      {"RestoreClusterFromSnapshot", "cluster.networkConfig.networkId", "default", "net-COMMON_PRIVATE"},
      {"RestoreClusterFromSnapshot", "cluster.tags[].key", "maxLength", 128},
      {"RestoreClusterFromSnapshot", "cluster.tags[].value", "maxLength", 256},
      {"UpdateSnapshot", "snapshot.name", "maxLength", 40},
      {"UpdateSnapshot", "snapshot.name", "patternText", name_pattern},
      {"UpdateSnapshot", "snapshot.description", "maxLength", 255},
      {"UpdateSnapshot", "snapshot.expirationTime", "type", "timestamp"},
      {"UpdateSnapshot", "snapshot.tags[].key", "maxLength", 128},
      {"UpdateSnapshot", "snapshot.tags[].value", "maxLength", 256},
  };
  for (const Limit& l : limits) {
    INFO(l.op << " " << l.path << " " << l.key);
    // Find the member, one dotted step at a time.
    const Member* m = nullptr;
    const Shape* shape = op(l.op).input;
    std::string rest = l.path;
    while (!rest.empty()) {
      size_t dot = rest.find('.');
      std::string step = rest.substr(0, dot);
      rest = dot == std::string::npos ? "" : rest.substr(dot + 1);
      bool into_list = step.size() > 2 && step.compare(step.size() - 2, 2, "[]") == 0;
      if (into_list) step.resize(step.size() - 2);
      REQUIRE(shape != nullptr);
      m = shape->find_member(step);
      REQUIRE(m != nullptr);
      shape = into_list ? m->shape->member : m->shape;
    }
    REQUIRE(m != nullptr);
    const Shape& s = *m->shape;
    std::string key = l.key;
    if (key == "minLength") CHECK(s.min_length == l.value.get<long long>());
    else if (key == "maxLength") CHECK(s.max_length == l.value.get<long long>());
    else if (key == "maxBytes") CHECK(s.max_bytes == l.value.get<long long>());
    else if (key == "min") CHECK(s.min == l.value.get<long long>());
    else if (key == "max") CHECK(s.max == l.value.get<long long>());
    else if (key == "enum") CHECK(json(s.allowed) == l.value);
    else if (key == "patternText") CHECK((s.pattern && s.pattern_text == l.value.get<std::string>()));
    else if (key == "format") CHECK(s.format == l.value.get<std::string>());
    else if (key == "ascendingBy") CHECK(s.ascending_by == l.value.get<std::string>());
    else if (key == "required") CHECK(m->required == l.value.get<bool>());
    else if (key == "default") CHECK((m->default_value && *m->default_value == l.value));
    else if (key == "type") CHECK(shape_type_name(s.type) == l.value.get<std::string>());
    else if (key == "defaultByRegion") CHECK(json(m->default_by_region) == l.value);
    else if (key == "requiredWhen" || key == "absentWhen") {
      const auto& conditions = key == "requiredWhen" ? m->required_when : m->absent_when;
      REQUIRE(conditions.size() == 1);
      CHECK(json{{conditions[0].field, conditions[0].value}} == l.value);
    } else {
      FAIL("unknown key " << key);
    }
  }
}

TEST_CASE("the emulator's default zone per region is the model's", "[limits]") {
  const Member& zone = input_member("RestoreInstance", "availabilityZone");
  REQUIRE(zone.default_by_region.size() == 4);
  for (const auto& [region, value] : zone.default_by_region) {
    INFO(region);
    CHECK(default_zone(region) == value.get<std::string>());
  }
}
