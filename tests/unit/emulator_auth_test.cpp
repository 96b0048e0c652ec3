// The emulator's signature checks, each refusal with its own code, driven by raw
// requests signed with core's signer (so each can be broken in exactly one way).
#include <ctime>

#include "emulator_harness.h"

namespace {

using cloud::json;
using harness::code_of;
using harness::Running;
using harness::send;

std::string stamp_minutes_ago(int minutes) {
  std::time_t t = std::time(nullptr) - minutes * 60;
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[20];
  std::strftime(buf, sizeof buf, "%Y%m%dT%H%M%SZ", &tm);
  return buf;
}

cloud::SignInput update_request(const std::string& base) {
  cloud::SignInput in;
  in.method = "PUT";
  in.url = base + "/v1/snapshots/snap-1";
  in.headers = {{"Content-Type", "application/json"}};
  in.body = R"({"snapshot":{"description":"signed by hand"}})";
  in.region = "jp-east-1";
  in.service = "cluster";
  in.credentials = {cloud::kEmulatorAccessKey, cloud::kEmulatorSecretKey, ""};
  return in;
}

}  // namespace

TEST_CASE("The emulator accepts a correctly signed request in either dialect") {
  Running e;
  for (const cloud::Dialect* d : {&cloud::Dialect::ext(), &cloud::Dialect::aws()}) {
    cloud::SignInput in = update_request(e.urls["cluster"]);
    in.dialect = d;
    auto s = cloud::sign(in);
    REQUIRE(s.ok());
    auto r = send(e.urls["cluster"], *s, "PUT", in.body);
    REQUIRE(r);
    INFO(r->body);
    CHECK(r->status == 200);
  }
}

TEST_CASE("Each signature problem is refused with its own code, in either dialect") {
  Running e;
  std::string base = e.urls["cluster"];
  cloud::SignInput in = update_request(base);
  in.dialect = GENERATE(&cloud::Dialect::ext(), &cloud::Dialect::aws());
  INFO("dialect " << in.dialect->name);

  SECTION("unsigned") {
    httplib::Client client(base);
    auto r = client.Put("/v1/snapshots/snap-1", in.body, "application/json");
    CHECK(r->status == 403);
    CHECK(code_of(r) == "MissingAuthenticationToken");
  }
  SECTION("unknown access key") {
    in.credentials.access_key_id = "SOMEONEELSE";
    auto r = send(base, *cloud::sign(in), "PUT", in.body);
    CHECK(r->status == 403);
    CHECK(code_of(r) == "InvalidAccessKeyId");
  }
  SECTION("wrong secret") {
    in.credentials.secret_access_key = "not-it";
    auto r = send(base, *cloud::sign(in), "PUT", in.body);
    CHECK(r->status == 403);
    CHECK(code_of(r) == "SignatureDoesNotMatch");
  }
  SECTION("body changed after signing") {
    auto r = send(base, *cloud::sign(in), "PUT", R"({"snapshot":{"description":"tampered"}})");
    CHECK(code_of(r) == "SignatureDoesNotMatch");
  }
  SECTION("clock skew beyond 15 minutes") {
    in.time = stamp_minutes_ago(16);
    auto r = send(base, *cloud::sign(in), "PUT", in.body);
    CHECK(r->status == 403);
    CHECK(code_of(r) == "RequestTimeTooSkewed");
  }
  SECTION("clock skew within 15 minutes is fine") {
    in.time = stamp_minutes_ago(14);
    CHECK(send(base, *cloud::sign(in), "PUT", in.body)->status == 200);
  }
}

TEST_CASE("A dialect the emulator was not told to accept is refused") {
  cloud::EmulatorOptions options;
  options.dialect = "aws";
  Running e(options);
  cloud::SignInput in = update_request(e.urls["cluster"]);
  auto r = send(e.urls["cluster"], *cloud::sign(in), "PUT", in.body);
  CHECK(r->status == 403);
  CHECK(code_of(r) == "IncompleteSignature");
}

TEST_CASE("On the storage API a payload that differs from its signed SHA-256 is refused, in either dialect") {
  Running e;
  cloud::SignInput in = harness::storage_request(e.urls["storage"], "POST", "/demo-bucket/key?uploadId=nothing",
                                                 "<CompleteMultipartUpload/>");
  in.dialect = GENERATE(&cloud::Dialect::ext(), &cloud::Dialect::aws());
  std::string header = cloud::to_lower(in.dialect->header_prefix) + "content-sha256";
  INFO(header);
  in.headers = {{header, cloud::sha256_hex("something else")}};
  auto r = send(e.urls["storage"], in);
  CHECK(r->status == 400);
  CHECK(code_of(r) == "ContentSHA256Mismatch");
  // the same request with the true hash passes the check (and is refused for its empty part list)
  in.headers = {{header, cloud::sha256_hex(in.body)}};
  CHECK(code_of(send(e.urls["storage"], in)) == "MalformedXML");
}

TEST_CASE("A presigned PUT replayed with an unsigned x-amz-copy-source is refused and copies nothing") {
  Running e;
  std::string base = e.urls["storage"];
  REQUIRE(send(base, harness::storage_request(base, "PUT", "/demo-bucket/secret.txt", "the signer's secret"))->status ==
          200);
  cloud::SignInput in = harness::storage_request(base, "PUT", "/demo-bucket/upload.txt");
  in.dialect = GENERATE(&cloud::Dialect::aws(), &cloud::Dialect::ext());
  INFO("dialect " << in.dialect->name);
  in.presign_expires = 300;
  in.payload_sha256 = cloud::kUnsignedPayload;
  auto presigned = cloud::sign(in);
  REQUIRE(presigned.ok());
  cloud::SignOutput replayed = *presigned;
  replayed.headers.emplace_back(cloud::to_lower(in.dialect->header_prefix) + "copy-source", "/demo-bucket/secret.txt");
  auto r = send(base, replayed, "PUT", "");
  REQUIRE(r);
  CHECK(r->status == 403);
  CHECK(code_of(r) == "AccessDenied");
  CHECK(r->body.find("There were headers present in the request which were not signed") != std::string::npos);
  CHECK(r->body.find("<HeadersNotSigned>" + cloud::to_lower(in.dialect->header_prefix) + "copy-source<") !=
        std::string::npos);
  CHECK(code_of(send(base, harness::storage_request(base, "GET", "/demo-bucket/upload.txt"))) == "NoSuchKey");
  // the URL as it was signed still does what it says
  CHECK(send(base, *presigned, "PUT", "uploaded")->status == 200);
  CHECK(send(base, harness::storage_request(base, "GET", "/demo-bucket/upload.txt"))->body == "uploaded");
}

TEST_CASE("A header-signed request with an added unsigned x-amz-* or x-ext-* header is refused, in either dialect") {
  Running e;
  std::string base = e.urls["storage"];
  cloud::SignInput in = harness::storage_request(base, "PUT", "/demo-bucket/k.txt", "body");
  in.dialect = GENERATE(&cloud::Dialect::aws(), &cloud::Dialect::ext());
  std::string added = GENERATE(std::string("x-amz-meta-a"), std::string("X-Ext-Acl"));
  INFO("dialect " << in.dialect->name << ", added " << added);
  auto s = cloud::sign(in);
  REQUIRE(s.ok());
  s->headers.emplace_back(added, "public-read");
  auto r = send(base, *s, "PUT", in.body);
  REQUIRE(r);
  CHECK(r->status == 403);
  CHECK(code_of(r) == "AccessDenied");
  CHECK(r->body.find("<HeadersNotSigned>" + cloud::to_lower(added) + "<") != std::string::npos);
  // signed, the same header is accepted
  in.headers.emplace_back(added, "public-read");
  CHECK(send(base, in)->status == 200);
}
