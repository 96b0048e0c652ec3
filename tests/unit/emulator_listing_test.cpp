// The emulator's bucket and listing operations driven through cloud::Platform,
// without HTTP: ListBuckets, HeadBucket, GetBucketLocation, DeleteBucket,
// ListObjectsV2 and ListObjects (prefix, delimiter, pages), DeleteObject,
// DeleteObjects, ListMultipartUploads and CopyObject, each rule with S3's status and code.
#include <catch2/catch.hpp>

#include <regex>

#include "core/base/crypto.h"
#include "emulator/held_records.h"
#include "emulator/service.h"

using namespace cloud;

namespace {

// A platform with the bucket "bkt" holding `keys` (each object's bytes its key).
struct Bucket {
  Platform p{"jp-east-1", Model::builtin()};
  explicit Bucket(const std::vector<std::string>& keys = {}) {
    REQUIRE(call("CreateBucket", {{"Bucket", "bkt"}}).ok);
    for (const std::string& k : keys) REQUIRE(call("PutObject", {{"Bucket", "bkt"}, {"Object", k}, {"Body", k}}).ok);
  }
  HandlerResult call(const std::string& name, const json& input) {
    const Operation* op = Model::builtin().find(name);
    REQUIRE(op != nullptr);
    return p.handle(*op, input);
  }
  // The answer of a successful call.
  json ok(const std::string& name, json input) {
    input["Bucket"] = input.value("Bucket", "bkt");
    HandlerResult r = call(name, input);
    INFO(name << " " << input.dump() << ": " << r.error.code << " " << r.error.message);
    REQUIRE(r.ok);
    return r.result;
  }
};

// The keys, then the common prefixes, of a listing's answer.
std::vector<std::string> listed(const json& r) {
  std::vector<std::string> out;
  for (const json& o : r.value("Contents", json::array())) out.push_back(o["Key"]);
  for (const json& c : r.value("CommonPrefixes", json::array())) out.push_back(c["Prefix"]);
  return out;
}

using Keys = std::vector<std::string>;

void check_error(const HandlerResult& r, int status, const std::string& code) {
  INFO("expected " << status << " " << code << ", got " << r.status << " " << r.error.code);
  CHECK_FALSE(r.ok);
  CHECK(r.error.status == status);
  CHECK(r.error.code == code);
}

const Keys kTree = {"a.txt", "photos/2024/x.jpg", "photos/2024/y.jpg", "photos/2025/z.jpg", "photos/top.jpg", "z.txt"};

}  // namespace

TEST_CASE("storage: ListBuckets, HeadBucket, GetBucketLocation", "[emulator][storage][listing]") {
  Bucket b;
  REQUIRE(b.call("CreateBucket", {{"Bucket", "another"}}).ok);
  json all = b.call("ListBuckets", json::object()).result;
  REQUIRE(all["Buckets"].size() == 2);
  CHECK(all["Buckets"][0]["Name"] == "another");
  CHECK(all["Buckets"][1]["Name"] == "bkt");
  CHECK(std::regex_match(all["Buckets"][0]["CreationDate"].get<std::string>(),
                         std::regex(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)")));
  CHECK(all["Owner"]["DisplayName"] == "cloudlua");
  CHECK(b.ok("HeadBucket", json::object()) == json{{"BucketRegion", "jp-east-1"}});
  CHECK(b.ok("GetBucketLocation", json::object()) == json{{"LocationConstraint", "jp-east-1"}});
  check_error(b.call("HeadBucket", {{"Bucket", "nope"}}), 404, "NoSuchBucket");
}

TEST_CASE("storage: DeleteBucket only when empty, and its uploads go with it", "[emulator][storage][listing]") {
  Bucket b({"k"});
  HandlerResult full = b.call("DeleteBucket", {{"Bucket", "bkt"}});
  check_error(full, 409, "BucketNotEmpty");
  CHECK(full.error.details["BucketName"] == "bkt");
  REQUIRE(b.call("CreateMultipartUpload", {{"Bucket", "bkt"}, {"Object", "big"}}).ok);
  HandlerResult gone = b.call("DeleteObject", {{"Bucket", "bkt"}, {"Object", "k"}});
  CHECK(gone.status == 204);
  HandlerResult deleted = b.call("DeleteBucket", {{"Bucket", "bkt"}});
  CHECK(deleted.ok);
  CHECK(deleted.status == 204);
  CHECK(b.p.state()["uploads"] == json::array());
  check_error(b.call("HeadBucket", {{"Bucket", "bkt"}}), 404, "NoSuchBucket");
  CHECK(b.call("CreateBucket", {{"Bucket", "bkt"}}).ok);  // the name is free again
}

TEST_CASE("storage: DeleteObject answers 204 whether or not the key was there", "[emulator][storage][listing]") {
  Bucket b({"k"});
  for (int i = 0; i < 2; ++i) {
    HandlerResult r = b.call("DeleteObject", {{"Bucket", "bkt"}, {"Object", "k"}});
    CHECK(r.ok);
    CHECK(r.status == 204);
  }
  check_error(b.call("GetObject", {{"Bucket", "bkt"}, {"Object", "k"}}), 404, "NoSuchKey");
}

TEST_CASE("storage: DeleteObjects deletes each key, missing ones too, and Quiet answers none",
          "[emulator][storage][listing]") {
  Bucket b({"a", "b", "c"});
  json r =
      b.ok("DeleteObjects", {{"Object", {{{"Key", "a"}}, {{"Key", "missing"}}, {{"Key", "b"}, {"VersionId", "v1"}}}}});
  CHECK(r == json{{"Deleted", {{{"Key", "a"}}, {{"Key", "missing"}}, {{"Key", "b"}, {"VersionId", "v1"}}}}});
  CHECK(listed(b.ok("ListObjectsV2", json::object())) == Keys{"c"});
  CHECK(b.ok("DeleteObjects", {{"Object", {{{"Key", "c"}}}}, {"Quiet", true}}) == json::object());
  CHECK(listed(b.ok("ListObjectsV2", json::object())).empty());
}

TEST_CASE("storage: ListObjectsV2 in key order, by prefix, rolled up at a delimiter", "[emulator][storage][listing]") {
  Bucket b(kTree);
  json all = b.ok("ListObjectsV2", json::object());
  CHECK(listed(all) == kTree);
  CHECK(all["KeyCount"] == 6);
  CHECK(all["IsTruncated"] == false);
  CHECK(all["MaxKeys"] == 1000);
  CHECK(all["Name"] == "bkt");
  CHECK(all["Prefix"] == "");
  CHECK_FALSE(all.contains("NextContinuationToken"));
  const json& first = all["Contents"][0];
  CHECK(first["Size"] == 5);
  CHECK(first["ETag"] == "\"" + hex(md5("a.txt")) + "\"");
  CHECK(first["StorageClass"] == "STANDARD");
  CHECK(std::regex_match(first["LastModified"].get<std::string>(),
                         std::regex(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.000Z)")));
  CHECK_FALSE(first.contains("Owner"));
  CHECK(b.ok("ListObjectsV2", {{"FetchOwner", true}})["Contents"][0]["Owner"]["DisplayName"] == "cloudlua");

  CHECK(listed(b.ok("ListObjectsV2", {{"Prefix", "photos/2024/"}})) == Keys{"photos/2024/x.jpg", "photos/2024/y.jpg"});
  json top = b.ok("ListObjectsV2", {{"Delimiter", "/"}});
  CHECK(listed(top) == Keys{"a.txt", "z.txt", "photos/"});
  CHECK(top["KeyCount"] == 3);
  CHECK(top["Delimiter"] == "/");
  CHECK(listed(b.ok("ListObjectsV2", {{"Prefix", "photos/"}, {"Delimiter", "/"}})) ==
        Keys{"photos/top.jpg", "photos/2024/", "photos/2025/"});
  CHECK(listed(b.ok("ListObjectsV2", {{"Prefix", "nothing/"}})).empty());
  CHECK(listed(b.ok("ListObjectsV2", {{"StartAfter", "photos/2025/z.jpg"}})) == Keys{"photos/top.jpg", "z.txt"});
}

TEST_CASE("storage: ListObjectsV2 pages: max-keys, continuation tokens, prefixes counted once",
          "[emulator][storage][listing]") {
  Bucket b(kTree);
  Keys seen;
  json ask = {{"MaxKeys", 2}, {"Delimiter", "/"}};
  std::vector<long long> counts;
  for (int page = 0; page < 10; ++page) {
    json r = b.ok("ListObjectsV2", ask);
    for (const std::string& k : listed(r)) seen.push_back(k);
    counts.push_back(r["KeyCount"]);
    if (!r["IsTruncated"].get<bool>()) break;
    REQUIRE(r.contains("NextContinuationToken"));
    ask["ContinuationToken"] = r["NextContinuationToken"];
    CHECK(b.ok("ListObjectsV2", ask)["ContinuationToken"] == ask["ContinuationToken"]);  // echoed
  }
  CHECK(seen == Keys{"a.txt", "photos/", "z.txt"});
  CHECK(counts == std::vector<long long>{2, 1});

  json none = b.ok("ListObjectsV2", {{"MaxKeys", 0}});
  CHECK(none["KeyCount"] == 0);
  CHECK(none["IsTruncated"] == false);
  CHECK(b.ok("ListObjectsV2", {{"MaxKeys", 5000}})["MaxKeys"] == 1000);  // at most 1000 a page
  check_error(b.call("ListObjectsV2", {{"Bucket", "bkt"}, {"ContinuationToken", "!!"}}), 400, "InvalidArgument");
}

TEST_CASE("storage: encoding-type=url percent-encodes keys and prefixes in the answer",
          "[emulator][storage][listing]") {
  Bucket b({"dir one/a b+c.txt", "x"});
  json r = b.ok("ListObjectsV2", {{"EncodingType", "url"}, {"Delimiter", "/"}, {"Prefix", ""}});
  CHECK(listed(r) == Keys{"x", "dir%20one/"});
  CHECK(r["EncodingType"] == "url");
  json inside = b.ok("ListObjectsV2", {{"EncodingType", "url"}, {"Prefix", "dir one/"}});
  CHECK(listed(inside) == Keys{"dir%20one/a%20b%2Bc.txt"});
  CHECK(inside["Prefix"] == "dir%20one/");
  CHECK(listed(b.ok("ListObjectsV2", {{"Prefix", "dir one/"}})) == Keys{"dir one/a b+c.txt"});
}

TEST_CASE("storage: ListObjects (v1): Marker, NextMarker only with a delimiter, Owner",
          "[emulator][storage][listing]") {
  Bucket b(kTree);
  json first = b.ok("ListObjects", {{"MaxKeys", 2}});
  CHECK(listed(first) == Keys{"a.txt", "photos/2024/x.jpg"});
  CHECK(first["IsTruncated"] == true);
  CHECK(first["Marker"] == "");
  CHECK_FALSE(first.contains("NextMarker"));  // the last key is the next marker
  CHECK(first["Contents"][0]["Owner"]["ID"] == sha256_hex("cloudlua-emulator"));
  json second = b.ok("ListObjects", {{"MaxKeys", 2}, {"Marker", "photos/2024/x.jpg"}});
  CHECK(listed(second) == Keys{"photos/2024/y.jpg", "photos/2025/z.jpg"});
  CHECK(second["Marker"] == "photos/2024/x.jpg");

  json rolled = b.ok("ListObjects", {{"MaxKeys", 2}, {"Delimiter", "/"}});
  CHECK(listed(rolled) == Keys{"a.txt", "photos/"});
  CHECK(rolled["NextMarker"] == "photos/");
  json rest = b.ok("ListObjects", {{"MaxKeys", 2}, {"Delimiter", "/"}, {"Marker", "photos/"}});
  CHECK(listed(rest) == Keys{"z.txt"});
  CHECK(rest["IsTruncated"] == false);
}

TEST_CASE("storage: ListMultipartUploads by key then start, paged with both markers", "[emulator][storage][listing]") {
  Bucket b;
  std::vector<std::string> ids;
  for (const char* key : {"b/one", "a", "b/one", "c"}) {
    ids.push_back(b.ok("CreateMultipartUpload", {{"Object", key}})["UploadId"]);
    b.p.advance(1);  // starts a second apart: the same second orders by upload id
  }
  json all = b.ok("ListMultipartUploads", json::object());
  REQUIRE(all["Upload"].size() == 4);
  std::vector<std::string> order;
  for (const json& u : all["Upload"])
    order.push_back(u["Key"].get<std::string>() + " " + u["UploadId"].get<std::string>());
  CHECK(order == std::vector<std::string>{"a " + ids[1], "b/one " + ids[0], "b/one " + ids[2], "c " + ids[3]});
  CHECK(all["IsTruncated"] == false);
  CHECK(all["Upload"][0]["StorageClass"] == "STANDARD");
  CHECK(all["Upload"][0]["Initiator"] == all["Upload"][0]["Owner"]);

  json page = b.ok("ListMultipartUploads", {{"MaxUploads", 2}});
  CHECK(page["IsTruncated"] == true);
  CHECK(page["NextKeyMarker"] == "b/one");
  CHECK(page["NextUploadIdMarker"] == ids[0]);
  json next = b.ok("ListMultipartUploads", {{"MaxUploads", 2}, {"KeyMarker", "b/one"}, {"UploadIdMarker", ids[0]}});
  REQUIRE(next["Upload"].size() == 2);
  CHECK(next["Upload"][0]["UploadId"] == ids[2]);
  CHECK(next["IsTruncated"] == false);
  CHECK(b.ok("ListMultipartUploads", {{"KeyMarker", "b/one"}})["Upload"].size() == 1);  // after every b/one

  json rolled = b.ok("ListMultipartUploads", {{"Delimiter", "/"}});
  CHECK(listed(json{{"CommonPrefixes", rolled["CommonPrefixes"]}}) == Keys{"b/"});
  CHECK(rolled["Upload"].size() == 2);
  CHECK(b.ok("ListMultipartUploads", {{"Prefix", "b/"}})["Upload"].size() == 2);

  REQUIRE(b.call("AbortMultipartUpload", {{"Bucket", "bkt"}, {"Object", "a"}, {"uploadId", ids[1]}}).ok);
  CHECK(b.ok("ListMultipartUploads", json::object())["Upload"].size() == 3);  // neither aborted nor completed
}

TEST_CASE("storage: CopyObject copies bytes and ETag, from any bucket, onto itself only with REPLACE",
          "[emulator][storage][listing]") {
  Bucket b({"src/a b.txt"});
  REQUIRE(b.call("CreateBucket", {{"Bucket", "other"}}).ok);
  json r = b.ok("CopyObject", {{"Bucket", "other"}, {"Object", "copy.txt"}, {"CopySource", "/bkt/src/a%20b.txt"}});
  CHECK(r["ETag"] == "\"" + hex(md5("src/a b.txt")) + "\"");
  CHECK(std::regex_match(r["LastModified"].get<std::string>(), std::regex(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.000Z)")));
  CHECK_FALSE(r.value("CopySourceVersionId", "").empty());
  CHECK(r["VersionId"] != r["CopySourceVersionId"]);
  CHECK(b.call("GetObject", {{"Bucket", "other"}, {"Object", "copy.txt"}}).result["Body"] == "src/a b.txt");
  CHECK(b.ok("CopyObject", {{"Object", "again"}, {"CopySource", "bkt/src/a%20b.txt?versionId=x"}}).contains("ETag"));

  check_error(b.call("CopyObject", {{"Bucket", "bkt"}, {"Object", "k"}, {"CopySource", "bkt/missing"}}), 404,
              "NoSuchKey");
  check_error(b.call("CopyObject", {{"Bucket", "bkt"}, {"Object", "k"}, {"CopySource", "nope/k"}}), 404,
              "NoSuchBucket");
  check_error(b.call("CopyObject", {{"Bucket", "bkt"}, {"Object", "k"}, {"CopySource", "bkt"}}), 400,
              "InvalidArgument");
  json self = {{"Bucket", "bkt"}, {"Object", "src/a b.txt"}, {"CopySource", "bkt/src/a%20b.txt"}};
  check_error(b.call("CopyObject", self), 400, "InvalidRequest");
  self["MetadataDirective"] = "REPLACE";
  CHECK(b.call("CopyObject", self).ok);
}

TEST_CASE("storage: creation and initiation times survive their records saved and restored",
          "[emulator][storage][listing]") {
  Bucket b;
  REQUIRE(b.call("CreateMultipartUpload", {{"Bucket", "bkt"}, {"Object", "k"}}).ok);
  json before_buckets = b.ok("ListBuckets", json::object());
  json before_uploads = b.ok("ListMultipartUploads", json::object());
  HeldRecords saved;
  REQUIRE(b.p.save_records_to(saved).ok());
  b.p.advance(3600);
  REQUIRE(b.p.restore_records_from(saved).ok());
  CHECK(b.ok("ListBuckets", json::object()) == before_buckets);
  CHECK(b.ok("ListMultipartUploads", json::object()) == before_uploads);
}
