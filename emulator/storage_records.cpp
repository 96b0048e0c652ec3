// The storage service's records (service.h: changed_records, restore_records): a
// bucket, an object (in columns, named by bucket and key), an upload, a part; the
// changes noted as they are made, and the view cloud.emulator.state() shows.
#include "emulator/storage_service.h"

#include <stdexcept>

#include "core/model/protocol.h"

namespace cloud {
namespace storage {

namespace {

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

// The JSON document of an object's column (its checksum, its headers), its depth watched
// (the state file is anyone's); throws when it is too deep or not JSON.
// `what` and `key` name it in the error.
json column_json(const std::string& text, const char* what, const std::string& key) {
  if (text == "{}") return json::object();
  bool too_deep = false;
  json doc = parse_json_text(text, too_deep);
  if (too_deep) throw std::runtime_error(too_deep_message(what + (" of " + key)));
  if (doc.is_discarded()) throw std::runtime_error(what + (" of " + key) + " is not JSON");
  return doc;
}

// An ACL as a record keeps it, beside the record's other members: "owner", and
// "grants" unless they are the canned private.
void put_acl(json& record, const access::Acl& acl) {
  record["owner"] = acl.owner;
  if (acl.grants.is_array()) record["grants"] = acl.grants;
}

// The ACL a record keeps; one saved before owners were kept is `owner`'s (the world's
// first account), private.
access::Acl acl_of(const json& record, const std::string& owner) {
  return {record.value("owner", owner), record.value("grants", json())};
}

}  // namespace

json StorageService::state() const { return {{"buckets", buckets_state()}, {"uploads", uploads_state()}}; }

// A part's record, its bytes named by its id.
json StorageService::part_json(const Part& p) {
  return {{"id", p.id}, {"last_modified", p.last_modified}, {"checksum", p.checksum}, {"md5", hex(p.md5)}};
}

// An upload's record, without its parts (records of their own).
json StorageService::upload_json(const Upload& u) {
  json r = {{"bucket", u.bucket}, {"key", u.key}, {"initiated", u.initiated}};
  if (u.algorithm) r["algorithm"] = checksum_name(*u.algorithm);
  if (!u.headers.empty()) r["headers"] = u.headers;
  put_acl(r, u.acl);
  return r;
}

// The upload `id` as its record says, without its parts (a record without a time of
// initiation, imported from an older state, is dated now).
Upload& StorageService::restored_upload(const std::string& id, const json& u) {
  Upload& upload = uploads_[id];
  upload.bucket = u.at("bucket").get<std::string>(), upload.key = u.at("key").get<std::string>();
  upload.initiated = u.value("initiated", ctx_.clock.iso8601());
  if (u.contains("algorithm")) upload.algorithm = find_checksum_algorithm(u.at("algorithm").get<std::string>());
  upload.headers = u.value("headers", json::object());
  upload.acl = acl_of(u, ctx_.owner);
  return upload;
}

// Records: a bucket ("bucket", name: { created }), an object ("object", named by its
// bucket and key, in columns: ObjectRow), an upload without its parts ("upload", id),
// a part ("part", the JSON array [upload id, number]). Each change notes the records
// it touched (changed(), object_changed()).
StateRecords StorageService::changed_records(ByteStore& bytes, bool all) {
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
void StorageService::restore_records(RecordsByKind& records, ObjectRows& objects, const ByteStore& bytes) {
  reset();
  for (auto& [name, b] : records["bucket"]) {
    Bucket& bucket = buckets_[name];
    bucket.created = b.at("created").get<std::string>();
    bucket.acl = acl_of(b, ctx_.owner);
    bucket.ownership = b.value("ownership", access::kDefaultOwnership);
  }
  std::map<std::string, Bucket>::iterator in = buckets_.end();  // the bucket appended to
  for (ObjectRow& row : objects) {
    if (in == buckets_.end() || row.bucket != in->first) {
      bool added;
      std::tie(in, added) = buckets_.try_emplace(row.bucket);
      if (added) in->second.created = ctx_.clock.iso8601(), in->second.acl.owner = ctx_.owner;
    }
    SharedBytes kept =
        row.size >= 0 ? bytes.get(row.version_id, static_cast<std::uint64_t>(row.size)) : bytes.get(row.version_id);
    json sum = column_json(row.checksum, "the checksum", row.key);
    json headers = column_json(row.headers, "the headers", row.key);
    std::vector<std::uint64_t> part_sizes = headers.value(kPartSizesMember, std::vector<std::uint64_t>{});
    headers.erase(kPartSizesMember);
    access::Acl acl{row.owner.empty() ? ctx_.owner : std::move(row.owner),
                    row.grants.empty() ? json() : column_json(row.grants, "the grants", row.key)};
    Objects& into = in->second.objects;
    into.emplace_hint(into.end(), std::move(row.key),
                      StoredObject{std::move(kept), std::move(row.etag), std::move(row.last_modified),
                                   std::move(row.version_id), std::move(sum), std::move(row.upload_id),
                                   std::move(headers), std::move(part_sizes), std::move(acl)});
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
Part StorageService::restored_part(const json& saved, const ByteStore& bytes) const {
  std::string id = saved.is_string() ? saved.get<std::string>() : saved.at("id").get<std::string>();
  std::string time = saved.is_string() ? ctx_.clock.iso8601() : saved.at("last_modified").get<std::string>();
  json sum = saved.is_string() ? json::object() : saved.value("checksum", json::object());
  SharedBytes part_bytes = bytes.get(id);
  std::optional<std::string> digest = saved.is_object() ? unhex(saved.value("md5", "")) : std::nullopt;
  if (!digest || digest->size() != 16) digest = md5_of(*part_bytes);
  return Part{std::move(part_bytes), *digest, id, time, std::move(sum)};
}

// The raw MD5 of `bytes`, read a piece at a time.
std::string StorageService::md5_of(const Blob& bytes) {
  DigestStream digest(Digest::md5);
  bytes.each_piece([&](const char* data, size_t size) { return digest.update({data, size}), true; });
  return digest.digest();
}

// { { name=, objects = { { key=, size=, etag= } } } }: sizes, not the bytes.
json StorageService::buckets_state() const {
  json out = json::array();
  for (const auto& [name, b] : buckets_) {
    json list = json::array();
    for (const auto& [key, o] : b.objects) list.push_back({{"key", key}, {"size", o.bytes->size()}, {"etag", o.etag}});
    out.push_back({{"name", name}, {"objects", list}});
  }
  return out;
}

// { { bucket=, key=, uploadId=, parts = { { partNumber=, size=, etag= } } } }.
json StorageService::uploads_state() const {
  json out = json::array();
  for (const auto& [id, u] : uploads_) {
    json parts = json::array();
    for (const auto& [number, p] : u.parts)
      parts.push_back({{"partNumber", number}, {"size", p.bytes->size()}, {"etag", quoted_md5(p.md5)}});
    out.push_back({{"bucket", u.bucket}, {"key", u.key}, {"uploadId", id}, {"parts", parts}});
  }
  return out;
}

// Notes that record (kind, key) changed: saved with the change (changed_records()).
void StorageService::changed(const char* kind, const std::string& key) {
  if (ctx_.note_records) changed_.insert({kind, key});
}

void StorageService::object_changed(const std::string& bucket, const std::string& key) {
  if (ctx_.note_records) changed_objects_.insert({bucket, key});
}

// The record of (kind, key) as it is now: null when it is gone.
StateRecord StorageService::record_of(const std::string& kind, const std::string& key, ByteStore& bytes) {
  if (kind == "bucket") return buckets_.count(key) ? bucket_record(key) : StateRecord{kind, key, nullptr};
  if (kind == "upload") return uploads_.count(key) ? upload_record(key) : StateRecord{kind, key, nullptr};
  json where = json::parse(key);  // a part's: [upload id, number]
  auto u = uploads_.find(where.at(0).get<std::string>());
  long long number = where.at(1).get<long long>();
  if (u == uploads_.end() || !u->second.parts.count(number)) return {kind, key, nullptr};
  return part_record(u->first, number, bytes);
}

// The record of the object `key` in `bucket` as it is now: without a row when it is gone.
StateRecord StorageService::object_record_of(const std::string& bucket, const std::string& key, ByteStore& bytes) {
  auto b = buckets_.find(bucket);
  if (b == buckets_.end() || !b->second.objects.count(key)) return {"object", key, nullptr, std::nullopt, bucket};
  return object_record(bucket, key, bytes);
}

StateRecord StorageService::bucket_record(const std::string& name) const {
  const Bucket& b = buckets_.at(name);
  json record = {{"created", b.created}, {"ownership", b.ownership}};
  put_acl(record, b.acl);
  return {"bucket", name, std::move(record)};
}

// An object's record, in columns; its bytes to `bytes`, and from then on read from
// there (their memory let go).
StateRecord StorageService::object_record(const std::string& bucket, const std::string& key, ByteStore& bytes) {
  StoredObject& o = buckets_.at(bucket).objects.at(key);
  o.bytes = bytes.put(o.version_id, o.bytes);
  json headers = o.headers;
  if (!o.part_sizes.empty()) headers[kPartSizesMember] = o.part_sizes;
  ObjectRow row{bucket,
                key,
                o.etag,
                o.last_modified,
                o.version_id,
                o.checksum.dump(),
                o.upload_id,
                static_cast<std::int64_t>(o.bytes->size()),
                headers.dump(),
                o.acl.owner,
                o.acl.grants.is_array() ? o.acl.grants.dump() : ""};
  return {"object", key, nullptr, std::move(row), bucket};
}

StateRecord StorageService::upload_record(const std::string& id) const {
  return {"upload", id, upload_json(uploads_.at(id))};
}

// A part's record; its bytes to `bytes`, and from then on read
// from there.
StateRecord StorageService::part_record(const std::string& id, long long number, ByteStore& bytes) {
  Part& p = uploads_.at(id).parts.at(number);
  p.bytes = bytes.put(p.id, p.bytes);
  return {"part", json::array({id, number}).dump(), part_json(p)};
}

void StorageService::part_changed(const std::string& id, long long number) {
  if (ctx_.note_records) changed("part", json::array({id, number}).dump());
}

// Notes that upload `id` and its parts go: called before it is erased.
void StorageService::upload_gone(const std::string& id) {
  if (!ctx_.note_records) return;
  changed("upload", id);
  auto u = uploads_.find(id);
  if (u != uploads_.end())
    for (const auto& [number, p] : u->second.parts) part_changed(id, number);
}

}  // namespace storage
}  // namespace cloud
