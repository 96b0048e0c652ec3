// The wire formats, without a network: golden requests (model + arguments -> method,
// path, query, headers, body exactly as sent) and golden responses (body and headers ->
// the result table, types included), for XML and JSON, errors too. The emulator uses
// the same code to read requests, so end-to-end tests alone could not see a mistake
// made the same way in both directions; these compare with text written by hand.
// Last, the Lua side of the types: JSON null <-> cloud.null, integers, empty tables.
#include <catch2/catch.hpp>

#include <lua.hpp>

#include "core/base/crypto.h"
#include "core/model/protocol.h"
#include "core/model/validate.h"
#include "lua/convert.h"

using namespace cloud;

namespace {

const Operation& op(const std::string& name) { return *Model::builtin().find(name); }
const Api& api_of(const std::string& name) { return *Model::builtin().api(op(name).api); }

// What the client sends for `args`: validated (and normalised) first, as Client::call does.
WireRequest wire(const std::string& name, const json& args) {
  Outcome<json> input = validate_input(op(name), args);
  INFO(name << (input.ok() ? "" : "\n" + input.error().describe()));
  REQUIRE(input.ok());
  return serialize_request(api_of(name), op(name), *input);
}

HttpResponse response(long status, std::string body, Headers headers = {}) {
  HttpResponse r;
  r.status = status;
  r.body = std::move(body);
  r.headers = std::move(headers);
  return r;
}

json result_of(const std::string& name, const HttpResponse& r) {
  Outcome<json> out = parse_result(api_of(name), op(name), r);
  INFO((out.ok() ? std::string() : out.error().describe()));
  REQUIRE(out.ok());
  return out.value();
}

}  // namespace

// ---------------------------------------------------------------- storage, XML

TEST_CASE("CompleteMultipartUpload: the XML body in the namespace, parts as given, quotes kept", "[protocol]") {
  WireRequest w =
      wire("CompleteMultipartUpload", {{"Bucket", "my-bucket"},
                                       {"Object", "dir/a b+c.bin"},
                                       {"uploadId", "up/1+2"},
                                       {"Part",
                                        {{{"PartNumber", 1}, {"ETag", "\"5d41402abc4b2a76b9719d911017c592\""}},
                                         {{"PartNumber", 3}, {"ETag", "\"7d793037a0760186574b0282f2f435e7\""}}}}});
  CHECK(w.method == "POST");
  CHECK(w.path == "/my-bucket/dir/a%20b%2Bc.bin");
  CHECK(w.query == "uploadId=up%2F1%2B2");
  CHECK(w.body ==
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>"
        "<CompleteMultipartUpload xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
        "<Part><ETag>\"5d41402abc4b2a76b9719d911017c592\"</ETag><PartNumber>1</PartNumber></Part>"
        "<Part><ETag>\"7d793037a0760186574b0282f2f435e7\"</ETag><PartNumber>3</PartNumber></Part>"
        "</CompleteMultipartUpload>");
  CHECK(header_value(w.headers, "Content-Type") == "application/xml");
}

TEST_CASE("the multipart steps: ?uploads, partNumber and uploadId, a raw body, DELETE", "[protocol]") {
  WireRequest create = wire("CreateMultipartUpload", {{"Bucket", "bkt"}, {"Object", "k/ü.txt"}});
  CHECK(create.method == "POST");
  CHECK(create.path == "/bkt/k/%C3%BC.txt");
  CHECK(create.query == "uploads");
  CHECK(create.body.empty());

  std::string bytes("\x00\xff<Part>&", 9);
  WireRequest part =
      wire("UploadPart", {{"Bucket", "bkt"}, {"Object", "k"}, {"uploadId", "u1"}, {"partNumber", 7}, {"body", bytes}});
  CHECK(part.method == "PUT");
  CHECK(part.query == "partNumber=7&uploadId=u1");
  CHECK(part.body == bytes);  // sent as given: no XML, no encoding
  CHECK_FALSE(has_header(part.headers, "Content-Type"));

  WireRequest abort = wire("AbortMultipartUpload", {{"Bucket", "bkt"}, {"Object", "k"}, {"uploadId", "u1"}});
  CHECK(abort.method == "DELETE");
  CHECK(abort.query == "uploadId=u1");
  CHECK(abort.body.empty());

  WireRequest ranged = wire("GetObject", {{"Bucket", "bkt"}, {"Object", "k"}, {"Range", "bytes=0-9"}});
  CHECK(header_value(ranged.headers, "Range") == "bytes=0-9");
}

TEST_CASE("CompleteMultipartUploadResult: typed, namespaced, ETag quotes kept, header members", "[protocol]") {
  HttpResponse r =
      response(200,
               "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
               "<CompleteMultipartUploadResult xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
               "<Location>https://storage.example.com/my-bucket/dir/a%20b.bin</Location><Bucket>my-bucket</Bucket>"
               "<Key>dir/a b.bin</Key><ETag>&quot;3858f62230ac3c915f300c664312c11f-9&quot;</ETag>"
               "</CompleteMultipartUploadResult>",
               {{"x-ext-request-id", "req-1"},
                {"x-ext-version-id", "v-9"},
                {"x-ext-expiration", "expiry-date=\"Fri, 23 Dec 2030 00:00:00 GMT\""},
                {"x-ext-server-side-encryption", "aws:kms"},
                {"x-ext-server-side-encryption-aws-kms-key-id", "key-1"}});
  json out = result_of("CompleteMultipartUpload", r);
  CHECK(out == json{{"Location", "https://storage.example.com/my-bucket/dir/a%20b.bin"},
                    {"Bucket", "my-bucket"},
                    {"Key", "dir/a b.bin"},
                    {"ETag", "\"3858f62230ac3c915f300c664312c11f-9\""},
                    {"VersionId", "v-9"},
                    {"Expiration", "expiry-date=\"Fri, 23 Dec 2030 00:00:00 GMT\""},
                    {"ServerSideEncryption", "aws:kms"},
                    {"SSEKMSKeyId", "key-1"}});
  CHECK(request_id_of(r.headers) == "req-1");

  // The aws dialect's x-amz-* headers fill the same members.
  HttpResponse aws =
      response(200, "<CompleteMultipartUploadResult><ETag>\"e-1\"</ETag></CompleteMultipartUploadResult>",
               {{"x-amz-version-id", "v-2"}, {"x-amz-request-id", "req-2"}});
  CHECK(result_of("CompleteMultipartUpload", aws)["VersionId"] == "v-2");
  CHECK(request_id_of(aws.headers) == "req-2");
}

// What the emulator reads from the request the client sends for `args`: the same
// parser, then the server's validation.
json received(const std::string& name, const json& args) {
  WireRequest w = wire(name, args);
  std::map<std::string, std::string> labels;
  REQUIRE(match_operation(api_of(name), w.method, w.path, w.query, labels) == &op(name));
  Outcome<json> parsed = parse_request(api_of(name), op(name), labels, w.query, w.headers, w.body);
  REQUIRE(parsed.ok());
  Outcome<json> accepted = validate_input(op(name), *parsed, Checker::server);
  INFO((accepted.ok() ? std::string() : accepted.error().describe()));
  REQUIRE(accepted.ok());
  return *accepted;
}

// Found by fuzz_validate: pugixml wrote a '\r' as it is, and read it back as a line
// feed (XML's end-of-line handling); text of whitespace only was dropped on reading.
TEST_CASE("XML text: a carriage return goes as a character reference and comes back, whitespace-only text is kept",
          "[protocol]") {
  json args = {{"Bucket", "demo-bucket"},
               {"Object", "k"},
               {"uploadId", "u"},
               {"Part",
                {{{"PartNumber", 1}, {"ETag", " \"a\"\r\n"}},
                 {{"PartNumber", 2}, {"ETag", " "}},
                 {{"PartNumber", 3}, {"ETag", "\r"}},
                 {{"PartNumber", 4}, {"ETag", "\t\n"}}}}};
  WireRequest w = wire("CompleteMultipartUpload", args);
  CHECK(w.body.find('\r') == std::string::npos);
  CHECK(w.body.find("<ETag> \"a\"&#13;\n</ETag>") != std::string::npos);
  CHECK(w.body.find("<ETag>&#13;</ETag>") != std::string::npos);
  CHECK(received("CompleteMultipartUpload", args) == args);

  // Either way: a result's whitespace-only text, and an error message's '\r'.
  HttpResponse r = response(200,
                            "<CompleteMultipartUploadResult><Key> </Key><ETag>\t</ETag>\n  <Bucket>b</Bucket>\n"
                            "</CompleteMultipartUploadResult>");
  CHECK(result_of("CompleteMultipartUpload", r) == json{{"Key", " "}, {"ETag", "\t"}, {"Bucket", "b"}});
  std::string error = serialize_error(api_of("GetObject"), "C", "line 1\r\nline 2", "r-1", json::object());
  CHECK(error.find('\r') == std::string::npos);
  CHECK(parse_error(api_of("GetObject"), response(400, error)).message == "line 1\r\nline 2");
  // An error's Code or Message of whitespace only says nothing: the status names it.
  Error blank = parse_error(api_of("GetObject"), response(400, "<Error><Code> </Code><Message>\n</Message></Error>"));
  CHECK(blank.code == "HTTP400");
  CHECK(blank.message.find_first_not_of(" \n") != std::string::npos);
}

TEST_CASE("storage results: the upload id, a part's ETag from its header, an object's bytes", "[protocol]") {
  json init =
      result_of("CreateMultipartUpload",
                response(200,
                         "<InitiateMultipartUploadResult xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
                         "<Bucket>b</Bucket><Key>k</Key><UploadId>abc123</UploadId></InitiateMultipartUploadResult>"));
  CHECK(init == json{{"Bucket", "b"}, {"Key", "k"}, {"UploadId", "abc123"}});
  CHECK(result_of("UploadPart", response(200, "", {{"ETag", "\"0123\""}})) == json{{"ETag", "\"0123\""}});
  std::string bytes("\x00\x01\xfe", 3);
  json got = result_of("GetObject", response(206, bytes, {{"Content-Range", "bytes 0-2/10"}, {"ETag", "\"e\""}}));
  CHECK(got["Body"] == bytes);
  CHECK(got["ContentRange"] == "bytes 0-2/10");
}

TEST_CASE("ListParts: S3's ListPartsResult, its flattened parts, owners and the aws dialect's abort header",
          "[protocol]") {
  json r = result_of(
      "ListParts",
      response(
          200,
          "<ListPartsResult xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"><Bucket>b</Bucket><Key>k</Key>"
          "<UploadId>u</UploadId><PartNumberMarker>0</PartNumberMarker><NextPartNumberMarker>2</NextPartNumberMarker>"
          "<MaxParts>2</MaxParts><IsTruncated>true</IsTruncated>"
          "<Part><PartNumber>1</PartNumber><LastModified>2026-01-31T12:00:00.000Z</LastModified>"
          "<ETag>&quot;e1&quot;</ETag><Size>5242880</Size></Part>"
          "<Part><PartNumber>2</PartNumber><LastModified>2026-01-31T12:00:01.000Z</LastModified>"
          "<ETag>&quot;e2&quot;</ETag><Size>7</Size></Part>"
          "<Initiator><ID>i</ID><DisplayName>me</DisplayName></Initiator><Owner><ID>o</ID></Owner>"
          "<StorageClass>STANDARD</StorageClass></ListPartsResult>",
          {{"x-amz-abort-date", "Wed, 28 Oct 2026 00:00:00 GMT"}}));
  CHECK(r["IsTruncated"] == true);
  CHECK(r["NextPartNumberMarker"] == 2);
  REQUIRE(r["Part"].size() == 2);
  CHECK(r["Part"][1] ==
        json{{"PartNumber", 2}, {"LastModified", "2026-01-31T12:00:01.000Z"}, {"ETag", "\"e2\""}, {"Size", 7}});
  CHECK(r["Initiator"] == json{{"ID", "i"}, {"DisplayName", "me"}});
  CHECK(r["Owner"] == json{{"ID", "o"}});
  CHECK(r["AbortDate"] == "Wed, 28 Oct 2026 00:00:00 GMT");
}

TEST_CASE("XML error bodies: code, message and request id, a 200 result that is not one fails", "[protocol]") {
  HttpResponse r = response(400,
                            "<?xml version=\"1.0\" encoding=\"UTF-8\"?><Error><Code>InvalidPart</Code>"
                            "<Message>One or more of the specified parts could not be found.</Message>"
                            "<UploadId>u1</UploadId><PartNumber>2</PartNumber><RequestId>req-7</RequestId></Error>",
                            {{"x-ext-request-id", "req-header"}});
  Error e = parse_error(api_of("CompleteMultipartUpload"), r);
  CHECK(e.kind == ErrorKind::api);
  CHECK(e.code == "InvalidPart");
  CHECK(e.message == "One or more of the specified parts could not be found.");
  CHECK(e.request_id == "req-7");
  CHECK(e.status == 400);

  Error bare = parse_error(api_of("GetObject"), response(503, "", {{"x-ext-request-id", "req-8"}}));
  CHECK(bare.code == "HTTP503");
  CHECK(bare.message == "Service Unavailable (503), no body");
  CHECK(bare.request_id == "req-8");

  for (const char* body : {"", "<CompleteMultipartUploadResult><Bucket>b</Bu", "<Other/>"}) {
    INFO(body);
    Outcome<json> out =
        parse_result(api_of("CompleteMultipartUpload"), op("CompleteMultipartUpload"), response(200, body));
    REQUIRE_FALSE(out.ok());
    CHECK(out.error().code == "MalformedResponse");
  }
}

// ---------------------------------------------------------------- JSON APIs

TEST_CASE("JSON requests: paths with ':' and labels, the body without path members", "[protocol]") {
  WireRequest w = wire("AuthorizeFirewallRules",
                       {{"FirewallGroupName", "fw 1"},
                        {"rules",
                         {{{"protocol", "TCP"}, {"port", 443}, {"cidrIp", "0.0.0.0/0"}, {"description", "日本語"}},
                          {{"protocol", "ICMP"}, {"cidrIp", "192.0.2.1"}}}}});
  CHECK(w.method == "POST");
  CHECK(w.path == "/v1/firewallGroups/fw%201/rules");
  CHECK(w.query.empty());
  CHECK(json::parse(w.body) ==
        json::parse(R"({"rules":[{"protocol":"TCP","port":443,"cidrIp":"0.0.0.0/0","description":"日本語"},
                                               {"protocol":"ICMP","cidrIp":"192.0.2.1"}]})"));
  CHECK(header_value(w.headers, "Content-Type") == "application/json");

  CHECK(wire("RestoreInstance", {{"backupId", std::string(32, 'a')}, {"instanceId", "code-1"}}).path ==
        "/v1/instances:restore");
  CHECK(wire("RestoreClusterFromSnapshot", {{"SnapshotName", "snap-1"}, {"cluster", {{"name", "c-1"}}}}).path ==
        "/v1/snapshots/snap-1:restore");
  WireRequest mesh = wire("UpgradeMeshplatformServiceMeshVersion",
                          {{"ResourceGroupName", "rg-1"}, {"ClusterName", "mesh-1"}, {"version", "1.22.1"}});
  CHECK(mesh.path == "/v1/resource-groups/rg-1/meshplatform/clusters/mesh-1/meshplatform-service-mesh:upgrade");
  CHECK(json::parse(mesh.body) == json{{"version", "1.22.1"}});
}

TEST_CASE("JSON requests: an empty table is [] where the model has a list, {} where an object", "[protocol]") {
  WireRequest w = wire("UpdateSnapshot", {{"SnapshotName", "s"}, {"snapshot", {{"tags", json::object()}}}});
  CHECK(w.method == "PUT");
  CHECK(w.body == R"({"snapshot":{"tags":[]}})");
  WireRequest r = wire("RestoreInstance", {{"backupId", std::string(32, 'a')},
                                           {"instanceId", "code-1"},
                                           {"networkConfig", json::object()},
                                           {"diskSize", 100}});
  CHECK(json::parse(r.body) == json{{"backupId", std::string(32, 'a')},
                                    {"instanceId", "code-1"},
                                    {"networkConfig", json::object()},
                                    {"diskSize", 100}});
  CHECK(json::parse(r.body)["diskSize"].is_number_integer());
}

TEST_CASE("JSON results: integers, booleans, empty lists, null and absent fields as sent", "[protocol]") {
  json out = result_of("AuthorizeFirewallRules", response(200, R"({
      "firewallGroupName": "fw-1", "state": "PROCESSING", "extra": 1.5,
      "rules": [ { "id": "r1", "protocol": "TCP", "port": 22, "state": "AUTHORIZED" },
                 { "id": "r2", "protocol": "ICMP", "state": "AUTHORIZED" },
                 { "id": "r3", "protocol": "ICMP", "port": null, "state": "AUTHORIZED" } ] })"));
  CHECK(out["rules"][0]["port"].is_number_integer());
  CHECK_FALSE(out["rules"][1].contains("port"));  // left out on the wire: absent
  CHECK(out["rules"][2]["port"].is_null());       // null on the wire: null (cloud.null in Lua)
  CHECK(out["extra"].is_number_float());          // a field the model does not know is kept

  json inst = result_of("RestoreInstance", response(200, R"({"instance":{"diskSize":100,"upgradableCodehostVersions":[],
      "networkConfig":{},"status":{"code":200,"name":"RESTORING"}}})"));
  CHECK(inst["instance"]["upgradableCodehostVersions"] == json::array());
  CHECK(inst["instance"]["networkConfig"] == json::object());
  CHECK(inst["instance"]["status"]["code"].is_number_integer());

  json cluster = result_of("RestoreClusterFromSnapshot",
                           response(200, R"({"cluster":{"addonsConfig":{"httpLoadBalancing":{"disabled":false}}}})"));
  CHECK(cluster["cluster"]["addonsConfig"]["httpLoadBalancing"]["disabled"] == false);
}

TEST_CASE("JSON error bodies of the usual shapes", "[protocol]") {
  const Api& devops = api_of("RestoreInstance");
  struct Case {
    const char* body;
    Headers headers;
    const char* code;
    const char* message;
  };
  const Case cases[] = {
      {R"({"code":"BackupNotFound","message":"no backup"})", {}, "BackupNotFound", "no backup"},
      {R"({"Code":"Busy","Message":"later"})", {}, "Busy", "later"},
      {R"({"__type":"com.example.devops#ThrottlingException","message":"slow down"})",
       {},
       "ThrottlingException",
       "slow down"},
      {R"({"message":"from the header"})",
       {{"x-ext-error-type", "InstanceAlreadyExists"}},
       "InstanceAlreadyExists",
       "from the header"},
      {"<html>bad gateway</html>",
       {},
       "HTTP502",
       "Bad Gateway (502), an HTML page: not an answer of the API; check the endpoint and any proxy in between"},
      {"upstream went away", {}, "HTTP502", "upstream went away"},
  };
  for (const Case& c : cases) {
    INFO(c.body);
    Error e = parse_error(devops, response(502, c.body, c.headers));
    CHECK(e.kind == ErrorKind::api);
    CHECK(e.code == c.code);
    CHECK(e.message == c.message);
    CHECK(e.status == 502);
  }
}

// Answers from something other than the platform (a proxy, a load balancer, a HEAD
// answer that cannot carry a body) are summarised with the request they answer.
TEST_CASE("an HTML error page is summarised by its title, not dumped", "[protocol]") {
  std::string filler(20000, 'x');
  std::string page =
      "<!DOCTYPE html>\n<html><head><title>502 Bad\n  Gateway</title></head><body><center><h1>502 Bad "
      "Gateway</h1></center><hr><center>nginx/1.25.3</center>" +
      filler + "</body></html>";
  AnsweredRequest asked{&op("UpdateSnapshot"), "PUT", "http://proxy.example:8080/v1/snapshots/snap-1",
                        "proxy.example:8080"};
  Error e = parse_error(api_of("UpdateSnapshot"), response(502, page, {{"Content-Type", "text/html"}}), asked);
  CHECK(e.kind == ErrorKind::api);
  CHECK(e.code == "HTTP502");
  CHECK(e.status == 502);
  CHECK(e.message ==
        "Bad Gateway (502), an HTML page titled \"502 Bad Gateway\" from proxy.example:8080 for PUT "
        "http://proxy.example:8080/v1/snapshots/snap-1: not an answer of the API; check the endpoint and any proxy "
        "in between");

  // Storage (XML): a page without a title is named by its first heading; a long one is cut.
  std::string heading = "<html><body><h2>Service <b>down</b> for " + std::string(500, 'm') + "</h2></body></html>";
  Error cut = parse_error(api_of("GetObject"), response(503, heading));
  CHECK_THAT(cut.message, Catch::StartsWith("Service Unavailable (503), an HTML page titled \"Service down for mmm"));
  CHECK_THAT(cut.message, Catch::Contains("mmm...\""));
  CHECK(cut.message.size() < 300);
}

TEST_CASE("an answer with no body names the status, method, URL and host", "[protocol]") {
  AnsweredRequest asked{&op("GetSnapshot"), "GET", "http://lb.example/v1/snapshots/s1", "lb.example"};
  Error e = parse_error(api_of("GetSnapshot"), response(404, ""), asked);
  CHECK(e.code == "HTTP404");
  CHECK(e.message == "Not Found (404), no body, from lb.example for GET http://lb.example/v1/snapshots/s1");
  Error odd = parse_error(api_of("GetSnapshot"), response(599, ""), asked);
  CHECK_THAT(odd.message, Catch::StartsWith("HTTP 599, no body, from lb.example"));
}

TEST_CASE("HeadObject's bodiless 404 is NoSuchKey, from the model's errorsByStatus", "[protocol]") {
  AnsweredRequest head{&op("HeadObject"), "HEAD", "http://127.0.0.1:9000/b/missing", "127.0.0.1:9000"};
  CHECK(op("HeadObject").errors_by_status.at(404) == "NoSuchKey");
  Error e = parse_error(api_of("HeadObject"), response(404, ""), head);
  CHECK(e.code == "NoSuchKey");
  CHECK_THAT(e.message, Catch::StartsWith("Not Found (404), no body, from 127.0.0.1:9000 for HEAD"));
  // Only the status the model lists, and only when the answer names no code itself.
  CHECK(parse_error(api_of("HeadObject"), response(403, ""), head).code == "HTTP403");
  Error named = parse_error(api_of("HeadObject"),
                            response(404, "<Error><Code>NoSuchBucket</Code><Message>m</Message></Error>"), head);
  CHECK(named.code == "NoSuchBucket");
  // Another operation's 404 keeps the status code.
  CHECK(parse_error(api_of("GetObject"), response(404, ""), {&op("GetObject"), "GET", "u", "h"}).code == "HTTP404");
}

// ---------------------------------------------------------------- the S3 listings and deletes

namespace {

// The operation the emulator takes a request for, "" for none.
std::string matched(const std::string& method, const std::string& target, const Headers& headers = {}) {
  size_t q = target.find('?');
  std::map<std::string, std::string> labels;
  const Operation* found = match_operation(*Model::builtin().api("storage"), method, target.substr(0, q),
                                           q == std::string::npos ? "" : target.substr(q + 1), labels, headers);
  return found ? found->name : "";
}

}  // namespace

TEST_CASE("requests are told apart by method, path shape, query keys and values, and headers", "[protocol]") {
  CHECK(matched("GET", "/") == "ListBuckets");
  CHECK(matched("GET", "/b") == "ListObjects");
  CHECK(matched("GET", "/b?prefix=a&max-keys=2") == "ListObjects");
  CHECK(matched("GET", "/b?list-type=2&prefix=a") == "ListObjectsV2");
  CHECK(matched("GET", "/b?list-type=1") == "ListObjects");  // the value selects, not the key alone
  CHECK(matched("GET", "/b?location") == "GetBucketLocation");
  CHECK(matched("GET", "/b?uploads") == "ListMultipartUploads");
  CHECK(matched("GET", "/b/k") == "GetObject");
  CHECK(matched("HEAD", "/b") == "HeadBucket");
  CHECK(matched("HEAD", "/b/k") == "HeadObject");
  CHECK(matched("DELETE", "/b") == "DeleteBucket");
  CHECK(matched("DELETE", "/b/k") == "DeleteObject");
  CHECK(matched("DELETE", "/b/k?uploadId=u") == "AbortMultipartUpload");
  CHECK(matched("POST", "/b?delete") == "DeleteObjects");
  CHECK(matched("POST", "/b/k?uploads") == "CreateMultipartUpload");
  CHECK(matched("PUT", "/b/k") == "PutObject");
  CHECK(matched("PUT", "/b/k?partNumber=1&uploadId=u") == "UploadPart");
  CHECK(matched("PUT", "/b/k", {{"x-ext-copy-source", "a/k"}}) == "CopyObject");
  CHECK(matched("PUT", "/b/k", {{"X-Amz-Copy-Source", "/a/k"}}) == "CopyObject");  // the aws dialect's name
}

TEST_CASE("the path forms S3 clients send: a '/' after the bucket, x-id in the query", "[protocol]") {
  CHECK(matched("PUT", "/b/") == "CreateBucket");  // s3cmd
  CHECK(matched("HEAD", "/b/") == "HeadBucket");
  CHECK(matched("GET", "/b/?list-type=2") == "ListObjectsV2");
  CHECK(matched("DELETE", "/b/") == "DeleteBucket");
  CHECK(matched("GET", "/b//") == "GetObject");                 // the key "/", as S3 reads it
  CHECK(matched("PUT", "/b/k?x-id=PutObject") == "PutObject");  // the vendor SDK's
  CHECK(matched("GET", "/b/k?x-id=GetObject") == "GetObject");
  CHECK(matched("POST", "/b?delete&x-id=DeleteObjects") == "DeleteObjects");
  CHECK(matched("PUT", "/b/k?partNumber=2&uploadId=u&x-id=UploadPart") == "UploadPart");
  // The JSON APIs take no '/' after a label.
  std::map<std::string, std::string> labels;
  CHECK(match_operation(*Model::builtin().api("cluster"), "GET", "/v1/clusters/c1/", "", labels) == nullptr);
  CHECK(match_operation(*Model::builtin().api("cluster"), "GET", "/v1/clusters/c1", "", labels) != nullptr);
}

TEST_CASE("ListObjectsV2: list-type=2 and the query members, a flattened result typed", "[protocol]") {
  WireRequest w = wire("ListObjectsV2", {{"Bucket", "bkt"},
                                         {"Prefix", "photos/"},
                                         {"Delimiter", "/"},
                                         {"MaxKeys", 2},
                                         {"ContinuationToken", "a+b/c="},
                                         {"FetchOwner", true}});
  CHECK(w.method == "GET");
  CHECK(w.path == "/bkt");
  CHECK(w.query ==
        "list-type=2&prefix=photos%2F&delimiter=%2F&max-keys=2&continuation-token=a%2Bb%2Fc%3D&fetch-owner=true");
  json out = result_of(
      "ListObjectsV2",
      response(
          200,
          "<ListBucketResult xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"><Name>b</Name><Prefix>photos/</Prefix>"
          "<KeyCount>2</KeyCount><MaxKeys>2</MaxKeys><Delimiter>/</Delimiter><IsTruncated>true</IsTruncated>"
          "<NextContinuationToken>tok</NextContinuationToken>"
          "<Contents><Key>photos/a.jpg</Key><LastModified>2026-01-02T03:04:05.000Z</LastModified>"
          "<ETag>&quot;e&quot;</ETag><Size>12</Size><StorageClass>STANDARD</StorageClass></Contents>"
          "<CommonPrefixes><Prefix>photos/2024/</Prefix></CommonPrefixes></ListBucketResult>"));
  CHECK(out["IsTruncated"] == true);
  CHECK(out["KeyCount"] == 2);
  CHECK(out["Contents"] == json::array({{{"Key", "photos/a.jpg"},
                                         {"LastModified", "2026-01-02T03:04:05.000Z"},
                                         {"ETag", "\"e\""},
                                         {"Size", 12},
                                         {"StorageClass", "STANDARD"}}}));
  CHECK(out["CommonPrefixes"] == json::array({{{"Prefix", "photos/2024/"}}}));
  CHECK(out["NextContinuationToken"] == "tok");
}

namespace {

// The error parse_result gives for an answer of `operation`, which must fail.
Error refused_answer(const std::string& operation, const HttpResponse& r) {
  Outcome<json> out = parse_result(api_of(operation), op(operation), r);
  REQUIRE_FALSE(out.ok());
  return out.error();
}

// A ListObjectsV2 answer with `inside` in its ListBucketResult.
HttpResponse listing(const std::string& inside) {
  return response(200, "<ListBucketResult xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"><Name>b</Name>" + inside +
                           "</ListBucketResult>");
}

}  // namespace

TEST_CASE("answers are checked against the model's types: a wrong one is MalformedResponse naming the field",
          "[protocol]") {
  Error maybe = refused_answer("ListObjectsV2", listing("<IsTruncated>maybe</IsTruncated>"));
  CHECK(maybe.kind == ErrorKind::api);
  CHECK(maybe.code == "MalformedResponse");
  CHECK(maybe.message == "the answer does not fit the API: IsTruncated is \"maybe\", not a boolean");
  Error huge = refused_answer("ListObjectsV2", listing("<KeyCount>99999999999999999999</KeyCount>"));
  CHECK(huge.message == "the answer does not fit the API: KeyCount is \"99999999999999999999\", not an integer");
  Error size = refused_answer("ListObjectsV2", listing("<Contents><Key>a</Key><Size>1</Size></Contents>"
                                                       "<Contents><Key>b</Key><Size>1e999</Size></Contents>"));
  CHECK(size.message == "the answer does not fit the API: Contents[2].Size is \"1e999\", not an integer");
  Error header = refused_answer("HeadObject", response(200, "", {{"Content-Length", "twelve"}}));
  CHECK(header.message == "the answer does not fit the API: ContentLength is \"twelve\", not an integer");
  // The largest and smallest 64-bit integers are integers; elements the model does not know stay text.
  json edge = result_of("ListObjectsV2",
                        listing("<KeyCount>9223372036854775807</KeyCount><MaxKeys>-9223372036854775808</MaxKeys>"
                                "<Unknown>anything</Unknown>"));
  CHECK(edge["KeyCount"] == INT64_MAX);
  CHECK(edge["MaxKeys"] == INT64_MIN);
  CHECK(edge["Unknown"] == "anything");
}

TEST_CASE("JSON answers are checked against the model's types, nested members and list items too", "[protocol]") {
  auto snapshot = [](const std::string& inside) { return response(200, "{\"snapshot\": {" + inside + "}}"); };
  Error count =
      refused_answer("GetSnapshot", snapshot(R"("cluster": {"nodePools": [{"nodeCount": 1}, {"nodeCount": "3"}]})"));
  CHECK(count.code == "MalformedResponse");
  CHECK(count.message ==
        "the answer does not fit the API: snapshot.cluster.nodePools[2].nodeCount is \"3\", not an integer");
  Error wide =
      refused_answer("GetSnapshot", snapshot(R"("cluster": {"nodePools": [{"nodeCount": 18446744073709551615}]})"));
  CHECK(wide.message ==
        "the answer does not fit the API: snapshot.cluster.nodePools[1].nodeCount is 18446744073709551615, not an "
        "integer");
  Error text = refused_answer("GetSnapshot", snapshot(R"("name": 7)"));
  CHECK(text.message == "the answer does not fit the API: snapshot.name is 7, not a string");
  Error list = refused_answer("GetSnapshot", snapshot(R"("cluster": {"nodePools": {"name": "p"}})"));
  CHECK(list.message == "the answer does not fit the API: snapshot.cluster.nodePools is {\"name\":\"p\"}, not a list");
  json fine = result_of("GetSnapshot", snapshot(R"("name": "s", "description": null, "extra": [1, "x"])"));
  CHECK(fine["snapshot"]["description"].is_null());
  CHECK(fine["snapshot"]["extra"] == json::array({1, "x"}));
}

TEST_CASE("ListBuckets: a wrapped list's items have the element name the model gives", "[protocol]") {
  std::string body =
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>"
      "<ListAllMyBucketsResult xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
      "<Buckets><Bucket><Name>a</Name><CreationDate>2026-01-02T03:04:05Z</CreationDate></Bucket>"
      "<Bucket><Name>b</Name><CreationDate>2026-01-02T03:04:06Z</CreationDate></Bucket></Buckets>"
      "<Owner><DisplayName>me</DisplayName><ID>1</ID></Owner></ListAllMyBucketsResult>";
  json result = {{"Buckets",
                  {{{"Name", "a"}, {"CreationDate", "2026-01-02T03:04:05Z"}},
                   {{"Name", "b"}, {"CreationDate", "2026-01-02T03:04:06Z"}}}},
                 {"Owner", {{"DisplayName", "me"}, {"ID", "1"}}}};
  Headers headers;
  CHECK(serialize_result(api_of("ListBuckets"), op("ListBuckets"), result, headers) == body);
  CHECK(result_of("ListBuckets", response(200, body)) == result);
}

TEST_CASE("GetBucketLocation: the root element is the value", "[protocol]") {
  std::string body =
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>"
      "<LocationConstraint xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">jp-east-1</LocationConstraint>";
  Headers headers;
  CHECK(serialize_result(api_of("GetBucketLocation"), op("GetBucketLocation"), {{"LocationConstraint", "jp-east-1"}},
                         headers) == body);
  CHECK(result_of("GetBucketLocation", response(200, body)) == json{{"LocationConstraint", "jp-east-1"}});
  CHECK(result_of("GetBucketLocation", response(200, "<LocationConstraint/>")) == json{{"LocationConstraint", ""}});
}

TEST_CASE("DeleteObjects: the Delete document and its Content-MD5, and CopyObject's source header", "[protocol]") {
  WireRequest w =
      wire("DeleteObjects", {{"Bucket", "bkt"}, {"Object", {{{"Key", "a b"}}, {{"Key", "c"}}}}, {"Quiet", true}});
  CHECK(w.method == "POST");
  CHECK(w.query == "delete");
  CHECK(w.body ==
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>"
        "<Delete xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
        "<Object><Key>a b</Key></Object><Object><Key>c</Key></Object><Quiet>true</Quiet></Delete>");
  CHECK(header_value(w.headers, "Content-MD5") == base64(md5(w.body)));
  CHECK_FALSE(
      has_header(wire("PutObject", {{"Bucket", "bkt"}, {"Object", "k"}, {"Body", "x"}}).headers, "Content-MD5"));

  WireRequest copy = wire("CopyObject", {{"Bucket", "bkt"}, {"Object", "k"}, {"CopySource", "src/a%20b"}});
  CHECK(copy.method == "PUT");
  CHECK(header_value(copy.headers, "x-ext-copy-source") == "src/a%20b");
  CHECK(copy.body.empty());
}

// ---------------------------------------------------------------- the ACL of an object

namespace {

// S3's AccessControlPolicy of an object its owner alone may use; its Grantee carries
// the xsi:type attribute and the namespace declaration its prefix needs.
const std::string kOwnerAcl =
    "<?xml version=\"1.0\" encoding=\"UTF-8\"?>"
    "<AccessControlPolicy xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
    "<Owner><DisplayName>me</DisplayName><ID>1a</ID></Owner><AccessControlList><Grant>"
    "<Grantee xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\" xsi:type=\"CanonicalUser\">"
    "<ID>1a</ID><DisplayName>me</DisplayName></Grantee><Permission>FULL_CONTROL</Permission>"
    "</Grant></AccessControlList></AccessControlPolicy>";

const json kOwnerAclResult = {{"Owner", {{"DisplayName", "me"}, {"ID", "1a"}}},
                              {"AccessControlList",
                               {{{"Grantee", {{"Type", "CanonicalUser"}, {"ID", "1a"}, {"DisplayName", "me"}}},
                                 {"Permission", "FULL_CONTROL"}}}}};

}  // namespace

TEST_CASE("routing: an object's ?acl is its ACL while a plain GET stays GetObject, and a bucket's ?acl is the bucket's",
          "[protocol]") {
  CHECK(matched("GET", "/b/k?acl") == "GetObjectAcl");
  CHECK(matched("GET", "/b/dir/k?acl=") == "GetObjectAcl");
  CHECK(matched("PUT", "/b/k?acl") == "PutObjectAcl");
  CHECK(matched("GET", "/b/k") == "GetObject");
  CHECK(matched("PUT", "/b/k") == "PutObject");
  CHECK(matched("GET", "/b?acl") == "GetBucketAcl");
  CHECK(matched("GET", "/b/?acl") == "GetBucketAcl");  // no key after the '/'
  CHECK(matched("PUT", "/b?acl") == "PutBucketAcl");
  CHECK(matched("GET", "/b") == "ListObjects");
}

TEST_CASE("GetObjectAcl: the Grantee's xsi:type is an attribute, written with its namespace and read back",
          "[protocol]") {
  WireRequest w = wire("GetObjectAcl", {{"Bucket", "bkt"}, {"Object", "dir/k"}});
  CHECK(w.method == "GET");
  CHECK(w.path == "/bkt/dir/k");
  CHECK(w.query == "acl");
  Headers headers;
  CHECK(serialize_result(api_of("GetObjectAcl"), op("GetObjectAcl"), kOwnerAclResult, headers) == kOwnerAcl);
  CHECK(result_of("GetObjectAcl", response(200, kOwnerAcl)) == kOwnerAclResult);
  // Another prefix for the same namespace, and a group's grant (S3 sends both forms).
  json group = result_of(
      "GetObjectAcl",
      response(200,
               "<AccessControlPolicy><AccessControlList><Grant>"
               "<Grantee xmlns:x=\"http://www.w3.org/2001/XMLSchema-instance\" x:type=\"Group\">"
               "<URI>http://acs.amazonaws.com/groups/global/AllUsers</URI></Grantee><Permission>READ</Permission>"
               "</Grant></AccessControlList></AccessControlPolicy>"));
  CHECK(group["AccessControlList"] ==
        json::array({{{"Grantee", {{"Type", "Group"}, {"URI", "http://acs.amazonaws.com/groups/global/AllUsers"}}},
                      {"Permission", "READ"}}}));
}

TEST_CASE("PutObjectAcl: the grants as an AccessControlPolicy document, or a canned ACL with no body", "[protocol]") {
  json full = {{"Bucket", "bkt"}, {"Object", "k"}};
  full.update(kOwnerAclResult);
  WireRequest w = wire("PutObjectAcl", full);
  CHECK(w.method == "PUT");
  CHECK(w.query == "acl");
  CHECK(w.body == kOwnerAcl);
  CHECK(received("PutObjectAcl", full) == full);

  json canned = {{"Bucket", "bkt"}, {"Object", "k"}, {"ACL", "private"}};
  WireRequest c = wire("PutObjectAcl", canned);
  CHECK(c.body.empty());
  CHECK_FALSE(has_header(c.headers, "Content-Type"));
  CHECK(header_value(c.headers, "x-ext-acl") == "private");
  CHECK(received("PutObjectAcl", canned) == canned);
  // An operation whose document has a required member still needs it.
  std::map<std::string, std::string> labels{{"Bucket", "bkt"}};
  CHECK_FALSE(parse_request(api_of("DeleteObjects"), op("DeleteObjects"), labels, "delete", {}, "").ok());
}

// ---------------------------------------------------------------- the Lua side of the types

TEST_CASE("Lua <-> JSON: null is cloud.null, integers stay integers, empty tables are told apart by the model",
          "[protocol][lua]") {
  lua_State* L = luaL_newstate();
  push_json(L, json::parse(R"({"port":null,"count":3,"ratio":0.5,"on":true,"list":[],"obj":{},"items":["a","b"]})"));
  int t = lua_gettop(L);
  lua_getfield(L, t, "port");
  CHECK(is_null(L, -1));
  lua_getfield(L, t, "count");
  CHECK(lua_isinteger(L, -1));
  lua_getfield(L, t, "ratio");
  CHECK_FALSE(lua_isinteger(L, -1));
  lua_getfield(L, t, "on");
  CHECK(lua_type(L, -1) == LUA_TBOOLEAN);
  lua_getfield(L, t, "list");
  CHECK(lua_type(L, -1) == LUA_TTABLE);
  CHECK(lua_rawlen(L, -1) == 0);
  lua_getfield(L, t, "items");
  CHECK(lua_rawlen(L, -1) == 2);
  lua_settop(L, t);

  // Back to JSON: cloud.null is null; an empty list of a result stays [] (marked), an
  // empty table made in Lua is {} until the model says "list".
  Outcome<json> back = to_json(L, t);
  REQUIRE(back.ok());
  CHECK(back->at("port").is_null());
  CHECK(back->at("count") == 3);
  CHECK(back->at("count").is_number_integer());
  CHECK(back->at("list") == json::array());
  CHECK(back->at("obj") == json::object());
  CHECK(back->at("items") == json::array({"a", "b"}));
  lua_newtable(L);
  CHECK(to_json(L, -1).value() == json::object());
  lua_close(L);
}

// ---------------------------------------------------------------- header maps (user metadata)

TEST_CASE("PutObject: content headers as named, Metadata one x-ext-meta-* header per entry", "[protocol]") {
  WireRequest w = wire("PutObject", {{"Bucket", "bkt"},
                                     {"Object", "k"},
                                     {"Body", "x"},
                                     {"ContentType", "text/html"},
                                     {"CacheControl", "max-age=60"},
                                     {"ContentDisposition", "attachment"},
                                     {"Metadata", {{"mtime", "1700000000.5"}, {"Owner-Name", "ann"}, {"empty", ""}}}});
  CHECK(header_value(w.headers, "Content-Type") == "text/html");
  CHECK(header_value(w.headers, "Cache-Control") == "max-age=60");
  CHECK(header_value(w.headers, "Content-Disposition") == "attachment");
  CHECK(header_value(w.headers, "x-ext-meta-mtime") == "1700000000.5");
  CHECK(header_value(w.headers, "x-ext-meta-Owner-Name") == "ann");
  CHECK(has_header(w.headers, "x-ext-meta-empty"));
  WireRequest none =
      wire("PutObject", {{"Bucket", "bkt"}, {"Object", "k"}, {"Body", "x"}, {"Metadata", json::object()}});
  for (const Header& h : none.headers) CHECK(to_lower(h.first).rfind("x-ext-meta-", 0) != 0);
}

TEST_CASE("HeadObject: Metadata read from either dialect's headers, names lower-cased, none an empty table",
          "[protocol]") {
  json r = result_of("HeadObject", response(200, "",
                                            {{"Content-Type", "text/plain"},
                                             {"x-amz-meta-Mtime", "12"},
                                             {"X-Ext-Meta-Colour", "blue"},
                                             {"x-amz-metadata-directive", "no"},
                                             {"Cache-Control", "no-cache"},
                                             {"Expires", "Thu, 01 Jan 2037 00:00:00 GMT"}}));
  CHECK(r["ContentType"] == "text/plain");
  CHECK(r["CacheControl"] == "no-cache");
  CHECK(r["Expires"] == "Thu, 01 Jan 2037 00:00:00 GMT");
  CHECK(r["Metadata"] == json({{"mtime", "12"}, {"colour", "blue"}}));
  CHECK(result_of("GetObject", response(200, "bytes"))["Metadata"] == json::object());
}

TEST_CASE("the emulator reads Metadata from a request and answers it as x-ext-meta-* headers", "[protocol]") {
  const Api& api = api_of("PutObject");
  Outcome<json> in = parse_request(api, op("PutObject"), {{"Bucket", "bkt"}, {"Object", "k"}}, "",
                                   {{"x-amz-meta-A", "1"}, {"content-type", "text/css"}}, "x");
  REQUIRE(in.ok());
  CHECK(in.value()["Metadata"] == json({{"a", "1"}}));
  CHECK(in.value()["ContentType"] == "text/css");
  Headers out;
  serialize_result(api, op("HeadObject"), {{"Metadata", {{"a", "1"}}}, {"ContentType", "text/css"}}, out);
  CHECK(header_value(out, "x-ext-meta-a") == "1");
  CHECK(header_value(out, "Content-Type") == "text/css");
}

TEST_CASE("Metadata is checked before sending: S3's 2 KB, names as HTTP tokens, values a header carries",
          "[validate]") {
  auto problems = [](const json& metadata) {
    Outcome<json> v = validate_input(op("PutObject"), {{"Bucket", "bkt"}, {"Object", "k"}, {"Metadata", metadata}});
    std::vector<std::string> out;
    if (!v.ok())
      for (const FieldProblem& f : v.error().fields)
        out.push_back(f.path + ": " + f.problem + (f.code.empty() ? "" : " [" + f.code + "]"));
    return out;
  };
  CHECK(problems({{"a", "b"}, {"x-y_z.1", ""}}).empty());
  CHECK(problems({{"k", std::string(2047, 'v')}}).empty());  // 1 + 2047 bytes: S3 counts names and values
  auto big = problems({{"k", std::string(2048, 'v')}});
  REQUIRE(big.size() == 1);
  CHECK_THAT(big[0], Catch::Contains(
                         "Metadata: at most 2048 bytes of names and values together (got 2049) [MetadataTooLarge]"));
  auto name = problems({{"a b", "1"}});
  REQUIRE(name.size() == 1);
  CHECK_THAT(name[0], Catch::Contains("Metadata.a b (its name): must be an HTTP token"));
  auto line = problems({{"a", "1\r\nX-Injected: 1"}});
  REQUIRE_FALSE(line.empty());
  CHECK_THAT(line[0], Catch::Contains("Metadata.a: "));
  CHECK_FALSE(problems({{"a", "caf\xc3\xa9"}}).empty());  // S3 takes US-ASCII in headers
  CHECK_FALSE(problems({{"a", " padded"}}).empty());
  auto twice = problems({{"Colour", "1"}, {"colour", "2"}});
  REQUIRE(twice.size() == 1);
  CHECK_THAT(twice[0], Catch::Contains("but for case"));
  auto list = problems(json::array({"a"}));
  REQUIRE(list.size() == 1);
  CHECK_THAT(list[0], Catch::Contains("Metadata: table expected (name -> value), got list"));
}
