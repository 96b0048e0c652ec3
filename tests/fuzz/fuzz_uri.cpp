// Fuzz target: URL parsing, percent-encoding and Signature V4's canonical request for
// an arbitrary URL, in both dialects, both path styles (S3's and the normalised one)
// and both variants (header, presigned). Input: the URL, byte for byte.
#include <cctype>
#include <cstring>

#include "core/wire/sigv4.h"
#include "core/wire/uri.h"
#include "fuzz_input.h"

namespace {

// Encoding then decoding gives the text back; the encoding holds only unreserved
// characters and %XX escapes (and '/' when kept).
void check_encoding(std::string_view text, bool keep_slash) {
  std::string encoded = cloud::uri_encode(text, keep_slash);
  FUZZ_CHECK(cloud::uri_decode(encoded) == text);
  for (char c : encoded)
    FUZZ_CHECK(std::isalnum(static_cast<unsigned char>(c)) || std::strchr("-_.~%", c) || (keep_slash && c == '/'));
}

// A parsed URL put back together parses to the same parts.
void check_parts(const cloud::Url& url) {
  FUZZ_CHECK(!url.host.empty() && !url.path.empty() && url.path[0] == '/');
  auto again = cloud::parse_url(url.origin() + url.path + (url.query.empty() ? "" : "?" + url.query));
  FUZZ_CHECK(again.ok());
  FUZZ_CHECK(again->scheme == url.scheme && again->authority() == url.authority() && again->path == url.path &&
             again->query == url.query);
}

// Re-signing a request as it was sent (what the emulator does to verify) gives the
// signature it was sent with, in the Authorization header or in the URL.
void check_verifies(const cloud::SignInput& in, const cloud::SignOutput& sent) {
  cloud::SignInput received = in;
  received.url = sent.url;
  received.headers = sent.headers;
  received.time.clear();  // the verifier reads it from the request
  auto again = cloud::sign(received);
  FUZZ_CHECK(again.ok());
  FUZZ_CHECK(again->signature == sent.signature);
}

// Signing works exactly when the URL parses, and every signature verifies.
void check_signing(const std::string& url, bool parsed) {
  for (const cloud::Dialect* dialect : {&cloud::Dialect::ext(), &cloud::Dialect::aws()}) {
    for (bool s3_style : {false, true}) {
      cloud::SignInput in;
      in.url = url;
      in.region = "jp-east-1";
      in.service = s3_style ? "s3" : "cluster";
      in.credentials = {"AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", ""};
      in.time = "20240102T030405Z";
      in.dialect = dialect;
      in.policy.normalize_path = in.policy.double_encode = !s3_style;
      in.policy.payload_hash = s3_style ? cloud::PayloadHash::header : cloud::PayloadHash::omitted;
      auto header = cloud::sign(in);
      FUZZ_CHECK(header.ok() == parsed);
      if (!header.ok()) continue;
      check_verifies(in, *header);
      in.presign_expires = 300;
      auto query = cloud::sign(in);  // fails only on a date parameter in the URL that is no time
      if (query.ok()) check_verifies(in, *query);
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  check_encoding(text, false);
  check_encoding(text, true);
  (void)cloud::uri_decode(text);
  (void)cloud::split_query(text);
  auto url = cloud::parse_url(text);
  if (url.ok()) check_parts(*url);
  else FUZZ_CHECK(url.error().code == "InvalidURL" && !url.error().message.empty());
  check_signing(text, url.ok());
  return 0;
}
