// Emulator::answer: one request served as a server thread serves it, without a
// socket (the seam the emulator's fuzz target drives).
#include <catch2/catch.hpp>

#include "core/model/protocol.h"
#include "core/wire/sigv4.h"
#include "emulator/emulator.h"
#include "emulator/service.h"

namespace {

using cloud::json;

// UpdateSnapshot of snap-1, signed as the client signs it (time: now).
cloud::SignOutput signed_update(const std::string& body) {
  cloud::SignInput in;
  in.method = "PUT";
  in.url = "http://127.0.0.1:8080/v1/snapshots/snap-1";
  in.headers = {{"Content-Type", "application/json"}};
  in.body = body;
  in.region = "jp-east-1";
  in.service = "cluster";
  in.credentials = {cloud::kEmulatorAccessKey, cloud::kEmulatorSecretKey, ""};
  auto out = cloud::sign(in);
  REQUIRE(out.ok());
  return *out;
}

}  // namespace

TEST_CASE("Emulator::answer serves a signed request without being started") {
  cloud::Emulator emulator;
  std::string body = R"({"snapshot":{"description":"no socket"}})";
  auto r = emulator.answer("cluster", "PUT", "/v1/snapshots/snap-1", signed_update(body).headers, body);
  REQUIRE(r.ok());
  CHECK(r->status == 200);
  CHECK(json::parse(r->body)["snapshot"]["description"] == "no socket");
  CHECK(cloud::header_value(r->headers, "x-ext-request-id").rfind("emu-", 0) == 0);
  CHECK(emulator.platform().state()["snapshots"][0]["description"] == "no socket");
}

TEST_CASE("Emulator::answer refuses what the server refuses, and names the APIs it has") {
  cloud::Emulator emulator;
  std::string body = R"({"snapshot":{}})";
  auto unsigned_request = emulator.answer("cluster", "PUT", "/v1/snapshots/snap-1", {}, body);
  REQUIRE(unsigned_request.ok());
  CHECK(unsigned_request->status == 403);
  const cloud::Api& api = *cloud::Model::builtin().api("cluster");
  CHECK(cloud::parse_error(api, *unsigned_request).code == "MissingAuthenticationToken");

  auto unknown = emulator.answer("compute", "GET", "/", {}, "");
  REQUIRE_FALSE(unknown.ok());
  CHECK(unknown.error().kind == cloud::ErrorKind::config);
  CHECK(unknown.error().code == "UnknownApi");
  CHECK(unknown.error().message == "no API named 'compute' (APIs: catalog, cluster, devops, storage)");
}

TEST_CASE("Emulator::answer gives a large object's bytes, which a server sends from the store") {
  cloud::Emulator emulator;
  std::string big(200000, 'x');
  big[12345] = 'y';
  auto signed_storage = [](const std::string& method, const std::string& body) {
    cloud::SignInput in;
    in.method = method;
    in.url = "http://127.0.0.1:8080/demo-bucket/big.bin";
    in.body = body;
    in.region = "jp-east-1";
    in.service = "s3";
    in.credentials = {cloud::kEmulatorAccessKey, cloud::kEmulatorSecretKey, ""};
    in.policy.payload_hash = cloud::PayloadHash::header;
    auto out = cloud::sign(in);
    REQUIRE(out.ok());
    return out->headers;
  };
  emulator.platform().load_fixtures();
  auto put = emulator.answer("storage", "PUT", "/demo-bucket/big.bin", signed_storage("PUT", big), big);
  REQUIRE(put.ok());
  INFO(put->body);
  REQUIRE(put->status == 200);
  auto got = emulator.answer("storage", "GET", "/demo-bucket/big.bin", signed_storage("GET", ""), "");
  REQUIRE(got.ok());
  CHECK(got->status == 200);
  CHECK(got->body == big);
}

TEST_CASE("Emulator::answer: an unsigned storage request is anonymous: NoSuchBucket or AccessDenied, as S3 answers") {
  cloud::Emulator emulator;
  const cloud::Api& storage = *cloud::Model::builtin().api("storage");
  auto code_of = [&](const char* method, const char* path) {
    auto r = emulator.answer("storage", method, path, {}, "");
    REQUIRE(r.ok());
    cloud::Error e = cloud::parse_error(storage, *r);
    return std::to_string(r->status) + " " + e.code + ": " + e.message;
  };
  CHECK(code_of("GET", "/no-such-bucket/no-such-key") == "404 NoSuchBucket: The specified bucket does not exist");
  CHECK(code_of("GET", "/no-such-bucket") == "404 NoSuchBucket: The specified bucket does not exist");
  CHECK(code_of("GET", "/") == "403 AccessDenied: Access Denied");                         // ListBuckets
  CHECK(code_of("GET", "/demo-bucket") == "403 AccessDenied: Access Denied");              // private: not listed
  CHECK(code_of("GET", "/demo-bucket/no-such-key") == "403 AccessDenied: Access Denied");  // nor told what it holds
  CHECK(code_of("PUT", "/anyones") == "403 AccessDenied: Access Denied");                  // CreateBucket
  CHECK(code_of("POST", "/_cloudlua/reset") == "403 AccessDenied: Access Denied");         // the control plane
  auto json_api = emulator.answer("devops", "GET", "/", {}, "");  // the JSON APIs keep their own code
  REQUIRE(json_api.ok());
  CHECK(cloud::parse_error(*cloud::Model::builtin().api("devops"), *json_api).code == "MissingAuthenticationToken");
}
