// The storage service's rooms share this header, and nothing else includes it:
// storage.cpp (the handler table, buckets and objects, their listings),
// storage_multipart.cpp (multipart uploads and their parts) and storage_records.cpp
// (its records: what `serve --state` and checkpoints save and restore, and the view
// cloud.emulator.state() shows). Here: what it stores (objects, parts, uploads,
// buckets), the helpers more than one room uses, and the class.
#pragma once

#include <algorithm>
#include <cctype>
#include <climits>
#include <ctime>
#include <optional>
#include <set>
#include <string_view>
#include <tuple>
#include "core/wire/checksum.h"
#include "core/base/crypto.h"
#include "core/wire/http.h"
#include "core/base/pattern.h"
#include "core/wire/uri.h"
#include "emulator/access.h"
#include "emulator/service.h"

namespace cloud {
namespace storage {

// "<hex MD5>" in quotes, the form S3 sends ETags in.
inline std::string quoted_md5(const std::string& raw_md5) { return "\"" + hex(raw_md5) + "\""; }

// An ETag as a client sent it back, without the quotes it may or may not carry.
inline std::string unquoted(const std::string& etag) {
  if (etag.size() >= 2 && etag.front() == '"' && etag.back() == '"') return etag.substr(1, etag.size() - 2);
  return etag;
}

// The common prefix `key` rolls up into: the key up to and including the first
// `delimiter` after `prefix`; "" when there is no delimiter or none after the prefix.
inline std::string rolled_up(const std::string& key, const std::string& prefix, const std::string& delimiter) {
  if (delimiter.empty()) return "";
  size_t at = key.find(delimiter, prefix.size());
  return at == std::string::npos ? "" : key.substr(0, at + delimiter.size());
}

// What a listing asks: keys under `prefix`, after `after`, rolled up at `delimiter`,
// at most `max` entries (keys and common prefixes together) in a page.
struct ListAsk {
  std::string prefix, delimiter, after;
  long long max = 1000;
};

// A page of a listing; `Item` is what a listed key stands for (an object, an upload).
template <class Item>
struct Page {
  std::vector<Item> items;
  std::vector<std::string> prefixes;  // common prefixes, in order
  bool truncated = false;             // entries are left after the page (never said of a page of 0)
  std::string last_key;               // of the last entry: a key or a common prefix

  // Adds the entry of `key` unless it rolls up into a prefix listed already (or at
  // or before where the page starts); false once the page is full and one more is left.
  bool add(const ListAsk& ask, const std::string& key, const Item& item) {
    std::string prefix = rolled_up(key, ask.prefix, ask.delimiter);
    if (!prefix.empty() && (prefix <= ask.after || (!prefixes.empty() && prefixes.back() == prefix))) return true;
    if (static_cast<long long>(items.size() + prefixes.size()) >= ask.max) return !(truncated = ask.max > 0);
    if (prefix.empty()) items.push_back(item);
    else prefixes.push_back(prefix);
    last_key = prefix.empty() ? key : prefix;
    return true;
  }
};

// The answer's form of a key, a prefix or a marker: percent-encoded ('/' kept) with
// encoding-type=url, as it is otherwise.
inline std::string encoded(const json& input, const std::string& text) {
  return input.value("EncodingType", "") == "url" ? uri_encode(text, true) : text;
}

// What a Range header asks of an object of `size` bytes.
enum class RangeAsk { whole, part, unsatisfiable };

// Which condition on an object did not hold (none: all held), in the order checked.
enum class ConditionFailed { none, match, unmodified_since, none_match, modified_since };

struct StoredObject {
  SharedBytes bytes;          // never null
  std::string etag;           // quoted
  std::string last_modified;  // HTTP date
  std::string version_id;
  json checksum = json::object();         // the one it was stored with, by member name (ChecksumCRC32)
  std::string upload_id;                  // the multipart upload that made it ("" for PutObject)
  json headers = json::object();          // what HTTP says of it, by member name (content_headers)
  std::vector<std::uint64_t> part_sizes;  // a multipart upload's: its parts' sizes, in order (GetObject's PartNumber)
  access::Acl acl;                        // its owner and the grants on it
};

// The members that say what HTTP says of an object, stored with it and answered by
// GetObject and HeadObject: its content headers and its user metadata.
const char* const kContentMembers[] = {"ContentType",     "ContentEncoding", "ContentDisposition",
                                       "ContentLanguage", "CacheControl",    "Expires"};

// A Content-Encoding without its aws-chunked coding: "aws-chunked,gzip" is "gzip"; the
// other codings are kept as sent, spaces included ("deflate, gzip"), as S3 keeps them.
inline std::string without_aws_chunked(const std::string& codings) {
  std::string kept;
  bool first_kept = true;
  for (size_t start = 0; start <= codings.size();) {
    size_t end = std::min(codings.find(',', start), codings.size());
    std::string raw = codings.substr(start, end - start);
    size_t first = raw.find_first_not_of(" \t"), last = raw.find_last_not_of(" \t");
    std::string c = first == std::string::npos ? "" : raw.substr(first, last - first + 1);
    if (!c.empty() && to_lower(c) != "aws-chunked") {
      kept += (first_kept ? "" : ",") + raw;
      first_kept = false;
    }
    start = end + 1;
  }
  size_t first = kept.find_first_not_of(" \t"), last = kept.find_last_not_of(" \t");
  return first == std::string::npos ? "" : kept.substr(first, last - first + 1);
}

// The content headers and user metadata a request gives (PutObject's,
// CreateMultipartUpload's, CopyObject's with REPLACE), as kept with the object: the
// aws-chunked coding is the request's framing, not the object's (S3 drops it), and
// no Metadata is kept as none.
inline json content_headers(const json& input) {
  json out = json::object();
  for (const char* name : kContentMembers)
    if (input.contains(name) && input[name].is_string()) out[name] = input[name];
  if (out.contains("ContentEncoding")) {
    std::string kept = without_aws_chunked(out["ContentEncoding"].get<std::string>());
    if (kept.empty()) out.erase("ContentEncoding");
    else out["ContentEncoding"] = kept;
  }
  if (input.contains("Metadata") && input["Metadata"].is_object() && !input["Metadata"].empty())
    out["Metadata"] = input["Metadata"];
  return out;
}

// The input and output member of an algorithm's checksum: ChecksumCRC32, ChecksumSHA256.
inline std::string checksum_member(ChecksumAlgorithm algorithm) {
  std::string name = checksum_name(algorithm);
  for (char& c : name) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return "Checksum" + name;
}

// The checksum of stored bytes, read a piece at a time.
inline std::string checksum_of(ChecksumAlgorithm a, const Blob& bytes) {
  ChecksumStream sum(a);
  bytes.each_piece([&sum](const char* data, size_t size) { return sum.update({data, size}), true; });
  return sum.digest();
}

// The checksum of a request's body: taken as it arrived, or read from its bytes.
inline std::string checksum_of(ChecksumAlgorithm a, const RequestBody& body) {
  auto taken = body.checksums.find(a);
  return taken != body.checksums.end() ? taken->second : checksum_of(a, *body.bytes);
}

// A checksum given against the bytes received: InvalidRequest when it is not the base64
// of as many bytes as the algorithm gives, BadDigest when it is not the bytes'.
inline std::optional<HandlerResult> check_checksum_value(ChecksumAlgorithm a, const std::string& value,
                                                         const RequestBody& body) {
  std::string label = checksum_member(a).substr(8), expected = checksum_of(a, body);
  std::optional<std::string> raw = unbase64(value);
  if (!raw || raw->size() != expected.size())
    return HandlerResult::failure(400, "InvalidRequest", "Value for the " + label + " checksum header is invalid.");
  if (*raw != expected)
    return HandlerResult::failure(400, "BadDigest",
                                  "The " + label + " you specified did not match the calculated checksum.");
  return std::nullopt;
}

// The checksum a request gave with its bytes (a header, or a trailer of an aws-chunked
// body), checked as S3 checks it: one at most, right (check_checksum_value), and given
// when ChecksumAlgorithm announces one. `given` receives it by member name.
inline std::optional<HandlerResult> check_checksum(const json& input, const RequestBody& bytes, json& given) {
  for (ChecksumAlgorithm a : kChecksumAlgorithms) {
    std::string member = checksum_member(a);
    if (!input.contains(member)) continue;
    if (!given.empty())
      return HandlerResult::failure(400, "InvalidRequest",
                                    "Expecting a single checksum header. Multiple checksum Types are not allowed.");
    if (auto refused = check_checksum_value(a, input.at(member).get<std::string>(), bytes)) return refused;
    given[member] = input.at(member);
  }
  if (input.contains("ChecksumAlgorithm") && given.empty())
    return HandlerResult::failure(400, "InvalidRequest",
                                  "The checksum algorithm was given, but no checksum header or trailer.");
  return std::nullopt;
}

struct Part {
  SharedBytes bytes;               // never null
  std::string md5;                 // raw 16 bytes
  std::string id;                  // unique to these bytes: their name in a ByteStore
  std::string last_modified;       // ISO 8601 UTC, as ListParts answers it
  json checksum = json::object();  // by member name (ChecksumCRC32): given, or the upload's algorithm's
};

struct Upload {
  std::string bucket, key;
  std::map<long long, Part> parts;             // by part number
  std::string initiated;                       // ISO 8601
  std::optional<ChecksumAlgorithm> algorithm;  // CreateMultipartUpload's ChecksumAlgorithm
  json headers = json::object();               // CreateMultipartUpload's content_headers, the object's
  access::Acl acl;                             // the object's, set at completion; its owner initiated it
};

struct Bucket {
  std::map<std::string, StoredObject> objects;        // by key
  std::string created;                                // ISO 8601
  access::Acl acl;                                    // its owner (the account that made it) and the grants on it
  std::string ownership = access::kDefaultOwnership;  // its Object Ownership
};

class StorageService : public Service {
 public:
  explicit StorageService(PlatformContext& context) : Service("storage", context) {}
  // The documented fixture set: one empty bucket, demo-bucket.
  void load_fixtures() override { add_bucket("demo-bucket"); }
  void seed(const json& fixtures) override;
  json state() const override;
  void reset() override;
  bool names_are_global() const override { return true; }  // bucket names, as S3's
  bool owns(const std::string& id) const override;
  static json part_json(const Part& p);
  static json upload_json(const Upload& u);
  Upload& restored_upload(const std::string& id, const json& u);
  StateRecords changed_records(ByteStore& bytes, bool all) override;
  void restore_records(RecordsByKind& records, ObjectRows& objects, const ByteStore& bytes) override;
  Part restored_part(const json& saved, const ByteStore& bytes) const;
  static std::string md5_of(const Blob& bytes);
  Handlers handlers() override;

 private:
  using Objects = std::map<std::string, StoredObject>;  // by key

  // The object the copy source names (copy-source "bucket/key", percent-encoded, a
  // leading '/' and a ?versionId= allowed), with its bucket and key; else the failure.
  struct Source {
    const StoredObject* object = nullptr;
    std::string bucket, key;
    std::optional<HandlerResult> failure;
  };
  using ObjectPage = Page<const Objects::value_type*>;  // key and object

  // storage.cpp: buckets, objects and their listings
  // The handler calling `fn` once admit() lets the call through.
  template <class Fn>
  Handler guarded(Fn fn) {
    return [this, inner = handler(this, fn)](const Operation& op, const json& input, RequestBody* body) {
      if (std::optional<HandlerResult> refused = admit(op, input)) return *refused;
      return inner(op, input, body);
    };
  }
  // NoSuchBucket when the call's bucket is not there; AccessDenied when access.h's rule
  // of the operation does not let the caller make it: the one check of who may.
  std::optional<HandlerResult> admit(const Operation& op, const json& input) const;
  static HandlerResult no_such_bucket(const std::string& bucket);
  Bucket& add_bucket(const std::string& name);
  HandlerResult create_bucket(const Operation&, const json& input);
  std::optional<HandlerResult> new_object_acl(const json& input, access::Acl& acl) const;
  HandlerResult put_object(const Operation&, const json& input, RequestBody* sent);
  static RequestBody payload_of(const json& input, const char* member, RequestBody* sent);
  StoredObject& store(const std::string& bucket, const std::string& key, SharedBytes bytes, std::string etag,
                      access::Acl acl, json checksum = json::object());
  static json write_headers(const StoredObject& o);
  HandlerResult read_object(const Operation& op, const json& input);
  static HandlerResult answer_part(const StoredObject& o, long long number, json r, bool with_body);
  static ConditionFailed failed_condition(const StoredObject& o, const json& input, const std::string& prefix);
  static std::optional<HandlerResult> read_condition(const StoredObject& o, const json& input);
  static std::optional<HandlerResult> copy_condition(const StoredObject& source, const json& input);
  std::optional<HandlerResult> write_condition(const json& input);
  static HandlerResult no_such_key(const std::string& key);
  HandlerResult get_object_acl(const Operation&, const json& input);
  HandlerResult put_object_acl(const Operation&, const json& input);
  HandlerResult get_bucket_acl(const Operation&, const json& input);
  HandlerResult put_bucket_acl(const Operation&, const json& input);
  static HandlerResult answer_range(const StoredObject& o, const std::string& range, json r, bool with_body);
  static HandlerResult answer_bytes(const StoredObject& o, std::uint64_t first, std::uint64_t length, json r,
                                    bool with_body, bool partial);
  HandlerResult head_bucket(const Operation&, const json&);
  HandlerResult get_bucket_location(const Operation&, const json&);
  HandlerResult list_buckets(const Operation&, const json&);
  HandlerResult delete_bucket(const Operation&, const json& input);
  HandlerResult delete_object(const Operation&, const json& input);
  HandlerResult delete_objects(const Operation&, const json& input);
  Source copy_source(const json& input);
  HandlerResult copy_object(const Operation&, const json& input);
  static ObjectPage object_page(const Objects& objects, const ListAsk& ask);
  static ListAsk list_ask(const json& input, const char* max_name, std::string after);
  static json listing(const json& input, const ListAsk& ask, const ObjectPage& page, bool with_owner);
  HandlerResult list_objects_v2(const Operation&, const json& input);
  HandlerResult list_objects(const Operation&, const json& input);

  // storage_multipart.cpp: multipart uploads and their parts
  std::vector<std::pair<std::string, const Upload*>> uploads_in(const std::string& bucket) const;
  static size_t first_upload(const std::vector<std::pair<std::string, const Upload*>>& uploads, const json& input);
  HandlerResult list_multipart_uploads(const Operation&, const json& input);
  HandlerResult create_multipart_upload(const Operation&, const json& input);
  Upload* find_upload(const json& input);
  static HandlerResult no_such_upload(const json& input);
  HandlerResult upload_part(const Operation&, const json& input, RequestBody* sent);
  HandlerResult upload_part_copy(const Operation&, const json& input);
  HandlerResult list_parts(const Operation&, const json& input);
  static json listed_part(long long number, const Part& p);
  HandlerResult abort_multipart_upload(const Operation&, const json& input);
  HandlerResult complete_multipart_upload(const Operation&, const json& input);
  HandlerResult completed_again(const json& input);
  static long long part_number(const json& listed_part);
  std::optional<HandlerResult> check_parts(const json& input, const Upload& u, const json& listed) const;
  static std::optional<HandlerResult> check_listed_part(const json& input, const Upload& u, const json& p);
  static bool same_checksums(const json& listed, const Part& part);
  static std::optional<HandlerResult> check_object_checksum(const json& input, const Upload& u, const json& listed);
  static std::optional<std::string> composite_of(ChecksumAlgorithm a, const Upload& u, const json& listed);
  static std::vector<SharedBytes> listed_bytes(const Upload& u, const json& listed);
  std::optional<HandlerResult> check_part_sizes(const json& input, const Upload& u, const json& listed) const;
  HandlerResult finish_upload(const json& input, const Upload& u, const json& listed);
  static json object_checksum(const Upload& u, const json& listed, const Blob& bytes);
  std::string location_of(const std::string& bucket, const std::string& key) const;

  // storage_records.cpp: the records, and the view state() shows
  json buckets_state() const;
  json uploads_state() const;
  void changed(const char* kind, const std::string& key);
  void object_changed(const std::string& bucket, const std::string& key);
  StateRecord record_of(const std::string& kind, const std::string& key, ByteStore& bytes);
  StateRecord object_record_of(const std::string& bucket, const std::string& key, ByteStore& bytes);
  StateRecord bucket_record(const std::string& name) const;
  StateRecord object_record(const std::string& bucket, const std::string& key, ByteStore& bytes);
  StateRecord upload_record(const std::string& id) const;
  StateRecord part_record(const std::string& id, long long number, ByteStore& bytes);
  void part_changed(const std::string& id, long long number);
  void upload_gone(const std::string& id);

  std::map<std::string, Bucket> buckets_;                          // by name
  std::map<std::string, Upload> uploads_;                          // by upload id
  std::set<std::pair<std::string, std::string>> changed_;          // (kind, key) of the records changed since saved
  std::set<std::pair<std::string, std::string>> changed_objects_;  // (bucket, key) of the objects changed since saved
  bool cleared_ = false;                                           // reset since saved: every record went
};

}  // namespace storage
}  // namespace cloud
