// aws-chunked bodies: the framing (core/wire/aws_chunked) and the chain of chunk signatures
// (core/wire/sigv4), against S3's worked example (sigv4-streaming: a 66560-byte body of 'a'
// in 64 KiB chunks), then as the emulator's verifier sees them: unsigned chunks with
// trailing checksums, signed trailers, both dialects, and each way a body is refused.
#include <catch2/catch.hpp>
#include <memory>

#include "core/wire/aws_chunked.h"
#include "core/wire/checksum.h"
#include "core/base/crypto.h"
#include "core/wire/sigv4.h"

using namespace cloud;

namespace {

const Credentials kDocsCredentials{"AKIAIOSFODNN7EXAMPLE", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", ""};
const char* const kDocsTime = "20130524T000000Z";

// The S3 example's request: PUT /examplebucket/chunkObject.txt, before signing.
SignInput streaming_input(const Dialect& d, const std::string& payload, size_t encoded, size_t decoded) {
  std::string p = to_lower(d.header_prefix);
  SignInput in;
  in.method = "PUT";
  in.url = "https://s3.amazonaws.com/examplebucket/chunkObject.txt";
  in.headers = {{"Content-Encoding", "aws-chunked"},
                {"Content-Length", std::to_string(encoded)},
                {p + "content-sha256", payload},
                {p + "date", kDocsTime},
                {p + "decoded-content-length", std::to_string(decoded)},
                {p + "storage-class", "REDUCED_REDUNDANCY"}};
  in.payload_sha256 = payload;  // the canonical request's last line, as the header says
  in.region = "us-east-1";
  in.service = "s3";
  in.credentials = kDocsCredentials;
  in.dialect = &d;
  in.policy.normalize_path = false;
  in.policy.double_encode = false;
  in.policy.payload_hash = PayloadHash::header;
  return in;
}

ChunkScope docs_scope(const Dialect& d) { return ChunkScope{&d, kDocsCredentials, "us-east-1", "s3", kDocsTime}; }

// One chunk on the wire, signed when `signature` is not empty.
std::string chunk(const std::string& data, const std::string& signature) {
  char size[20];
  std::snprintf(size, sizeof size, "%zx", data.size());
  return size + (signature.empty() ? "" : ";chunk-signature=" + signature) + "\r\n" + data + "\r\n";
}

// `pieces` as a signed stream: each chunk signed over the one before, from `seed`;
// the last, empty chunk, then the trailers (signed too when `trailers` is not empty).
std::string signed_stream(const ChunkScope& scope, const std::string& seed, const std::vector<std::string>& pieces,
                          const Headers& trailers = {}) {
  std::string body, previous = seed;
  for (const std::string& piece : pieces) {
    previous = chunk_signature(scope, previous, piece);
    body += chunk(piece, previous);
  }
  previous = chunk_signature(scope, previous, "");
  body += "0;chunk-signature=" + previous + "\r\n";
  for (const auto& [name, value] : trailers) body += name + ":" + value + "\r\n";
  if (!trailers.empty())
    body += to_lower(scope.dialect->header_prefix) +
            "trailer-signature:" + trailer_signature(scope, previous, trailers) + "\r\n";
  return body + "\r\n";
}

// The server's view of a request signed from `in` with `body` on the wire.
VerifyInput received(const SignInput& in, const SignOutput& sent, const std::string& body) {
  VerifyInput v;
  v.method = in.method;
  v.url = sent.url;
  v.headers = sent.headers;
  v.body = body;
  v.region = in.region;
  v.service = in.service;
  v.policy = in.policy;
  v.now = kDocsTime;
  auto known = std::make_shared<Credentials>(in.credentials);
  v.credentials = [known](const std::string& key) { return key == known->access_key_id ? known.get() : nullptr; };
  return v;
}

// The code of the refusal of `v`, or "" when it verifies (the decoded body into `out`).
std::string refusal_code(const VerifyInput& v, StreamedBody* out = nullptr) {
  std::optional<SignatureRefusal> r = verify_signature(v, out);
  if (r) INFO(r->status << " " << r->code << ": " << r->message);
  return r ? r->code : "";
}

}  // namespace

TEST_CASE("S3 documentation example: the chunk signatures of a chunked upload", "[sigv4][chunked]") {
  SignInput in = streaming_input(Dialect::aws(), "STREAMING-AWS4-HMAC-SHA256-PAYLOAD", 66824, 66560);
  Outcome<SignOutput> seed = sign(in);
  REQUIRE(seed.ok());
  CHECK(seed->signature == "4f232c4386841ef735655705268965c44a0e4690baa4adea153f7db9fa80a0a9");
  ChunkScope scope = docs_scope(Dialect::aws());
  std::string first = chunk_signature(scope, seed->signature, std::string(65536, 'a'));
  CHECK(first == "ad80c730a21e5b8d04586a2213dd63b9a0e99e0e2307b0ade35a65485a288648");
  std::string second = chunk_signature(scope, first, std::string(1024, 'a'));
  CHECK(second == "0055627c9e194cb4542bae2aa5492e3c1575bbb81b612b7d234b86a503ef5497");
  CHECK(chunk_signature(scope, second, "") == "b6c6ea8a5354eaf15b3cb7646744f4275b71ea724fed81ceb9323e279d449df9");
}

TEST_CASE("S3 documentation example: the chunked upload verifies and decodes", "[sigv4][chunked][verify]") {
  SignInput in = streaming_input(Dialect::aws(), "STREAMING-AWS4-HMAC-SHA256-PAYLOAD", 66824, 66560);
  Outcome<SignOutput> sent = sign(in);
  REQUIRE(sent.ok());
  std::string body =
      signed_stream(docs_scope(Dialect::aws()), sent->signature, {std::string(65536, 'a'), std::string(1024, 'a')});
  REQUIRE(body.size() == 66824);  // the example's Content-Length
  StreamedBody streamed;
  CHECK(refusal_code(received(in, *sent, body), &streamed) == "");
  CHECK(streamed.streamed);
  CHECK(streamed.bytes == std::string(66560, 'a'));
  CHECK(streamed.trailers.empty());

  SECTION("a chunk changed is a signature that does not match") {
    std::string changed = body;
    changed[100] = 'b';
    CHECK(refusal_code(received(in, *sent, changed)) == "SignatureDoesNotMatch");
  }
  SECTION("a chunk's signature changed likewise") {
    std::string changed = body;
    size_t at = changed.find("chunk-signature=") + 16;
    changed[at] = changed[at] == '0' ? '1' : '0';
    CHECK(refusal_code(received(in, *sent, changed)) == "SignatureDoesNotMatch");
  }
  SECTION("a chunk left out breaks the chain") {
    std::string shorter = body.substr(0, 90 + 65536) + body.substr(body.size() - 86);  // first and last chunks
    CHECK(refusal_code(received(in, *sent, shorter)) == "SignatureDoesNotMatch");
  }
  SECTION("a decoded length that is not the bytes' is IncompleteBody") {
    SignInput other = streaming_input(Dialect::aws(), "STREAMING-AWS4-HMAC-SHA256-PAYLOAD", 66824, 66000);
    Outcome<SignOutput> resent = sign(other);
    REQUIRE(resent.ok());
    std::string rebuilt =
        signed_stream(docs_scope(Dialect::aws()), resent->signature, {std::string(65536, 'a'), std::string(1024, 'a')});
    std::optional<SignatureRefusal> r = verify_signature(received(other, *resent, rebuilt));
    REQUIRE(r);
    CHECK(r->status == 400);
    CHECK(r->code == "IncompleteBody");
  }
  SECTION("an unsigned chunk in a signed stream") {
    std::string body2 = chunk("abc", "") + "0\r\n\r\n";
    CHECK(refusal_code(received(in, *sent, body2)) == "InvalidRequest");
  }
}

TEST_CASE("aws-chunked framing: chunks, trailers and each malformed form", "[chunked]") {
  Outcome<AwsChunkedBody> good =
      parse_aws_chunked("3\r\nabc\r\n2;chunk-signature=ff\r\nde\r\n0\r\nx-amz-checksum-crc32: AAAAAA== \r\n\r\n");
  REQUIRE(good.ok());
  REQUIRE(good->chunks.size() == 3);
  CHECK(good->chunks[0].data == "abc");
  CHECK_FALSE(good->chunks[0].has_signature);
  CHECK(good->chunks[1].signature == "ff");
  CHECK(joined_data(*good) == "abcde");
  CHECK(good->trailers == Headers{{"x-amz-checksum-crc32", "AAAAAA=="}});
  CHECK(parse_aws_chunked("A\r\n0123456789\r\n0\r\n\r\n").ok());  // upper-case hex

  auto code = [](const std::string& body) {
    Outcome<AwsChunkedBody> r = parse_aws_chunked(body);
    return r.ok() ? std::string() : r.error().code;
  };
  CHECK(code("") == "IncompleteBody");
  CHECK(code("zz\r\nab\r\n0\r\n\r\n") == "InvalidRequest");         // not hex
  CHECK(code("\r\n0\r\n\r\n") == "InvalidRequest");                 // no size
  CHECK(code("12345678901234567\r\n") == "InvalidRequest");         // more than 16 digits
  CHECK(code("ffffffffffffffff\r\nab") == "IncompleteBody");        // larger than the body
  CHECK(code("5\r\nab") == "IncompleteBody");                       // truncated chunk
  CHECK(code("2\r\nab") == "IncompleteBody");                       // no end of chunk
  CHECK(code("2\r\nab\r\n") == "IncompleteBody");                   // no last chunk
  CHECK(code("2\r\nabc\r\n0\r\n\r\n") == "InvalidRequest");         // longer than its size
  CHECK(code("2;foo=bar\r\nab\r\n0\r\n\r\n") == "InvalidRequest");  // another extension
  CHECK(code("0\r\n") == "MalformedTrailerError");                  // no empty line at the end
  CHECK(code("0\r\nno colon\r\n\r\n") == "MalformedTrailerError");
  CHECK(code("0\r\n\r\nmore") == "MalformedTrailerError");
}

TEST_CASE("STREAMING-UNSIGNED-PAYLOAD-TRAILER: unsigned chunks, a trailing checksum", "[sigv4][chunked][verify]") {
  for (const Dialect* d : {&Dialect::aws(), &Dialect::ext()}) {
    INFO(d->name);
    std::string p = to_lower(d->header_prefix);
    std::string data = "hello, chunked world";
    std::string crc = checksum_base64(ChecksumAlgorithm::crc32, data);
    std::string body =
        chunk(data.substr(0, 5), "") + chunk(data.substr(5), "") + "0\r\n" + p + "checksum-crc32:" + crc + "\r\n\r\n";
    SignInput in = streaming_input(*d, kStreamingUnsignedTrailer, body.size(), data.size());
    in.headers.emplace_back(p + "trailer", p + "checksum-crc32");
    Outcome<SignOutput> sent = sign(in);
    REQUIRE(sent.ok());
    StreamedBody streamed;
    CHECK(refusal_code(received(in, *sent, body), &streamed) == "");
    CHECK(streamed.bytes == data);
    CHECK(streamed.trailers == Headers{{p + "checksum-crc32", crc}});

    SECTION("a trailer the trailer header did not name") {
      std::string other = chunk(data, "") + "0\r\n" + p + "checksum-sha1:x\r\n\r\n";
      CHECK(refusal_code(received(in, *sent, other)) == "MalformedTrailerError");
    }
    SECTION("the named trailer missing") {
      CHECK(refusal_code(received(in, *sent, chunk(data, "") + "0\r\n\r\n")) == "MalformedTrailerError");
    }
    SECTION("no decoded length") {
      SignInput without = in;
      without.headers.erase(without.headers.begin() + 4);  // <prefix>decoded-content-length
      Outcome<SignOutput> resent = sign(without);
      REQUIRE(resent.ok());
      std::optional<SignatureRefusal> r = verify_signature(received(without, *resent, body));
      REQUIRE(r);
      CHECK(r->status == 411);
      CHECK(r->code == "MissingContentLength");
    }
    SECTION("a signed chunk in an unsigned stream") {
      CHECK(refusal_code(received(in, *sent, chunk(data, "ab") + "0\r\n" + p + "checksum-crc32:" + crc + "\r\n\r\n")) ==
            "InvalidRequest");
    }
  }
}

TEST_CASE("STREAMING-<ALG>-PAYLOAD-TRAILER: signed chunks and a signed trailer, both dialects",
          "[sigv4][chunked][verify]") {
  for (const Dialect* d : {&Dialect::aws(), &Dialect::ext()}) {
    INFO(d->name);
    std::string p = to_lower(d->header_prefix);
    std::string data(10000, 'x');
    Headers trailers = {{p + "checksum-crc64nvme", checksum_base64(ChecksumAlgorithm::crc64nvme, data)}};
    SignInput in = streaming_input(*d, streaming_payload(*d, true), 0, data.size());
    in.headers.emplace_back(p + "trailer", p + "checksum-crc64nvme");
    Outcome<SignOutput> sent = sign(in);
    REQUIRE(sent.ok());
    std::string body =
        signed_stream(docs_scope(*d), sent->signature, {data.substr(0, 8192), data.substr(8192)}, trailers);
    StreamedBody streamed;
    CHECK(refusal_code(received(in, *sent, body), &streamed) == "");
    CHECK(streamed.bytes == data);
    CHECK(streamed.trailers == trailers);

    std::string tampered = body;
    size_t at = tampered.find("checksum-crc64nvme:") + 19;
    tampered[at] = tampered[at] == 'A' ? 'B' : 'A';
    CHECK(refusal_code(received(in, *sent, tampered)) == "SignatureDoesNotMatch");
  }
}

TEST_CASE("a streaming value of the other dialect is a body whose hash does not match", "[sigv4][chunked][verify]") {
  SignInput in = streaming_input(Dialect::ext(), "STREAMING-AWS4-HMAC-SHA256-PAYLOAD", 0, 3);
  Outcome<SignOutput> sent = sign(in);
  REQUIRE(sent.ok());
  CHECK(refusal_code(received(in, *sent, chunk("abc", "00") + "0;chunk-signature=00\r\n\r\n")) ==
        "ContentSHA256Mismatch");
}

// A body read after its request's signature (VerifyInput::body_follows): the check of
// its chunks comes back from verify_signature and takes the body in pieces of `step`
// bytes, as a server reads it; the decoded bytes, or the refusal's code.
std::string streamed_in_pieces(VerifyInput v, size_t step, std::string& decoded) {
  std::string body = std::move(v.body);
  v.body.clear();
  v.body_follows = true;
  std::unique_ptr<StreamCheck> check;
  if (std::optional<SignatureRefusal> r = verify_signature(v, nullptr, &check)) return r->code;
  REQUIRE(check);
  decoded.clear();
  for (size_t at = 0; at < body.size(); at += step)
    if (!check->feed(std::string_view(body).substr(at, step),
                     [&](std::string_view d) { return decoded.append(d), true; }))
      return check->refused() ? check->refused()->code : "stopped";
  std::optional<SignatureRefusal> r = check->finish();
  return r ? r->code : "";
}

TEST_CASE("a chunked body checked as it arrives, in pieces of any size, as when held whole",
          "[sigv4][chunked][verify]") {
  SignInput in = streaming_input(Dialect::aws(), "STREAMING-AWS4-HMAC-SHA256-PAYLOAD", 66824, 66560);
  Outcome<SignOutput> sent = sign(in);
  REQUIRE(sent.ok());
  std::string body =
      signed_stream(docs_scope(Dialect::aws()), sent->signature, {std::string(65536, 'a'), std::string(1024, 'a')});
  for (size_t step : {size_t{1}, size_t{7}, size_t{4096}, body.size()}) {
    INFO("pieces of " << step);
    std::string decoded;
    CHECK(streamed_in_pieces(received(in, *sent, body), step, decoded) == "");
    CHECK(decoded == std::string(66560, 'a'));
    std::string changed = body;
    changed[100] = 'b';
    CHECK(streamed_in_pieces(received(in, *sent, changed), step, decoded) == "SignatureDoesNotMatch");
    CHECK(decoded.size() <= 65536);  // refused at the end of the chunk changed, not later
    CHECK(streamed_in_pieces(received(in, *sent, body.substr(0, body.size() - 3)), step, decoded) != "");
  }
}

TEST_CASE("a checksum taken in pieces is the one taken whole", "[checksum]") {
  std::string data;
  for (int i = 0; i < 5000; ++i) data += static_cast<char>(i * 7919 % 251);
  for (ChecksumAlgorithm a : kChecksumAlgorithms) {
    INFO(checksum_name(a));
    ChecksumStream sum(a);
    for (size_t at = 0; at < data.size(); at += 333) sum.update(std::string_view(data).substr(at, 333));
    CHECK(sum.digest() == checksum(a, data));
  }
  CHECK(checksum_base64(ChecksumAlgorithm::crc32c, "123456789") == base64(std::string("\xe3\x06\x92\x83", 4)));
}
