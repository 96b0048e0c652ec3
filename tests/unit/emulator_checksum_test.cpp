// The emulator's storage checksums and aws-chunked bodies over HTTP, in both dialects:
// x-<p>-checksum-* headers checked (BadDigest), echoed and kept for GetObject's
// x-<p>-checksum-mode; aws-chunked bodies with signed chunks, or unsigned chunks and a
// trailing checksum, decoded before they are stored.
#include <algorithm>
#include <cstdio>

#include "core/wire/checksum.h"
#include "core/wire/sigv4.h"
#include "emulator_harness.h"

namespace {

using harness::code_of;
using harness::Running;
using harness::send;
using harness::storage_request;

const cloud::Dialect* const kDialects[] = {&cloud::Dialect::ext(), &cloud::Dialect::aws()};

// The dialect's header prefix in lower case: "x-ext-" or "x-amz-".
std::string prefix(const cloud::Dialect& d) { return cloud::to_lower(d.header_prefix); }

// A storage request of dialect `d` with extra headers, signed and sent with `wire_body`
// (the signed body when empty).
httplib::Result send_storage(Running& e, const cloud::Dialect& d, const std::string& method, const std::string& target,
                             const cloud::Headers& headers, const std::string& body,
                             const std::string& wire_body = "") {
  cloud::SignInput in = storage_request(e.urls["storage"], method, target, body);
  in.dialect = &d;
  in.headers = headers;
  std::string declared = cloud::header_value(headers, prefix(d) + "content-sha256");
  if (!declared.empty()) in.payload_sha256 = declared;  // a streaming body's value, signed as sent
  auto s = cloud::sign(in);
  REQUIRE(s.ok());
  return send(e.urls["storage"], *s, method, wire_body.empty() ? body : wire_body);
}

// One chunk of an aws-chunked body; signed when `signature` is given.
std::string chunk(const std::string& data, const std::string& signature = "") {
  char size[20];
  std::snprintf(size, sizeof size, "%zx", data.size());
  return size + (signature.empty() ? "" : ";chunk-signature=" + signature) + "\r\n" + data + "\r\n";
}

}  // namespace

TEST_CASE("emulator checksums: each algorithm checked, echoed and kept, in both dialects", "[emulator][checksum]") {
  Running e;
  const std::string data = "the quick brown fox";
  for (const cloud::Dialect* d : kDialects) {
    for (cloud::ChecksumAlgorithm a : cloud::kChecksumAlgorithms) {
      std::string header = prefix(*d) + "checksum-" + cloud::checksum_name(a);
      INFO(header);
      std::string good = cloud::checksum_base64(a, data);
      auto put = send_storage(e, *d, "PUT", "/demo-bucket/sum.txt", {{header, good}}, data);
      REQUIRE(put);
      INFO(put->body);
      CHECK(put->status == 200);
      CHECK(put->get_header_value(header) == good);

      auto plain = send_storage(e, *d, "GET", "/demo-bucket/sum.txt", {}, "");
      CHECK(plain->body == data);
      CHECK_FALSE(plain->has_header(header));
      auto asked = send_storage(e, *d, "GET", "/demo-bucket/sum.txt", {{prefix(*d) + "checksum-mode", "ENABLED"}}, "");
      CHECK(asked->get_header_value(header) == good);

      auto bad =
          send_storage(e, *d, "PUT", "/demo-bucket/sum.txt", {{header, cloud::checksum_base64(a, "other")}}, data);
      CHECK(bad->status == 400);
      CHECK(code_of(bad) == "BadDigest");
      auto garbled = send_storage(e, *d, "PUT", "/demo-bucket/sum.txt", {{header, "not base64"}}, data);
      CHECK(garbled->status == 400);
      CHECK(code_of(garbled) == "InvalidRequest");
    }
    auto two =
        send_storage(e, *d, "PUT", "/demo-bucket/two.txt",
                     {{prefix(*d) + "checksum-crc32", cloud::checksum_base64(cloud::ChecksumAlgorithm::crc32, data)},
                      {prefix(*d) + "checksum-sha1", cloud::checksum_base64(cloud::ChecksumAlgorithm::sha1, data)}},
                     data);
    CHECK(code_of(two) == "InvalidRequest");
  }
}

TEST_CASE("emulator checksums: UploadPart checks and echoes, CreateMultipartUpload echoes the algorithm",
          "[emulator][checksum]") {
  Running e;
  for (const cloud::Dialect* d : kDialects) {
    INFO(d->name);
    std::string p = prefix(*d);
    auto created =
        send_storage(e, *d, "POST", "/demo-bucket/big.bin?uploads", {{p + "checksum-algorithm", "CRC32C"}}, "");
    REQUIRE(created->status == 200);
    CHECK(created->get_header_value(p + "checksum-algorithm") == "CRC32C");
    size_t at = created->body.find("<UploadId>") + 10;
    std::string id = created->body.substr(at, created->body.find("</UploadId>") - at);
    std::string target = "/demo-bucket/big.bin?partNumber=1&uploadId=" + id;
    std::string crc = cloud::checksum_base64(cloud::ChecksumAlgorithm::crc32c, "part one");
    auto part = send_storage(e, *d, "PUT", target,
                             {{p + "sdk-checksum-algorithm", "CRC32C"}, {p + "checksum-crc32c", crc}}, "part one");
    CHECK(part->status == 200);
    CHECK(part->get_header_value(p + "checksum-crc32c") == crc);
    auto bad = send_storage(e, *d, "PUT", target, {{p + "checksum-crc32c", crc}}, "part two");
    CHECK(code_of(bad) == "BadDigest");
    auto announced = send_storage(e, *d, "PUT", target, {{p + "sdk-checksum-algorithm", "CRC32C"}}, "part two");
    CHECK(code_of(announced) == "InvalidRequest");
  }
}

TEST_CASE("emulator aws-chunked: signed chunks are verified and decoded, in both dialects", "[emulator][chunked]") {
  Running e;
  for (const cloud::Dialect* d : kDialects) {
    INFO(d->name);
    std::string p = prefix(*d);
    std::string data(20000, 'z');
    cloud::SignInput in = storage_request(e.urls["storage"], "PUT", "/demo-bucket/streamed.bin");
    in.dialect = d;
    in.headers = {{"Content-Encoding", "aws-chunked"},
                  {p + "content-sha256", cloud::streaming_payload(*d, false)},
                  {p + "decoded-content-length", std::to_string(data.size())}};
    in.payload_sha256 = cloud::streaming_payload(*d, false);
    auto s = cloud::sign(in);
    REQUIRE(s.ok());
    std::string time = cloud::header_value(s->headers, p + "date");
    cloud::ChunkScope scope{d, in.credentials, in.region, in.service, time};
    std::string first = cloud::chunk_signature(scope, s->signature, data.substr(0, 16384));
    std::string second = cloud::chunk_signature(scope, first, data.substr(16384));
    std::string last = cloud::chunk_signature(scope, second, "");
    std::string body = chunk(data.substr(0, 16384), first) + chunk(data.substr(16384), second) + chunk("", last);
    auto put = send(e.urls["storage"], *s, "PUT", body);
    REQUIRE(put);
    INFO(put->body);
    CHECK(put->status == 200);
    auto got = send_storage(e, *d, "GET", "/demo-bucket/streamed.bin", {}, "");
    CHECK(got->body == data);

    std::string forged = chunk(data.substr(0, 16384), first) + chunk(data.substr(16384), first) + chunk("", last);
    auto refused = send(e.urls["storage"], *s, "PUT", forged);
    CHECK(refused->status == 403);
    CHECK(code_of(refused) == "SignatureDoesNotMatch");
    auto truncated = send(e.urls["storage"], *s, "PUT", body.substr(0, 1000));
    CHECK(truncated->status == 400);
    CHECK(code_of(truncated) == "IncompleteBody");
  }
}

TEST_CASE("emulator aws-chunked: unsigned chunks with a trailing checksum", "[emulator][chunked][checksum]") {
  Running e;
  for (const cloud::Dialect* d : kDialects) {
    INFO(d->name);
    std::string p = prefix(*d);
    std::string data = "trailing checksums are sent after the bytes";
    std::string crc = cloud::checksum_base64(cloud::ChecksumAlgorithm::crc32, data);
    cloud::Headers headers = {{"Content-Encoding", "aws-chunked"},
                              {p + "content-sha256", cloud::kStreamingUnsignedTrailer},
                              {p + "decoded-content-length", std::to_string(data.size())},
                              {p + "sdk-checksum-algorithm", "CRC32"},
                              {p + "trailer", p + "checksum-crc32"}};
    auto trailer = [&](const std::string& value) {
      return chunk(data.substr(0, 10)) + chunk(data.substr(10)) + "0\r\n" + p + "checksum-crc32:" + value + "\r\n\r\n";
    };
    auto put = send_storage(e, *d, "PUT", "/demo-bucket/trailer.txt", headers, "", trailer(crc));
    REQUIRE(put);
    INFO(put->body);
    CHECK(put->status == 200);
    CHECK(put->get_header_value(p + "checksum-crc32") == crc);
    auto got = send_storage(e, *d, "GET", "/demo-bucket/trailer.txt", {{p + "checksum-mode", "ENABLED"}}, "");
    CHECK(got->body == data);
    CHECK(got->get_header_value(p + "checksum-crc32") == crc);

    auto bad = send_storage(e, *d, "PUT", "/demo-bucket/trailer.txt", headers, "",
                            trailer(cloud::checksum_base64(cloud::ChecksumAlgorithm::crc32, "else")));
    CHECK(bad->status == 400);
    CHECK(code_of(bad) == "BadDigest");
  }
}

TEST_CASE("emulator aws-chunked: sent with Transfer-Encoding: chunked, its decoded length declared",
          "[emulator][chunked]") {
  // As boto3 sends trailing checksums: no Content-Length, the size in the decoded length.
  Running e;
  const cloud::Dialect& d = cloud::Dialect::aws();
  std::string data(50000, 'q');
  std::string crc = cloud::checksum_base64(cloud::ChecksumAlgorithm::crc32, data);
  cloud::SignInput in = storage_request(e.urls["storage"], "PUT", "/demo-bucket/unsized.bin");
  in.dialect = &d;
  in.headers = {{"Content-Encoding", "aws-chunked"},
                {"x-amz-content-sha256", cloud::kStreamingUnsignedTrailer},
                {"x-amz-decoded-content-length", std::to_string(data.size())},
                {"x-amz-trailer", "x-amz-checksum-crc32"}};
  in.payload_sha256 = cloud::kStreamingUnsignedTrailer;
  auto s = cloud::sign(in);
  REQUIRE(s.ok());
  std::string body = chunk(data) + "0\r\nx-amz-checksum-crc32:" + crc + "\r\n\r\n";
  httplib::Headers headers;
  for (const auto& [name, value] : s->headers)
    if (!cloud::iequals(name, "Host")) headers.emplace(name, value);
  httplib::Client client(e.urls["storage"]);
  auto provide = [&body](size_t offset, httplib::DataSink& sink) {
    if (offset < body.size()) sink.write(body.data() + offset, std::min<size_t>(8192, body.size() - offset));
    else sink.done();
    return true;
  };
  auto put = client.Put("/demo-bucket/unsized.bin", headers, provide, "application/octet-stream");
  REQUIRE(put);
  INFO(put->body);
  CHECK(put->status == 200);
  CHECK(put->get_header_value("x-amz-checksum-crc32") == crc);
  CHECK(send_storage(e, d, "GET", "/demo-bucket/unsized.bin", {}, "")->body == data);
}
