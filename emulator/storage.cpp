// The storage API's resources: buckets, their objects, and multipart uploads with
// their parts, behaving as S3 does (the spec's storage API follows it) so that real
// S3 clients work against the emulator. Its rooms: this file (the handler table,
// buckets, objects and their listings), storage_multipart.cpp (multipart uploads),
// storage_records.cpp (its records, and the view state() shows), and the header they
// share, storage_service.h (what it stores, and the class).
// Decisions: bytes are kept in memory (an emulator for tests, not a store); ETags are
// the quoted hex MD5 of the bytes, and a completed upload's is S3's
// "<MD5 of the parts' binary MD5s>-<number of parts>"; ETags sent back in a completion
// are compared with their surrounding quotes ignored; the minimum size of a part that
// is not the last is the setting min_part_size (5 MiB unless tests lower it); Range
// takes one range, and a Range that is not one well-formed range is ignored (the whole
// object, as S3 does); any operation on an unknown bucket is NoSuchBucket, checked
// once before dispatch; upload ids are 32 hex digits; ListParts answers pages in
// part-number order, each part with the time it was uploaded (kept in its record).
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
// again. Who may call what is access.h's, asked once for every call (admit): each
// bucket, object and upload keeps its owner and the grants on it.
#include "emulator/storage_service.h"

#include "core/base/dates.h"

namespace cloud {
namespace storage {

namespace {

// ISO 8601 UTC (the platform clock's form) as an HTTP date, the form of Last-Modified;
// `iso` itself when it is none. Dates are read and written by core/base/dates alone.
std::string http_date(const std::string& iso) {
  Outcome<std::int64_t> t = parse_date(iso, DateForm::iso);
  return t.ok() ? format_date(*t, DateForm::http) : iso;
}

// An HTTP date (the form Last-Modified is kept in) as ISO 8601 with milliseconds, the
// form of listings; `http` itself when it is none.
std::string iso_date(const std::string& http) {
  Outcome<std::int64_t> t = parse_date(http, DateForm::http);
  if (!t.ok()) return http;
  std::string iso = format_date(*t, DateForm::iso);  // "2026-11-28T07:04:18Z"
  return iso.insert(iso.size() - 1, ".000");
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
  Outcome<std::int64_t> t = parse_date(text, DateForm::http);
  if (!t.ok()) return std::nullopt;
  return static_cast<std::time_t>(*t);
}

// 412 PreconditionFailed naming the condition that did not hold, as S3 answers it.
HandlerResult precondition_failed(const char* condition) {
  return HandlerResult::failure(412, "PreconditionFailed",
                                "At least one of the pre-conditions you specified did not hold",
                                {{"Condition", condition}});
}

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

}  // namespace

// seed{ buckets = { "name", ... } }: empty buckets ({ name = } tables accepted too).
void StorageService::seed(const json& fixtures) {
  for (const json& b : fixtures.value("buckets", json::array())) {
    if (b.is_string()) add_bucket(b.get<std::string>());
    if (b.is_object() && b.contains("name")) add_bucket(b["name"].get<std::string>());
  }
}

void StorageService::reset() {
  buckets_.clear();
  uploads_.clear();
  cleared_ = true, changed_.clear(), changed_objects_.clear();
}

// Every call goes through admit() first (guarded).
StorageService::Handlers StorageService::handlers() {
  return {
      {"AbortMultipartUpload", guarded(&StorageService::abort_multipart_upload)},
      {"CompleteMultipartUpload", guarded(&StorageService::complete_multipart_upload)},
      {"CopyObject", guarded(&StorageService::copy_object)},
      {"CreateBucket", guarded(&StorageService::create_bucket)},
      {"CreateMultipartUpload", guarded(&StorageService::create_multipart_upload)},
      {"DeleteBucket", guarded(&StorageService::delete_bucket)},
      {"DeleteObject", guarded(&StorageService::delete_object)},
      {"DeleteObjects", guarded(&StorageService::delete_objects)},
      {"GetBucketAcl", guarded(&StorageService::get_bucket_acl)},
      {"GetBucketLocation", guarded(&StorageService::get_bucket_location)},
      {"GetObject", guarded(&StorageService::read_object)},
      {"GetObjectAcl", guarded(&StorageService::get_object_acl)},
      {"HeadBucket", guarded(&StorageService::head_bucket)},
      {"HeadObject", guarded(&StorageService::read_object)},
      {"ListBuckets", guarded(&StorageService::list_buckets)},
      {"ListMultipartUploads", guarded(&StorageService::list_multipart_uploads)},
      {"ListObjects", guarded(&StorageService::list_objects)},
      {"ListObjectsV2", guarded(&StorageService::list_objects_v2)},
      {"ListParts", guarded(&StorageService::list_parts)},
      {"PutBucketAcl", guarded(&StorageService::put_bucket_acl)},
      {"PutObject", guarded(&StorageService::put_object)},
      {"PutObjectAcl", guarded(&StorageService::put_object_acl)},
      {"UploadPart", guarded(&StorageService::upload_part)},
      {"UploadPartCopy", guarded(&StorageService::upload_part_copy)},
  };
}

// The one check before every call: the bucket it names exists (NoSuchBucket; not for
// CreateBucket), and access.h's rule of the operation lets the caller make it, given
// the bucket's ACL and that of the object it names, when the key holds one.
std::optional<HandlerResult> StorageService::admit(const Operation& op, const json& input) const {
  auto b = input.contains("Bucket") ? buckets_.find(input.value("Bucket", "")) : buckets_.end();
  if (b == buckets_.end() && input.contains("Bucket") && op.name != "CreateBucket")
    return no_such_bucket(input.value("Bucket", ""));
  const access::Acl* object = nullptr;
  if (b != buckets_.end() && input.contains("Object") && input["Object"].is_string()) {  // DeleteObjects' is a list
    auto o = b->second.objects.find(input.value("Object", ""));
    if (o != b->second.objects.end()) object = &o->second.acl;
  }
  return access::check(op.name, ctx_.account, b == buckets_.end() ? nullptr : &b->second.acl, object);
}

HandlerResult StorageService::no_such_bucket(const std::string& bucket) {
  return HandlerResult::failure(404, "NoSuchBucket", "The specified bucket does not exist", {{"BucketName", bucket}});
}

// A new, empty bucket created now, the caller's (PlatformContext::account: outside a
// request, the world's owner, as the fixtures' and seed{}'s are) and private (a bucket
// of that name is kept as it is).
Bucket& StorageService::add_bucket(const std::string& name) {
  auto [b, added] = buckets_.try_emplace(name);
  if (!added) return b->second;
  b->second.created = ctx_.clock.iso8601();
  b->second.acl.owner = ctx_.account;
  changed("bucket", name);
  return b->second;
}

// A bucket, an object (one written to another account's bucket too) or an upload.
bool StorageService::owns(const std::string& id) const {
  for (const auto& [name, b] : buckets_) {
    if (b.acl.owner == id) return true;
    for (const auto& [key, o] : b.objects)
      if (o.acl.owner == id) return true;
  }
  for (const auto& [upload, u] : uploads_)
    if (u.acl.owner == id) return true;
  return false;
}

// A new, empty bucket of the caller's, with the ACL and Object Ownership asked. One
// that exists already is the caller's (409 BucketAlreadyOwnedByYou, but in us-east-1,
// where S3 answers 200 and leaves it as it is) or another's (409 BucketAlreadyExists).
// An ACL that BucketOwnerEnforced disables is InvalidBucketAclWithObjectOwnership.
HandlerResult StorageService::create_bucket(const Operation&, const json& input) {
  std::string bucket = input.value("Bucket", "");
  auto existing = buckets_.find(bucket);
  if (existing != buckets_.end() && existing->second.acl.owner != ctx_.account)
    return HandlerResult::failure(
        409, "BucketAlreadyExists",
        "The requested bucket name is not available. The bucket namespace is shared by all users of the system. "
        "Please select a different name and try again.",
        {{"BucketName", bucket}});
  if (existing != buckets_.end() && ctx_.region == "us-east-1")
    return HandlerResult::success({{"Location", "/" + bucket}});
  if (existing != buckets_.end())
    return HandlerResult::failure(409, "BucketAlreadyOwnedByYou",
                                  "Your previous request to create the named bucket succeeded and you already own it.",
                                  {{"BucketName", bucket}});
  access::Acl acl{ctx_.account, nullptr};
  std::string ownership = input.value("ObjectOwnership", access::kDefaultOwnership);
  if (std::optional<HandlerResult> refused =
          access::take_acl(input, acl, ctx_.account, ownership, ctx_.accounts, false))
    return refused->error.code != "AccessControlListNotSupported"
               ? *refused
               : HandlerResult::failure(
                     400, "InvalidBucketAclWithObjectOwnership",
                     "Bucket cannot have ACLs set with ObjectOwnership's BucketOwnerEnforced setting");
  Bucket& b = add_bucket(bucket);
  b.acl = std::move(acl), b.ownership = ownership;
  return HandlerResult::success({{"Location", "/" + bucket}});
}

// The ACL of an object the caller writes to the call's bucket (PutObject, CopyObject,
// CreateMultipartUpload): its owner as the bucket's Object Ownership says, its grants
// as the call asks; a refusal when they cannot be.
std::optional<HandlerResult> StorageService::new_object_acl(const json& input, access::Acl& acl) const {
  const Bucket& b = buckets_.at(input.value("Bucket", ""));
  acl = {access::object_owner(ctx_.account, input, b.acl.owner, b.ownership), nullptr};
  return access::take_acl(input, acl, b.acl.owner, b.ownership, ctx_.accounts, false);
}

// The object in one request; its ETag is the quoted MD5 of its bytes; its checksum,
// when given, is checked, kept and echoed.
HandlerResult StorageService::put_object(const Operation&, const json& input, RequestBody* sent) {
  if (std::optional<HandlerResult> refused = write_condition(input)) return *refused;
  access::Acl acl;
  if (std::optional<HandlerResult> refused = new_object_acl(input, acl)) return *refused;
  RequestBody body = payload_of(input, "Body", sent);
  json given = json::object();
  if (std::optional<HandlerResult> refused = check_checksum(input, body, given)) return *refused;
  std::string etag = quoted_md5(body.md5);
  StoredObject& o =
      store(input.value("Bucket", ""), input.value("Object", ""), std::move(body.bytes), etag, std::move(acl), given);
  o.headers = content_headers(input);
  json r = write_headers(o);
  r.update(given);
  return HandlerResult::success(r);
}

// The call's payload (`member` of its arguments) with its raw MD5: the body the
// server kept out of the arguments (`sent`), taken over as it is, or else the
// argument (a call made without a server, from a test).
RequestBody StorageService::payload_of(const json& input, const char* member, RequestBody* sent) {
  RequestBody body;
  if (sent && sent->bytes) body = std::move(*sent);
  else body.bytes = memory_blob(input.value(member, ""));
  if (body.md5.empty()) body.md5 = md5(*body.bytes->in_memory());
  return body;
}

// Replaces whatever the key held, with a fresh version id and modification time.
StoredObject& StorageService::store(const std::string& bucket, const std::string& key, SharedBytes bytes,
                                    std::string etag, access::Acl acl, json checksum) {
  object_changed(bucket, key);
  StoredObject& o = buckets_[bucket].objects[key];
  o = {std::move(bytes),
       std::move(etag),
       http_date(ctx_.clock.iso8601()),
       ctx_.next_id("v"),
       std::move(checksum),
       "",
       json::object(),
       {},
       std::move(acl)};
  return o;
}

// The header members of an answer that stored an object.
json StorageService::write_headers(const StoredObject& o) {
  json r = json::object();  // set one by one: an initializer list copies each pair twice
  r["ETag"] = o.etag;
  r["VersionId"] = o.version_id;
  r["ServerSideEncryption"] = "AES256";
  return r;
}

// GetObject and HeadObject: the same headers, the bytes only for the operation whose
// result is the object (GetObject); HeadObject says their length instead
// (GetObject's Content-Length is that of its body).
HandlerResult StorageService::read_object(const Operation& op, const json& input) {
  bool with_body = !op.output_payload.empty();
  std::string key = input.value("Object", "");
  const Objects& b = buckets_.at(input.value("Bucket", "")).objects;
  auto found = b.find(key);
  if (found == b.end()) return no_such_key(key);
  const StoredObject& o = found->second;
  bool part = input.contains("PartNumber");
  if (part && input.contains("Range"))
    return HandlerResult::failure(400, "InvalidRequest",
                                  "Cannot specify both Range header and partNumber query parameter.");
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
HandlerResult StorageService::answer_part(const StoredObject& o, long long number, json r, bool with_body) {
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

// Which of the four conditions on an object fails, in RFC 9110's order, as S3 checks
// them: If-Match that does not name its ETag, or (If-Match absent) a change after
// If-Unmodified-Since; then If-None-Match that names it, or (If-None-Match absent) no
// change after If-Modified-Since. Members are `prefix` + IfMatch and the like
// (GetObject's, or CopyObject's CopySourceIfMatch ones).
ConditionFailed StorageService::failed_condition(const StoredObject& o, const json& input, const std::string& prefix) {
  std::optional<std::time_t> modified = http_time(o.last_modified);
  auto since = [&](const char* member) { return http_time(input.value(prefix + member, "")); };
  if (input.contains(prefix + "IfMatch")) {
    if (!etag_listed(input.value(prefix + "IfMatch", ""), o.etag)) return ConditionFailed::match;
  } else if (auto t = since("IfUnmodifiedSince"); t && modified && *modified > *t) {
    return ConditionFailed::unmodified_since;
  }
  if (input.contains(prefix + "IfNoneMatch")) {
    if (etag_listed(input.value(prefix + "IfNoneMatch", ""), o.etag)) return ConditionFailed::none_match;
  } else if (auto t = since("IfModifiedSince"); t && modified && *modified <= *t) {
    return ConditionFailed::modified_since;
  }
  return ConditionFailed::none;
}

// GetObject's and HeadObject's conditions (failed_condition): 412 for If-Match or
// If-Unmodified-Since, 304 with the ETag and time for If-None-Match or
// If-Modified-Since. So If-Match true and If-Unmodified-Since false answer 200;
// If-None-Match false and If-Modified-Since true answer 304.
std::optional<HandlerResult> StorageService::read_condition(const StoredObject& o, const json& input) {
  switch (failed_condition(o, input, "")) {
    case ConditionFailed::none: return std::nullopt;
    case ConditionFailed::match: return precondition_failed("If-Match");
    case ConditionFailed::unmodified_since: return precondition_failed("If-Unmodified-Since");
    case ConditionFailed::none_match:
    case ConditionFailed::modified_since: break;
  }
  json r = json::object();
  r["ETag"] = o.etag;
  r["LastModified"] = o.last_modified;
  return HandlerResult::success(r, 304);
}

// CopyObject's and UploadPartCopy's conditions on the source (x-amz-copy-source-if-*,
// failed_condition): any that fails is 412, as S3 answers it, naming the header.
std::optional<HandlerResult> StorageService::copy_condition(const StoredObject& source, const json& input) {
  switch (failed_condition(source, input, "CopySource")) {
    case ConditionFailed::none: return std::nullopt;
    case ConditionFailed::match: return precondition_failed("x-amz-copy-source-If-Match");
    case ConditionFailed::unmodified_since: return precondition_failed("x-amz-copy-source-If-Unmodified-Since");
    case ConditionFailed::none_match: return precondition_failed("x-amz-copy-source-If-None-Match");
    case ConditionFailed::modified_since: return precondition_failed("x-amz-copy-source-If-Modified-Since");
  }
  return std::nullopt;
}

// A conditional write's conditions (PutObject, CompleteMultipartUpload), as S3's:
// If-None-Match `*` holds when the key holds no object, If-Match when it holds one of
// that ETag (none: NoSuchKey); else 412 PreconditionFailed.
std::optional<HandlerResult> StorageService::write_condition(const json& input) {
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
HandlerResult StorageService::no_such_key(const std::string& key) {
  return HandlerResult::failure(404, "NoSuchKey", "The specified key does not exist.", {{"Key", key}});
}

// An object's ACL: its owner and the grants on it (admit() found it readable, when
// the key holds one).
HandlerResult StorageService::get_object_acl(const Operation&, const json& input) {
  std::string key = input.value("Object", "");
  const Objects& objects = buckets_.at(input.value("Bucket", "")).objects;
  auto found = objects.find(key);
  if (found == objects.end()) return no_such_key(key);
  return HandlerResult::success(access::policy_of(found->second.acl));
}

// Sets an object's ACL: a canned ACL, Grant* headers, or the grants in full
// (access::take_acl); its owner stays.
HandlerResult StorageService::put_object_acl(const Operation&, const json& input) {
  std::string key = input.value("Object", "");
  Bucket& b = buckets_.at(input.value("Bucket", ""));
  auto found = b.objects.find(key);
  if (found == b.objects.end()) return no_such_key(key);
  access::Acl acl = found->second.acl;
  if (std::optional<HandlerResult> refused =
          access::take_acl(input, acl, b.acl.owner, b.ownership, ctx_.accounts, true))
    return *refused;
  found->second.acl = std::move(acl);
  object_changed(input.value("Bucket", ""), key);
  return HandlerResult::success(json::object());
}

// A bucket's ACL: its owner and the grants on it.
HandlerResult StorageService::get_bucket_acl(const Operation&, const json& input) {
  return HandlerResult::success(access::policy_of(buckets_.at(input.value("Bucket", "")).acl));
}

// Sets a bucket's ACL, as put_object_acl sets an object's.
HandlerResult StorageService::put_bucket_acl(const Operation&, const json& input) {
  Bucket& b = buckets_.at(input.value("Bucket", ""));
  access::Acl acl = b.acl;
  if (std::optional<HandlerResult> refused =
          access::take_acl(input, acl, b.acl.owner, b.ownership, ctx_.accounts, true))
    return *refused;
  b.acl = std::move(acl);
  changed("bucket", input.value("Bucket", ""));
  return HandlerResult::success(json::object());
}

// The whole object (200), the range asked (206 with Content-Range), or InvalidRange (416).
HandlerResult StorageService::answer_range(const StoredObject& o, const std::string& range, json r, bool with_body) {
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
HandlerResult StorageService::answer_bytes(const StoredObject& o, std::uint64_t first, std::uint64_t length, json r,
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
HandlerResult StorageService::head_bucket(const Operation&, const json&) {
  return HandlerResult::success({{"BucketRegion", ctx_.region}});
}

// <LocationConstraint>region</LocationConstraint>.
HandlerResult StorageService::get_bucket_location(const Operation&, const json&) {
  return HandlerResult::success({{"LocationConstraint", ctx_.region}});
}

// The caller's buckets by name, with their creation times.
HandlerResult StorageService::list_buckets(const Operation&, const json&) {
  json listed = json::array();
  for (const auto& [name, b] : buckets_)
    if (b.acl.owner == ctx_.account) listed.push_back({{"Name", name}, {"CreationDate", b.created}});
  return HandlerResult::success({{"Buckets", listed}, {"Owner", access::owner_of(ctx_.account)}});
}

// Only an empty bucket goes (204); its unfinished uploads go with it.
HandlerResult StorageService::delete_bucket(const Operation&, const json& input) {
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
HandlerResult StorageService::delete_object(const Operation&, const json& input) {
  buckets_.at(input.value("Bucket", "")).objects.erase(input.value("Object", ""));
  object_changed(input.value("Bucket", ""), input.value("Object", ""));
  return HandlerResult::success(json::object(), 204);
}

// Each key listed is deleted (a missing one counts as deleted too); Quiet leaves
// the deleted out of the answer. Nothing here can fail one key alone.
HandlerResult StorageService::delete_objects(const Operation&, const json& input) {
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

StorageService::Source StorageService::copy_source(const json& input) {
  std::string source = input.value("CopySource", "");
  source = source.substr(source.front() == '/' ? 1 : 0);
  source = source.substr(0, source.find('?'));
  size_t slash = source.find('/');
  if (slash == std::string::npos || slash == 0 || slash + 1 == source.size())
    return {nullptr, "", "",
            HandlerResult::failure(
                400, "InvalidArgument", "Copy Source must mention the source bucket and key: sourcebucket/sourcekey",
                {{"ArgumentName", "x-amz-copy-source"}, {"ArgumentValue", input.value("CopySource", "")}})};
  Source s{nullptr, uri_decode(source.substr(0, slash)), uri_decode(source.substr(slash + 1)), std::nullopt};
  auto b = buckets_.find(s.bucket);
  if (b == buckets_.end()) return s.failure = no_such_bucket(s.bucket), s;
  const access::Acl* acl = nullptr;
  auto found = b->second.objects.find(s.key);
  if (found != b->second.objects.end()) acl = &found->second.acl;
  s.failure = access::check("GetObject", ctx_.account, &b->second.acl, acl);  // READ on the source
  if (!s.failure && !acl) s.failure = no_such_key(s.key);
  if (!s.failure) s.object = &found->second;
  return s;
}

// The source stored again under Bucket and Object, ETag kept; a source larger than
// the setting max_copy_size (the model's 5 GiB) is refused, as S3 refuses it: such an
// object is copied in parts (UploadPartCopy).
HandlerResult StorageService::copy_object(const Operation&, const json& input) {
  Source source = copy_source(input);
  if (source.failure) return *source.failure;
  if (std::optional<HandlerResult> refused = copy_condition(*source.object, input)) return *refused;
  const std::string &from_bucket = source.bucket, &from_key = source.key;
  std::string to_bucket = input.value("Bucket", ""), to_key = input.value("Object", "");
  auto most = static_cast<unsigned long long>(ctx_.setting("max_copy_size"));
  if (source.object->bytes->size() > most)
    return HandlerResult::failure(400, "InvalidRequest",
                                  "The specified copy source is larger than the maximum allowable size for a copy "
                                  "source: " +
                                      std::to_string(most));
  if (from_bucket == to_bucket && from_key == to_key && input.value("MetadataDirective", "COPY") != "REPLACE")
    return HandlerResult::failure(
        400, "InvalidRequest",
        "This copy request is illegal because it is trying to copy an object to itself without "
        "changing the object's metadata, storage class, website redirect location or "
        "encryption attributes.");
  access::Acl acl;
  if (std::optional<HandlerResult> refused = new_object_acl(input, acl)) return *refused;
  StoredObject from = *source.object;  // a copy: the store below may replace it
  StoredObject& copy = store(to_bucket, to_key, from.bytes, from.etag, std::move(acl));
  copy.headers = input.value("MetadataDirective", "COPY") == "REPLACE" ? content_headers(input) : from.headers;
  json r = write_headers(copy);
  r.update({{"ETag", from.etag},
            {"LastModified", iso_date(buckets_[to_bucket].objects[to_key].last_modified)},
            {"CopySourceVersionId", from.version_id}});
  return HandlerResult::success(r);
}

// The page of a bucket's objects `ask` describes, in key order.
StorageService::ObjectPage StorageService::object_page(const Objects& objects, const ListAsk& ask) {
  ObjectPage page;
  auto it = objects.lower_bound(std::max(ask.prefix, ask.after));
  if (it != objects.end() && it->first == ask.after) ++it;  // after, not at
  for (; it != objects.end() && it->first.compare(0, ask.prefix.size(), ask.prefix) == 0; ++it)
    if (!page.add(ask, it->first, &*it)) break;
  return page;
}

// What ListObjects and ListObjectsV2 ask in common; `after` is the caller's.
ListAsk StorageService::list_ask(const json& input, const char* max_name, std::string after) {
  long long max = std::min(input.value(max_name, 1000LL), 1000LL);
  return {input.value("Prefix", ""), input.value("Delimiter", ""), std::move(after), max};
}

// The members ListObjects and ListObjectsV2 answer alike: the page's objects and
// common prefixes, the bucket, and what was asked.
json StorageService::listing(const json& input, const ListAsk& ask, const ObjectPage& page, bool with_owner) {
  json contents = json::array(), prefixes = json::array();
  for (const auto* item : page.items) {
    const StoredObject& o = item->second;
    json entry = {{"Key", encoded(input, item->first)},
                  {"LastModified", iso_date(o.last_modified)},
                  {"ETag", o.etag},
                  {"Size", o.bytes->size()},
                  {"StorageClass", "STANDARD"}};
    if (with_owner) entry["Owner"] = access::owner_of(o.acl.owner);
    contents.push_back(std::move(entry));
  }
  for (const std::string& p : page.prefixes) prefixes.push_back({{"Prefix", encoded(input, p)}});
  json r = {{"Name", input.value("Bucket", "")},
            {"Prefix", encoded(input, ask.prefix)},
            {"MaxKeys", ask.max},
            {"IsTruncated", page.truncated}};
  r["Contents"] = std::move(contents);  // moved, not copied: a page is a thousand objects
  r["CommonPrefixes"] = std::move(prefixes);
  if (!ask.delimiter.empty()) r["Delimiter"] = encoded(input, ask.delimiter);
  if (input.contains("EncodingType")) r["EncodingType"] = input["EncodingType"];
  return r;
}

// Version 2: ContinuationToken (else StartAfter; an empty token is none) says where the page starts;
// NextContinuationToken where the next one does.
HandlerResult StorageService::list_objects_v2(const Operation&, const json& input) {
  std::string after = input.value("StartAfter", "");
  if (!input.value("ContinuationToken", "").empty()) {  // an empty one is none, as S3 takes it
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
HandlerResult StorageService::list_objects(const Operation&, const json& input) {
  const Objects& objects = buckets_.at(input.value("Bucket", "")).objects;
  ListAsk ask = list_ask(input, "MaxKeys", input.value("Marker", ""));
  ObjectPage page = object_page(objects, ask);
  json r = listing(input, ask, page, true);
  r["Marker"] = encoded(input, ask.after);
  if (page.truncated && !ask.delimiter.empty()) r["NextMarker"] = encoded(input, page.last_key);
  return HandlerResult::success(r);
}

}  // namespace storage

std::unique_ptr<Service> make_storage_service(PlatformContext& context) {
  return std::make_unique<storage::StorageService>(context);
}

}  // namespace cloud
