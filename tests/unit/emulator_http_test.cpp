// The emulator's storage API as an S3 client sees it on the wire: what HEAD says of
// an object, the content type of bytes, Content-MD5 checked as S3 checks it, XML
// error bodies naming what was wrong with the request id of the response header,
// and the aws dialect's x-amz-* response headers.
#include <regex>

#include "emulator_harness.h"

namespace {

using cloud::json;
using harness::code_of;
using harness::Running;
using harness::send;
using harness::storage_request;

// PUTs `bytes` at /demo-bucket/<key> (the fixture bucket) and checks it was stored.
void put(Running& e, const std::string& key, const std::string& bytes) {
  auto r = send(e.urls["storage"], storage_request(e.urls["storage"], "PUT", "/demo-bucket/" + key, bytes));
  REQUIRE(r);
  INFO(r->body);
  REQUIRE(r->status == 200);
}

// The text of <Name> in an XML body.
std::string element(const std::string& body, const std::string& name) {
  std::smatch m;
  return std::regex_search(body, m, std::regex("<" + name + ">([^<]*)</" + name + ">")) ? m[1].str() : "";
}

}  // namespace

TEST_CASE("HEAD of an object says its length and type, and sends no bytes") {
  Running e;
  put(e, "ten.bin", "0123456789");
  auto head = send(e.urls["storage"], storage_request(e.urls["storage"], "HEAD", "/demo-bucket/ten.bin"));
  REQUIRE(head);
  CHECK(head->status == 200);
  CHECK(head->get_header_value("Content-Length") == "10");
  CHECK(head->get_header_value("Content-Type") == "application/octet-stream");  // the type the PUT gave (httplib's)
  CHECK(head->get_header_value("ETag") == "\"781e5e245d69b566979b86e28d23f2c7\"");
  CHECK(head->body.empty());

  cloud::SignInput ranged = storage_request(e.urls["storage"], "HEAD", "/demo-bucket/ten.bin");
  ranged.headers = {{"Range", "bytes=2-5"}};
  auto part = send(e.urls["storage"], ranged);
  CHECK(part->status == 206);
  CHECK(part->get_header_value("Content-Length") == "4");
  CHECK(part->get_header_value("Content-Range") == "bytes 2-5/10");
}

TEST_CASE("GET of an object sends its bytes as put, with the type the PUT gave") {
  Running e;
  std::string binary("\0\x01\xfe\xff<Error>", 11);
  put(e, "b.bin", binary);
  auto got = send(e.urls["storage"], storage_request(e.urls["storage"], "GET", "/demo-bucket/b.bin"));
  CHECK(got->status == 200);
  CHECK(got->body == binary);
  CHECK(got->get_header_value("Content-Type") == "application/octet-stream");
  CHECK(got->get_header_value("Content-Length") == "11");
}

TEST_CASE("A large object comes back byte for byte, whole, in ranges and replaced while read, and HEAD sends none") {
  Running e;
  std::string big;
  for (size_t i = 0; i < (3u << 20) + 5; ++i) big += static_cast<char>((i * 2654435761u) >> 13);
  put(e, "big.bin", big);
  std::string url = e.urls["storage"];
  auto got = send(url, storage_request(url, "GET", "/demo-bucket/big.bin"));
  REQUIRE(got);
  CHECK(got->status == 200);
  CHECK(got->get_header_value("Content-Length") == std::to_string(big.size()));
  CHECK(got->get_header_value("ETag") == "\"" + cloud::hex(cloud::md5(big)) + "\"");
  CHECK(got->body == big);  // sent from the store, not copied into the answer

  for (auto [range, first, length] : {std::tuple<std::string, size_t, size_t>{"bytes=100-200099", 100, 200000},
                                      {"bytes=-70000", big.size() - 70000, 70000},
                                      {"bytes=3145000-", 3145000, big.size() - 3145000}}) {
    INFO(range);
    cloud::SignInput ranged = storage_request(url, "GET", "/demo-bucket/big.bin");
    ranged.headers = {{"Range", range}};
    auto part = send(url, ranged);
    REQUIRE(part);
    CHECK(part->status == 206);
    CHECK(part->body == big.substr(first, length));
  }

  auto head = send(url, storage_request(url, "HEAD", "/demo-bucket/big.bin"));
  REQUIRE(head);
  CHECK(head->get_header_value("Content-Length") == std::to_string(big.size()));
  CHECK(head->body.empty());

  put(e, "big.bin", "small now");
  auto again = send(url, storage_request(url, "GET", "/demo-bucket/big.bin"));
  REQUIRE(again);
  CHECK(again->body == "small now");
}

TEST_CASE("The client reads HeadObject's ContentLength") {
  Running e;
  put(e, "ten.bin", "0123456789");
  cloud::Client client(e.client_config());
  auto r = client.call("HeadObject", {{"Bucket", "demo-bucket"}, {"Object", "ten.bin"}});
  REQUIRE(r.ok());
  CHECK(r->result["ContentLength"] == 10);
}

TEST_CASE("Content-MD5 is checked as S3 checks it") {
  Running e;
  std::string base = e.urls["storage"];
  cloud::SignInput in = storage_request(base, "PUT", "/demo-bucket/md5.txt", "hello");

  SECTION("the right digest is accepted") {
    in.headers = {{"Content-MD5", cloud::base64(cloud::md5("hello"))}};
    CHECK(send(base, in)->status == 200);
  }
  SECTION("another body's digest is BadDigest, and nothing is stored") {
    in.headers = {{"Content-MD5", cloud::base64(cloud::md5("hellO"))}};
    auto r = send(base, in);
    CHECK(r->status == 400);
    CHECK(code_of(r) == "BadDigest");
    CHECK(send(base, storage_request(base, "GET", "/demo-bucket/md5.txt"))->status == 404);
  }
  SECTION("what is not a base64 MD5 is InvalidDigest") {
    in.headers = {{"Content-MD5", "5d41402abc4b2a76b9719d911017c592"}};
    auto r = send(base, in);
    CHECK(r->status == 400);
    CHECK(code_of(r) == "InvalidDigest");
  }
}

TEST_CASE("An InvalidPart error body names the upload, part and ETag, with the request id of the header") {
  Running e;
  std::string base = e.urls["storage"];
  auto created = send(base, storage_request(base, "POST", "/demo-bucket/big?uploads"));
  REQUIRE(created->status == 200);
  std::string upload = element(created->body, "UploadId");
  REQUIRE_FALSE(upload.empty());
  std::string list =
      "<CompleteMultipartUpload xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"><Part>"
      "<PartNumber>1</PartNumber><ETag>\"00000000000000000000000000000000\"</ETag></Part>"
      "</CompleteMultipartUpload>";
  auto r = send(base, storage_request(base, "POST", "/demo-bucket/big?uploadId=" + upload, list));
  CHECK(r->status == 400);
  CHECK(r->get_header_value("Content-Type") == "application/xml");
  CHECK(element(r->body, "Code") == "InvalidPart");
  CHECK(element(r->body, "UploadId") == upload);
  CHECK(element(r->body, "PartNumber") == "1");
  CHECK(element(r->body, "ETag") == "\"00000000000000000000000000000000\"");
  CHECK_FALSE(element(r->body, "Message").empty());
  std::string id = r->get_header_value("x-ext-request-id");
  CHECK_FALSE(id.empty());
  CHECK(element(r->body, "RequestId") == id);
}

TEST_CASE("A JSON API's error body has code, message and the request id of the header") {
  Running e;
  cloud::SignInput in;
  in.method = "PUT";
  in.url = e.urls["cluster"] + "/v1/snapshots/no-such-snapshot";
  in.headers = {{"Content-Type", "application/json"}};
  in.body = R"({"snapshot":{"description":"x"}})";
  in.region = "jp-east-1";
  in.service = "cluster";
  in.credentials = {cloud::kEmulatorAccessKey, cloud::kEmulatorSecretKey, ""};
  auto r = send(e.urls["cluster"], in);
  CHECK(r->status == 404);
  json body = json::parse(r->body);
  CHECK(body["code"] == "SnapshotNotFound");
  CHECK(body["message"].get<std::string>().find("no-such-snapshot") != std::string::npos);
  CHECK(body["requestId"] == r->get_header_value("x-ext-request-id"));
}

TEST_CASE("In the aws dialect the platform's x-ext-* response headers are x-amz-*") {
  Running e;
  std::string base = e.urls["storage"];
  cloud::SignInput in = storage_request(base, "PUT", "/demo-bucket/aws.txt", "hello");
  in.dialect = &cloud::Dialect::aws();
  auto r = send(base, in);
  REQUIRE(r->status == 200);
  CHECK(r->has_header("x-amz-request-id"));
  CHECK(r->has_header("x-amz-id-2"));  // S3's own name for the second identifier
  CHECK(r->get_header_value("x-amz-server-side-encryption") == "AES256");
  CHECK_FALSE(r->has_header("x-ext-request-id"));
  CHECK_FALSE(r->has_header("x-ext-server-side-encryption"));
}

TEST_CASE("A completion answers with the response headers the spec lists") {
  Running e;
  std::string base = e.urls["storage"];
  auto created = send(base, storage_request(base, "POST", "/demo-bucket/obj?uploads"));
  std::string upload = element(created->body, "UploadId");
  auto part = send(base, storage_request(base, "PUT", "/demo-bucket/obj?partNumber=1&uploadId=" + upload, "hello"));
  REQUIRE(part->status == 200);
  std::string list =
      "<CompleteMultipartUpload xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"><Part>"
      "<PartNumber>1</PartNumber><ETag>" +
      part->get_header_value("ETag") +
      "</ETag></Part>"
      "</CompleteMultipartUpload>";
  auto r = send(base, storage_request(base, "POST", "/demo-bucket/obj?uploadId=" + upload, list));
  REQUIRE(r->status == 200);
  CHECK(std::regex_match(r->get_header_value("Date"),
                         std::regex(R"([A-Z][a-z]{2}, \d\d [A-Z][a-z]{2} \d{4} \d\d:\d\d:\d\d GMT)")));
  CHECK(r->get_header_value("Content-Type") == "application/xml");
  CHECK(r->get_header_value("Content-Length") == std::to_string(r->body.size()));
  for (const char* h :
       {"x-ext-request-id", "x-ext-id-2", "x-storage-sg-trace-id", "X-Gateway-Endpoint-Request", "x-ext-version-id"}) {
    INFO(h);
    CHECK_FALSE(r->get_header_value(h).empty());
  }
  CHECK(r->get_header_value("x-ext-server-side-encryption") == "AES256");
  CHECK(element(r->body, "ETag") == "\"62109206880d38a4010a98e11243924a-1\"");
  // two answers, two sets of identifiers
  CHECK(part->get_header_value("x-ext-id-2") != r->get_header_value("x-ext-id-2"));
}

TEST_CASE("The path forms S3 clients send: PUT /bucket/, HEAD on a bucket, an x-id query parameter") {
  Running e;
  std::string base = e.urls["storage"];
  auto made = send(base, storage_request(base, "PUT", "/slashed/"));  // s3cmd's CreateBucket
  REQUIRE(made);
  CHECK(made->status == 200);
  CHECK(made->get_header_value("Location") == "/slashed");
  auto head = send(base, storage_request(base, "HEAD", "/slashed"));
  CHECK(head->status == 200);
  CHECK(head->get_header_value("x-ext-bucket-region") == "jp-east-1");
  CHECK(head->body.empty());
  CHECK(send(base, storage_request(base, "HEAD", "/slashed/"))->status == 200);
  CHECK(send(base, storage_request(base, "HEAD", "/no-such-bucket"))->status == 404);

  auto put = send(base, storage_request(base, "PUT", "/slashed/k.txt?x-id=PutObject", "hello"));  // the vendor SDK's
  CHECK(put->status == 200);
  auto got = send(base, storage_request(base, "GET", "/slashed/k.txt?x-id=GetObject"));
  CHECK(got->body == "hello");
  auto listed = send(base, storage_request(base, "GET", "/slashed/?list-type=2&prefix=k&x-id=ListObjectsV2"));
  CHECK(listed->status == 200);
  CHECK(element(listed->body, "Key") == "k.txt");
  CHECK(element(listed->body, "KeyCount") == "1");
  auto location = send(base, storage_request(base, "GET", "/slashed?location"));
  CHECK(location->body.find(">jp-east-1</LocationConstraint>") != std::string::npos);
  CHECK(send(base, storage_request(base, "DELETE", "/slashed/k.txt?x-id=DeleteObject"))->status == 204);
  CHECK(send(base, storage_request(base, "DELETE", "/slashed/"))->status == 204);
  CHECK(send(base, storage_request(base, "HEAD", "/slashed"))->status == 404);
}

TEST_CASE("A sub-resource the model lacks is NotImplemented, not the operation its path fits") {
  Running e;
  std::string base = e.urls["storage"];
  REQUIRE(send(base, storage_request(base, "PUT", "/subs"))->status == 200);
  REQUIRE(send(base, storage_request(base, "PUT", "/subs/k", "bytes"))->status == 200);
  // GET /bucket?tagging fitted ListObjects, PUT /bucket/key?tagging PutObject (over the object).
  struct Case {
    std::string method, target, sub;
  };
  for (const Case& c :
       {Case{"GET", "/subs?tagging", "?tagging"}, Case{"GET", "/subs/?versioning", "?versioning"},
        Case{"PUT", "/subs/k?tagging", "?tagging"}, Case{"GET", "/subs?list-type=2&policy", "?policy"}}) {
    auto r = send(base, storage_request(base, c.method, c.target, c.method == "PUT" ? "<Tagging/>" : ""));
    REQUIRE(r);
    CHECK(r->status == 501);
    CHECK(element(r->body, "Code") == "NotImplemented");
    CHECK(element(r->body, "Message").find(c.sub) != std::string::npos);
  }
  CHECK(send(base, storage_request(base, "GET", "/subs/k"))->body == "bytes");  // the object untouched
  // Sub-resources the model has, and valued keys, still route.
  CHECK(send(base, storage_request(base, "GET", "/subs/k?acl"))->status == 200);
  CHECK(send(base, storage_request(base, "GET", "/subs?acl"))->status == 200);
  CHECK(send(base, storage_request(base, "GET", "/subs?location"))->status == 200);
  CHECK(send(base, storage_request(base, "GET", "/subs?uploads"))->status == 200);
  CHECK(send(base, storage_request(base, "GET", "/subs?prefix=&delimiter=%2F"))->status == 200);
}

TEST_CASE("DeleteObjects needs Content-MD5 or a checksum header, as S3 does") {
  Running e;
  std::string base = e.urls["storage"];
  put(e, "a", "1");
  std::string body = "<Delete><Object><Key>a</Key></Object><Object><Key>gone</Key></Object></Delete>";
  auto bare = send(base, storage_request(base, "POST", "/demo-bucket?delete", body));
  CHECK(bare->status == 400);
  CHECK(code_of(bare) == "InvalidRequest");
  CHECK(send(base, storage_request(base, "GET", "/demo-bucket/a"))->status == 200);  // nothing deleted

  cloud::SignInput with_md5 = storage_request(base, "POST", "/demo-bucket?delete", body);
  with_md5.headers = {{"Content-MD5", cloud::base64(cloud::md5(body))}};
  auto r = send(base, with_md5);
  CHECK(r->status == 200);
  CHECK(r->body.find("<Deleted><Key>a</Key></Deleted><Deleted><Key>gone</Key></Deleted>") != std::string::npos);
  CHECK(send(base, storage_request(base, "GET", "/demo-bucket/a"))->status == 404);

  cloud::SignInput with_checksum = storage_request(base, "POST", "/demo-bucket?delete", body);
  with_checksum.headers = {{"x-amz-checksum-crc32", "AAAAAA=="}};  // verified under item 3, not here
  CHECK(send(base, with_checksum)->status == 200);
}

TEST_CASE("CopyObject is a PUT with a copy-source header, in either dialect") {
  Running e;
  std::string base = e.urls["storage"];
  put(e, "from.txt", "copied bytes");
  cloud::SignInput copy = storage_request(base, "PUT", "/demo-bucket/to.txt");
  copy.dialect = &cloud::Dialect::aws();
  copy.headers = {{"x-amz-copy-source", "/demo-bucket/from.txt"}};
  auto r = send(base, copy);
  REQUIRE(r);
  CHECK(r->status == 200);
  CHECK(element(r->body, "ETag") == "\"" + cloud::hex(cloud::md5("copied bytes")) + "\"");
  CHECK(r->body.find("<CopyObjectResult") != std::string::npos);
  CHECK(r->has_header("x-amz-copy-source-version-id"));
  CHECK(send(base, storage_request(base, "GET", "/demo-bucket/to.txt"))->body == "copied bytes");
  // Without the header the same PUT is a PutObject of an empty body.
  CHECK(send(base, storage_request(base, "PUT", "/demo-bucket/to.txt"))->status == 200);
  CHECK(send(base, storage_request(base, "GET", "/demo-bucket/to.txt"))->body.empty());
}
