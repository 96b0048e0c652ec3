// The emulator's storage service driven through cloud::Platform, without HTTP: every
// rule of S3's behaviour it follows, with its status and code. Expected ETags are
// written out as constants computed elsewhere (Python's hashlib) from the known data,
// so the service's MD5 use is checked, not repeated.
#include <catch2/catch.hpp>

#include <regex>

#include "emulator/access.h"
#include "emulator/held_records.h"
#include "emulator/service.h"

using namespace cloud;

namespace {

// MD5s of the data used below, quoted as S3 sends them.
const std::string kHello = "\"5d41402abc4b2a76b9719d911017c592\"";   // "hello"
const std::string kWorld = "\"7d793037a0760186574b0282f2f435e7\"";   // "world"
const std::string kBang = "\"9033e0e305f247c0c3c80d0c7848c8b3\"";    // "!"
const std::string kDigits = "\"781e5e245d69b566979b86e28d23f2c7\"";  // "0123456789"
// MD5 of the three binary MD5s above joined, then -3: S3's multipart ETag.
const std::string kThreeParts = "\"0fe6b306db3706d84493a6b930bb5ea8-3\"";
const std::string kOnePart = "\"62109206880d38a4010a98e11243924a-1\"";  // "hello" alone

// Runs the handler of operation `name` as the emulator does, with the model's Operation.
HandlerResult handle(Platform& p, const std::string& name, const json& input) {
  const Operation* op = Model::builtin().find(name);
  REQUIRE(op != nullptr);
  return p.handle(*op, input);
}

// A platform with one bucket, "bkt", and parts of 5 bytes allowed.
struct Fixture {
  Platform p{"jp-east-1", Model::builtin()};
  Fixture() {
    p.set_setting("min_part_size", 5);
    REQUIRE(handle(p, "CreateBucket", {{"Bucket", "bkt"}}).ok);
  }
  HandlerResult call(const std::string& op, json input) { return handle(p, op, input); }
  std::string start(const std::string& key = "big.bin") {
    HandlerResult r = call("CreateMultipartUpload", {{"Bucket", "bkt"}, {"Object", key}});
    REQUIRE(r.ok);
    return r.result["UploadId"].get<std::string>();
  }
  std::string upload(const std::string& id, long long number, const std::string& bytes,
                     const std::string& key = "big.bin") {
    HandlerResult r = call(
        "UploadPart", {{"Bucket", "bkt"}, {"Object", key}, {"uploadId", id}, {"partNumber", number}, {"body", bytes}});
    REQUIRE(r.ok);
    return r.result["ETag"].get<std::string>();
  }
  // A vector, not a json: a braced list of one json would not make an array.
  HandlerResult complete(const std::string& id, std::vector<json> parts, const std::string& key = "big.bin") {
    return call("CompleteMultipartUpload",
                {{"Bucket", "bkt"}, {"Object", key}, {"uploadId", id}, {"Part", json(parts)}});
  }
};

json part(long long number, const std::string& etag) { return {{"PartNumber", number}, {"ETag", etag}}; }

void check_error(const HandlerResult& r, int status, const std::string& code) {
  INFO("expected " << status << " " << code << ", got " << r.status << " " << r.error.code);
  CHECK_FALSE(r.ok);
  CHECK(r.status == status);
  CHECK(r.error.status == status);
  CHECK(r.error.code == code);
}

json object_args(const std::string& key, json extra = json::object()) {
  json args = {{"Bucket", "bkt"}, {"Object", key}};
  args.update(extra);
  return args;
}

}  // namespace

TEST_CASE("storage: the platform serves every storage operation", "[emulator][storage]") {
  Platform p("jp-east-1", Model::builtin());
  CHECK(p.check().ok());
  for (const Operation* o : Model::builtin().api("storage")->operations) {
    INFO(o->name);  // a bucket of its own that only CreateBucket makes: no handler meets arguments it does not take
    CHECK(handle(p, o->name, {{"Bucket", "b-" + o->name}, {"Object", "k"}}).error.code != "UnknownOperation");
  }
}

TEST_CASE("storage: CreateBucket, an existing bucket, an unknown bucket", "[emulator][storage]") {
  Platform p("jp-east-1", Model::builtin());
  HandlerResult created = handle(p, "CreateBucket", {{"Bucket", "new-bucket"}});
  CHECK(created.ok);
  CHECK(created.status == 200);
  CHECK(created.result["Location"] == "/new-bucket");
  check_error(handle(p, "CreateBucket", {{"Bucket", "new-bucket"}}), 409, "BucketAlreadyOwnedByYou");

  json key = {{"Bucket", "nope"}, {"Object", "k"}};
  json upload = {{"Bucket", "nope"}, {"Object", "k"}, {"uploadId", "0123"}};
  json with_part = upload;
  with_part.update({{"partNumber", 1}, {"body", "x"}});
  json with_list = upload;
  with_list["Part"] = json::array({part(1, kHello)});
  for (const auto& [op, args] : std::vector<std::pair<std::string, json>>{
           {"PutObject", key},
           {"GetObject", key},
           {"HeadObject", key},
           {"CreateMultipartUpload", key},
           {"UploadPart", with_part},
           {"CompleteMultipartUpload", with_list},
           {"AbortMultipartUpload", upload},
           {"HeadBucket", key},
           {"GetBucketLocation", key},
           {"DeleteBucket", key},
           {"ListObjectsV2", key},
           {"ListObjects", key},
           {"DeleteObject", key},
           {"DeleteObjects", {{"Bucket", "nope"}, {"Object", {{{"Key", "k"}}}}}},
           {"ListMultipartUploads", key},
           {"CopyObject", {{"Bucket", "nope"}, {"Object", "k"}, {"CopySource", "bkt/k"}}},
           {"GetObjectAcl", key},
           {"PutObjectAcl", {{"Bucket", "nope"}, {"Object", "k"}, {"ACL", "private"}}}}) {
    INFO(op);
    HandlerResult r = handle(p, op, args);
    check_error(r, 404, "NoSuchBucket");
    CHECK(r.error.details["BucketName"] == "nope");
  }
}

TEST_CASE("storage: fixtures, seed, state and reset", "[emulator][storage]") {
  Platform p("jp-east-1", Model::builtin());
  p.load_fixtures();
  check_error(handle(p, "CreateBucket", {{"Bucket", "demo-bucket"}}), 409, "BucketAlreadyOwnedByYou");

  p.seed({{"buckets", json::array({"seeded-1", "seeded-2"})}});
  CHECK(handle(p, "PutObject", {{"Bucket", "seeded-1"}, {"Object", "a/b.txt"}, {"Body", "hello"}}).ok);
  HandlerResult up = handle(p, "CreateMultipartUpload", {{"Bucket", "seeded-2"}, {"Object", "big"}});
  std::string id = up.result["UploadId"];
  CHECK(handle(p, "UploadPart",
               {{"Bucket", "seeded-2"}, {"Object", "big"}, {"uploadId", id}, {"partNumber", 2}, {"body", "world"}})
            .ok);

  json s = p.state();
  std::vector<std::string> names;
  for (const json& b : s["buckets"]) names.push_back(b["name"].get<std::string>());
  CHECK(names == std::vector<std::string>{"demo-bucket", "seeded-1", "seeded-2"});
  CHECK(s["buckets"][1]["objects"] == json::array({{{"key", "a/b.txt"}, {"size", 5}, {"etag", kHello}}}));
  CHECK(s["buckets"][0]["objects"] == json::array());
  REQUIRE(s["uploads"].size() == 1);
  CHECK(s["uploads"][0]["bucket"] == "seeded-2");
  CHECK(s["uploads"][0]["key"] == "big");
  CHECK(s["uploads"][0]["uploadId"] == id);
  CHECK(s["uploads"][0]["parts"] == json::array({{{"partNumber", 2}, {"size", 5}, {"etag", kWorld}}}));

  p.reset();
  s = p.state();
  CHECK(s["buckets"] == json::array());
  CHECK(s["uploads"] == json::array());
}

TEST_CASE("storage: PutObject, GetObject and HeadObject", "[emulator][storage]") {
  Fixture f;
  HandlerResult put = f.call("PutObject", object_args("dir/hello.txt", {{"Body", "hello"}}));
  REQUIRE(put.ok);
  CHECK(put.status == 200);
  CHECK(put.result["ETag"] == kHello);
  CHECK(put.result["ServerSideEncryption"] == "AES256");
  CHECK_FALSE(put.result.value("VersionId", "").empty());

  HandlerResult got = f.call("GetObject", object_args("dir/hello.txt"));
  REQUIRE(got.ok);
  CHECK(got.status == 200);
  CHECK(got.result["Body"] == "hello");
  CHECK(got.result["ETag"] == kHello);
  CHECK(got.result["AcceptRanges"] == "bytes");
  CHECK(got.result["VersionId"] == put.result["VersionId"]);
  CHECK_FALSE(got.result.contains("ContentRange"));
  CHECK(std::regex_match(got.result["LastModified"].get<std::string>(),
                         std::regex(R"([A-Z][a-z]{2}, \d\d [A-Z][a-z]{2} \d{4} \d\d:\d\d:\d\d GMT)")));

  HandlerResult head = f.call("HeadObject", object_args("dir/hello.txt"));
  REQUIRE(head.ok);
  CHECK(head.status == 200);
  CHECK_FALSE(head.result.contains("Body"));
  for (const char* h : {"ETag", "AcceptRanges", "LastModified", "VersionId"}) CHECK(head.result[h] == got.result[h]);

  // A second put replaces the bytes, the ETag and the version; binary bytes stay as they are.
  std::string binary("\0\xff\x01 world", 9);
  HandlerResult again = f.call("PutObject", object_args("dir/hello.txt", {{"Body", binary}}));
  CHECK(again.result["VersionId"] != put.result["VersionId"]);
  CHECK(f.call("GetObject", object_args("dir/hello.txt")).result["Body"] == binary);

  // An empty object is an object.
  CHECK(f.call("PutObject", object_args("empty")).ok);
  CHECK(f.call("GetObject", object_args("empty")).result["Body"] == "");

  check_error(f.call("GetObject", object_args("dir/missing.txt")), 404, "NoSuchKey");
  CHECK(f.call("GetObject", object_args("dir/missing.txt")).error.details["Key"] == "dir/missing.txt");
  check_error(f.call("HeadObject", object_args("dir/missing.txt")), 404, "NoSuchKey");
}

TEST_CASE("storage: GetObject ranges", "[emulator][storage]") {
  Fixture f;
  REQUIRE(f.call("PutObject", object_args("digits", {{"Body", "0123456789"}})).ok);
  struct Case {
    const char* range;
    const char* bytes;
    const char* content_range;
  };
  for (const Case& c : {Case{"bytes=2-4", "234", "bytes 2-4/10"}, Case{"bytes=0-0", "0", "bytes 0-0/10"},
                        Case{"bytes=7-", "789", "bytes 7-9/10"}, Case{"bytes=-3", "789", "bytes 7-9/10"},
                        Case{"bytes=5-100", "56789", "bytes 5-9/10"}, Case{"bytes=-100", "0123456789", "bytes 0-9/10"},
                        Case{"bytes=9-9", "9", "bytes 9-9/10"}}) {
    INFO(c.range);
    HandlerResult r = f.call("GetObject", object_args("digits", {{"Range", c.range}}));
    REQUIRE(r.ok);
    CHECK(r.status == 206);
    CHECK(r.result["Body"] == c.bytes);
    CHECK(r.result["ContentRange"] == c.content_range);
    CHECK(r.result["ETag"] == kDigits);  // the object's ETag, not the range's
  }
  for (const char* range : {"bytes=10-", "bytes=10-20", "bytes=-0"}) {
    INFO(range);
    HandlerResult r = f.call("GetObject", object_args("digits", {{"Range", range}}));
    check_error(r, 416, "InvalidRange");
    CHECK(r.error.details["RangeRequested"] == range);
    CHECK(r.error.details["ActualObjectSize"] == 10);
  }
  // What is not one well-formed range is ignored, as S3 does: the whole object.
  for (const char* range : {"bytes=4-2", "items=1-2", "bytes=1-2,4-5", "bytes=-", ""}) {
    INFO(range);
    HandlerResult r = f.call("GetObject", object_args("digits", {{"Range", range}}));
    CHECK(r.status == 200);
    CHECK(r.result["Body"] == "0123456789");
    CHECK_FALSE(r.result.contains("ContentRange"));
  }
  // HeadObject describes the range without sending it; an empty object has no range to give.
  HandlerResult head = f.call("HeadObject", object_args("digits", {{"Range", "bytes=-4"}}));
  CHECK(head.status == 206);
  CHECK(head.result["ContentRange"] == "bytes 6-9/10");
  CHECK_FALSE(head.result.contains("Body"));
  REQUIRE(f.call("PutObject", object_args("empty")).ok);
  check_error(f.call("GetObject", object_args("empty", {{"Range", "bytes=0-"}})), 416, "InvalidRange");
}

TEST_CASE("storage: a multipart upload from start to object", "[emulator][storage]") {
  Fixture f;
  f.p.set_endpoints({{"storage", "http://127.0.0.1:9000"}});
  const std::string key = "dir/a b+c%d/ü.bin";
  std::string id = f.start(key);
  CHECK(std::regex_match(id, std::regex("[0-9a-f]{32}")));
  CHECK(f.start(key) != id);  // every upload its own id

  CHECK(f.upload(id, 1, "hello", key) == kHello);
  CHECK(f.upload(id, 2, "world", key) == kWorld);
  CHECK(f.upload(id, 3, "!", key) == kBang);
  HandlerResult done = f.complete(id, {part(1, kHello), part(2, kWorld), part(3, kBang)}, key);
  REQUIRE(done.ok);
  CHECK(done.status == 200);
  CHECK(done.result["ETag"] == kThreeParts);
  CHECK(done.result["Bucket"] == "bkt");
  CHECK(done.result["Key"] == key);
  CHECK(done.result["Location"] == "http://127.0.0.1:9000/bkt/dir/a%20b%2Bc%25d/%C3%BC.bin");
  CHECK(done.result["ServerSideEncryption"] == "AES256");
  CHECK_FALSE(done.result.value("VersionId", "").empty());

  HandlerResult got = f.call("GetObject", object_args(key));
  CHECK(got.result["Body"] == "helloworld!");
  CHECK(got.result["ETag"] == kThreeParts);
  // The upload is gone; completing it again answers as the first time (S3's way) while
  // its object stands, and once the object is replaced it is NoSuchUpload.
  HandlerResult again = f.complete(id, {part(1, kHello)}, key);
  REQUIRE(again.ok);
  CHECK(again.result["ETag"] == kThreeParts);
  CHECK(again.result["Location"] == done.result["Location"]);
  f.call("PutObject", object_args(key, {{"Body", "newer"}}));
  check_error(f.complete(id, {part(1, kHello)}, key), 404, "NoSuchUpload");
  json state = f.p.state();  // kept: a range-for over a member of a temporary dangles
  for (const json& u : state["uploads"]) CHECK(u["uploadId"] != id);
}

TEST_CASE("storage: UploadPart replaces a part number, ETags are compared without quotes", "[emulator][storage]") {
  Fixture f;
  std::string id = f.start();
  std::string first = f.upload(id, 1, "xxxxx");
  CHECK(f.upload(id, 1, "hello") == kHello);
  HandlerResult stale = f.complete(id, {part(1, first)});
  check_error(stale, 400, "InvalidPart");

  // The same ETag with or without its quotes.
  HandlerResult done = f.complete(id, {part(1, kHello.substr(1, 32))});
  REQUIRE(done.ok);
  CHECK(done.result["ETag"] == kOnePart);
  CHECK(f.call("GetObject", object_args("big.bin")).result["Body"] == "hello");

  check_error(
      f.call("UploadPart",
             {{"Bucket", "bkt"}, {"Object", "big.bin"}, {"uploadId", "feedface"}, {"partNumber", 1}, {"body", "x"}}),
      404, "NoSuchUpload");
}

TEST_CASE("storage: CompleteMultipartUpload refuses what S3 refuses", "[emulator][storage]") {
  Fixture f;
  std::string id = f.start();
  f.upload(id, 1, "hello");
  f.upload(id, 2, "world");

  check_error(f.complete("0000", {part(1, kHello)}), 404, "NoSuchUpload");
  CHECK(f.complete("0000", {part(1, kHello)}).error.details["UploadId"] == "0000");
  check_error(f.complete(id, {part(1, kHello)}, "other-key"), 404, "NoSuchUpload");  // id of another key
  check_error(f.complete(id, {part(2, kWorld), part(1, kHello)}), 400, "InvalidPartOrder");
  check_error(f.complete(id, {part(1, kHello), part(1, kHello)}), 400, "InvalidPartOrder");
  CHECK(f.p.state()["uploads"].size() == 1);  // a refused completion leaves the upload in place

  SECTION("a part never uploaded is InvalidPart, named in the error body") {
    HandlerResult r = f.complete(id, {part(1, kHello), part(3, kBang)});
    check_error(r, 400, "InvalidPart");
    CHECK(r.error.details == json{{"UploadId", id}, {"PartNumber", 3}, {"ETag", kBang}});
  }
  SECTION("an ETag that is not the part's is InvalidPart, named in the error body") {
    HandlerResult r = f.complete(id, {part(1, kHello), part(2, kHello)});
    check_error(r, 400, "InvalidPart");
    CHECK(r.error.details == json{{"UploadId", id}, {"PartNumber", 2}, {"ETag", kHello}});
  }
  SECTION("a part below the minimum size is EntityTooSmall unless it is the last") {
    f.p.set_setting("min_part_size", 6);
    HandlerResult r = f.complete(id, {part(1, kHello), part(2, kWorld)});
    check_error(r, 400, "EntityTooSmall");
    CHECK(r.error.details["PartNumber"] == 1);
    CHECK(r.error.details["ProposedSize"] == 5);
    CHECK(r.error.details["MinSizeAllowed"] == 6);
    CHECK(f.complete(id, {part(2, kWorld)}).ok);  // alone, the small part is the last
  }
  SECTION("the default minimum is 5 MiB") {
    Platform p("jp-east-1", Model::builtin());
    p.seed({{"buckets", json::array({"bkt"})}});
    std::string big_id = handle(p, "CreateMultipartUpload", object_args("k")).result["UploadId"];
    std::string five_mib(5 * 1024 * 1024, 'a');
    for (auto [n, bytes] : std::vector<std::pair<int, std::string>>{{1, five_mib}, {2, "hello"}, {3, "!"}})
      REQUIRE(handle(p, "UploadPart", object_args("k", {{"uploadId", big_id}, {"partNumber", n}, {"body", bytes}})).ok);
    json parts = json::array(
        {part(1, p.state()["uploads"][0]["parts"][0]["etag"].get<std::string>()), part(2, kHello), part(3, kBang)});
    check_error(handle(p, "CompleteMultipartUpload", object_args("k", {{"uploadId", big_id}, {"Part", parts}})), 400,
                "EntityTooSmall");
    parts.erase(2);
    HandlerResult done =
        handle(p, "CompleteMultipartUpload", object_args("k", {{"uploadId", big_id}, {"Part", parts}}));
    REQUIRE(done.ok);
    CHECK(std::regex_match(done.result["ETag"].get<std::string>(), std::regex(R"("[0-9a-f]{32}-2")")));
  }
}

TEST_CASE("storage: AbortMultipartUpload", "[emulator][storage]") {
  Fixture f;
  std::string id = f.start();
  f.upload(id, 1, "hello");
  HandlerResult aborted = f.call("AbortMultipartUpload", object_args("big.bin", {{"uploadId", id}}));
  CHECK(aborted.ok);
  CHECK(aborted.status == 204);
  CHECK(f.p.state()["uploads"] == json::array());
  check_error(f.complete(id, {part(1, kHello)}), 404, "NoSuchUpload");
  check_error(f.call("AbortMultipartUpload", object_args("big.bin", {{"uploadId", id}})), 404, "NoSuchUpload");
  check_error(f.call("AbortMultipartUpload", object_args("big.bin", {{"uploadId", "nope"}})), 404, "NoSuchUpload");
  check_error(f.call("GetObject", object_args("big.bin")), 404, "NoSuchKey");  // nothing was stored
}

// ---------------------------------------------------------------- content headers, metadata, conditions

namespace {

const json kContent = {{"ContentType", "text/html"},           {"ContentEncoding", "gzip"},
                       {"ContentDisposition", "inline"},       {"ContentLanguage", "en"},
                       {"CacheControl", "max-age=60"},         {"Expires", "Thu, 01 Jan 2037 00:00:00 GMT"},
                       {"Metadata", {{"mtime", "1700000000"}}}};

// `base` with every member of `more` added.
json with(json base, const json& more) {
  for (auto it = more.begin(); it != more.end(); ++it) base[it.key()] = it.value();
  return base;
}

// The content headers and metadata `r` answers, as kContent names them.
json content_of(const HandlerResult& r) {
  json out = json::object();
  for (auto it = kContent.begin(); it != kContent.end(); ++it)
    if (r.result.contains(it.key())) out[it.key()] = r.result[it.key()];
  return out;
}

}  // namespace

TEST_CASE("storage: PutObject keeps the content headers and metadata, GetObject and HeadObject answer them",
          "[emulator][storage]") {
  Fixture f;
  REQUIRE(f.call("PutObject", with({{"Bucket", "bkt"}, {"Object", "k"}, {"Body", "hello"}}, kContent)).ok);
  CHECK(content_of(f.call("HeadObject", {{"Bucket", "bkt"}, {"Object", "k"}})) == kContent);
  CHECK(content_of(f.call("GetObject", {{"Bucket", "bkt"}, {"Object", "k"}})) == kContent);
  REQUIRE(f.call("PutObject", {{"Bucket", "bkt"}, {"Object", "plain"}, {"Body", "x"}}).ok);
  HandlerResult plain = f.call("HeadObject", {{"Bucket", "bkt"}, {"Object", "plain"}});
  CHECK(content_of(plain) == json({{"ContentType", "binary/octet-stream"}}));  // S3's when none was given
  REQUIRE(f.call("PutObject",
                 {{"Bucket", "bkt"}, {"Object", "chunked"}, {"Body", "x"}, {"ContentEncoding", "aws-chunked, gzip"}})
              .ok);
  CHECK(f.call("HeadObject", {{"Bucket", "bkt"}, {"Object", "chunked"}}).result["ContentEncoding"] == "gzip");
  REQUIRE(
      f.call("PutObject", {{"Bucket", "bkt"}, {"Object", "chunked"}, {"Body", "x"}, {"ContentEncoding", "aws-chunked"}})
          .ok);
  CHECK_FALSE(f.call("HeadObject", {{"Bucket", "bkt"}, {"Object", "chunked"}}).result.contains("ContentEncoding"));
  REQUIRE(f.call("PutObject", {{"Bucket", "bkt"}, {"Object", "k"}, {"Body", "again"}}).ok);  // replaced: none kept
  CHECK(content_of(f.call("HeadObject", {{"Bucket", "bkt"}, {"Object", "k"}})) ==
        json({{"ContentType", "binary/octet-stream"}}));
}

TEST_CASE("storage: CopyObject keeps the source's metadata with COPY, takes the request's with REPLACE",
          "[emulator][storage]") {
  Fixture f;
  REQUIRE(f.call("PutObject", with({{"Bucket", "bkt"}, {"Object", "src"}, {"Body", "hello"}}, kContent)).ok);
  REQUIRE(f.call("CopyObject", {{"Bucket", "bkt"},
                                {"Object", "copy"},
                                {"CopySource", "bkt/src"},
                                {"ContentType", "text/plain"},
                                {"Metadata", {{"other", "1"}}}})
              .ok);
  CHECK(content_of(f.call("HeadObject", {{"Bucket", "bkt"}, {"Object", "copy"}})) == kContent);
  REQUIRE(f.call("CopyObject", {{"Bucket", "bkt"},
                                {"Object", "replaced"},
                                {"CopySource", "bkt/src"},
                                {"MetadataDirective", "REPLACE"},
                                {"ContentType", "text/plain"},
                                {"Metadata", {{"other", "1"}}}})
              .ok);
  CHECK(content_of(f.call("HeadObject", {{"Bucket", "bkt"}, {"Object", "replaced"}})) ==
        json({{"ContentType", "text/plain"}, {"Metadata", {{"other", "1"}}}}));
  REQUIRE(f.call("CopyObject", {{"Bucket", "bkt"},
                                {"Object", "src"},
                                {"CopySource", "bkt/src"},
                                {"MetadataDirective", "REPLACE"},
                                {"Metadata", {{"mtime", "2"}}}})
              .ok);  // onto itself
  CHECK(content_of(f.call("HeadObject", {{"Bucket", "bkt"}, {"Object", "src"}})) ==
        json({{"ContentType", "binary/octet-stream"}, {"Metadata", {{"mtime", "2"}}}}));
}

TEST_CASE("storage: a multipart upload's object has what CreateMultipartUpload gave, copied parts too",
          "[emulator][storage]") {
  Fixture f;
  HandlerResult started = f.call("CreateMultipartUpload", with({{"Bucket", "bkt"}, {"Object", "big.bin"}}, kContent));
  REQUIRE(started.ok);
  std::string id = started.result["UploadId"];
  REQUIRE(
      f.call("PutObject", {{"Bucket", "bkt"}, {"Object", "src"}, {"Body", "hello"}, {"Metadata", {{"no", "1"}}}}).ok);
  std::string first = f.upload(id, 1, "hello");
  HandlerResult copied = f.call(
      "UploadPartCopy",
      {{"Bucket", "bkt"}, {"Object", "big.bin"}, {"uploadId", id}, {"partNumber", 2}, {"CopySource", "bkt/src"}});
  REQUIRE(copied.ok);
  REQUIRE(f.complete(id, {part(1, first), part(2, copied.result["ETag"])}).ok);
  CHECK(content_of(f.call("GetObject", {{"Bucket", "bkt"}, {"Object", "big.bin"}})) == kContent);
}

TEST_CASE("storage: GetObject and HeadObject conditions answer 304 and 412 in S3's order", "[emulator][storage]") {
  Fixture f;
  REQUIRE(f.call("PutObject", {{"Bucket", "bkt"}, {"Object", "k"}, {"Body", "hello"}}).ok);
  std::string modified = f.call("HeadObject", {{"Bucket", "bkt"}, {"Object", "k"}}).result["LastModified"];
  const std::string before = "Sat, 01 Jan 2000 00:00:00 GMT", after = "Fri, 01 Jan 2100 00:00:00 GMT";
  auto status = [&f](const std::string& op, const json& conditions) {
    HandlerResult r = f.call(op, with({{"Bucket", "bkt"}, {"Object", "k"}}, conditions));
    INFO(r.error.code << " " << r.error.message);
    return r.ok ? r.status : r.error.status;
  };
  for (const char* op : {"GetObject", "HeadObject"}) {
    INFO(op);
    CHECK(status(op, {{"IfMatch", kHello}}) == 200);
    CHECK(status(op, {{"IfMatch", "5d41402abc4b2a76b9719d911017c592"}}) == 200);  // unquoted
    CHECK(status(op, {{"IfMatch", "\"other\", " + kHello}}) == 200);
    CHECK(status(op, {{"IfMatch", "*"}}) == 200);
    CHECK(status(op, {{"IfMatch", kWorld}}) == 412);
    CHECK(status(op, {{"IfNoneMatch", kHello}}) == 304);
    CHECK(status(op, {{"IfNoneMatch", "*"}}) == 304);
    CHECK(status(op, {{"IfNoneMatch", kWorld}}) == 200);
    CHECK(status(op, {{"IfModifiedSince", before}}) == 200);
    CHECK(status(op, {{"IfModifiedSince", modified}}) == 304);
    CHECK(status(op, {{"IfModifiedSince", after}}) == 304);
    CHECK(status(op, {{"IfModifiedSince", "not a date"}}) == 200);  // ignored
    CHECK(status(op, {{"IfUnmodifiedSince", after}}) == 200);
    CHECK(status(op, {{"IfUnmodifiedSince", before}}) == 412);
    // S3's precedence: If-Match true wins over If-Unmodified-Since false; If-None-Match
    // false (the ETag named) answers 304 whatever If-Modified-Since says.
    CHECK(status(op, {{"IfMatch", kHello}, {"IfUnmodifiedSince", before}}) == 200);
    CHECK(status(op, {{"IfNoneMatch", kHello}, {"IfModifiedSince", before}}) == 304);
    CHECK(status(op, {{"IfNoneMatch", kWorld}, {"IfModifiedSince", after}}) == 200);
    CHECK(status(op, {{"IfMatch", kWorld}, {"IfNoneMatch", kHello}}) == 412);  // 412 before 304
  }
  HandlerResult not_modified = f.call("GetObject", {{"Bucket", "bkt"}, {"Object", "k"}, {"IfNoneMatch", kHello}});
  CHECK(not_modified.result["ETag"] == kHello);
  CHECK(not_modified.payload.bytes == nullptr);
  HandlerResult failed = f.call("GetObject", {{"Bucket", "bkt"}, {"Object", "k"}, {"IfMatch", kWorld}});
  check_error(failed, 412, "PreconditionFailed");
  CHECK(failed.error.details["Condition"] == "If-Match");
}

TEST_CASE("storage: conditional writes, If-None-Match * and If-Match, on PutObject and CompleteMultipartUpload",
          "[emulator][storage]") {
  Fixture f;
  REQUIRE(f.call("PutObject", {{"Bucket", "bkt"}, {"Object", "lock"}, {"Body", "hello"}, {"IfNoneMatch", "*"}}).ok);
  check_error(f.call("PutObject", {{"Bucket", "bkt"}, {"Object", "lock"}, {"Body", "world"}, {"IfNoneMatch", "*"}}),
              412, "PreconditionFailed");
  check_error(f.call("PutObject", {{"Bucket", "bkt"}, {"Object", "lock"}, {"Body", "world"}, {"IfMatch", kWorld}}), 412,
              "PreconditionFailed");
  REQUIRE(f.call("PutObject", {{"Bucket", "bkt"}, {"Object", "lock"}, {"Body", "world"}, {"IfMatch", kHello}}).ok);
  CHECK(f.call("HeadObject", {{"Bucket", "bkt"}, {"Object", "lock"}}).result["ETag"] == kWorld);
  check_error(f.call("PutObject", {{"Bucket", "bkt"}, {"Object", "none"}, {"Body", "x"}, {"IfMatch", kHello}}), 404,
              "NoSuchKey");
  std::string id = f.start("lock");
  std::string e = f.upload(id, 1, "hello", "lock");
  json done = {{"Bucket", "bkt"}, {"Object", "lock"}, {"uploadId", id}, {"Part", json::array({part(1, e)})}};
  check_error(f.call("CompleteMultipartUpload", with(done, {{"IfNoneMatch", "*"}})), 412, "PreconditionFailed");
  CHECK(f.call("HeadObject", {{"Bucket", "bkt"}, {"Object", "lock"}}).result["ETag"] == kWorld);  // unchanged
  REQUIRE(f.call("CompleteMultipartUpload", with(done, {{"IfMatch", kWorld}})).ok);
  CHECK(f.call("HeadObject", {{"Bucket", "bkt"}, {"Object", "lock"}}).result["ETag"] == kOnePart);
}

TEST_CASE("storage: GetObject's response-* overrides set the answer's headers, the object's stay",
          "[emulator][storage]") {
  Fixture f;
  REQUIRE(f.call("PutObject",
                 object_args("page", {{"Body", "hello"}, {"ContentType", "text/html"}, {"CacheControl", "max-age=60"}}))
              .ok);
  json asked = {
      {"ResponseContentType", "text/plain"},   {"ResponseContentDisposition", "attachment; filename=\"p.txt\""},
      {"ResponseCacheControl", "no-store"},    {"ResponseContentLanguage", "ja"},
      {"ResponseContentEncoding", "identity"}, {"ResponseExpires", "Thu, 01 Dec 2094 16:00:00 GMT"}};
  for (const char* op : {"GetObject", "HeadObject"}) {
    INFO(op);
    HandlerResult r = f.call(op, object_args("page", asked));
    REQUIRE(r.ok);
    CHECK(r.result["ContentType"] == "text/plain");
    CHECK(r.result["ContentDisposition"] == "attachment; filename=\"p.txt\"");
    CHECK(r.result["CacheControl"] == "no-store");
    CHECK(r.result["ContentLanguage"] == "ja");
    CHECK(r.result["ContentEncoding"] == "identity");
    CHECK(r.result["Expires"] == "Thu, 01 Dec 2094 16:00:00 GMT");
  }
  HandlerResult plain = f.call("HeadObject", object_args("page"));
  CHECK(plain.result["ContentType"] == "text/html");
  CHECK(plain.result["CacheControl"] == "max-age=60");
}

TEST_CASE("storage: PartNumber answers one part of a multipart object, all of a one-piece one", "[emulator][storage]") {
  Fixture f;
  std::string id = f.start();
  f.upload(id, 1, "hello");
  f.upload(id, 2, "world");
  f.upload(id, 3, "!");
  REQUIRE(f.complete(id, {part(1, kHello), part(2, kWorld), part(3, kBang)}).ok);
  struct Case {
    long long number;
    const char* bytes;
    const char* content_range;
  };
  for (const Case& c :
       {Case{1, "hello", "bytes 0-4/11"}, Case{2, "world", "bytes 5-9/11"}, Case{3, "!", "bytes 10-10/11"}}) {
    INFO("part " << c.number);
    HandlerResult r = f.call("GetObject", object_args("big.bin", {{"PartNumber", c.number}}));
    REQUIRE(r.ok);
    CHECK(r.status == 206);
    CHECK(r.result["Body"] == c.bytes);
    CHECK(r.result["ContentRange"] == c.content_range);
    CHECK(r.result["PartsCount"] == 3);
    CHECK(r.result["ETag"] == kThreeParts);  // the object's
    HandlerResult head = f.call("HeadObject", object_args("big.bin", {{"PartNumber", c.number}}));
    CHECK(head.status == 206);
    CHECK(head.result["ContentLength"] == std::string(c.bytes).size());
    CHECK(head.result["PartsCount"] == 3);
  }
  HandlerResult past = f.call("GetObject", object_args("big.bin", {{"PartNumber", 4}}));
  check_error(past, 416, "InvalidPartNumber");
  CHECK(past.error.details["PartNumberRequested"] == 4);
  CHECK(past.error.details["ActualPartCount"] == 3);
  check_error(f.call("GetObject", object_args("big.bin", {{"PartNumber", 1}, {"Range", "bytes=0-1"}})), 400,
              "InvalidRequest");

  // A one-piece object: part 1 is all of it (206, as S3 answers), without PartsCount; part 2 is past it.
  REQUIRE(f.call("PutObject", object_args("digits", {{"Body", "0123456789"}})).ok);
  HandlerResult one = f.call("GetObject", object_args("digits", {{"PartNumber", 1}}));
  CHECK(one.status == 206);
  CHECK(one.result["Body"] == "0123456789");
  CHECK(one.result["ContentRange"] == "bytes 0-9/10");
  CHECK_FALSE(one.result.contains("PartsCount"));
  check_error(f.call("HeadObject", object_args("digits", {{"PartNumber", 2}})), 416, "InvalidPartNumber");

  // The part sizes survive the records saved and restored (a snapshot, serve --state's database).
  HeldRecords saved;
  REQUIRE(f.p.save_records_to(saved).ok());
  REQUIRE(f.p.restore_records_from(saved).ok());
  HandlerResult after = f.call("GetObject", object_args("big.bin", {{"PartNumber", 2}}));
  CHECK(after.result["Body"] == "world");
  CHECK(after.result["PartsCount"] == 3);
}

// A call made for account `caller` (Worlds::caller's answer for its key).
HandlerResult call_as(Fixture& f, const std::string& caller, const std::string& name, const json& input) {
  const Operation* op = Model::builtin().find(name);
  REQUIRE(op != nullptr);
  return f.p.handle(*op, input, nullptr, caller);
}

TEST_CASE("access: another account gets what the ACLs grant it and owners and ACLs survive the records",
          "[emulator][storage]") {
  Fixture f;  // "bkt", the built-in account's, private
  const std::string other = "111111111111";
  REQUIRE(f.call("PutObject", {{"Bucket", "bkt"}, {"Object", "private"}, {"Body", "p"}}).ok);
  REQUIRE(
      f.call("PutObject", {{"Bucket", "bkt"}, {"Object", "signed-in"}, {"Body", "s"}, {"ACL", "authenticated-read"}})
          .ok);
  check_error(call_as(f, other, "GetObject", {{"Bucket", "bkt"}, {"Object", "private"}}), 403, "AccessDenied");
  CHECK(call_as(f, other, "GetObject", {{"Bucket", "bkt"}, {"Object", "signed-in"}}).result["Body"] == "s");
  check_error(call_as(f, kAnonymous, "GetObject", {{"Bucket", "bkt"}, {"Object", "signed-in"}}), 403, "AccessDenied");
  check_error(call_as(f, other, "ListObjectsV2", {{"Bucket", "bkt"}}), 403, "AccessDenied");
  check_error(call_as(f, other, "DeleteBucket", {{"Bucket", "bkt"}}), 403, "AccessDenied");
  check_error(call_as(f, other, "CreateBucket", {{"Bucket", "bkt"}}), 409, "BucketAlreadyExists");
  // Its own bucket: listed to it alone; BucketOwnerPreferred makes a bucket-owner-full-control object the bucket's.
  REQUIRE(call_as(f, other, "CreateBucket",
                  {{"Bucket", "theirs"}, {"ObjectOwnership", "BucketOwnerPreferred"}, {"ACL", "public-read-write"}})
              .ok);
  HandlerResult listed = call_as(f, other, "ListBuckets", json::object());
  CHECK(listed.result["Buckets"].size() == 1);
  CHECK(f.call("ListBuckets", json::object()).result["Buckets"].size() == 1);
  REQUIRE(f.call("PutObject",
                 {{"Bucket", "theirs"}, {"Object", "given"}, {"Body", "g"}, {"ACL", "bucket-owner-full-control"}})
              .ok);
  REQUIRE(f.call("PutObject", {{"Bucket", "theirs"}, {"Object", "kept"}, {"Body", "k"}}).ok);
  CHECK(call_as(f, other, "GetObject", {{"Bucket", "theirs"}, {"Object", "given"}}).result["Body"] == "g");
  check_error(call_as(f, other, "GetObject", {{"Bucket", "theirs"}, {"Object", "kept"}}), 403, "AccessDenied");
  check_error(call_as(f, other, "GetObject", {{"Bucket", "theirs"}, {"Object", "none"}}), 404, "NoSuchKey");

  HeldRecords saved;  // a checkpoint, and serve --state's records
  REQUIRE(f.p.save_records_to(saved).ok());
  REQUIRE(f.p.restore_records_from(saved).ok());
  CHECK(call_as(f, other, "GetObject", {{"Bucket", "bkt"}, {"Object", "signed-in"}}).ok);
  check_error(call_as(f, other, "GetObject", {{"Bucket", "bkt"}, {"Object", "private"}}), 403, "AccessDenied");
  CHECK(call_as(f, other, "GetObject", {{"Bucket", "theirs"}, {"Object", "given"}}).ok);
  check_error(call_as(f, other, "GetObject", {{"Bucket", "theirs"}, {"Object", "kept"}}), 403, "AccessDenied");
  CHECK(call_as(f, other, "ListBuckets", json::object()).result["Buckets"].size() == 1);
  HandlerResult acl = call_as(f, other, "GetBucketAcl", {{"Bucket", "theirs"}});
  CHECK(acl.result["AccessControlList"].size() == 3);
  REQUIRE(f.call("PutObject",
                 {{"Bucket", "theirs"}, {"Object", "again"}, {"Body", "a"}, {"ACL", "bucket-owner-full-control"}})
              .ok);  // the Object Ownership kept
  CHECK(call_as(f, other, "GetObject", {{"Bucket", "theirs"}, {"Object", "again"}}).ok);
}

TEST_CASE("access: a grant by canonical id names an account of the world and any other id is Invalid id",
          "[emulator][storage]") {
  Fixture f;  // "bkt", the built-in account's
  const std::string other = "111111111111";
  json grant = {{"Bucket", "bkt"}, {"GrantRead", "id=\"" + access::canonical_id(other) + "\""}};
  HandlerResult unknown = f.call("PutBucketAcl", grant);
  check_error(unknown, 400, "InvalidArgument");
  CHECK(unknown.error.message == "Invalid id");
  check_error(call_as(f, other, "ListObjectsV2", {{"Bucket", "bkt"}}), 403, "AccessDenied");
  f.p.set_accounts({kBuiltInAccountId, other});  // as Worlds tells a world's platform
  REQUIRE(f.call("PutBucketAcl", grant).ok);
  CHECK(call_as(f, other, "ListObjectsV2", {{"Bucket", "bkt"}}).ok);
  check_error(call_as(f, other, "PutObject", {{"Bucket", "bkt"}, {"Object", "k"}, {"Body", "b"}}), 403, "AccessDenied");
}

TEST_CASE("access: an account that wrote an object to another's bucket still owns something", "[emulator][storage]") {
  Fixture f;  // "bkt", the built-in account's
  const std::string other = "111111111111";
  CHECK_FALSE(f.p.owns(other));
  REQUIRE(f.call("PutBucketAcl", {{"Bucket", "bkt"}, {"ACL", "public-read-write"}}).ok);
  REQUIRE(call_as(f, other, "PutObject", {{"Bucket", "bkt"}, {"Object", "theirs"}, {"Body", "t"}}).ok);
  CHECK(f.p.owns(other));  // Worlds::remove_account refuses it: AccountNotEmpty
  REQUIRE(f.call("DeleteObject", {{"Bucket", "bkt"}, {"Object", "theirs"}}).ok);
  CHECK_FALSE(f.p.owns(other));
}
