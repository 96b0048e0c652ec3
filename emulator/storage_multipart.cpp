// The storage service's multipart uploads: created, their parts uploaded (or copied),
// listed, aborted and completed into an object (the decisions: storage.cpp).
#include "emulator/storage_service.h"

namespace cloud {
namespace storage {

namespace {

// The algorithm a ChecksumAlgorithm member names (validated by the model: S3's names).
std::optional<ChecksumAlgorithm> algorithm_of(const json& input) {
  return input.contains("ChecksumAlgorithm") ? find_checksum_algorithm(input.value("ChecksumAlgorithm", ""))
                                             : std::nullopt;
}

// InvalidRequest: a checksum of another algorithm than the upload's, in S3's words.
HandlerResult type_mismatch(ChecksumAlgorithm expected, ChecksumAlgorithm actual) {
  return HandlerResult::failure(
      400, "InvalidRequest",
      "Checksum Type mismatch occurred, expected checksum Type: " + std::string(checksum_name(expected)) +
          ", actual checksum Type: " + std::string(checksum_name(actual)));
}

// Whether a composite checksum's suffix (after its -) is a number of parts: 1 to 5 digits.
bool parts_suffix(std::string_view suffix) {
  return !suffix.empty() && suffix.size() <= 5 && suffix.find_first_not_of("0123456789") == std::string_view::npos;
}

// A part's checksum of the upload's algorithm (nothing without one): the one the request
// gave, or computed from the bytes. A request that gave another algorithm's is refused
// as S3 refuses it (InvalidRequest).
std::optional<HandlerResult> part_checksum(const Upload& u, const Blob& bytes, json& given) {
  if (!u.algorithm) return std::nullopt;
  std::string member = checksum_member(*u.algorithm);
  for (const auto& [other, value] : given.items())
    if (other != member) return type_mismatch(*u.algorithm, *find_checksum_algorithm(other.substr(8)));
  if (!given.contains(member)) given[member] = base64(checksum_of(*u.algorithm, bytes));
  return std::nullopt;
}

}  // namespace

// The bucket's uploads by key, then by when they began (to the second; then by id).
std::vector<std::pair<std::string, const Upload*>> StorageService::uploads_in(const std::string& bucket) const {
  std::vector<std::pair<std::string, const Upload*>> out;
  for (const auto& [id, u] : uploads_)
    if (u.bucket == bucket) out.emplace_back(id, &u);
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    return std::tie(a.second->key, a.second->initiated, a.first) <
           std::tie(b.second->key, b.second->initiated, b.first);
  });
  return out;
}

// Where a page of uploads starts: after KeyMarker's uploads, or with UploadIdMarker
// after that upload of KeyMarker's key.
size_t StorageService::first_upload(const std::vector<std::pair<std::string, const Upload*>>& uploads,
                                    const json& input) {
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
HandlerResult StorageService::list_multipart_uploads(const Operation&, const json& input) {
  auto uploads = uploads_in(input.value("Bucket", ""));
  ListAsk ask = list_ask(input, "MaxUploads", input.value("KeyMarker", ""));
  Page<std::pair<std::string, const Upload*>> page;
  for (size_t i = first_upload(uploads, input); i < uploads.size(); ++i)
    if (uploads[i].second->key.compare(0, ask.prefix.size(), ask.prefix) == 0 &&
        !page.add(ask, uploads[i].second->key, uploads[i]))
      break;
  json listed = json::array(), prefixes = json::array();
  for (const auto& [id, u] : page.items)
    listed.push_back({{"UploadId", id},
                      {"Key", encoded(input, u->key)},
                      {"Initiated", u->initiated},
                      {"StorageClass", "STANDARD"},
                      {"Owner", access::owner_of(u->acl.owner)},
                      {"Initiator", access::owner_of(u->acl.owner)}});
  for (const std::string& p : page.prefixes) prefixes.push_back({{"Prefix", encoded(input, p)}});
  json r = {{"Bucket", input.value("Bucket", "")},
            {"KeyMarker", encoded(input, ask.after)},
            {"UploadIdMarker", input.value("UploadIdMarker", "")},
            {"Prefix", encoded(input, ask.prefix)},
            {"MaxUploads", ask.max},
            {"IsTruncated", page.truncated},
            {"Upload", listed},
            {"CommonPrefixes", prefixes}};
  if (!ask.delimiter.empty()) r["Delimiter"] = encoded(input, ask.delimiter);
  if (input.contains("EncodingType")) r["EncodingType"] = input["EncodingType"];
  if (page.truncated) {
    bool last_is_upload = !page.items.empty() && page.items.back().second->key == page.last_key;
    r["NextKeyMarker"] = encoded(input, page.last_key);
    r["NextUploadIdMarker"] = last_is_upload ? page.items.back().first : "";
  }
  return HandlerResult::success(r);
}

// A new upload with no parts; the object appears only on completion, with the ACL
// asked now (refused now when it cannot be, as S3 refuses it).
HandlerResult StorageService::create_multipart_upload(const Operation&, const json& input) {
  std::string bucket = input.value("Bucket", ""), key = input.value("Object", "");
  access::Acl acl;
  if (std::optional<HandlerResult> refused = new_object_acl(input, acl)) return *refused;
  std::string id = hex(md5(bucket + "/" + key + "/" + ctx_.next_id("upload-")));
  uploads_[id] =
      Upload{bucket, key, {}, ctx_.clock.iso8601(), algorithm_of(input), content_headers(input), std::move(acl)};
  changed("upload", id);
  json r = {{"Bucket", bucket}, {"Key", key}, {"UploadId", id}};
  if (input.contains("ChecksumAlgorithm")) r["ChecksumAlgorithm"] = input["ChecksumAlgorithm"];
  return HandlerResult::success(r);
}

// The upload the input's uploadId names, if it belongs to the input's bucket and key.
Upload* StorageService::find_upload(const json& input) {
  auto it = uploads_.find(input.value("uploadId", ""));
  if (it == uploads_.end()) return nullptr;
  Upload& u = it->second;
  return u.bucket == input.value("Bucket", "") && u.key == input.value("Object", "") ? &u : nullptr;
}

// NoSuchUpload names the upload id asked for.
HandlerResult StorageService::no_such_upload(const json& input) {
  return HandlerResult::failure(404, "NoSuchUpload",
                                "The specified upload does not exist. The upload ID may be invalid, or the upload "
                                "may have been aborted or completed.",
                                {{"UploadId", input.value("uploadId", "")}});
}

// A part number uploaded again replaces the earlier bytes; its checksum, when given,
// is checked and echoed.
HandlerResult StorageService::upload_part(const Operation&, const json& input, RequestBody* sent) {
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
HandlerResult StorageService::upload_part_copy(const Operation&, const json& input) {
  Upload* u = find_upload(input);
  if (!u) return no_such_upload(input);
  Source source = copy_source(input);
  if (source.failure) return *source.failure;
  if (std::optional<HandlerResult> refused = copy_condition(*source.object, input)) return *refused;
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
  return HandlerResult::success(
      {{"ETag", quoted_md5(digest)}, {"LastModified", now}, {"CopySourceVersionId", source.object->version_id}});
}

// One page of the upload's parts: those numbered above PartNumberMarker, at most
// MaxParts (1000 unless asked); IsTruncated when more follow, NextPartNumberMarker
// the last one listed (the marker itself when the page is empty).
HandlerResult StorageService::list_parts(const Operation&, const json& input) {
  const Upload* u = find_upload(input);
  if (!u) return no_such_upload(input);
  long long marker = input.value("PartNumberMarker", 0LL), most = input.value("MaxParts", 1000LL), next = marker;
  json listed = json::array();
  auto it = u->parts.upper_bound(marker);
  for (; it != u->parts.end() && static_cast<long long>(listed.size()) < most; ++it) {
    listed.push_back(listed_part(it->first, it->second));
    next = it->first;
  }
  return HandlerResult::success({{"Bucket", u->bucket},
                                 {"Key", u->key},
                                 {"UploadId", input.value("uploadId", "")},
                                 {"PartNumberMarker", marker},
                                 {"NextPartNumberMarker", next},
                                 {"MaxParts", most},
                                 {"IsTruncated", it != u->parts.end()},
                                 {"Part", listed},
                                 {"StorageClass", "STANDARD"}});
}

// A Part element of ListParts' answer.
json StorageService::listed_part(long long number, const Part& p) {
  return {{"PartNumber", number},
          {"LastModified", p.last_modified},
          {"ETag", quoted_md5(p.md5)},
          {"Size", p.bytes->size()}};
}

// The upload and its parts are dropped; answered 204 with no body, as S3 does.
HandlerResult StorageService::abort_multipart_upload(const Operation&, const json& input) {
  if (!find_upload(input)) return no_such_upload(input);
  upload_gone(input.value("uploadId", ""));
  uploads_.erase(input.value("uploadId", ""));
  return HandlerResult::success(json::object(), 204);
}

// Checks the listed parts in S3's order, then joins them into the object. An upload
// completed again answers as the first time while its object stands (S3 does, as
// ceph's s3-tests and versitygw check: a client's retry of a completion that did
// arrive must not fail).
HandlerResult StorageService::complete_multipart_upload(const Operation&, const json& input) {
  Upload* u = find_upload(input);
  if (!u) return completed_again(input);
  const json& listed = input.at("Part");  // validated: at least one part (the model)
  if (std::optional<HandlerResult> refused = check_parts(input, *u, listed)) return *refused;
  if (std::optional<HandlerResult> refused = check_object_checksum(input, *u, listed)) return *refused;
  if (std::optional<HandlerResult> refused = write_condition(input)) return *refused;
  return finish_upload(input, *u, listed);
}

// The answer to completing an upload whose object is still the one it made; else
// NoSuchUpload (never created, aborted, or its object since replaced or deleted).
HandlerResult StorageService::completed_again(const json& input) {
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
long long StorageService::part_number(const json& listed_part) { return listed_part.value("PartNumber", 0LL); }

// The first reason the listed parts cannot make the object, if any.
std::optional<HandlerResult> StorageService::check_parts(const json& input, const Upload& u, const json& listed) const {
  for (size_t i = 1; i < listed.size(); ++i)
    if (part_number(listed[i]) <= part_number(listed[i - 1]))
      return HandlerResult::failure(
          400, "InvalidPartOrder",
          "The list of parts was not in ascending order. Parts must be ordered by part number.",
          {{"UploadId", input.value("uploadId", "")}});
  for (const json& p : listed)
    if (std::optional<HandlerResult> refused = check_listed_part(input, u, p)) return refused;
  return check_part_sizes(input, u, listed);
}

// InvalidPart: never uploaded, or the ETag or a checksum given is not the part's;
// InvalidRequest: the upload's algorithm's checksum is not given.
std::optional<HandlerResult> StorageService::check_listed_part(const json& input, const Upload& u, const json& p) {
  auto it = u.parts.find(part_number(p));
  std::string etag = p.value("ETag", "");
  if (it != u.parts.end() && unquoted(etag) == hex(it->second.md5) && same_checksums(p, it->second)) {
    if (!u.algorithm || p.contains(checksum_member(*u.algorithm))) return std::nullopt;
    return HandlerResult::failure(400, "InvalidRequest",
                                  "The upload was created using a " + std::string(checksum_name(*u.algorithm)) +
                                      " checksum. The complete request must include the checksum for each part. "
                                      "It was missing for part " +
                                      std::to_string(part_number(p)) + " in the request.");
  }
  return HandlerResult::failure(
      400, "InvalidPart",
      "One or more of the specified parts could not be found. The part may not have been "
      "uploaded, or the specified entity tag may not match the part's entity tag.",
      {{"UploadId", input.value("uploadId", "")}, {"PartNumber", part_number(p)}, {"ETag", etag}});
}

// Whether every checksum the listed part gives is the one its part was kept with.
bool StorageService::same_checksums(const json& listed, const Part& part) {
  for (ChecksumAlgorithm a : kChecksumAlgorithms) {
    std::string member = checksum_member(a);
    if (listed.contains(member) && part.checksum.value(member, "") != listed.at(member).get<std::string>())
      return false;
  }
  return true;
}

// The whole-object checksum a completion gives (x-amz-checksum-<alg>), checked as S3
// checks it: the object's composite checksum (composite_of), with or without its
// -<parts>; or for the CRCs, which S3 also keeps whole, the checksum of all the bytes.
// InvalidRequest: two given, another algorithm than the upload's, or not the base64 of
// the algorithm's size; BadDigest: not the object's.
std::optional<HandlerResult> StorageService::check_object_checksum(const json& input, const Upload& u,
                                                                   const json& listed) {
  std::optional<ChecksumAlgorithm> given;
  for (ChecksumAlgorithm a : kChecksumAlgorithms) {
    if (!input.contains(checksum_member(a))) continue;
    if (given)
      return HandlerResult::failure(400, "InvalidRequest",
                                    "Expecting a single checksum header. Multiple checksum Types are not allowed.");
    given = a;
  }
  if (!given) return std::nullopt;
  ChecksumAlgorithm a = *given;
  if (u.algorithm && *u.algorithm != a) return type_mismatch(*u.algorithm, a);
  std::string value = input.value(checksum_member(a), ""), label = checksum_member(a).substr(8);
  size_t dash = value.find('-');  // not a base64 character: the composite's -<parts>
  std::string suffix = dash == std::string::npos ? "" : value.substr(dash + 1);
  std::optional<std::string> raw = unbase64(value.substr(0, dash));
  if (!raw || raw->size() != unbase64(checksum_base64(a, ""))->size() ||
      (dash != std::string::npos && !parts_suffix(suffix)))
    return HandlerResult::failure(400, "InvalidRequest", "Value for the " + label + " checksum header is invalid.");
  bool count_right = suffix.empty() || std::stoul(suffix) == listed.size();
  if (std::optional<std::string> composite = composite_of(a, u, listed); count_right && composite && *composite == *raw)
    return std::nullopt;
  bool crc = a == ChecksumAlgorithm::crc32 || a == ChecksumAlgorithm::crc32c || a == ChecksumAlgorithm::crc64nvme;
  if (crc && dash == std::string::npos && checksum_of(a, *joined_blob(listed_bytes(u, listed))) == *raw)
    return std::nullopt;
  return HandlerResult::failure(400, "BadDigest",
                                "The " + label + " you specified did not match the calculated checksum.");
}

// S3's composite checksum of the listed parts, raw (without -<parts>): the algorithm's
// checksum of their raw checksums joined; nullopt when a part was kept without one.
std::optional<std::string> StorageService::composite_of(ChecksumAlgorithm a, const Upload& u, const json& listed) {
  std::string member = checksum_member(a), joined;
  for (const json& p : listed) {
    const json& kept = u.parts.at(part_number(p)).checksum;
    std::optional<std::string> raw = kept.contains(member) ? unbase64(kept.value(member, "")) : std::nullopt;
    if (!raw) return std::nullopt;
    joined += *raw;
  }
  return *unbase64(checksum_base64(a, joined));
}

// The listed parts' bytes, in order.
std::vector<SharedBytes> StorageService::listed_bytes(const Upload& u, const json& listed) {
  std::vector<SharedBytes> parts;
  for (const json& p : listed) parts.push_back(u.parts.at(part_number(p)).bytes);
  return parts;
}

// EntityTooSmall: a part below the minimum size that is not the last one listed.
std::optional<HandlerResult> StorageService::check_part_sizes(const json& input, const Upload& u,
                                                              const json& listed) const {
  auto minimum = static_cast<unsigned long long>(ctx_.setting("min_part_size"));
  for (size_t i = 0; i + 1 < listed.size(); ++i) {
    const Part& part = u.parts.at(part_number(listed[i]));
    if (part.bytes->size() >= minimum) continue;
    return HandlerResult::failure(400, "EntityTooSmall",
                                  "Your proposed upload is smaller than the minimum allowed object size.",
                                  {{"UploadId", input.value("uploadId", "")},
                                   {"PartNumber", part_number(listed[i])},
                                   {"ETag", quoted_md5(part.md5)},
                                   {"ProposedSize", part.bytes->size()},
                                   {"MinSizeAllowed", minimum}});
  }
  return std::nullopt;
}

// The object is the listed parts joined (their blobs, one after the other: nothing
// copied; a store writes them to the object's file a piece at a time); its ETag is
// S3's multipart form; the upload ends.
HandlerResult StorageService::finish_upload(const json& input, const Upload& u, const json& listed) {
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
  access::Acl acl = u.acl;
  upload_gone(id);
  uploads_.erase(id);
  StoredObject& stored = store(bucket, key, std::move(bytes), etag, std::move(acl), sum);
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
json StorageService::object_checksum(const Upload& u, const json& listed, const Blob& bytes) {
  if (!u.algorithm) return json::object();
  ChecksumAlgorithm a = *u.algorithm;
  std::string member = checksum_member(a);
  if (a == ChecksumAlgorithm::crc64nvme) return {{member, base64(checksum_of(a, bytes))}};
  return {{member, base64(*composite_of(a, u, listed)) + "-" + std::to_string(listed.size())}};
}

// The object's URL: the storage endpoint, then /bucket/key encoded as a path.
std::string StorageService::location_of(const std::string& bucket, const std::string& key) const {
  auto it = ctx_.endpoints.find("storage");
  std::string base = it == ctx_.endpoints.end() ? "" : it->second;
  return base + "/" + uri_encode(bucket) + "/" + uri_encode(key, true);
}

}  // namespace storage
}  // namespace cloud
