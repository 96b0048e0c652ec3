// The storage API's resources: buckets, their objects, and multipart uploads with
// their parts, behaving as S3 does (the spec's storage API follows it) so that real
// S3 clients work against the emulator.
// Decisions: bytes are kept in memory (an emulator for tests, not a store); ETags are
// the quoted hex MD5 of the bytes, and a completed upload's is S3's
// "<MD5 of the parts' binary MD5s>-<number of parts>"; ETags sent back in a completion
// are compared with their surrounding quotes ignored; the minimum size of a part that
// is not the last is the setting min_part_size (5 MiB unless tests lower it); Range
// takes one range, and a Range that is not one well-formed range is ignored (the whole
// object, as S3 does); any operation on an unknown bucket is NoSuchBucket, checked
// once before dispatch; upload ids are 32 hex digits; ListParts answers pages in
// part-number order, each part with the time it was uploaded (kept in the state file).
// A checksum (x-ext-checksum-*, as a header or an aws-chunked body's trailer) on
// PutObject or UploadPart is checked and echoed, and an object's kept for GetObject
// and HeadObject with ChecksumMode ENABLED. An upload created with a ChecksumAlgorithm
// keeps that algorithm's checksum of every part (the one given, else computed), wants it
// again beside each part of the completion (InvalidRequest without, InvalidPart when it
// is not the part's, as S3 answers), and makes the object's: S3's composite checksum
// ("<base64 of the checksum of the parts' raw checksums>-<parts>"), or for CRC64NVME,
// which S3 has only as a full-object checksum, the CRC of the whole object; an upload
// without one makes an object without a checksum. CopyObject copies a source up to the setting
// max_copy_size (the model's limit, 5 GiB); UploadPartCopy copies a source, or a
// bytes=first-last range of it, as a part. Listings (ListObjects, ListObjectsV2,
// ListMultipartUploads) are computed afresh from the keys in order for every page; a
// continuation token is the base64 of the last key or common prefix the page before
// ended with, and a common prefix at or before where a page starts is not listed
// again; every bucket and upload has the one owner of the emulator, and every object
// that owner's FULL_CONTROL as its ACL (no ACL is kept: PutObjectAcl takes only that one).
#include <algorithm>
#include <cctype>
#include <climits>
#include <ctime>
#include <optional>
#include <set>
#include <string_view>
#include <tuple>

#include "core/checksum.h"
#include "core/crypto.h"
#include "core/http.h"
#include "core/pattern.h"
#include "core/uri.h"
#include "emulator/service.h"

namespace cloud {

namespace {

// "<hex MD5>" in quotes, the form S3 sends ETags in.
std::string quoted_md5(const std::string& raw_md5) { return "\"" + hex(raw_md5) + "\""; }

// An ETag as a client sent it back, without the quotes it may or may not carry.
std::string unquoted(const std::string& etag) {
  if (etag.size() >= 2 && etag.front() == '"' && etag.back() == '"') return etag.substr(1, etag.size() - 2);
  return etag;
}

// `text` read in the strptime format `from` and written in the strftime format `to`;
// `text` itself when it is not in `from`.
std::string reformat_time(const std::string& text, const char* from, const char* to) {
  std::tm tm{};
  if (!strptime(text.c_str(), from, &tm)) return text;
  char buf[40];
  std::strftime(buf, sizeof buf, to, &tm);
  return buf;
}

constexpr const char* kHttpDate = "%a, %d %b %Y %H:%M:%S GMT";

// ISO 8601 UTC (the platform clock's form) as an HTTP date, the form of Last-Modified.
std::string http_date(const std::string& iso) { return reformat_time(iso, "%Y-%m-%dT%H:%M:%SZ", kHttpDate); }

// An HTTP date (the form Last-Modified is kept in) as ISO 8601, the form of listings.
// The fields of strftime's "Thu, 26 Nov 2026 09:42:01 GMT" are moved, not parsed again:
// strptime's names of days and months, matched under the locale, took a tenth of a
// listing's time. Any other text goes through strptime.
std::string iso_date(const std::string& http) {
  static const std::string kMonths = "JanFebMarAprMayJunJulAugSepOctNovDec";
  size_t month = http.size() == 29 && http.compare(25, 4, " GMT") == 0 ? kMonths.find(http.substr(8, 3)) : std::string::npos;
  if (month == std::string::npos || month % 3 != 0)
    return reformat_time(http, kHttpDate, "%Y-%m-%dT%H:%M:%S.000Z");
  char mm[3] = {static_cast<char>('0' + (month / 3 + 1) / 10), static_cast<char>('0' + (month / 3 + 1) % 10), 0};
  return http.substr(12, 4) + "-" + mm + "-" + http.substr(5, 2) + "T" + http.substr(17, 8) + ".000Z";
}

// Whether an If-Match or If-None-Match value names `etag`: `*`, or a list of ETags
// (quoted or not, weak W/ ones compared as strong: S3's ETags are all strong).
bool etag_listed(const std::string& list, const std::string& etag) {
  for (size_t start = 0; start < list.size();) {
    size_t end = std::min(list.find(',', start), list.size());
    size_t first = list.find_first_not_of(" \t", start);
    size_t last = end == 0 ? std::string::npos : list.find_last_not_of(" \t", end - 1);
    if (first < end && last != std::string::npos && last >= first) {
      std::string item = list.substr(first, last - first + 1);
      if (item.rfind("W/", 0) == 0) item = item.substr(2);
      if (item == "*" || unquoted(item) == unquoted(etag)) return true;
    }
    start = end + 1;
  }
  return false;
}

// An HTTP date as seconds since 1970; nullopt for text that is none (such a condition
// is ignored, as S3 and RFC 9110 ignore it).
std::optional<std::time_t> http_time(const std::string& text) {
  std::tm tm{};
  const char* end = strptime(text.c_str(), kHttpDate, &tm);
  if (!end || *end != '\0') return std::nullopt;
  return timegm(&tm);
}

// 412 PreconditionFailed naming the condition that did not hold, as S3 answers it.
HandlerResult precondition_failed(const char* condition) {
  return HandlerResult::failure(412, "PreconditionFailed", "At least one of the pre-conditions you specified did not hold",
                                {{"Condition", condition}});
}

// The one owner of every bucket, object and upload: { ID, DisplayName }.
json owner() { return {{"ID", sha256_hex("cloudlua-emulator")}, {"DisplayName", "cloudlua"}}; }

// The common prefix `key` rolls up into: the key up to and including the first
// `delimiter` after `prefix`; "" when there is no delimiter or none after the prefix.
std::string rolled_up(const std::string& key, const std::string& prefix, const std::string& delimiter) {
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
std::string encoded(const json& input, const std::string& text) {
  return input.value("EncodingType", "") == "url" ? uri_encode(text, true) : text;
}

// What a Range header asks of an object of `size` bytes.
enum class RangeAsk { whole, part, unsatisfiable };

// Up to 19 decimal digits, the most that fits an unsigned 64-bit number.
bool range_number(std::string_view text) {
  return text.size() <= 19 && text.find_first_not_of("0123456789") == std::string_view::npos;
}

// bytes=a-b, bytes=a- and bytes=-n; first and last are set for a part.
RangeAsk parse_range(std::string_view text, unsigned long long size, unsigned long long& first,
                     unsigned long long& last) {
  const std::string_view unit = "bytes=";
  if (text.substr(0, unit.size()) != unit) return RangeAsk::whole;
  text.remove_prefix(unit.size());
  size_t dash = text.find('-');
  if (dash == std::string_view::npos) return RangeAsk::whole;
  std::string from(text.substr(0, dash)), to(text.substr(dash + 1));
  if (!range_number(from) || !range_number(to) || (from.empty() && to.empty())) return RangeAsk::whole;
  if (from.empty()) {  // the last n bytes
    unsigned long long n = std::stoull(to);
    if (n == 0 || size == 0) return RangeAsk::unsatisfiable;
    first = size - std::min(n, size), last = size - 1;
    return RangeAsk::part;
  }
  first = std::stoull(from);
  last = to.empty() ? ULLONG_MAX : std::stoull(to);
  if (last < first) return RangeAsk::whole;  // not a valid range: ignored
  if (first >= size) return RangeAsk::unsatisfiable;
  last = std::min(last, size - 1);
  return RangeAsk::part;
}

// The value of a hex digit; -1 when `c` is none.
int digit_of(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

// The bytes `text` gives in hex (hex()'s inverse); nullopt when it is not hex.
std::optional<std::string> unhex(const std::string& text) {
  if (text.size() % 2) return std::nullopt;
  std::string out;
  for (size_t i = 0; i < text.size(); i += 2) {
    int high = digit_of(text[i]), low = digit_of(text[i + 1]);
    if (high < 0 || low < 0) return std::nullopt;
    out += static_cast<char>(high * 16 + low);
  }
  return out;
}

struct StoredObject {
  SharedBytes bytes;  // never null
  std::string etag;           // quoted
  std::string last_modified;  // HTTP date
  std::string version_id;
  json checksum = json::object();  // the one it was stored with, by member name (ChecksumCRC32)
  std::string upload_id;           // the multipart upload that made it ("" for PutObject)
  json headers = json::object();   // what HTTP says of it, by member name (content_headers)
  std::vector<std::uint64_t> part_sizes;  // a multipart upload's: its parts' sizes, in order (GetObject's PartNumber)
};

// The members that say what HTTP says of an object, stored with it and answered by
// GetObject and HeadObject: its content headers and its user metadata.
const char* const kContentMembers[] = {"ContentType", "ContentEncoding", "ContentDisposition", "ContentLanguage",
                                       "CacheControl", "Expires"};

// A Content-Encoding without its aws-chunked coding: "aws-chunked,gzip" is "gzip".
std::string without_aws_chunked(const std::string& codings) {
  std::string kept;
  for (size_t start = 0; start <= codings.size();) {
    size_t end = std::min(codings.find(',', start), codings.size());
    size_t first = codings.find_first_not_of(" \t", start);
    size_t last = codings.find_last_not_of(" \t", end == 0 ? 0 : end - 1);
    std::string c = first < end && last != std::string::npos && last >= first ? codings.substr(first, last - first + 1) : "";
    if (!c.empty() && to_lower(c) != "aws-chunked") kept += (kept.empty() ? "" : ",") + c;
    start = end + 1;
  }
  return kept;
}

// The content headers and user metadata a request gives (PutObject's,
// CreateMultipartUpload's, CopyObject's with REPLACE), as kept with the object: the
// aws-chunked coding is the request's framing, not the object's (S3 drops it), and
// no Metadata is kept as none.
json content_headers(const json& input) {
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
std::string checksum_member(ChecksumAlgorithm algorithm) {
  std::string name = checksum_name(algorithm);
  for (char& c : name) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return "Checksum" + name;
}

// The checksum of stored bytes, read a piece at a time.
std::string checksum_of(ChecksumAlgorithm a, const Blob& bytes) {
  ChecksumStream sum(a);
  bytes.each_piece([&sum](const char* data, size_t size) { return sum.update({data, size}), true; });
  return sum.digest();
}

// The checksum of a request's body: taken as it arrived, or read from its bytes.
std::string checksum_of(ChecksumAlgorithm a, const RequestBody& body) {
  auto taken = body.checksums.find(a);
  return taken != body.checksums.end() ? taken->second : checksum_of(a, *body.bytes);
}

// A checksum given against the bytes received: InvalidRequest when it is not the base64
// of as many bytes as the algorithm gives, BadDigest when it is not the bytes'.
std::optional<HandlerResult> check_checksum_value(ChecksumAlgorithm a, const std::string& value, const RequestBody& body) {
  std::string label = checksum_member(a).substr(8), expected = checksum_of(a, body);
  std::optional<std::string> raw = unbase64(value);
  if (!raw || raw->size() != expected.size())
    return HandlerResult::failure(400, "InvalidRequest", "Value for the " + label + " checksum header is invalid.");
  if (*raw != expected)
    return HandlerResult::failure(400, "BadDigest", "The " + label + " you specified did not match the calculated checksum.");
  return std::nullopt;
}

// The checksum a request gave with its bytes (a header, or a trailer of an aws-chunked
// body), checked as S3 checks it: one at most, right (check_checksum_value), and given
// when ChecksumAlgorithm announces one. `given` receives it by member name.
std::optional<HandlerResult> check_checksum(const json& input, const RequestBody& bytes, json& given) {
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
    return HandlerResult::failure(400, "InvalidRequest", "The checksum algorithm was given, but no checksum header or trailer.");
  return std::nullopt;
}

struct Part {
  SharedBytes bytes;          // never null
  std::string md5;            // raw 16 bytes
  std::string id;             // unique to these bytes: their name in a ByteStore
  std::string last_modified;  // ISO 8601 UTC, as ListParts answers it
  json checksum = json::object();  // by member name (ChecksumCRC32): given, or the upload's algorithm's
};

struct Upload {
  std::string bucket, key;
  std::map<long long, Part> parts;  // by part number
  std::string initiated;            // ISO 8601
  std::optional<ChecksumAlgorithm> algorithm;  // CreateMultipartUpload's ChecksumAlgorithm
  json headers = json::object();               // CreateMultipartUpload's content_headers, the object's
};

// The algorithm a ChecksumAlgorithm member names (validated by the model: S3's names).
std::optional<ChecksumAlgorithm> algorithm_of(const json& input) {
  return input.contains("ChecksumAlgorithm") ? find_checksum_algorithm(input.value("ChecksumAlgorithm", ""))
                                             : std::nullopt;
}

// A part's checksum of the upload's algorithm (nothing without one): the one the request
// gave, or computed from the bytes. A request that gave another algorithm's is refused
// as S3 refuses it (InvalidRequest).
std::optional<HandlerResult> part_checksum(const Upload& u, const Blob& bytes, json& given) {
  if (!u.algorithm) return std::nullopt;
  std::string member = checksum_member(*u.algorithm);
  for (const auto& [other, value] : given.items())
    if (other != member)
      return HandlerResult::failure(400, "InvalidRequest",
                                    "Checksum Type mismatch occurred, expected checksum Type: " +
                                        std::string(checksum_name(*u.algorithm)) + ", actual checksum Type: " +
                                        std::string(checksum_name(*find_checksum_algorithm(other.substr(8)))));
  if (!given.contains(member)) given[member] = base64(checksum_of(*u.algorithm, bytes));
  return std::nullopt;
}

struct Bucket {
  std::map<std::string, StoredObject> objects;  // by key
  std::string created;                          // ISO 8601
};

class StorageService : public Service {
 public:
  explicit StorageService(PlatformContext& context) : Service("storage", context) {}

  // The documented fixture set: one empty bucket, demo-bucket.
  void load_fixtures() override { add_bucket("demo-bucket"); }

  // seed{ buckets = { "name", ... } }: empty buckets ({ name = } tables accepted too).
  void seed(const json& fixtures) override {
    for (const json& b : fixtures.value("buckets", json::array())) {
      if (b.is_string()) add_bucket(b.get<std::string>());
      if (b.is_object() && b.contains("name")) add_bucket(b["name"].get<std::string>());
    }
  }

  json state() const override { return {{"buckets", buckets_state()}, {"uploads", uploads_state()}}; }

  void reset() override {
    buckets_.clear();
    uploads_.clear();
    cleared_ = true, changed_.clear(), changed_objects_.clear();
  }

  // A part's record, its bytes named by its id.
  static json part_json(const Part& p) {
    return {{"id", p.id}, {"last_modified", p.last_modified}, {"checksum", p.checksum}, {"md5", hex(p.md5)}};
  }

  // An upload's record, without its parts (records of their own).
  static json upload_json(const Upload& u) {
    json r = {{"bucket", u.bucket}, {"key", u.key}, {"initiated", u.initiated}};
    if (u.algorithm) r["algorithm"] = checksum_name(*u.algorithm);
    if (!u.headers.empty()) r["headers"] = u.headers;
    return r;
  }

  // The upload `id` as its record says, without its parts (a record without a time of
  // initiation, imported from an older state, is dated now).
  Upload& restored_upload(const std::string& id, const json& u) {
    Upload& upload = uploads_[id];
    upload.bucket = u.at("bucket").get<std::string>(), upload.key = u.at("key").get<std::string>();
    upload.initiated = u.value("initiated", ctx_.clock.iso8601());
    if (u.contains("algorithm")) upload.algorithm = find_checksum_algorithm(u.at("algorithm").get<std::string>());
    upload.headers = u.value("headers", json::object());
    return upload;
  }

  // Records: a bucket ("bucket", name: { created }), an object ("object", named by its
  // bucket and key, in columns: ObjectRow), an upload without its parts ("upload", id),
  // a part ("part", the JSON array [upload id, number]). Each change notes the records
  // it touched (changed(), object_changed()).
  StateRecords changed_records(ByteStore& bytes, bool all) override {
    StateRecords out;
    if (all || cleared_) {
      out.push_back({"*", "", nullptr});
      for (const auto& [name, b] : buckets_) {
        out.push_back(bucket_record(name));
        for (const auto& [key, o] : b.objects) out.push_back(object_record(name, key, bytes));
      }
      for (const auto& [id, u] : uploads_) {
        out.push_back(upload_record(id));
        for (const auto& [number, p] : u.parts) out.push_back(part_record(id, number, bytes));
      }
    } else {
      for (const auto& [kind, key] : changed_) out.push_back(record_of(kind, key, bytes));
      for (const auto& [bucket, key] : changed_objects_) out.push_back(object_record_of(bucket, key, bytes));
    }
    cleared_ = false, changed_.clear(), changed_objects_.clear();
    return out;
  }

  // What changed_records() gave, in place of all it holds: the objects come in order,
  // each appended to its bucket's map; a bucket only its objects name is created now.
  // An object's bytes are taken as their record's size says when it does.
  void restore_records(RecordsByKind& records, ObjectRows& objects, const ByteStore& bytes) override {
    reset();
    for (auto& [name, b] : records["bucket"]) buckets_[name].created = b.at("created").get<std::string>();
    std::map<std::string, Bucket>::iterator in = buckets_.end();  // the bucket appended to
    for (ObjectRow& row : objects) {
      if (in == buckets_.end() || row.bucket != in->first) {
        bool added;
        std::tie(in, added) = buckets_.try_emplace(row.bucket);
        if (added) in->second.created = ctx_.clock.iso8601();
      }
      SharedBytes kept = row.size >= 0 ? bytes.get(row.version_id, static_cast<std::uint64_t>(row.size))
                                       : bytes.get(row.version_id);
      json sum = row.checksum == "{}" ? json::object() : json::parse(row.checksum);
      json headers = row.headers == "{}" ? json::object() : json::parse(row.headers);
      std::vector<std::uint64_t> part_sizes = headers.value(kPartSizesMember, std::vector<std::uint64_t>{});
      headers.erase(kPartSizesMember);
      Objects& into = in->second.objects;
      into.emplace_hint(into.end(), std::move(row.key),
                        StoredObject{std::move(kept), std::move(row.etag), std::move(row.last_modified),
                                     std::move(row.version_id), std::move(sum), std::move(row.upload_id),
                                     std::move(headers), std::move(part_sizes)});
    }
    for (auto& [id, u] : records["upload"]) restored_upload(id, u);
    for (auto& [key, p] : records["part"]) {
      json where = json::parse(key);
      uploads_.at(where.at(0).get<std::string>()).parts[where.at(1).get<long long>()] = restored_part(p, bytes);
    }
    cleared_ = false, changed_.clear(), changed_objects_.clear();  // as saved: nothing changed since
  }

  // A part as its record says: { id, last_modified, checksum, md5 }, or only its id (a
  // state saved before parts had a time: it is the time of the restore); without its
  // MD5 (saved before it was kept), its bytes are read once for it.
  Part restored_part(const json& saved, const ByteStore& bytes) const {
    std::string id = saved.is_string() ? saved.get<std::string>() : saved.at("id").get<std::string>();
    std::string time = saved.is_string() ? ctx_.clock.iso8601() : saved.at("last_modified").get<std::string>();
    json sum = saved.is_string() ? json::object() : saved.value("checksum", json::object());
    SharedBytes part_bytes = bytes.get(id);
    std::optional<std::string> digest = saved.is_object() ? unhex(saved.value("md5", "")) : std::nullopt;
    if (!digest || digest->size() != 16) digest = md5_of(*part_bytes);
    return Part{std::move(part_bytes), *digest, id, time, std::move(sum)};
  }

  // The raw MD5 of `bytes`, read a piece at a time.
  static std::string md5_of(const Blob& bytes) {
    DigestStream digest(Digest::md5);
    bytes.each_piece([&](const char* data, size_t size) { return digest.update({data, size}), true; });
    return digest.digest();
  }

  // Every operation but CreateBucket and ListBuckets needs its bucket to exist (in_bucket).
  Handlers handlers() override {
    return {
        {"AbortMultipartUpload", in_bucket(&StorageService::abort_multipart_upload)},
        {"CompleteMultipartUpload", in_bucket(&StorageService::complete_multipart_upload)},
        {"CopyObject", in_bucket(&StorageService::copy_object)},
        {"CreateBucket", handler(this, &StorageService::create_bucket)},
        {"CreateMultipartUpload", in_bucket(&StorageService::create_multipart_upload)},
        {"DeleteBucket", in_bucket(&StorageService::delete_bucket)},
        {"DeleteObject", in_bucket(&StorageService::delete_object)},
        {"DeleteObjects", in_bucket(&StorageService::delete_objects)},
        {"GetBucketLocation", in_bucket(&StorageService::get_bucket_location)},
        {"GetObject", in_bucket(&StorageService::read_object)},
        {"GetObjectAcl", in_bucket(&StorageService::get_object_acl)},
        {"HeadBucket", in_bucket(&StorageService::head_bucket)},
        {"HeadObject", in_bucket(&StorageService::read_object)},
        {"ListBuckets", handler(this, &StorageService::list_buckets)},
        {"ListMultipartUploads", in_bucket(&StorageService::list_multipart_uploads)},
        {"ListObjects", in_bucket(&StorageService::list_objects)},
        {"ListObjectsV2", in_bucket(&StorageService::list_objects_v2)},
        {"ListParts", in_bucket(&StorageService::list_parts)},
        {"PutObject", in_bucket(&StorageService::put_object)},
        {"PutObjectAcl", in_bucket(&StorageService::put_object_acl)},
        {"UploadPart", in_bucket(&StorageService::upload_part)},
        {"UploadPartCopy", in_bucket(&StorageService::upload_part_copy)},
    };
  }

 private:
  using Objects = std::map<std::string, StoredObject>;  // by key

  // A new, empty bucket created now (a bucket of that name is kept as it is).
  void add_bucket(const std::string& name) {
    if (buckets_.count(name)) return;
    buckets_[name].created = ctx_.clock.iso8601();
    changed("bucket", name);
  }

  // The handler calling `fn` once the call's bucket is known to exist; NoSuchBucket else.
  template <class Fn>
  Handler in_bucket(Fn fn) {
    return [this, inner = handler(this, fn)](const Operation& op, const json& input, RequestBody* body) {
      std::string bucket = input.value("Bucket", "");
      if (!buckets_.count(bucket))
        return HandlerResult::failure(404, "NoSuchBucket", "The specified bucket does not exist", {{"BucketName", bucket}});
      return inner(op, input, body);
    };
  }

  // ------------------------------------------------------------ buckets and objects

  // A new, empty bucket; S3 refuses one that exists already with 409.
  HandlerResult create_bucket(const Operation&, const json& input) {
    std::string bucket = input.value("Bucket", "");
    if (buckets_.count(bucket))
      return HandlerResult::failure(409, "BucketAlreadyOwnedByYou",
                                    "Your previous request to create the named bucket succeeded and you already own it.",
                                    {{"BucketName", bucket}});
    add_bucket(bucket);
    return HandlerResult::success({{"Location", "/" + bucket}});
  }

  // The object in one request; its ETag is the quoted MD5 of its bytes; its checksum,
  // when given, is checked, kept and echoed.
  HandlerResult put_object(const Operation&, const json& input, RequestBody* sent) {
    if (std::optional<HandlerResult> refused = write_condition(input)) return *refused;
    RequestBody body = payload_of(input, "Body", sent);
    json given = json::object();
    if (std::optional<HandlerResult> refused = check_checksum(input, body, given)) return *refused;
    std::string etag = quoted_md5(body.md5);
    StoredObject& o = store(input.value("Bucket", ""), input.value("Object", ""), std::move(body.bytes), etag, given);
    o.headers = content_headers(input);
    json r = write_headers(o);
    r.update(given);
    return HandlerResult::success(r);
  }

  // The call's payload (`member` of its arguments) with its raw MD5: the body the
  // server kept out of the arguments (`sent`), taken over as it is, or else the
  // argument (a call made without a server, from a test).
  static RequestBody payload_of(const json& input, const char* member, RequestBody* sent) {
    RequestBody body;
    if (sent && sent->bytes) body = std::move(*sent);
    else body.bytes = memory_blob(input.value(member, ""));
    if (body.md5.empty()) body.md5 = md5(*body.bytes->in_memory());
    return body;
  }

  // Replaces whatever the key held, with a fresh version id and modification time.
  StoredObject& store(const std::string& bucket, const std::string& key, SharedBytes bytes, std::string etag,
                      json checksum = json::object()) {
    object_changed(bucket, key);
    StoredObject& o = buckets_[bucket].objects[key];
    o = {std::move(bytes), std::move(etag), http_date(ctx_.clock.iso8601()), ctx_.next_id("v"), std::move(checksum), "",
         json::object(), {}};
    return o;
  }

  // The header members of an answer that stored an object.
  static json write_headers(const StoredObject& o) {
    json r = json::object();  // set one by one: an initializer list copies each pair twice
    r["ETag"] = o.etag;
    r["VersionId"] = o.version_id;
    r["ServerSideEncryption"] = "AES256";
    return r;
  }

  // GetObject and HeadObject: the same headers, the bytes only for the operation whose
  // result is the object (GetObject); HeadObject says their length instead
  // (GetObject's Content-Length is that of its body).
  HandlerResult read_object(const Operation& op, const json& input) {
    bool with_body = !op.output_payload.empty();
    std::string key = input.value("Object", "");
    const Objects& b = buckets_.at(input.value("Bucket", "")).objects;
    auto found = b.find(key);
    if (found == b.end()) return no_such_key(key);
    const StoredObject& o = found->second;
    bool part = input.contains("PartNumber");
    if (part && input.contains("Range"))
      return HandlerResult::failure(400, "InvalidRequest", "Cannot specify both Range header and partNumber query parameter.");
    if (std::optional<HandlerResult> stop = read_condition(o, input)) return *stop;
    json r = write_headers(o);
    r["LastModified"] = o.last_modified;
    r["AcceptRanges"] = "bytes";
    r["ContentType"] = "binary/octet-stream";  // S3's when none was given
    r.update(o.headers);
    for (const char* member : kContentMembers)  // response-content-type and the like
      if (std::string asked = std::string("Response") + member; input.contains(asked)) r[member] = input.at(asked);
    if (input.value("ChecksumMode", "") == "ENABLED" && !input.contains("Range") && !part) r.update(o.checksum);
    if (part) return answer_part(o, input.value("PartNumber", 1LL), std::move(r), with_body);
    return answer_range(o, input.value("Range", ""), std::move(r), with_body);
  }

  // PartNumber, as S3 answers it: the part's bytes of an object a multipart upload made
  // (206 with Content-Range and PartsCount), all of an object made in one piece for part
  // 1 (206 with Content-Range); a part past the count InvalidPartNumber (416).
  static HandlerResult answer_part(const StoredObject& o, long long number, json r, bool with_body) {
    const std::vector<std::uint64_t>& sizes = o.part_sizes;
    auto count = static_cast<long long>(sizes.empty() ? 1 : sizes.size());
    if (number > count)
      return HandlerResult::failure(416, "InvalidPartNumber", "The requested partnumber is not satisfiable",
                                    {{"PartNumberRequested", number}, {"ActualPartCount", count}});
    std::uint64_t first = 0, length = o.bytes->size();
    if (!sizes.empty()) {
      for (long long i = 0; i + 1 < number; ++i) first += sizes[static_cast<size_t>(i)];
      length = sizes[static_cast<size_t>(number - 1)];
      r["PartsCount"] = count;
    }
    return answer_bytes(o, first, length, std::move(r), with_body, length > 0);
  }

  // GetObject's and HeadObject's conditions, in RFC 9110's order, as S3 answers them:
  // 412 when If-Match does not name the object's ETag, or (If-Match absent) it changed
  // after If-Unmodified-Since; else 304, with its ETag and time, when If-None-Match
  // names its ETag, or (If-None-Match absent) it has not changed after If-Modified-Since.
  // So If-Match true and If-Unmodified-Since false answer 200; If-None-Match false and
  // If-Modified-Since true answer 304.
  static std::optional<HandlerResult> read_condition(const StoredObject& o, const json& input) {
    std::optional<std::time_t> modified = http_time(o.last_modified);
    auto since = [&input](const char* member) { return http_time(input.value(member, "")); };
    if (input.contains("IfMatch")) {
      if (!etag_listed(input.value("IfMatch", ""), o.etag)) return precondition_failed("If-Match");
    } else if (auto t = since("IfUnmodifiedSince"); t && modified && *modified > *t) {
      return precondition_failed("If-Unmodified-Since");
    }
    bool not_modified = false;
    if (input.contains("IfNoneMatch")) not_modified = etag_listed(input.value("IfNoneMatch", ""), o.etag);
    else if (auto t = since("IfModifiedSince"); t && modified) not_modified = *modified <= *t;
    if (!not_modified) return std::nullopt;
    json r = json::object();
    r["ETag"] = o.etag;
    r["LastModified"] = o.last_modified;
    return HandlerResult::success(r, 304);
  }

  // A conditional write's conditions (PutObject, CompleteMultipartUpload), as S3's:
  // If-None-Match `*` holds when the key holds no object, If-Match when it holds one of
  // that ETag (none: NoSuchKey); else 412 PreconditionFailed.
  std::optional<HandlerResult> write_condition(const json& input) {
    if (!input.contains("IfMatch") && !input.contains("IfNoneMatch")) return std::nullopt;
    const Objects& objects = buckets_.at(input.value("Bucket", "")).objects;
    auto found = objects.find(input.value("Object", ""));
    bool exists = found != objects.end();
    if (input.contains("IfNoneMatch") && exists) return precondition_failed("If-None-Match");
    if (!input.contains("IfMatch")) return std::nullopt;
    if (!exists) return no_such_key(input.value("Object", ""));
    if (!etag_listed(input.value("IfMatch", ""), found->second.etag)) return precondition_failed("If-Match");
    return std::nullopt;
  }

  // NoSuchKey naming the key, as GetObject answers a key that holds no object.
  static HandlerResult no_such_key(const std::string& key) {
    return HandlerResult::failure(404, "NoSuchKey", "The specified key does not exist.", {{"Key", key}});
  }

  // The one access control list there is: the owner's FULL_CONTROL (S3's private).
  static json owner_acl() {
    json grantee = owner();
    grantee["Type"] = "CanonicalUser";
    return {{"Owner", owner()}, {"AccessControlList", {{{"Grantee", grantee}, {"Permission", "FULL_CONTROL"}}}}};
  }

  // An object's ACL: every object has the one owner's (owner_acl).
  HandlerResult get_object_acl(const Operation&, const json& input) {
    std::string key = input.value("Object", "");
    if (!buckets_.at(input.value("Bucket", "")).objects.count(key)) return no_such_key(key);
    return HandlerResult::success(owner_acl());
  }

  // Only the one ACL there is (owner_acl) can be set: the canned private, or grants
  // that are all the owner's FULL_CONTROL (what s3cmd cp copies from the source); any
  // other is NotImplemented (501), which clients that copy ACLs take as a server
  // without them. An object's ACL is not kept: it could only be that one.
  HandlerResult put_object_acl(const Operation&, const json& input) {
    std::string key = input.value("Object", "");
    if (!buckets_.at(input.value("Bucket", "")).objects.count(key)) return no_such_key(key);
    bool canned = input.contains("ACL"), full = input.contains("Owner") || input.contains("AccessControlList");
    if (!canned && !full)
      return HandlerResult::failure(400, "MalformedACLError",
                                    "The XML you provided was not well-formed or did not validate against our published schema");
    if ((canned && input["ACL"] != "private") || (full && !is_owner_acl(input)))
      return HandlerResult::failure(501, "NotImplemented",
                                    "The emulator keeps one access control list, the owner's FULL_CONTROL (canned: private)");
    return HandlerResult::success(json::object());
  }

  // Whether an ACL given in full is owner_acl's: the owner (when named) is the one
  // owner, and there are grants, each the owner's FULL_CONTROL.
  static bool is_owner_acl(const json& input) {
    const std::string id = owner()["ID"];
    if (input.contains("Owner") && input["Owner"].value("ID", "") != id) return false;
    const json grants = input.value("AccessControlList", json::array());
    for (const json& g : grants) {
      json grantee = g.value("Grantee", json::object());
      if (grantee.value("Type", "") != "CanonicalUser" || grantee.value("ID", "") != id ||
          g.value("Permission", "") != "FULL_CONTROL")
        return false;
    }
    return !grants.empty();
  }

  // The whole object (200), the range asked (206 with Content-Range), or InvalidRange (416).
  static HandlerResult answer_range(const StoredObject& o, const std::string& range, json r, bool with_body) {
    unsigned long long first = 0, last = 0, size = o.bytes->size();
    RangeAsk ask = parse_range(range, size, first, last);
    if (ask == RangeAsk::unsatisfiable)
      return HandlerResult::failure(416, "InvalidRange", "The requested range is not satisfiable",
                                    {{"RangeRequested", range}, {"ActualObjectSize", size}});
    bool whole = ask == RangeAsk::whole;
    if (whole) first = 0, last = size - 1;  // parse_range may have set them for a range it ignores
    return answer_bytes(o, first, whole ? size : last - first + 1, std::move(r), with_body, !whole);
  }

  // `length` bytes of the object from `first`: 206 with Content-Range when `partial`,
  // else 200; HeadObject says their length instead of sending them.
  static HandlerResult answer_bytes(const StoredObject& o, std::uint64_t first, std::uint64_t length, json r,
                                    bool with_body, bool partial) {
    if (partial)
      r["ContentRange"] = "bytes " + std::to_string(first) + "-" + std::to_string(first + length - 1) + "/" +
                          std::to_string(o.bytes->size());
    if (!with_body) r["ContentLength"] = length;
    HandlerResult answer = HandlerResult::success(std::move(r), partial ? 206 : 200);
    // The bytes are referenced, not copied into the result: the server sends them from
    // the store (a file opened now, under the platform's lock, stays readable).
    if (with_body) answer.payload = {o.bytes->opened(), first, length};
    return answer;
  }

  // Bucket: region, as S3's HeadBucket answers (x-ext-bucket-region); no body.
  HandlerResult head_bucket(const Operation&, const json&) {
    return HandlerResult::success({{"BucketRegion", ctx_.region}});
  }

  // <LocationConstraint>region</LocationConstraint>.
  HandlerResult get_bucket_location(const Operation&, const json&) {
    return HandlerResult::success({{"LocationConstraint", ctx_.region}});
  }

  // Every bucket by name, with its creation time.
  HandlerResult list_buckets(const Operation&, const json&) {
    json listed = json::array();
    for (const auto& [name, b] : buckets_) listed.push_back({{"Name", name}, {"CreationDate", b.created}});
    return HandlerResult::success({{"Buckets", listed}, {"Owner", owner()}});
  }

  // Only an empty bucket goes (204); its unfinished uploads go with it.
  HandlerResult delete_bucket(const Operation&, const json& input) {
    std::string bucket = input.value("Bucket", "");
    if (!buckets_.at(bucket).objects.empty())
      return HandlerResult::failure(409, "BucketNotEmpty", "The bucket you tried to delete is not empty",
                                    {{"BucketName", bucket}});
    buckets_.erase(bucket);
    changed("bucket", bucket);
    for (auto it = uploads_.begin(); it != uploads_.end();) {
      if (it->second.bucket != bucket) {
        ++it;
        continue;
      }
      upload_gone(it->first);
      it = uploads_.erase(it);
    }
    return HandlerResult::success(json::object(), 204);
  }

  // 204 whether or not the key was there, as S3 answers.
  HandlerResult delete_object(const Operation&, const json& input) {
    buckets_.at(input.value("Bucket", "")).objects.erase(input.value("Object", ""));
    object_changed(input.value("Bucket", ""), input.value("Object", ""));
    return HandlerResult::success(json::object(), 204);
  }

  // Each key listed is deleted (a missing one counts as deleted too); Quiet leaves
  // the deleted out of the answer. Nothing here can fail one key alone.
  HandlerResult delete_objects(const Operation&, const json& input) {
    Objects& objects = buckets_.at(input.value("Bucket", "")).objects;
    json deleted = json::array();
    for (const json& o : input.at("Object")) {  // validated: 1 to 1000 of them, each with a Key
      objects.erase(o.value("Key", ""));
      object_changed(input.value("Bucket", ""), o.value("Key", ""));
      json entry = {{"Key", o.value("Key", "")}};
      if (o.contains("VersionId")) entry["VersionId"] = o["VersionId"];
      deleted.push_back(entry);
    }
    if (input.value("Quiet", false)) return HandlerResult::success(json::object());
    return HandlerResult::success({{"Deleted", deleted}});
  }

  // The object the copy source names (copy-source "bucket/key", percent-encoded, a
  // leading '/' and a ?versionId= allowed), with its bucket and key; else the failure.
  struct Source {
    const StoredObject* object = nullptr;
    std::string bucket, key;
    std::optional<HandlerResult> failure;
  };
  Source copy_source(const json& input) {
    std::string source = input.value("CopySource", "");
    source = source.substr(source.front() == '/' ? 1 : 0);
    source = source.substr(0, source.find('?'));
    size_t slash = source.find('/');
    if (slash == std::string::npos || slash == 0 || slash + 1 == source.size())
      return {nullptr, "", "", HandlerResult::failure(400, "InvalidArgument",
                                    "Copy Source must mention the source bucket and key: sourcebucket/sourcekey",
                                    {{"ArgumentName", "x-amz-copy-source"}, {"ArgumentValue", input.value("CopySource", "")}})};
    Source s{nullptr, uri_decode(source.substr(0, slash)), uri_decode(source.substr(slash + 1)), std::nullopt};
    auto b = buckets_.find(s.bucket);
    if (b == buckets_.end())
      s.failure = HandlerResult::failure(404, "NoSuchBucket", "The specified bucket does not exist", {{"BucketName", s.bucket}});
    else if (auto found = b->second.objects.find(s.key); found == b->second.objects.end())
      s.failure = no_such_key(s.key);
    else
      s.object = &found->second;
    return s;
  }

  // The source stored again under Bucket and Object, ETag kept; a source larger than
  // the setting max_copy_size (the model's 5 GiB) is refused, as S3 refuses it: such an
  // object is copied in parts (UploadPartCopy).
  HandlerResult copy_object(const Operation&, const json& input) {
    Source source = copy_source(input);
    if (source.failure) return *source.failure;
    const std::string &from_bucket = source.bucket, &from_key = source.key;
    std::string to_bucket = input.value("Bucket", ""), to_key = input.value("Object", "");
    auto most = static_cast<unsigned long long>(ctx_.setting("max_copy_size"));
    if (source.object->bytes->size() > most)
      return HandlerResult::failure(400, "InvalidRequest",
                                    "The specified copy source is larger than the maximum allowable size for a copy "
                                    "source: " + std::to_string(most));
    if (from_bucket == to_bucket && from_key == to_key && input.value("MetadataDirective", "COPY") != "REPLACE")
      return HandlerResult::failure(400, "InvalidRequest",
                                    "This copy request is illegal because it is trying to copy an object to itself without "
                                    "changing the object's metadata, storage class, website redirect location or "
                                    "encryption attributes.");
    StoredObject from = *source.object;  // a copy: the store below may replace it
    StoredObject& copy = store(to_bucket, to_key, from.bytes, from.etag);
    copy.headers = input.value("MetadataDirective", "COPY") == "REPLACE" ? content_headers(input) : from.headers;
    json r = write_headers(copy);
    r.update({{"ETag", from.etag}, {"LastModified", iso_date(buckets_[to_bucket].objects[to_key].last_modified)},
              {"CopySourceVersionId", from.version_id}});
    return HandlerResult::success(r);
  }

  // ------------------------------------------------------------ listings

  using ObjectPage = Page<const Objects::value_type*>;  // key and object

  // The page of a bucket's objects `ask` describes, in key order.
  static ObjectPage object_page(const Objects& objects, const ListAsk& ask) {
    ObjectPage page;
    auto it = objects.lower_bound(std::max(ask.prefix, ask.after));
    if (it != objects.end() && it->first == ask.after) ++it;  // after, not at
    for (; it != objects.end() && it->first.compare(0, ask.prefix.size(), ask.prefix) == 0; ++it)
      if (!page.add(ask, it->first, &*it)) break;
    return page;
  }

  // What ListObjects and ListObjectsV2 ask in common; `after` is the caller's.
  static ListAsk list_ask(const json& input, const char* max_name, std::string after) {
    long long max = std::min(input.value(max_name, 1000LL), 1000LL);
    return {input.value("Prefix", ""), input.value("Delimiter", ""), std::move(after), max};
  }

  // The members ListObjects and ListObjectsV2 answer alike: the page's objects and
  // common prefixes, the bucket, and what was asked.
  static json listing(const json& input, const ListAsk& ask, const ObjectPage& page, bool with_owner) {
    json contents = json::array(), prefixes = json::array();
    for (const auto* item : page.items) {
      const StoredObject& o = item->second;
      json entry = {{"Key", encoded(input, item->first)}, {"LastModified", iso_date(o.last_modified)}, {"ETag", o.etag},
                    {"Size", o.bytes->size()}, {"StorageClass", "STANDARD"}};
      if (with_owner) entry["Owner"] = owner();
      contents.push_back(std::move(entry));
    }
    for (const std::string& p : page.prefixes) prefixes.push_back({{"Prefix", encoded(input, p)}});
    json r = {{"Name", input.value("Bucket", "")}, {"Prefix", encoded(input, ask.prefix)}, {"MaxKeys", ask.max},
              {"IsTruncated", page.truncated}};
    r["Contents"] = std::move(contents);  // moved, not copied: a page is a thousand objects
    r["CommonPrefixes"] = std::move(prefixes);
    if (!ask.delimiter.empty()) r["Delimiter"] = encoded(input, ask.delimiter);
    if (input.contains("EncodingType")) r["EncodingType"] = input["EncodingType"];
    return r;
  }

  // Version 2: ContinuationToken (else StartAfter) says where the page starts;
  // NextContinuationToken where the next one does.
  HandlerResult list_objects_v2(const Operation&, const json& input) {
    std::string after = input.value("StartAfter", "");
    if (input.contains("ContinuationToken")) {
      std::optional<std::string> decoded = unbase64(input.value("ContinuationToken", ""));
      if (!decoded || decoded->empty())
        return HandlerResult::failure(400, "InvalidArgument", "The continuation token provided is incorrect",
                                      {{"ArgumentName", "continuation-token"}});
      after = *decoded;
    }
    const Objects& objects = buckets_.at(input.value("Bucket", "")).objects;
    ListAsk ask = list_ask(input, "MaxKeys", after);
    ObjectPage page = object_page(objects, ask);
    json r = listing(input, ask, page, input.value("FetchOwner", false));
    r["KeyCount"] = page.items.size() + page.prefixes.size();
    if (page.truncated) r["NextContinuationToken"] = base64(page.last_key);
    if (input.contains("ContinuationToken")) r["ContinuationToken"] = input["ContinuationToken"];
    if (input.contains("StartAfter")) r["StartAfter"] = encoded(input, input.value("StartAfter", ""));
    return HandlerResult::success(r);
  }

  // Version 1: the page starts after Marker; NextMarker is answered only with a
  // Delimiter, as S3 does (without one, the last key is the next marker).
  HandlerResult list_objects(const Operation&, const json& input) {
    const Objects& objects = buckets_.at(input.value("Bucket", "")).objects;
    ListAsk ask = list_ask(input, "MaxKeys", input.value("Marker", ""));
    ObjectPage page = object_page(objects, ask);
    json r = listing(input, ask, page, true);
    r["Marker"] = encoded(input, ask.after);
    if (page.truncated && !ask.delimiter.empty()) r["NextMarker"] = encoded(input, page.last_key);
    return HandlerResult::success(r);
  }

  // The bucket's uploads by key, then by when they began (to the second; then by id).
  std::vector<std::pair<std::string, const Upload*>> uploads_in(const std::string& bucket) const {
    std::vector<std::pair<std::string, const Upload*>> out;
    for (const auto& [id, u] : uploads_)
      if (u.bucket == bucket) out.emplace_back(id, &u);
    std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
      return std::tie(a.second->key, a.second->initiated, a.first) < std::tie(b.second->key, b.second->initiated, b.first);
    });
    return out;
  }

  // Where a page of uploads starts: after KeyMarker's uploads, or with UploadIdMarker
  // after that upload of KeyMarker's key.
  static size_t first_upload(const std::vector<std::pair<std::string, const Upload*>>& uploads, const json& input) {
    std::string key = input.value("KeyMarker", ""), id = input.value("UploadIdMarker", "");
    if (key.empty()) return 0;
    for (size_t i = 0; i < uploads.size(); ++i)
      if (!id.empty() && uploads[i].second->key == key && uploads[i].first == id) return i + 1;
    size_t i = 0;
    while (i < uploads.size() && uploads[i].second->key <= key) ++i;
    return i;
  }

  // Unfinished uploads in order, rolled up and paged as objects are; NextKeyMarker
  // and NextUploadIdMarker say where the next page starts.
  HandlerResult list_multipart_uploads(const Operation&, const json& input) {
    auto uploads = uploads_in(input.value("Bucket", ""));
    ListAsk ask = list_ask(input, "MaxUploads", input.value("KeyMarker", ""));
    Page<std::pair<std::string, const Upload*>> page;
    for (size_t i = first_upload(uploads, input); i < uploads.size(); ++i)
      if (uploads[i].second->key.compare(0, ask.prefix.size(), ask.prefix) == 0 &&
          !page.add(ask, uploads[i].second->key, uploads[i]))
        break;
    json listed = json::array(), prefixes = json::array();
    for (const auto& [id, u] : page.items)
      listed.push_back({{"UploadId", id}, {"Key", encoded(input, u->key)}, {"Initiated", u->initiated},
                        {"StorageClass", "STANDARD"}, {"Owner", owner()}, {"Initiator", owner()}});
    for (const std::string& p : page.prefixes) prefixes.push_back({{"Prefix", encoded(input, p)}});
    json r = {{"Bucket", input.value("Bucket", "")}, {"KeyMarker", encoded(input, ask.after)},
              {"UploadIdMarker", input.value("UploadIdMarker", "")}, {"Prefix", encoded(input, ask.prefix)},
              {"MaxUploads", ask.max}, {"IsTruncated", page.truncated}, {"Upload", listed}, {"CommonPrefixes", prefixes}};
    if (!ask.delimiter.empty()) r["Delimiter"] = encoded(input, ask.delimiter);
    if (input.contains("EncodingType")) r["EncodingType"] = input["EncodingType"];
    if (page.truncated) {
      bool last_is_upload = !page.items.empty() && page.items.back().second->key == page.last_key;
      r["NextKeyMarker"] = encoded(input, page.last_key);
      r["NextUploadIdMarker"] = last_is_upload ? page.items.back().first : "";
    }
    return HandlerResult::success(r);
  }

  // ------------------------------------------------------------ multipart uploads

  // A new upload with no parts; the object appears only on completion.
  HandlerResult create_multipart_upload(const Operation&, const json& input) {
    std::string bucket = input.value("Bucket", ""), key = input.value("Object", "");
    std::string id = hex(md5(bucket + "/" + key + "/" + ctx_.next_id("upload-")));
    uploads_[id] = Upload{bucket, key, {}, ctx_.clock.iso8601(), algorithm_of(input), content_headers(input)};
    changed("upload", id);
    json r = {{"Bucket", bucket}, {"Key", key}, {"UploadId", id}};
    if (input.contains("ChecksumAlgorithm")) r["ChecksumAlgorithm"] = input["ChecksumAlgorithm"];
    return HandlerResult::success(r);
  }

  // The upload the input's uploadId names, if it belongs to the input's bucket and key.
  Upload* find_upload(const json& input) {
    auto it = uploads_.find(input.value("uploadId", ""));
    if (it == uploads_.end()) return nullptr;
    Upload& u = it->second;
    return u.bucket == input.value("Bucket", "") && u.key == input.value("Object", "") ? &u : nullptr;
  }

  // NoSuchUpload names the upload id asked for.
  static HandlerResult no_such_upload(const json& input) {
    return HandlerResult::failure(404, "NoSuchUpload",
                                  "The specified upload does not exist. The upload ID may be invalid, or the upload "
                                  "may have been aborted or completed.",
                                  {{"UploadId", input.value("uploadId", "")}});
  }

  // A part number uploaded again replaces the earlier bytes; its checksum, when given,
  // is checked and echoed.
  HandlerResult upload_part(const Operation&, const json& input, RequestBody* sent) {
    Upload* u = find_upload(input);
    if (!u) return no_such_upload(input);
    RequestBody body = payload_of(input, "body", sent);
    json r = json::object();
    if (std::optional<HandlerResult> refused = check_checksum(input, body, r)) return *refused;
    json kept = r;
    SharedBytes bytes = std::move(body.bytes);
    if (std::optional<HandlerResult> refused = part_checksum(*u, *bytes, kept)) return *refused;
    std::string digest = body.md5;
    part_changed(input.value("uploadId", ""), input.value("partNumber", 0LL));
    u->parts[input.value("partNumber", 0LL)] =
        Part{std::move(bytes), digest, ctx_.next_id("part-"), ctx_.clock.iso8601(), kept};
    r = kept;
    r["ETag"] = quoted_md5(digest);
    return HandlerResult::success(r);
  }

  // A part copied from the source's bytes (all of them, or CopySourceRange's
  // bytes=first-last, which must lie inside the source); a part number copied again
  // replaces the earlier bytes, as UploadPart does.
  HandlerResult upload_part_copy(const Operation&, const json& input) {
    Upload* u = find_upload(input);
    if (!u) return no_such_upload(input);
    Source source = copy_source(input);
    if (source.failure) return *source.failure;
    const Blob& all = *source.object->bytes;
    unsigned long long first = 0, last = all.size() == 0 ? 0 : all.size() - 1;
    if (input.contains("CopySourceRange")) {
      std::string range = input.value("CopySourceRange", "");
      std::vector<std::string> bounds;
      static const Pattern form = Pattern::builtin("bytes=([0-9]{1,19})-([0-9]{1,19})", Pattern::Text::bytes);
      if (!form.full_match(range, &bounds))
        return HandlerResult::failure(400, "InvalidArgument",
                                      "The x-amz-copy-source-range value must be of the form bytes=first-last where "
                                      "first and last are the zero-based offsets of the first and last bytes to copy",
                                      {{"ArgumentName", "x-amz-copy-source-range"}, {"ArgumentValue", range}});
      first = std::stoull(bounds[0]), last = std::stoull(bounds[1]);
      if (first > last || last >= all.size())
        return HandlerResult::failure(400, "InvalidRange", "The requested range is not satisfiable",
                                      {{"RangeRequested", range}, {"ActualObjectSize", all.size()}});
    }
    // The range as a slice of the source's bytes: nothing copied here (a copied part can
    // be 5 GiB), its MD5 read a piece at a time.
    SharedBytes bytes = sliced_blob(source.object->bytes, first, all.size() == 0 ? 0 : last - first + 1);
    std::string digest = md5_of(*bytes);
    std::string now = ctx_.clock.iso8601();
    json kept = json::object();
    part_checksum(*u, *bytes, kept);  // nothing given: it cannot refuse
    part_changed(input.value("uploadId", ""), input.value("partNumber", 0LL));
    u->parts[input.value("partNumber", 0LL)] = Part{std::move(bytes), digest, ctx_.next_id("part-"), now, kept};
    return HandlerResult::success({{"ETag", quoted_md5(digest)}, {"LastModified", now},
                                   {"CopySourceVersionId", source.object->version_id}});
  }

  // One page of the upload's parts: those numbered above PartNumberMarker, at most
  // MaxParts (1000 unless asked); IsTruncated when more follow, NextPartNumberMarker
  // the last one listed (the marker itself when the page is empty).
  HandlerResult list_parts(const Operation&, const json& input) {
    const Upload* u = find_upload(input);
    if (!u) return no_such_upload(input);
    long long marker = input.value("PartNumberMarker", 0LL), most = input.value("MaxParts", 1000LL), next = marker;
    json listed = json::array();
    auto it = u->parts.upper_bound(marker);
    for (; it != u->parts.end() && static_cast<long long>(listed.size()) < most; ++it) {
      listed.push_back(listed_part(it->first, it->second));
      next = it->first;
    }
    return HandlerResult::success({{"Bucket", u->bucket}, {"Key", u->key}, {"UploadId", input.value("uploadId", "")},
                                   {"PartNumberMarker", marker}, {"NextPartNumberMarker", next}, {"MaxParts", most},
                                   {"IsTruncated", it != u->parts.end()}, {"Part", listed},
                                   {"StorageClass", "STANDARD"}});
  }

  // A Part element of ListParts' answer.
  static json listed_part(long long number, const Part& p) {
    return {{"PartNumber", number}, {"LastModified", p.last_modified}, {"ETag", quoted_md5(p.md5)}, {"Size", p.bytes->size()}};
  }

  // The upload and its parts are dropped; answered 204 with no body, as S3 does.
  HandlerResult abort_multipart_upload(const Operation&, const json& input) {
    if (!find_upload(input)) return no_such_upload(input);
    upload_gone(input.value("uploadId", ""));
    uploads_.erase(input.value("uploadId", ""));
    return HandlerResult::success(json::object(), 204);
  }

  // Checks the listed parts in S3's order, then joins them into the object. An upload
  // completed again answers as the first time while its object stands (S3 does, as
  // ceph's s3-tests and versitygw check: a client's retry of a completion that did
  // arrive must not fail).
  HandlerResult complete_multipart_upload(const Operation&, const json& input) {
    Upload* u = find_upload(input);
    if (!u) return completed_again(input);
    const json& listed = input.at("Part");  // validated: at least one part (the model)
    if (std::optional<HandlerResult> refused = check_parts(input, *u, listed)) return *refused;
    if (std::optional<HandlerResult> refused = write_condition(input)) return *refused;
    return finish_upload(input, *u, listed);
  }

  // The answer to completing an upload whose object is still the one it made; else
  // NoSuchUpload (never created, aborted, or its object since replaced or deleted).
  HandlerResult completed_again(const json& input) {
    std::string bucket = input.value("Bucket", ""), key = input.value("Object", ""), id = input.value("uploadId", "");
    const auto& objects = buckets_[bucket].objects;
    auto found = objects.find(key);
    if (id.empty() || found == objects.end() || found->second.upload_id != id) return no_such_upload(input);
    json r = write_headers(found->second);
    r.update(found->second.checksum);
    r.update({{"Location", location_of(bucket, key)}, {"Bucket", bucket}, {"Key", key}});
    return HandlerResult::success(r);
  }

  // The PartNumber of an entry of CompleteMultipartUpload's Part list.
  static long long part_number(const json& listed_part) { return listed_part.value("PartNumber", 0LL); }

  // The first reason the listed parts cannot make the object, if any.
  std::optional<HandlerResult> check_parts(const json& input, const Upload& u, const json& listed) const {
    for (size_t i = 1; i < listed.size(); ++i)
      if (part_number(listed[i]) <= part_number(listed[i - 1]))
        return HandlerResult::failure(400, "InvalidPartOrder",
                                      "The list of parts was not in ascending order. Parts must be ordered by part number.",
                                      {{"UploadId", input.value("uploadId", "")}});
    for (const json& p : listed)
      if (std::optional<HandlerResult> refused = check_listed_part(input, u, p)) return refused;
    return check_part_sizes(input, u, listed);
  }

  // InvalidPart: never uploaded, or the ETag or a checksum given is not the part's;
  // InvalidRequest: the upload's algorithm's checksum is not given.
  static std::optional<HandlerResult> check_listed_part(const json& input, const Upload& u, const json& p) {
    auto it = u.parts.find(part_number(p));
    std::string etag = p.value("ETag", "");
    if (it != u.parts.end() && unquoted(etag) == hex(it->second.md5) && same_checksums(p, it->second)) {
      if (!u.algorithm || p.contains(checksum_member(*u.algorithm))) return std::nullopt;
      return HandlerResult::failure(400, "InvalidRequest",
                                    "The upload was created using a " + std::string(checksum_name(*u.algorithm)) +
                                        " checksum. The complete request must include the checksum for each part. "
                                        "It was missing for part " + std::to_string(part_number(p)) + " in the request.");
    }
    return HandlerResult::failure(400, "InvalidPart",
                                  "One or more of the specified parts could not be found. The part may not have been "
                                  "uploaded, or the specified entity tag may not match the part's entity tag.",
                                  {{"UploadId", input.value("uploadId", "")}, {"PartNumber", part_number(p)},
                                   {"ETag", etag}});
  }

  // Whether every checksum the listed part gives is the one its part was kept with.
  static bool same_checksums(const json& listed, const Part& part) {
    for (ChecksumAlgorithm a : kChecksumAlgorithms) {
      std::string member = checksum_member(a);
      if (listed.contains(member) && part.checksum.value(member, "") != listed.at(member).get<std::string>()) return false;
    }
    return true;
  }

  // EntityTooSmall: a part below the minimum size that is not the last one listed.
  std::optional<HandlerResult> check_part_sizes(const json& input, const Upload& u, const json& listed) const {
    auto minimum = static_cast<unsigned long long>(ctx_.setting("min_part_size"));
    for (size_t i = 0; i + 1 < listed.size(); ++i) {
      const Part& part = u.parts.at(part_number(listed[i]));
      if (part.bytes->size() >= minimum) continue;
      return HandlerResult::failure(400, "EntityTooSmall", "Your proposed upload is smaller than the minimum allowed object size.",
                                    {{"UploadId", input.value("uploadId", "")}, {"PartNumber", part_number(listed[i])},
                                     {"ETag", quoted_md5(part.md5)}, {"ProposedSize", part.bytes->size()},
                                     {"MinSizeAllowed", minimum}});
    }
    return std::nullopt;
  }

  // The object is the listed parts joined (their blobs, one after the other: nothing
  // copied; a store writes them to the object's file a piece at a time); its ETag is
  // S3's multipart form; the upload ends.
  HandlerResult finish_upload(const json& input, const Upload& u, const json& listed) {
    std::vector<SharedBytes> parts;
    std::vector<std::uint64_t> sizes;
    std::string digests;
    for (const json& p : listed) {
      const Part& part = u.parts.at(part_number(p));
      parts.push_back(part.bytes);
      sizes.push_back(part.bytes->size());
      digests += part.md5;
    }
    SharedBytes bytes = joined_blob(std::move(parts));
    std::string etag = "\"" + hex(md5(digests)) + "-" + std::to_string(listed.size()) + "\"";
    json sum = object_checksum(u, listed, *bytes);
    std::string bucket = u.bucket, key = u.key, id = input.value("uploadId", "");
    json headers = u.headers;
    upload_gone(id);
    uploads_.erase(id);
    StoredObject& stored = store(bucket, key, std::move(bytes), etag, sum);
    stored.upload_id = id;
    stored.headers = std::move(headers);
    stored.part_sizes = std::move(sizes);
    json r = write_headers(stored);
    r.update(stored.checksum);
    r.update({{"Location", location_of(bucket, key)}, {"Bucket", bucket}, {"Key", key}});
    return HandlerResult::success(r);
  }

  // The completed object's checksum by member name (none when the upload has no
  // algorithm): CRC64NVME's over the whole object, the others S3's composite one.
  static json object_checksum(const Upload& u, const json& listed, const Blob& bytes) {
    if (!u.algorithm) return json::object();
    ChecksumAlgorithm a = *u.algorithm;
    std::string member = checksum_member(a);
    if (a == ChecksumAlgorithm::crc64nvme) return {{member, base64(checksum_of(a, bytes))}};
    std::string raw;
    for (const json& p : listed) raw += *unbase64(u.parts.at(part_number(p)).checksum.at(member).get<std::string>());
    return {{member, checksum_base64(a, raw) + "-" + std::to_string(listed.size())}};
  }

  // The object's URL: the storage endpoint, then /bucket/key encoded as a path.
  std::string location_of(const std::string& bucket, const std::string& key) const {
    auto it = ctx_.endpoints.find("storage");
    std::string base = it == ctx_.endpoints.end() ? "" : it->second;
    return base + "/" + uri_encode(bucket) + "/" + uri_encode(key, true);
  }

  // ------------------------------------------------------------ state()

  // { { name=, objects = { { key=, size=, etag= } } } }: sizes, not the bytes.
  json buckets_state() const {
    json out = json::array();
    for (const auto& [name, b] : buckets_) {
      json list = json::array();
      for (const auto& [key, o] : b.objects)
        list.push_back({{"key", key}, {"size", o.bytes->size()}, {"etag", o.etag}});
      out.push_back({{"name", name}, {"objects", list}});
    }
    return out;
  }

  // { { bucket=, key=, uploadId=, parts = { { partNumber=, size=, etag= } } } }.
  json uploads_state() const {
    json out = json::array();
    for (const auto& [id, u] : uploads_) {
      json parts = json::array();
      for (const auto& [number, p] : u.parts)
        parts.push_back({{"partNumber", number}, {"size", p.bytes->size()}, {"etag", quoted_md5(p.md5)}});
      out.push_back({{"bucket", u.bucket}, {"key", u.key}, {"uploadId", id}, {"parts", parts}});
    }
    return out;
  }

  // ------------------------------------------------------------ records

  // Notes that record (kind, key) changed: saved with the change (changed_records()).
  void changed(const char* kind, const std::string& key) {
    if (ctx_.note_records) changed_.insert({kind, key});
  }
  void object_changed(const std::string& bucket, const std::string& key) {
    if (ctx_.note_records) changed_objects_.insert({bucket, key});
  }

  // The record of (kind, key) as it is now: null when it is gone.
  StateRecord record_of(const std::string& kind, const std::string& key, ByteStore& bytes) {
    if (kind == "bucket") return buckets_.count(key) ? bucket_record(key) : StateRecord{kind, key, nullptr};
    if (kind == "upload") return uploads_.count(key) ? upload_record(key) : StateRecord{kind, key, nullptr};
    json where = json::parse(key);  // a part's: [upload id, number]
    auto u = uploads_.find(where.at(0).get<std::string>());
    long long number = where.at(1).get<long long>();
    if (u == uploads_.end() || !u->second.parts.count(number)) return {kind, key, nullptr};
    return part_record(u->first, number, bytes);
  }

  // The record of the object `key` in `bucket` as it is now: without a row when it is gone.
  StateRecord object_record_of(const std::string& bucket, const std::string& key, ByteStore& bytes) {
    auto b = buckets_.find(bucket);
    if (b == buckets_.end() || !b->second.objects.count(key)) return {"object", key, nullptr, std::nullopt, bucket};
    return object_record(bucket, key, bytes);
  }

  StateRecord bucket_record(const std::string& name) const {
    return {"bucket", name, {{"created", buckets_.at(name).created}}};
  }

  // An object's record, in columns; its bytes to `bytes`, and from then on read from
  // there (their memory let go).
  StateRecord object_record(const std::string& bucket, const std::string& key, ByteStore& bytes) {
    StoredObject& o = buckets_.at(bucket).objects.at(key);
    o.bytes = bytes.put(o.version_id, o.bytes);
    json headers = o.headers;
    if (!o.part_sizes.empty()) headers[kPartSizesMember] = o.part_sizes;
    ObjectRow row{bucket, key, o.etag, o.last_modified, o.version_id, o.checksum.dump(), o.upload_id,
                  static_cast<std::int64_t>(o.bytes->size()), headers.dump()};
    return {"object", key, nullptr, std::move(row), bucket};
  }

  StateRecord upload_record(const std::string& id) const { return {"upload", id, upload_json(uploads_.at(id))}; }

  // A part's record; its bytes to `bytes`, and from then on read
  // from there.
  StateRecord part_record(const std::string& id, long long number, ByteStore& bytes) {
    Part& p = uploads_.at(id).parts.at(number);
    p.bytes = bytes.put(p.id, p.bytes);
    return {"part", json::array({id, number}).dump(), part_json(p)};
  }

  void part_changed(const std::string& id, long long number) {
    if (ctx_.note_records) changed("part", json::array({id, number}).dump());
  }

  // Notes that upload `id` and its parts go: called before it is erased.
  void upload_gone(const std::string& id) {
    if (!ctx_.note_records) return;
    changed("upload", id);
    auto u = uploads_.find(id);
    if (u != uploads_.end())
      for (const auto& [number, p] : u->second.parts) part_changed(id, number);
  }

  std::map<std::string, Bucket> buckets_;   // by name
  std::map<std::string, Upload> uploads_;   // by upload id
  std::set<std::pair<std::string, std::string>> changed_;  // (kind, key) of the records changed since saved
  std::set<std::pair<std::string, std::string>> changed_objects_;  // (bucket, key) of the objects changed since saved
  bool cleared_ = false;                                    // reset since saved: every record went
};

}  // namespace

std::unique_ptr<Service> make_storage_service(PlatformContext& context) {
  return std::make_unique<StorageService>(context);
}

}  // namespace cloud
