// What the emulator refuses, seen on the wire: the field list of a 400 reaching the
// client's error, bytes that are not UTF-8 where text is expected (400, never 500,
// and no header quoting an internal failure), and a credential scope naming another
// region or service, refused as a real server refuses it.
#include "core/model/protocol.h"
#include "core/base/utf8.h"
#include "core/model/validate.h"
#include "emulator_harness.h"

namespace {

using cloud::json;
using harness::code_of;
using harness::Running;
using harness::send;

cloud::SignInput update_request(const std::string& base, const std::string& body) {
  cloud::SignInput in;
  in.method = "PUT";
  in.url = base + "/v1/snapshots/snap-1";
  in.headers = {{"Content-Type", "application/json"}};
  in.body = body;
  in.region = "jp-east-1";
  in.service = "cluster";
  in.credentials = {cloud::kEmulatorAccessKey, cloud::kEmulatorSecretKey, ""};
  return in;
}

// The error the client makes of an answer, with the client's own parser.
cloud::Error error_of(const std::string& api, const httplib::Result& r) {
  cloud::HttpResponse response;
  response.status = r->status;
  for (const auto& [name, value] : r->headers) response.headers.emplace_back(name, value);
  response.body = r->body;
  return cloud::parse_error(*cloud::Model::builtin().api(api), response);
}

// True when `e` lists a problem at `path` whose text contains `text`.
bool lists(const cloud::Error& e, const std::string& path, const std::string& text) {
  for (const cloud::FieldProblem& f : e.fields)
    if (f.path == path && f.problem.find(text) != std::string::npos) return true;
  return false;
}

// A 400 with a well-formed body, and no header carrying an internal failure's text.
void require_clean_400(const httplib::Result& r) {
  REQUIRE(r);
  INFO(r->body);
  CHECK(r->status == 400);
  CHECK_FALSE(r->has_header("EXCEPTION_WHAT"));
  CHECK(cloud::utf8_length(r->body) >= 0);
  for (const auto& [name, value] : r->headers) CHECK(value.find("json.exception") == std::string::npos);
}

// An upload of `key` in the fixture bucket, and the target that completes it.
std::string completion_target(Running& e, const std::string& key) {
  std::string base = e.urls["storage"];
  auto created = send(base, harness::storage_request(base, "POST", "/demo-bucket/" + key + "?uploads"));
  REQUIRE(created->status == 200);
  size_t at = created->body.find("<UploadId>") + 10;
  return "/demo-bucket/" + key + "?uploadId=" + created->body.substr(at, created->body.find("</UploadId>") - at);
}

}  // namespace

TEST_CASE("The field list of an emulator's 400 reaches the client's error, in JSON and in XML") {
  Running e;
  SECTION("a JSON API") {
    auto r =
        send(e.urls["cluster"], update_request(e.urls["cluster"], R"({"snapshot":{"name":"-x","descripton":"typo"}})"));
    REQUIRE(r->status == 400);
    cloud::Error err = error_of("cluster", r);
    INFO(err.describe());
    CHECK(err.code == "ValidationError");
    CHECK(err.fields.size() == 2);
    CHECK(lists(err, "snapshot.name", "must be lowercase letters"));
    CHECK(lists(err, "snapshot.descripton", "did you mean 'description'?"));
  }
  SECTION("the storage API") {
    std::string base = e.urls["storage"];
    std::string body = "<CompleteMultipartUpload><Part><PartNumber>0</PartNumber></Part></CompleteMultipartUpload>";
    auto r = send(base, harness::storage_request(base, "POST", completion_target(e, "f.bin"), body));
    REQUIRE(r->status == 400);
    cloud::Error err = error_of("storage", r);
    INFO(err.describe());
    CHECK(err.code == "MalformedXML");
    CHECK(err.fields.size() == 2);
    CHECK(lists(err, "Part[1].ETag", "required"));
    CHECK(lists(err, "Part[1].PartNumber", "at least 1"));
  }
}

TEST_CASE("Bytes that are not UTF-8 where the emulator expects text are a 400, never a 500") {
  Running e;
  std::string base = e.urls["cluster"];
  cloud::SignInput in = update_request(base, R"({"snapshot":{"description":"x"}})");
  in.dialect = GENERATE(&cloud::Dialect::ext(), &cloud::Dialect::aws());
  auto signed_request = cloud::sign(in);
  REQUIRE(signed_request.ok());
  std::string date_header = cloud::to_lower(in.dialect->header_prefix) + "date";
  INFO("dialect " << in.dialect->name);

  SECTION("in the Authorization header") {
    for (auto& [name, value] : signed_request->headers)
      if (cloud::iequals(name, "Authorization")) value.replace(value.find("Credential=") + 11, 1, "\xff");
    auto r = send(base, *signed_request, "PUT", in.body);
    require_clean_400(r);
    CHECK(code_of(r) == "InvalidArgument");
  }
  SECTION("in the date header") {
    for (auto& [name, value] : signed_request->headers)
      if (cloud::iequals(name, date_header)) value = "2026\xff\xfe";
    auto r = send(base, *signed_request, "PUT", in.body);
    require_clean_400(r);
    CHECK(code_of(r) == "InvalidArgument");
    CHECK(json::parse(r->body)["message"] == "the " + date_header + " header is not valid UTF-8 text");
  }
  SECTION("in a JSON body") {
    in.body = "{\"snapshot\":{\"description\":\"\xff\"}}";
    auto r = send(base, in);
    require_clean_400(r);
    CHECK(code_of(r) == "SerializationException");
  }
}

TEST_CASE("An XML element name that is not UTF-8 is a 400 naming the element, never a 500") {
  Running e;
  std::string base = e.urls["storage"];
  std::string body =
      "<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>\"e\"</ETag></Part>"
      "<X\xff\xfe>1</X\xff\xfe></CompleteMultipartUpload>";
  auto r = send(base, harness::storage_request(base, "POST", completion_target(e, "g.bin"), body));
  require_clean_400(r);
  CHECK(code_of(r) == "MalformedXML");
  cloud::Error err = error_of("storage", r);
  REQUIRE(err.fields.size() == 1);
  CHECK(err.fields[0].path == "X\xEF\xBF\xBD\xEF\xBF\xBD");  // each stray byte shown as U+FFFD
  CHECK_THAT(err.fields[0].problem, Catch::Contains("unknown field"));
}

TEST_CASE("The credential scope must name the emulator's region and the API's service") {
  cloud::EmulatorOptions options;
  options.region = "jp-west-2";
  Running e(options);
  const cloud::Dialect* dialect = GENERATE(&cloud::Dialect::ext(), &cloud::Dialect::aws());
  INFO("dialect " << dialect->name);
  cloud::SignInput json_api = update_request(e.urls["cluster"], R"({"snapshot":{"description":"scoped"}})");
  cloud::SignInput storage = harness::storage_request(e.urls["storage"], "PUT", "/demo-bucket/scoped.txt", "hello");
  for (cloud::SignInput* in : {&json_api, &storage}) {
    in->dialect = dialect;
    in->region = "jp-west-2";
  }

  SECTION("the right region and service are accepted") {
    CHECK(send(e.urls["cluster"], json_api)->status == 200);
    CHECK(send(e.urls["storage"], storage)->status == 200);
  }
  SECTION("another region: the JSON services' SignatureDoesNotMatch, S3's AuthorizationHeaderMalformed") {
    json_api.region = storage.region = "jp-east-1";
    auto r = send(e.urls["cluster"], json_api);
    CHECK(r->status == 403);
    CHECK(code_of(r) == "SignatureDoesNotMatch");
    CHECK(json::parse(r->body)["message"] ==
          "Credential should be scoped to a valid region, not 'jp-east-1' (this endpoint is in 'jp-west-2')");
    auto s = send(e.urls["storage"], storage);
    CHECK(s->status == 400);
    CHECK(code_of(s) == "AuthorizationHeaderMalformed");
    CHECK_THAT(s->body, Catch::Contains("the region 'jp-east-1' is wrong; expecting 'jp-west-2'") &&
                            Catch::Contains("<Region>jp-west-2</Region>"));
  }
  SECTION("another service: the same codes, naming the service expected") {
    json_api.service = "devops";
    storage.service = "cluster";
    auto r = send(e.urls["cluster"], json_api);
    CHECK(r->status == 403);
    CHECK(code_of(r) == "SignatureDoesNotMatch");
    CHECK_THAT(r->body, Catch::Contains("Credential should be scoped to correct service: 'cluster'"));
    auto s = send(e.urls["storage"], storage);
    CHECK(s->status == 400);
    CHECK(code_of(s) == "AuthorizationHeaderMalformed");
    CHECK_THAT(s->body, Catch::Contains("incorrect service 'cluster'. This endpoint belongs to 's3'."));
  }
}

TEST_CASE("Names S3 refuses are refused by the emulator with S3's codes when sent raw") {
  Running e;
  std::string base = e.urls["storage"];
  auto put = [&](const std::string& target) {
    return send(base, harness::storage_request(base, "PUT", target, "bytes"));
  };
  // a NUL stored would be cut from every listing: x\0y and x\0z would both list as x
  auto r = put("/demo-bucket/x%00y");
  CHECK(r->status == 400);
  CHECK(code_of(r) == "InvalidArgument");
  CHECK(r->body.find("<Path>Object</Path>") != std::string::npos);
  r = put("/demo-bucket/" + std::string(1025, 'k'));
  CHECK(r->status == 400);
  CHECK(code_of(r) == "KeyTooLongError");
  CHECK(put("/demo-bucket/" + std::string(1024, 'k'))->status == 200);
  r = send(base, harness::storage_request(base, "PUT", "/a%00b"));
  CHECK(r->status == 400);
  CHECK(code_of(r) == "InvalidBucketName");
  r = send(base, harness::storage_request(base, "PUT", "/Upper_Case"));
  CHECK(code_of(r) == "InvalidBucketName");
}
