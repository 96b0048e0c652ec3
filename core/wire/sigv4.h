// Signature Version 4 (HMAC-SHA256, date/region/service scoped keys) in two dialects:
// `ext` (the platform's: EXT4-HMAC-SHA256, x-ext-*) and `aws` (AWS4-HMAC-SHA256,
// x-amz-*). The same code signs for the client and verifies for the emulator:
// verify_signature() re-signs what was received and compares.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/wire/aws_chunked.h"
#include "core/base/crypto.h"
#include "core/base/error.h"
#include "core/wire/http.h"
#include "core/wire/uri.h"

namespace cloud {

struct Dialect {
  std::string name;           // "ext" or "aws"
  std::string algorithm;      // "EXT4-HMAC-SHA256"
  std::string key_prefix;     // "EXT4": prepended to the secret for the first HMAC
  std::string terminator;     // "ext4_request"
  std::string header_prefix;  // "X-Ext-": X-Ext-Date, X-Ext-Security-Token
  std::string query_prefix;   // "X-Ext-": presigned-URL parameters

  static const Dialect& ext();
  static const Dialect& aws();
  static const Dialect* find(const std::string& name);  // nullptr when unknown
};

struct Credentials {
  std::string access_key_id;
  std::string secret_access_key;
  std::string session_token;  // empty: none
};

// Whether the body's SHA-256 travels in the <prefix>content-sha256 header (signed, and
// checked by the server against the body) or only inside the canonical request.
enum class PayloadHash { omitted, header };

// How a credential scope naming another region or service is refused: as a signature
// that does not match (403 SignatureDoesNotMatch, the JSON APIs) or as a malformed
// Authorization header (400 AuthorizationHeaderMalformed, S3).
enum class WrongScope { mismatch, malformed };

// The facts of signing that differ from API to API, read from the API's model file
// ("signing", docs/model.md); the defaults are the JSON APIs'.
struct SigningPolicy {
  bool normalize_path = true;  // remove . and .. segments and repeated slashes
  bool double_encode = true;   // encode the wire path once more (false: S3-style)
  PayloadHash payload_hash = PayloadHash::omitted;
  WrongScope wrong_scope = WrongScope::mismatch;  // verification only
};

struct SignInput {
  std::string method = "GET";
  std::string url;  // absolute URL as it goes on the wire
  Headers headers;  // a Host header is added from the URL when missing
  std::string body;
  std::string payload_sha256;  // hex hash of a body sent from a file; empty: the hash of `body`
  std::string region;
  std::string service;
  Credentials credentials;
  std::string time;  // yyyymmddThhmmssZ; empty: now
  const Dialect* dialect = &Dialect::ext();
  SigningPolicy policy;
  bool omit_session_token = false;      // token header added after signing, unsigned
  std::optional<long> presign_expires;  // seconds: presigned-URL variant
};

struct SignOutput {
  std::string canonical_request;
  std::string string_to_sign;
  std::string signature;
  std::string authorization;  // header variant only
  Headers headers;            // every header to send, in order
  std::string url;            // the URL to send (with the signature when presigned)
};

// The signature of a browser upload's policy (S3's POST object): the hex HMAC of the
// base64 policy document itself, under the same signing key as a request's, for the
// day `day` (yyyymmdd) of `region` and `service` in dialect `d`. The client signs the
// policies it makes with it (Client::presign_post); the emulator checks those it gets.
std::string policy_signature(const Dialect& d, const Credentials& credentials, const std::string& day,
                             const std::string& region, const std::string& service, std::string_view policy);

// The older signature (S3's V2) of a browser upload's policy: the base64 HMAC-SHA1 of
// the base64 policy document under the secret key, as forms with AWSAccessKeyId and
// signature fields carry it (boto3's generate_presigned_post with signature "s3").
std::string policy_signature_v2(const Credentials& credentials, std::string_view policy);

// Signs `in`. Fails (kind validation) only on an unusable URL or time.
Outcome<SignOutput> sign(const SignInput& in);
// Signs `in` for a URL already in parts (in.url is not read): the client builds its
// URL once rather than joining it into a string to be parsed again.
Outcome<SignOutput> sign(const SignInput& in, const Url& url);

// A request as a server received it, and what the server accepts.
struct VerifyInput {
  std::string method;
  std::string url;  // "http://" + Host + the request target, exactly as received
  Headers headers;  // every header received
  std::string body;
  std::string body_sha256;    // hex SHA-256 of `body` when the caller hashed it already; empty: hashed here
  bool body_follows = false;  // a streaming body is read after the check (verify_signature's `later`)
  std::string region;         // the scope the server is in
  std::string service;
  SigningPolicy policy;
  const Dialect* dialect = nullptr;  // the one dialect accepted; nullptr: either
  // The credentials of an access key; nullptr when the key is unknown.
  std::function<const Credentials*(const std::string& access_key)> credentials;
  std::string now;  // yyyymmddThhmmssZ; empty: the clock's now
};

// Why a received signature is refused: what the server answers with, and the extra
// fields of its error body (S3 names the expected Region).
struct SignatureRefusal {
  int status = 403;
  std::string code;
  std::string message;
  std::vector<std::pair<std::string, std::string>> details;
};

// The most a request's time may be from the server's, in seconds (15 minutes).
constexpr long kMaxSignatureSkewSeconds = 15 * 60;
// The longest a presigned URL may be valid, in seconds (a week, as S3 allows).
constexpr long kMaxPresignSeconds = 7 * 24 * 3600;
// The payload hash of a presigned URL: its body, unknown when it is signed, is not.
constexpr const char* kUnsignedPayload = "UNSIGNED-PAYLOAD";

// Streaming bodies (Content-Encoding: aws-chunked, core/wire/aws_chunked.h), announced by
// their <prefix>content-sha256 value: STREAMING-<ALG>-PAYLOAD (each chunk signed over
// the previous chunk's signature, the first over the request's own: the seed),
// STREAMING-<ALG>-PAYLOAD-TRAILER (the same, then trailing headers signed over the last
// chunk's signature) and STREAMING-UNSIGNED-PAYLOAD-TRAILER (chunks and trailers
// unsigned). <ALG> is the dialect's algorithm: AWS4-HMAC-SHA256 or EXT4-HMAC-SHA256.
constexpr const char* kStreamingUnsignedTrailer = "STREAMING-UNSIGNED-PAYLOAD-TRAILER";
std::string streaming_payload(const Dialect& dialect, bool with_trailer);

// What a chunk's or trailer's signature is scoped to: the request's signing time,
// region, service, dialect and credentials.
struct ChunkScope {
  const Dialect* dialect = &Dialect::ext();
  Credentials credentials;
  std::string region, service;
  std::string time;  // yyyymmddThhmmssZ, the request's
};

// The signature of one chunk: HMAC of "<ALG>-PAYLOAD\n<time>\n<scope>\n<previous
// signature>\n<SHA-256 of nothing>\n<SHA-256 of the chunk's bytes>" (hex).
std::string chunk_signature(const ChunkScope& scope, const std::string& previous, std::string_view data);
// The same from the chunk's SHA-256 (hex), hashed elsewhere (core/net/range_reader.h's framing thread).
std::string chunk_signature_of_hash(const ChunkScope& scope, const std::string& previous,
                                    const std::string& data_sha256);
// The signature of the trailing headers: HMAC of "<ALG>-TRAILER\n<time>\n<scope>\n
// <previous signature>\n<SHA-256 of the trailers, "name:value\n" each>" (hex).
std::string trailer_signature(const ChunkScope& scope, const std::string& previous, const Headers& trailers);

// A streaming body as verify_signature found it: its chunks' bytes joined, and its
// trailing headers (without the trailer signature).
struct StreamedBody {
  bool streamed = false;  // false: the body was not a streaming one, and is as received
  std::string bytes;
  Headers trailers;
};

// Whether the request's <prefix>content-sha256 header, of either dialect, announces a
// streaming body (STREAMING-...): one a server checks as it reads it (body_follows).
bool announces_stream(const Headers& headers);

// A streaming body checked as it arrives: its framing read by core/wire/aws_chunked's
// reader, each chunk's signature checked as the chunk ends (over its SHA-256, taken as
// its bytes pass), then, at the end, the decoded length and the trailers. Made by
// verify_signature, for a caller that reads the body after the request's signature
// has been checked (VerifyInput::body_follows), and by verify_signature itself over a
// body held whole: one check of chunks either way.
class StreamCheck final : private AwsChunkedReader::Handler {
 public:
  // The decoded bytes, as they are read; false stops the reading.
  using Output = std::function<bool(std::string_view)>;
  struct Expected {
    bool signed_chunks = true, signed_trailer = false;
    std::optional<std::string> decoded_length;  // <prefix>decoded-content-length, if sent
    std::string trailer_names;                  // <prefix>trailer, as sent
  };
  StreamCheck(ChunkScope scope, Expected expected, std::string seed);

  // The next bytes of the body as received; the decoded ones go to `out`. False when
  // the body is refused (refused() says why) or `out` stopped it.
  bool feed(std::string_view received, const Output& out);
  // The body has ended: nullopt when it was whole and right (its trailers then in
  // trailers(), without the trailer signature), else the refusal.
  std::optional<SignatureRefusal> finish();
  const std::optional<SignatureRefusal>& refused() const { return refusal_; }
  Headers& trailers() { return trailers_; }

 private:
  bool chunk_begins(const AwsChunk& chunk, std::uint64_t size) override;
  bool chunk_bytes(std::string_view bytes) override;
  bool chunk_ends() override;

  ChunkScope scope_;
  Expected expected_;
  std::string last_;  // the signature the next chunk is signed over
  AwsChunkedReader reader_;
  DigestStream chunk_hash_{Digest::sha256};
  std::string chunk_signature_;
  size_t number_ = 0;
  std::uint64_t decoded_ = 0;
  const Output* out_ = nullptr;
  std::optional<SignatureRefusal> refusal_;
  Headers trailers_;
};

// Checks the signature of a received request, from its Authorization header or, when
// its query carries a dialect's <prefix>Algorithm, from its presigned parameters:
// form, dialect, scope, access key, time (header: the 15-minute skew; presigned: the
// Expires after its Date), payload hash (PayloadHash::header; a presigned URL's is
// UNSIGNED-PAYLOAD) and signature, in that order, re-signed through sign(); that every
// x-amz-* and x-ext-* header received was signed (403 AccessDenied otherwise, S3's
// HeadersNotSigned in its details); then a
// streaming body's framing, chunk signatures, decoded length
// (<prefix>decoded-content-length) and trailers (named in <prefix>trailer), its bytes
// and trailers going to `streamed` when given.
// nullopt when the request is signed as `in` accepts. With `in.body_follows` a
// streaming body is not in `in`: `*later` receives the check its bytes must pass as
// they are read (left null for a body that is not streaming).
std::optional<SignatureRefusal> verify_signature(const VerifyInput& in, StreamedBody* streamed = nullptr,
                                                 std::unique_ptr<StreamCheck>* later = nullptr);

// The headers a request's signature names (its Authorization header's SignedHeaders,
// or a presigned URL's) that `headers` lacks, added with an empty value: a server that
// drops a header sent with an empty value as it reads it (httplib 0.11 does) still
// checks the signature S3 checks ("x-amz-meta-k:" signed empty) and sees the header.
void restore_empty_signed_headers(Headers& headers, const std::string& query);

// The current UTC time as yyyymmddThhmmssZ.
std::string amz_time_now();

}  // namespace cloud
