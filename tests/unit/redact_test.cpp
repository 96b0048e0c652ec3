// Redaction: what --debug shows never holds a signature, a session token or a
// secret key, in either dialect, in headers, URLs and bodies, cut or not.
#include <catch2/catch.hpp>

#include "core/net/redact.h"
#include "core/wire/sigv4.h"
#include "core/wire/uri.h"

namespace {

using cloud::redact;

const std::string kSecret = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY";
const std::string kToken = "FwoGZXIvYXdzEJr//////////wEaDK+token=";

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

cloud::SignOutput signed_request(const cloud::Dialect& dialect, bool presigned) {
  cloud::SignInput in;
  in.method = "PUT";
  in.url = "https://storage.example.com/bucket/key?partNumber=1&uploadId=u";
  in.region = "jp-east-1";
  in.service = "s3";
  in.credentials = {"AKIDEXAMPLE", kSecret, kToken};
  in.time = "20240102T030405Z";
  in.dialect = &dialect;
  in.body = "part";
  if (presigned) in.presign_expires = 300;
  auto out = cloud::sign(in);
  REQUIRE(out.ok());
  return out.value();
}

}  // namespace

TEST_CASE("redact: the Authorization header keeps its access key and scope, loses its signature", "[redact]") {
  for (const cloud::Dialect* d : {&cloud::Dialect::ext(), &cloud::Dialect::aws()}) {
    auto s = signed_request(*d, false);
    std::string shown = redact("Authorization: " + s.authorization, {});
    CHECK_FALSE(contains(shown, s.signature));
    CHECK(contains(shown, "Credential=AKIDEXAMPLE/20240102/jp-east-1/s3/"));
    CHECK(contains(shown, "SignedHeaders="));
    CHECK(contains(shown, "Signature=<redacted>"));
  }
}

TEST_CASE("redact: presigned URLs lose their signature and token in both dialects", "[redact]") {
  for (const cloud::Dialect* d : {&cloud::Dialect::ext(), &cloud::Dialect::aws()}) {
    auto s = signed_request(*d, true);
    std::string shown = redact(s.url, {});
    CHECK_FALSE(contains(shown, s.signature));
    CHECK_FALSE(contains(shown, "FwoGZXIvYXdzEJr"));
    CHECK(contains(shown, d->query_prefix + "Signature=<redacted>"));
    CHECK(contains(shown, d->query_prefix + "Security-Token=<redacted>"));
    CHECK(contains(shown, "uploadId=u"));
  }
}

TEST_CASE("redact: session token headers of either dialect", "[redact]") {
  CHECK(redact("X-Ext-Security-Token: abc/def+ghi=", {}) == "X-Ext-Security-Token: <redacted>");
  CHECK(redact("x-amz-security-token:abc", {}) == "x-amz-security-token:<redacted>");
  CHECK(redact("X-Ext-Date: 20240102T030405Z", {}) == "X-Ext-Date: 20240102T030405Z");
}

TEST_CASE("redact: secret keys by name in JSON, INI, query strings and XML", "[redact]") {
  CHECK(redact(R"({"secret_access_key": "s3cr3t", "region": "x"})", {}) ==
        R"({"secret_access_key": "<redacted>", "region": "x"})");
  CHECK(redact("secret_access_key = s3cr3t", {}) == "secret_access_key = <redacted>");
  CHECK(redact("a=1&SecretAccessKey=s3cr3t&b=2", {}) == "a=1&SecretAccessKey=<redacted>&b=2");
  CHECK(redact(R"({"sessionToken":"tok","x":1})", {}) == R"({"sessionToken":"<redacted>","x":1})");
  CHECK(
      redact("<Error><SignatureProvided>abc123</SignatureProvided><SecretAccessKey>k</SecretAccessKey></Error>", {}) ==
      "<Error><SignatureProvided><redacted></SignatureProvided><SecretAccessKey><redacted></SecretAccessKey></Error>");
  CHECK(redact("SignatureDoesNotMatch: check the secret key", {}) == "SignatureDoesNotMatch: check the secret key");
  CHECK(redact("IncompleteSignature: this server accepts aws signatures only", {}) ==
        "IncompleteSignature: this server accepts aws signatures only");
  CHECK(redact("Signature=abc&x=1", {}) == "Signature=<redacted>&x=1");
}

TEST_CASE("redact: known secrets anywhere, as given and percent-encoded", "[redact]") {
  std::string text = "echo " + kSecret + " and " + cloud::uri_encode(kToken) + " and " + kToken;
  std::string shown = redact(text, {kSecret, kToken, ""});
  CHECK(shown == "echo <redacted> and <redacted> and <redacted>");
  CHECK(redact("nothing to hide", {""}) == "nothing to hide");
}

TEST_CASE("describe_exchange: request and answer shown, bodies cut, nothing secret", "[redact]") {
  auto s = signed_request(cloud::Dialect::ext(), false);
  std::string body = "{\"note\":\"" + std::string(5000, 'x') + kSecret + "\"}";
  cloud::HttpRequest request{"PUT", s.url, s.headers, body};
  cloud::HttpResponse response{
      403, {{"x-ext-request-id", "emu-1"}}, "{\"message\":\"signature " + s.signature + " does not match\"}"};
  cloud::ExchangeInfo info{"UploadPart", 2, 0.25, {kSecret, kToken}};
  std::string dump = cloud::describe_exchange(request, response, info);
  CHECK(dump.rfind("* UploadPart, attempt 2\n> PUT https://storage.example.com/bucket/key?partNumber=1&uploadId=u\n",
                   0) == 0);
  CHECK(contains(dump, "> X-Ext-Security-Token: <redacted>\n"));
  CHECK(contains(dump, "> ... (cut: " + std::to_string(body.size()) + " bytes in all)\n"));
  CHECK(contains(dump, "< HTTP 403 (0.250 s)\n< x-ext-request-id: emu-1\n<\n"));
  CHECK_FALSE(contains(dump, s.signature));
  CHECK_FALSE(contains(dump, kToken));
  CHECK_FALSE(contains(dump, "wJalrXUtnFEMI"));

  // A secret straddling the cut is still found whole: nothing of it shows.
  info.body_limit = 5010;
  request.body = std::string(5000, 'y') + kSecret;
  CHECK_FALSE(contains(cloud::describe_exchange(request, response, info), "wJalrXUtn"));

  request.body = std::string("\x00\x01\x02 binary", 10);
  CHECK(contains(cloud::describe_exchange(request, response, info), "> (10 bytes of binary data)\n"));

  cloud::Outcome<cloud::HttpResponse> failed =
      cloud::make_error(cloud::ErrorKind::transport, "ConnectionFailed", "refused");
  CHECK(contains(cloud::describe_exchange(request, failed, info),
                 "< no answer after 0.250 s: transport error: ConnectionFailed: refused\n"));
}

TEST_CASE("redact: the password of a URL's user info, wherever a URL appears", "[redact]") {
  CHECK(redact("endpoint https://ops:pa55w0rd@storage.example.com/b?x=1 refused", {}) ==
        "endpoint https://ops:<redacted>@storage.example.com/b?x=1 refused");
  CHECK(redact("'http://u:p@ss@127.0.0.1:9000'", {}) == "'http://u:<redacted>@127.0.0.1:9000'");
  CHECK(redact("http://user@host:8080/a@b:c and http://host:8080/x", {}) ==
        "http://user@host:8080/a@b:c and http://host:8080/x");
}

TEST_CASE("redact: the secrets clients remember are redacted everywhere, short ones are not searched for", "[redact]") {
  cloud::remember_secret("remembered-secret-0042");
  cloud::remember_secret("short");
  CHECK(redact("a remembered-secret-0042 b " + cloud::uri_encode("remembered-secret-0042"), {}) ==
        "a <redacted> b <redacted>");
  CHECK(redact("short words stay; tiny ones too", {"tiny"}) == "short words stay; tiny ones too");
}

TEST_CASE("redact: every text of an error, and describe() of any error", "[redact]") {
  cloud::remember_secret("remembered-by-a-client-0007");
  cloud::Error e = cloud::make_error(cloud::ErrorKind::api, "BadRequest",
                                     "you sent X-Ext-Security-Token: " + kToken + " and remembered-by-a-client-0007");
  e.fields.push_back({"snapshot.description", "got '" + kSecret + "'"});
  CHECK_FALSE(contains(e.describe(), "remembered-by-a-client"));
  CHECK_FALSE(contains(e.describe(), "FwoGZXIvYXdzEJr"));
  cloud::redact_error(e, {kSecret});
  CHECK(e.message == "you sent X-Ext-Security-Token: <redacted> and <redacted>");
  CHECK(e.fields[0].problem == "got '<redacted>'");
}

TEST_CASE("printable: control characters and bytes of no UTF-8 are escaped as Lua writes them, the rest kept",
          "[redact][escape]") {
  using cloud::printable;
  CHECK(printable("plain text, line\nand\ttab") == "plain text, line\nand\ttab");
  CHECK(printable("ünïcödé ✓ 漢字 😀") == "ünïcödé ✓ 漢字 😀");        // UTF-8 stays as it is
  CHECK(printable("\x1b]52;c;aGk=\x07") == "\\027]52;c;aGk=\\007");  // OSC 52 writes the clipboard
  CHECK(printable("\x1b[2J\x1b[H") == "\\027[2J\\027[H");
  CHECK(printable("over\rwrite") == "over\\rwrite");
  CHECK(printable(std::string("nul\0del\x7f", 8)) == "nul\\000del\\127");
  CHECK(printable("\xc2\x9b"
                  "31m \xc2\x85 \xc2\xa0") == "\\u{9B}31m \\u{85} \xc2\xa0");  // C1 as UTF-8; U+00A0 is text
  CHECK(printable("\x9b"
                  "31m \xff \xc0\x9b \xe0\x80\x9b") ==
        "\\155"
        "31m \\255 \\192\\155 \\224\\128\\155");                   // raw C1, overlong forms
  CHECK(printable("\xed\xa0\x80") == "\\237\\160\\128");           // a surrogate is no UTF-8
  CHECK(printable(printable("\x1b[2J")) == printable("\x1b[2J"));  // applied twice, the same
}

TEST_CASE("redact: credentials by field name in JSON, form, query and XML bodies, any case", "[redact]") {
  const std::string json_body =
      R"({"user":"ann","password":"hunter2 with spaces","apiKey":"k-123","client_secret":"cs-456","token":"t-789",)"
      R"("privateKey":"-----BEGIN KEY-----\nMII\"x","Passwd":1234,"refresh_token":"rt","api-key":"ak","nested":{"credential":"c",)"
      R"("mySecretValue":"s"},"access_token" : "at","private_key":"pk","count":3})";
  std::string shown = redact(json_body);
  for (const char* secret : {"hunter2", "k-123", "cs-456", "t-789", "BEGIN KEY", "MII", "1234", "\"rt\"", "\"ak\"",
                             "\"c\"", "\"s\"", "\"at\"", "\"pk\""})
    CHECK_FALSE(contains(shown, secret));
  CHECK(contains(shown, R"("user":"ann")"));
  CHECK(contains(shown, R"("count":3)"));
  CHECK(contains(shown, R"("password":"<redacted>")"));
  CHECK(contains(shown, R"("access_token" : "<redacted>")"));

  std::string form = redact("user=ann&password=hunter2&API_KEY=k1&client_secret=cs&next=1");
  CHECK(form == "user=ann&password=<redacted>&API_KEY=<redacted>&client_secret=<redacted>&next=1");
  CHECK(redact("GET /login?token=abc&page=2 HTTP/1.1") == "GET /login?token=<redacted>&page=2 HTTP/1.1");
  // An Authorization header's Credential= is the access key id and its scope: it stays;
  // a value already redacted is not redacted again.
  const std::string authorization =
      "Authorization: AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20240102/jp-east-1/s3/aws4_request";
  CHECK(redact(authorization) == authorization);
  CHECK(redact("password=<redacted>&a=1") == "password=<redacted>&a=1");
  CHECK(redact("<Login><User>ann</User><Password>hunter2</Password></Login>") ==
        "<Login><User>ann</User><Password><redacted></Password></Login>");
  // Names that only look alike stay: paging tokens, a key's name, words in a sentence.
  CHECK(redact(R"({"NextToken":"n1","ContinuationToken":"c1","Key":"a.txt","keyword":"x"})") ==
        R"({"NextToken":"n1","ContinuationToken":"c1","Key":"a.txt","keyword":"x"})");
  CHECK(redact("bad argument #1 to 'client' (unknown field 'password')") ==
        "bad argument #1 to 'client' (unknown field 'password')");
}

TEST_CASE("redact: names users add (redact_fields) are redacted from then on, '*' for any run of name characters",
          "[redact]") {
  CHECK(redact(R"({"pin":"1234","otp_code":"999"})") == R"({"pin":"1234","otp_code":"999"})");
  CHECK(cloud::bad_field_name("pin, otp_*") == std::nullopt);
  CHECK(cloud::bad_field_name("pin, a b") == std::optional<std::string>("a b"));
  CHECK(cloud::bad_field_name("pin,x\"y") == std::optional<std::string>("x\"y"));
  cloud::remember_secret_fields(" pin , otp_*,");
  CHECK(redact(R"({"PIN":"1234","otp_code":"999","pinned":true})") ==
        R"({"PIN":"<redacted>","otp_code":"<redacted>","pinned":true})");
  CHECK(redact("pin=1234&other=1") == "pin=<redacted>&other=1");
}

TEST_CASE("describe_exchange: a header named with secret, token, password or key as a word shows no value",
          "[redact]") {
  cloud::Headers secret{{"X-My-Secret", "v1"},
                        {"x-api-key", "v2"},
                        {"X-Auth-Token", "v3"},
                        {"X-DB-Password", "v4"},
                        {"X-Amz-Server-Side-Encryption-Customer-Key", "v5"},
                        {"x_client_secret", "v6"},
                        {"Token", "v7"},
                        {"X-ApiKey", "v8"},
                        {"X-Api.Key", "v9"},
                        {"X-SECRET-KEY-ID", "v10"}};
  cloud::Headers kept{{"X-Monkey", "banana"}, {"x-amz-content-sha256", "UNSIGNED-PAYLOAD"},
                      {"X-Keyword", "k"},     {"X-Tokens-Left", "7"},
                      {"X-Secretary", "s"},   {"X-Kms-Key-Id", "arn-1"},
                      {"Key-Id", "k1"},       {"X-Passwords-Allowed", "2"},
                      {"X-Turnkey", "t"}};
  cloud::Headers all = secret;
  all.insert(all.end(), kept.begin(), kept.end());
  cloud::HttpRequest request{"GET", "http://127.0.0.1:1/x", all, ""};
  cloud::HttpResponse response{200, all, ""};
  cloud::ExchangeInfo info;
  info.label = "request";
  std::string dump = cloud::describe_exchange(request, response, info);
  for (const auto& [name, value] : secret) {
    INFO(name);
    CHECK(contains(dump, "> " + name + ": <redacted>\n"));
    CHECK(contains(dump, "< " + name + ": <redacted>\n"));
  }
  for (const auto& [name, value] : kept) {
    INFO(name);
    CHECK(contains(dump, "> " + name + ": " + value + "\n"));
    CHECK(contains(dump, "< " + name + ": " + value + "\n"));
  }
}

TEST_CASE("describe_exchange: an Authorization's credential, Proxy-Authorization and cookies show no value",
          "[redact]") {
  const std::string signed_value =
      "EXT4-HMAC-SHA256 Credential=AKIDEXAMPLE/20261129/jp-east-1/s3/ext4_request, SignedHeaders=host, Signature=" +
      std::string(64, 'a');
  cloud::Headers request_headers{{"Authorization", "Bearer abc.def-bearer-1"},
                                 {"Proxy-Authorization", "Basic cHJveHk6cHc="},
                                 {"Cookie", "sid=cookie-value-1"},
                                 {"x-amz-security-token", "tok-value-1"}};
  cloud::Headers answer_headers{{"Set-Cookie", "sid=cookie-value-2; Path=/"}, {"authorization", "Token raw-value-1"}};
  cloud::HttpRequest request{"GET", "http://127.0.0.1:1/x", request_headers, ""};
  cloud::HttpResponse response{200, answer_headers, ""};
  cloud::ExchangeInfo info;
  std::string dump = cloud::describe_exchange(request, response, info);
  for (const char* value : {"abc.def", "cHJveHk6cHc", "cookie-value", "tok-value", "raw-value"}) {
    INFO(value);
    CHECK_FALSE(contains(dump, value));
  }
  CHECK(contains(dump, "> Authorization: Bearer <redacted>\n"));  // the scheme stays, to read what was sent
  CHECK(contains(dump, "> Proxy-Authorization: Basic <redacted>\n"));
  CHECK(contains(dump, "> Cookie: <redacted>\n"));
  CHECK(contains(dump, "< Set-Cookie: <redacted>\n"));
  // a signed request's Authorization keeps its credential scope and signed headers
  request.headers = {{"Authorization", signed_value}};
  CHECK(contains(cloud::describe_exchange(request, response, info),
                 "> Authorization: EXT4-HMAC-SHA256 Credential=AKIDEXAMPLE/20261129/jp-east-1/s3/ext4_request, "
                 "SignedHeaders=host, Signature=<redacted>\n"));
}
