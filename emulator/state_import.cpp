// The JSON state file's import (state_import.h): the document is taken apart into the
// records the services keep (RecordStore::Saved) and restored from them, as a state
// database's records are at start. The document: { format, saved_at, clock, region,
// counter, settings, services = { <api> = its part }, byte_files = { name = file } };
// the storage service's part holds buckets (objects by key), bucket_created and
// uploads (parts by number), every other service's part is its one record.
#include "emulator/state_import.h"

#include <fcntl.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <map>
#include <set>
#include <stdexcept>

#include "core/base/dates.h"
#include "core/base/files.h"
#include "core/model/protocol.h"
#include "emulator/state_db.h"

namespace cloud {

namespace {

// The most a state file may hold: a document of its bytes' names, not the bytes.
constexpr size_t kMaxDocument = size_t{1} << 30;

// The records of a document, and which file holds which bytes (name -> file).
struct Imported {
  RecordStore::Saved saved;
  std::map<std::string, std::string> files;
};

// The storage service's part of a document as its records; `names` receives the names
// of the bytes they hold (objects' version ids, parts' ids).
void import_storage(const json& part, RecordsByKind& records, ObjectRows& objects, std::set<std::string>& names) {
  const json created = part.value("bucket_created", json::object());
  const std::string now = format_date(std::time(nullptr), DateForm::iso);  // for a bucket saved without its time
  for (const auto& [bucket, listed] : part.at("buckets").items()) {
    records["bucket"][bucket] = {{"created", created.value(bucket, now)}};
    for (const auto& [key, o] : listed.items()) {  // in order of bucket and key, as a store gives them
      json headers = o.value("headers", json::object());
      if (o.contains("part_sizes")) headers[kPartSizesMember] = o.at("part_sizes");
      ObjectRow row{bucket,
                    key,
                    o.at("etag").get<std::string>(),
                    o.at("last_modified").get<std::string>(),
                    o.at("version_id").get<std::string>(),
                    o.value("checksum", json::object()).dump(),
                    o.value("upload_id", ""),
                    -1,
                    headers.dump()};
      names.insert(row.version_id);
      objects.push_back(std::move(row));
    }
  }
  for (const auto& [id, u] : part.at("uploads").items()) {
    json upload = u;
    upload.erase("parts");
    records["upload"][id] = upload;
    for (const auto& [number, p] : u.at("parts").items()) {  // { id, ... }, or only its id (older)
      names.insert(p.is_string() ? p.get<std::string>() : p.at("id").get<std::string>());
      records["part"][json::array({id, std::stoll(number)}).dump()] = p;
    }
  }
}

// The records of `document`; throws (json::exception, std::logic_error) on another form.
Imported import_document(const json& document) {
  Imported out;
  out.saved.header = document;
  out.saved.header.erase("services");
  out.saved.header.erase("byte_files");
  std::set<std::string> names;
  for (const auto& [api, part] : document.at("services").items()) {
    if (api == "storage") import_storage(part, out.saved.records[api], out.saved.objects[api], names);
    else out.saved.records[api]["service"][""] = part;
  }
  if (document.contains("byte_files")) {
    out.files = document.at("byte_files").get<std::map<std::string, std::string>>();
  } else {  // an older document: the name is the file
    for (const std::string& name : names) out.files[name] = name;
  }
  return out;
}

// Removes the database at `path` (the import's own temporary) and what SQLite keeps
// beside it.
void remove_database(const std::string& path) {
  for (const char* suffix : {"", "-wal", "-shm", "-journal"}) ::unlink((path + suffix).c_str());
}

Error file_error(const std::string& what, const std::string& path) {
  return make_error(ErrorKind::config, "StateFile", what + " " + path + ": " + std::strerror(errno));
}

}  // namespace

bool is_json_state_file(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char c = 0;
  ssize_t n;
  while ((n = ::read(fd, &c, 1)) == 1 && std::isspace(static_cast<unsigned char>(c))) {}
  ::close(fd);
  return n == 1 && c == '{';
}

Outcome<json> read_state_file(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0 && errno == ENOENT) return json();
  if (fd < 0) return file_error("cannot open the state file", path);
  std::string text;
  char buf[1 << 16];
  ssize_t n = 0;
  while (text.size() <= kMaxDocument && ((n = ::read(fd, buf, sizeof buf)) > 0 || (n < 0 && errno == EINTR)))
    if (n > 0) text.append(buf, static_cast<size_t>(n));
  int failed = errno;
  ::close(fd);
  errno = failed;
  if (n < 0) return file_error("cannot read the state file", path);
  if (text.size() > kMaxDocument)
    return make_error(ErrorKind::config, "BadStateFile", "the state file " + path + " is larger than 1 GiB");
  bool too_deep = false;
  json doc = parse_json_text(text, too_deep);  // depth watched: a deep document is never walked
  if (too_deep) return make_error(ErrorKind::config, "BadStateFile", too_deep_message("the state file " + path));
  if (doc.is_discarded())
    return make_error(ErrorKind::config, "BadStateFile", "the state file " + path + " is not JSON");
  return doc;
}

Outcome<bool> import_state_file(Platform& platform, const std::string& path, std::unique_ptr<StoreLock>* lock) {
  auto document = read_state_file(path);
  if (!document.ok()) return document.error();
  Imported imported;
  try {
    imported = import_document(*document);
  } catch (const std::exception& e) {  // json's own, a part number that is none
    return make_error(ErrorKind::config, "BadStateFile",
                      "state file " + path + ": not a state this emulator saved: " + e.what());
  }
  // made exclusively under a name of its own: never a file of the user's, none removed
  TemporaryFile made = create_temporary(path + ".", ".import");
  if (made.fd < 0) return file_error("cannot create a database to import into beside", path);
  ::close(made.fd);
  const std::string& importing = made.path;
  {
    StateDatabase db(importing, ::write, path + ".bytes");
    Outcome<bool> saved = db.open(false, std::move(imported.files));
    if (saved.ok()) saved = platform.restore_records(std::move(imported.saved), db.bytes());
    if (saved.ok()) saved = platform.keep_records_in(&db);
    platform.keep_records_in(nullptr);
    if (!saved.ok()) {
      remove_database(importing);
      Error e = saved.error();
      if (e.message.find(path) == std::string::npos) e.message = "state file " + path + ": " + e.message;
      return e;
    }
  }                                  // closed: its WAL is in it
  std::unique_ptr<StoreLock> moved;  // the owner's lock on the new database, before it is in place
  if (lock) {
    auto taken = StoreLock::take(importing);
    if (!taken.ok()) {
      remove_database(importing);
      return taken.error();
    }
    moved = std::move(*taken);
  }
  if (!commit_rename(importing, path) || !fsync_directory(directory_of(path)))
    return file_error("cannot put the imported state database in place of", path);
  if (lock && *lock) moved->keep_earlier_of(**lock);
  if (lock) *lock = std::move(moved);  // the state file's lock given up only now
  return true;
}

}  // namespace cloud
