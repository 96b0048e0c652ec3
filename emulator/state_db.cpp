// The database of `serve --state` with SQLite's C API. Durability as SQLite documents
// it: in WAL mode a transaction is durable once its commit returns when synchronous is
// FULL ("the WAL file is synced after each transaction commits"; NORMAL may lose the
// last transactions on a power cut). Schema: meta (the platform's header), records (one
// row per service record, keyed by api, kind, key, its value a JSON document), objects
// (the records of kind "object", in typed columns keyed by api, bucket, key, with the
// file of their bytes: a restart reads them without parsing JSON, in the order the
// service keeps them), byte_files (which file holds the bytes of another record, a
// part's, and the record that names them); its version is SQLite's user_version, and
// kMigrations brings an older database up to it.
#include "emulator/state_db.h"

#include <dirent.h>
#include <fcntl.h>
#include <sqlite3.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include <algorithm>
#include <array>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <unordered_map>
#include <vector>

#include "core/base/files.h"
#include "core/model/protocol.h"
#include "emulator/state_import.h"

namespace cloud {

namespace {

// Each entry brings the schema from its index to the next version.
const char* const kMigrations[] = {
    // 0 -> 1
    "CREATE TABLE meta(name TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;"
    "CREATE TABLE records(api TEXT NOT NULL, kind TEXT NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL,"
    "  PRIMARY KEY(api, kind, key)) WITHOUT ROWID;"
    "CREATE TABLE byte_files(name TEXT PRIMARY KEY, file TEXT NOT NULL, api TEXT NOT NULL, kind TEXT NOT NULL,"
    "  key TEXT NOT NULL) WITHOUT ROWID;"
    "CREATE INDEX byte_files_by_record ON byte_files(api, kind, key);",
    // 1 -> 2: objects in columns of their own, in order of bucket and key (their size
    // unknown until they are saved again: looked up at start meanwhile)
    "CREATE TABLE objects(api TEXT NOT NULL, bucket TEXT NOT NULL, key TEXT NOT NULL, etag TEXT NOT NULL,"
    "  last_modified TEXT NOT NULL, version_id TEXT NOT NULL, size INTEGER, checksum TEXT NOT NULL,"
    "  upload_id TEXT NOT NULL, PRIMARY KEY(api, bucket, key)) WITHOUT ROWID;"
    "INSERT INTO objects SELECT api, json_extract(key, '$[0]'), json_extract(key, '$[1]'), json_extract(value, "
    "'$.etag'),"
    "  json_extract(value, '$.last_modified'), json_extract(value, '$.version_id'), NULL,"
    "  coalesce(json_extract(value, '$.checksum'), '{}'), coalesce(json_extract(value, '$.upload_id'), '')"
    "  FROM records WHERE kind = 'object';"
    "DELETE FROM records WHERE kind = 'object';",
    // 2 -> 3: an object's content headers and user metadata (JSON); none before
    "ALTER TABLE objects ADD COLUMN headers TEXT NOT NULL DEFAULT '{}';",
    // 3 -> 4: an object's byte file in its row (named by its version id), not in
    // byte_files under the text of [bucket, key]: an object is named by its columns only
    "ALTER TABLE objects ADD COLUMN file TEXT;"
    "UPDATE objects SET file = (SELECT b.file FROM byte_files b WHERE b.name = objects.version_id AND b.api = "
    "objects.api"
    "  AND b.kind = 'object');"
    "DELETE FROM byte_files WHERE kind = 'object';",
    // 4 -> 5: an object's owner (an account) and the JSON of the grants on it; '' before:
    // the built-in account's, private (emulator/access.h). Two statements in one step
    // (the parentheses tell clang the missing comma is meant)
    ("ALTER TABLE objects ADD COLUMN owner TEXT NOT NULL DEFAULT '';"
     "ALTER TABLE objects ADD COLUMN grants TEXT NOT NULL DEFAULT '';"),
};
constexpr int kSchemaVersion = sizeof kMigrations / sizeof kMigrations[0];

// Every byte file the database names, as (name, file): the parts' and the objects'.
const char* const kNamedFiles =
    "SELECT name, file FROM byte_files UNION ALL SELECT version_id, file FROM objects WHERE file IS NOT NULL";
const char* const kCheckpointFiles =
    "SELECT file FROM checkpoint.byte_files UNION ALL SELECT file FROM checkpoint.objects WHERE file IS NOT NULL";

// The error naming `path` and the system's reason (errno).
Error state_file_error(const std::string& what, const std::string& path) {
  return make_error(ErrorKind::config, "StateFile", what + " " + path + ": " + std::strerror(errno));
}

// Whether `file` names a byte file inside its folder: letters, digits, '.', '-' and '_',
// not starting with '.' (no "..", no '/', nothing hidden).
bool plain_file_name(const std::string& file) {
  if (file.empty() || file[0] == '.') return false;
  for (char c : file)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '-' && c != '_') return false;
  return true;
}

// The serial after the last '.' of a byte file's name ("v000000000007.12": 12, 0 if none).
unsigned long long serial_of(const std::string& file) {
  size_t dot = file.rfind('.');
  if (dot == std::string::npos || dot + 1 == file.size()) return 0;
  for (size_t i = dot + 1; i < file.size(); ++i)
    if (!std::isdigit(static_cast<unsigned char>(file[i]))) return 0;
  return std::strtoull(file.c_str() + dot + 1, nullptr, 10);
}

// How many statements this file has prepared (StateDatabase::statements_prepared).
std::atomic<std::size_t> prepared_count{0};

// A prepared statement, finalized when it goes.
class Statement {
 public:
  Statement(sqlite3* db, const char* sql) {
    sqlite3_prepare_v2(db, sql, -1, &stmt_, nullptr);
    ++prepared_count;
  }
  ~Statement() { sqlite3_finalize(stmt_); }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  bool ready() const { return stmt_ != nullptr; }
  // Ready to run again: reset, its bindings cleared.
  Statement& reset() {
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
    return *this;
  }
  // Binds the texts to ?1, ?2...; resets the statement first.
  Statement& bind(std::initializer_list<std::string> texts) {
    reset();
    int i = 1;
    for (const std::string& t : texts)
      sqlite3_bind_text(stmt_, i++, t.data(), static_cast<int>(t.size()), SQLITE_TRANSIENT);
    return *this;
  }
  // Binds `text` to ?`at` (after bind()).
  Statement& bind_text(int at, const std::string& text) {
    sqlite3_bind_text(stmt_, at, text.data(), static_cast<int>(text.size()), SQLITE_TRANSIENT);
    return *this;
  }
  // Binds `value` to ?`at` (after bind()).
  Statement& bind_int(int at, std::int64_t value) {
    sqlite3_bind_int64(stmt_, at, value);
    return *this;
  }
  int step() { return sqlite3_step(stmt_); }
  // The integer in `column`; `none` when it is NULL.
  std::int64_t integer(int column, std::int64_t none) const {
    return sqlite3_column_type(stmt_, column) == SQLITE_NULL ? none : sqlite3_column_int64(stmt_, column);
  }
  bool run() { return step() == SQLITE_DONE; }
  std::string text(int column) const {
    const unsigned char* t = sqlite3_column_text(stmt_, column);
    return t ? std::string(reinterpret_cast<const char*>(t), static_cast<size_t>(sqlite3_column_bytes(stmt_, column)))
             : "";
  }

 private:
  sqlite3_stmt* stmt_ = nullptr;
};

}  // namespace

// The statements of a change, prepared once when the database is opened (after its
// migrations) and finalized before it is closed.
struct StateDatabase::Prepared {
  explicit Prepared(sqlite3* db)
      : begin(db, "BEGIN IMMEDIATE"),
        commit(db, "COMMIT"),
        rollback(db, "ROLLBACK"),
        header(db, "INSERT INTO meta(name, value) VALUES('header', ?1) ON CONFLICT(name) DO UPDATE SET value = ?1"),
        owned(db, "SELECT name FROM byte_files WHERE api = ?1 AND kind = ?2 AND key = ?3"),
        all_owned(db, "SELECT name FROM byte_files WHERE api = ?1"),
        unown(db, "DELETE FROM byte_files WHERE api = ?1 AND kind = ?2 AND key = ?3"),
        unown_all(db, "DELETE FROM byte_files WHERE api = ?1"),
        remove(db, "DELETE FROM records WHERE api = ?1 AND kind = ?2 AND key = ?3"),
        remove_all(db, "DELETE FROM records WHERE api = ?1"),
        remove_objects(db, "DELETE FROM objects WHERE api = ?1"),
        object_owned(db,
                     "SELECT version_id FROM objects WHERE api = ?1 AND bucket = ?2 AND key = ?3 AND file IS NOT NULL"),
        all_objects_owned(db, "SELECT version_id FROM objects WHERE api = ?1 AND file IS NOT NULL"),
        put(db,
            "INSERT INTO records(api, kind, key, value) VALUES(?1, ?2, ?3, ?4) "
            "ON CONFLICT(api, kind, key) DO UPDATE SET value = ?4"),
        remove_object(db, "DELETE FROM objects WHERE api = ?1 AND bucket = ?2 AND key = ?3"),
        put_object(db,
                   "INSERT OR REPLACE INTO objects(api, bucket, key, etag, last_modified, version_id, size,"
                   " checksum, upload_id, headers, file, owner, grants)"
                   " VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?10, ?7, ?8, ?9, ?11, ?12, ?13)"),
        own(db,
            "INSERT INTO byte_files(name, file, api, kind, key) VALUES(?1, ?2, ?3, ?4, ?5) "
            "ON CONFLICT(name) DO UPDATE SET file = ?2, api = ?3, kind = ?4, key = ?5") {}

  // Whether every statement could be prepared.
  bool ready() {
    for (Statement* s : statements())
      if (!s->ready()) return false;
    return true;
  }
  // Every statement reset (none left running, no value held), after a change.
  void reset() {
    for (Statement* s : statements()) s->reset();
  }
  std::array<Statement*, 17> statements() {
    return {&begin,         &commit,     &rollback,   &header,         &owned,        &all_owned,         &unown,
            &unown_all,     &remove,     &remove_all, &remove_objects, &object_owned, &all_objects_owned, &put,
            &remove_object, &put_object, &own};
  }

  Statement begin, commit, rollback, header, owned, all_owned, unown, unown_all, remove, remove_all, remove_objects,
      object_owned, all_objects_owned, put, remove_object, put_object, own;
};

// ---------------------------------------------------------------- the byte files

// The folder of bytes: each in a file "<name>.<serial>", made new (O_EXCL) under a serial
// above that of every file the folder held at start, so that a file a crash left
// unnamed can never pass for a later write's bytes. A file written for a change is
// pending until the change is committed; the change takes the names of its files with
// it (take_written), so that a commit settles its own. The maps are behind a mutex of
// their own: the platform's handlers read them while a batch commits.
class StateDatabase::Files : public ByteStore {
 public:
  // name -> file: hashed, looked up once for each of the many files at start.
  using Names = std::unordered_map<std::string, std::string>;

  Files(std::string dir, WriteCall write) : dir_(std::move(dir)), write_(std::move(write)) {}
  ~Files() override {
    if (dir_fd_ >= 0) ::close(dir_fd_);
  }
  Files(const Files&) = delete;
  Files& operator=(const Files&) = delete;

  // The folder made or, when there, checked as this user's own (open_own_folder, the
  // rule of the checkpoints folder too) and opened afresh: its files are swept and
  // removed relative to it, so a link at its name never leads a removal elsewhere.
  Outcome<bool> open_folder() {
    auto fd = open_own_folder(dir_, "the folder of bytes");
    if (!fd.ok()) return fd.error();
    if (dir_fd_ >= 0) ::close(dir_fd_);
    dir_fd_ = *fd;
    return true;
  }

  // Creates the folder if needed and learns the serials its files took and which of
  // the files the database names (`named`, name -> file) are there; with `collect`,
  // every other file is removed, but for bodies being streamed in (kIncoming) after the
  // first open: at the first they are what a crash cut off, later (a checkpoint restored)
  // live requests'. A file "<name>.<serial>" (the form put() gives them) is looked up
  // by its name; only when some named file was not found so is every named file looked
  // at (rare: a file gone, or named in another form).
  Outcome<bool> open(Names named, bool collect) {
    if (auto opened = open_folder(); !opened.ok()) return opened;
    size_t found = 0;                // named files found by their name
    std::vector<std::string> other;  // files not found so: unnamed, or named in another form
    for (std::string& file : folder_entries(dir_fd_)) {
      next_serial_ = std::max(next_serial_, serial_of(file) + 1);
      auto it = named.find(file.substr(0, file.rfind('.')));
      if (it != named.end() && it->second == file) ++found;
      else other.push_back(std::move(file));
    }
    missing_.clear();
    std::set<std::string> files;  // every named file, when some were not found by name
    if (found != named.size()) {
      struct stat st;
      for (const auto& [name, file] : named) {
        files.insert(file);
        if (!plain_file_name(file) || ::fstatat(dir_fd_, file.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0)
          missing_.insert(name);
      }
    }
    for (const std::string& file : other) {
      bool incoming = file.rfind(kIncoming, 0) == 0;
      if (collect && !files.count(file) && !(opened_before_ && incoming)) ::unlinkat(dir_fd_, file.c_str(), 0);
    }
    opened_before_ = true;
    known_ = std::move(named);
    return true;
  }

  // Bytes known already (by name) are not written again; bytes in a file of the folder
  // already (a body streamed there, another object's bytes) are linked to a new name,
  // flushed; others go to a new file, a piece at a time, flushed. The bytes as their
  // file keeps them.
  SharedBytes put(const std::string& name, const SharedBytes& bytes) override {
    std::string file = file_of(name);
    if (!file.empty()) return file_blob(dir_ + "/" + file, bytes->size());
    file = name + "." + std::to_string(next_serial_++);
    if (!plain_file_name(file)) throw std::runtime_error("'" + name + "' cannot name a byte file");
    std::string path = dir_ + "/" + file;
    if (linked(*bytes, path)) {
      add_pending(name, file);
      return file_blob(path, bytes->size());
    }
    int fd = create_exclusive(path, 0600);
    if (fd < 0) throw std::runtime_error(state_file_error("cannot create", path).message);
    bool written = write_blob(fd, *bytes, write_) && flush_file(fd);
    int write_errno = errno;
    ::close(fd);
    if (!written) {
      ::unlink(path.c_str());  // nothing left to fill a full disk further
      errno = write_errno;
      throw std::runtime_error(state_file_error("cannot write", path).message);
    }
    add_pending(name, file);
    return file_blob(path, bytes->size());
  }

  // Whether `bytes`, whole in a file of the folder, are now also at `path`: their file
  // flushed (unless prepare() did), then hard-linked (a file is never changed once
  // written). False when they are elsewhere or cannot be linked: then they are copied.
  bool linked(const Blob& bytes, const std::string& path) {
    std::string from = bytes.file();
    if (from.empty() || directory_of(from) != dir_) return false;
    bool flushed = bytes.flushed() || flush_path(from);
    return flushed && hard_link(from, path);
  }

  // The file of `bytes`, when it is one of the folder's, flushed now (in the caller's
  // thread) and marked so, so that put() links it without flushing it again.
  void prepare(const Blob& bytes) const {
    std::string from = bytes.file();
    if (!from.empty() && directory_of(from) == dir_ && flush_path(from)) bytes.mark_flushed();
  }

  // The bytes of `name` as the database names them, not read.
  SharedBytes get(const std::string& name) const override {
    std::string file = file_of(name);
    if (file.empty()) throw std::runtime_error("no bytes named " + name + " in " + dir_);
    if (!plain_file_name(file))  // never a file outside dir_, whatever the database says
      throw std::runtime_error("the byte file '" + file + "' is not a file of " + dir_ + "/");
    return stored_file(dir_ + "/" + file);
  }

  // The same, its size known: its file was found at open(), and is not looked up again.
  SharedBytes get(const std::string& name, std::uint64_t size) const override {
    if (unsettled(name)) return get(name);
    std::string file = file_of(name);
    if (file.empty() || !plain_file_name(file)) return get(name);  // get()'s error
    return file_blob(dir_ + "/" + file, size);
  }

  // Whether `name`'s file was missing at open() or is pending (looked up, not assumed).
  bool unsettled(const std::string& name) const {
    std::lock_guard<std::mutex> hold(mutex_);
    return missing_.count(name) || pending_.count(name);
  }

  // The file of `name`: known, or written for a change not committed yet; "" if none.
  std::string file_of(const std::string& name) const {
    std::lock_guard<std::mutex> hold(mutex_);
    auto it = known_.find(name);
    if (it != known_.end()) return it->second;
    it = pending_.find(name);
    return it == pending_.end() ? "" : it->second;
  }

  // The folder flushed, once for all the files of a batch (`any`: it wrote some).
  Outcome<bool> flush(bool any) const {
    if (any && !fsync_directory(dir_)) return state_file_error("cannot flush", dir_);
    return true;
  }

  // The names of the files written since the last call: those of the change being saved.
  std::vector<std::string> take_written() {
    std::lock_guard<std::mutex> hold(mutex_);
    return std::move(written_);
  }

  // Changes committed: the files of `names` are known; those of `dropped` names go.
  void committed(const std::vector<std::string>& names, const std::set<std::string>& dropped) {
    std::lock_guard<std::mutex> hold(mutex_);
    for (const std::string& name : names) {
      auto it = pending_.find(name);
      if (it == pending_.end()) continue;
      known_[name] = it->second;
      pending_.erase(it);
    }
    for (const std::string& name : dropped) {
      auto it = known_.find(name);
      if (it == known_.end()) continue;
      ::unlinkat(dir_fd_, it->second.c_str(), 0);
      known_.erase(it);
    }
  }

  // Changes not committed: the files of `names` go.
  void rolled_back(const std::vector<std::string>& names) {
    std::lock_guard<std::mutex> hold(mutex_);
    for (const std::string& name : names) {
      auto it = pending_.find(name);
      if (it == pending_.end()) continue;
      ::unlinkat(dir_fd_, it->second.c_str(), 0);
      pending_.erase(it);
    }
  }

 private:
  // `file`, written for `name`, pending until its change is committed.
  void add_pending(const std::string& name, const std::string& file) {
    std::lock_guard<std::mutex> hold(mutex_);
    pending_[name] = file;
    written_.push_back(name);
  }

  // The file at `path` flushed to the disk.
  static bool flush_path(const std::string& path) {
    int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    bool flushed = fd >= 0 && flush_file(fd);
    if (fd >= 0) ::close(fd);
    return flushed;
  }

  std::string dir_;
  int dir_fd_ = -1;  // the folder, opened by open_folder()
  WriteCall write_;
  mutable std::mutex mutex_;          // the maps below
  Names known_;                       // name -> file, as the database says
  Names pending_;                     // name -> file, written for changes not committed yet
  std::vector<std::string> written_;  // names of pending_ written since take_written()
  std::set<std::string> missing_;     // names whose file was not there at open()
  unsigned long long next_serial_ = 1;
  bool opened_before_ = false;
};

// ---------------------------------------------------------------- the database

StateDatabase::StateDatabase(std::string path, WriteCall write, std::string bytes_dir)
    : path_(std::move(path)),
      bytes_dir_(bytes_dir.empty() ? path_ + ".bytes" : std::move(bytes_dir)),
      files_(std::make_unique<Files>(bytes_dir_, std::move(write))) {}

StateDatabase::~StateDatabase() { close(); }

int StateDatabase::schema_version() { return kSchemaVersion; }

std::size_t StateDatabase::statements_prepared() { return prepared_count; }

ByteStore& StateDatabase::bytes() { return *files_; }

Error StateDatabase::failure(const std::string& what) const {
  std::string detail = db_ ? sqlite3_errmsg(db_) : "out of memory";
  return make_error(ErrorKind::config, "StateDatabase", what + " " + path_ + ": " + detail);
}

void StateDatabase::close() {
  std::lock_guard<std::mutex> hold(connection_);
  close_locked();
}

// The changes queued committed (none saved is lost to a clean stop), then the
// connection closed; connection_ held.
void StateDatabase::close_locked() {
  if (db_ && prepared_) commit_queued();
  prepared_.reset();  // finalized first: SQLite does not close a connection with statements
  if (db_) sqlite3_close(db_);
  db_ = nullptr;
}

std::uint64_t StateDatabase::last_saved() const { return saved_; }

StateDatabase::Commits StateDatabase::commits() const { return {saved_, commits_}; }

void StateDatabase::prepare(const SharedBytes& bytes) {
  if (bytes) files_->prepare(*bytes);
}

Outcome<bool> StateDatabase::open(bool collect, std::map<std::string, std::string> adopted) {
  std::lock_guard<std::mutex> hold(connection_);
  return open_locked(collect, std::move(adopted));
}

// Opened afresh (what the connection before had queued committed); connection_ held.
Outcome<bool> StateDatabase::open_locked(bool collect, std::map<std::string, std::string> adopted) {
  close_locked();
  if (sqlite3_open_v2(path_.c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOFOLLOW,
                      nullptr) != SQLITE_OK)
    return failure("cannot open the state database");
  sqlite3_busy_timeout(db_, 5000);
  if (auto wal = use_wal(); !wal.ok()) return wal;
  if (sqlite3_exec(db_, "PRAGMA synchronous=FULL;", nullptr, nullptr, nullptr) != SQLITE_OK)
    return failure("cannot set up (synchronous=FULL)");
  if (auto migrated = migrate(); !migrated.ok()) return migrated;
  prepared_ = std::make_unique<Prepared>(db_);
  if (!prepared_->ready()) {
    Error e = failure("cannot prepare the changes of");
    prepared_.reset();
    return e;
  }
  Statement files(db_, kNamedFiles);
  if (!files.ready()) return failure("cannot read the byte files of");
  Statement count(db_, "SELECT (SELECT count(*) FROM byte_files) + (SELECT count(*) FROM objects)");
  Files::Names named(adopted.begin(), adopted.end());
  if (count.ready() && count.step() == SQLITE_ROW)
    named.reserve(named.size() + static_cast<size_t>(count.integer(0, 0)));
  while (files.step() == SQLITE_ROW) named[files.text(0)] = files.text(1);
  return files_->open(std::move(named), collect);
}

// The database in WAL mode, as SQLite answers: any other mode (an in-memory database's
// "memory", or a file system where WAL's shared memory cannot be) is an error, since
// a change answered is durable only with WAL and synchronous=FULL.
Outcome<bool> StateDatabase::use_wal() {
  std::string answered;
  {
    Statement mode(db_, "PRAGMA journal_mode=WAL");
    if (!mode.ready() || mode.step() != SQLITE_ROW) return failure("cannot set the journal mode (WAL) of");
    answered = mode.text(0);
  }
  std::transform(answered.begin(), answered.end(), answered.begin(), [](unsigned char c) { return std::tolower(c); });
  if (answered == "wal") return true;
  return make_error(ErrorKind::config, "StateDatabase",
                    "the state database " + path_ + " cannot be in WAL mode (SQLite answered journal_mode '" +
                        answered +
                        "'): a change is on the disk when answered only in WAL mode, which needs a file system "
                        "that supports its shared memory file (" +
                        path_ +
                        "-shm, not a network file system); "
                        "give --state a path on a local disk");
}

// The schema brought from its user_version to kSchemaVersion, one transaction a step.
Outcome<bool> StateDatabase::migrate() {
  Statement version(db_, "PRAGMA user_version");
  if (!version.ready() || version.step() != SQLITE_ROW) return failure("cannot read the schema version of");
  int at = std::atoi(version.text(0).c_str());
  if (at > kSchemaVersion)
    return make_error(ErrorKind::config, "StateDatabase",
                      "the state database " + path_ + " has schema " + std::to_string(at) +
                          ", newer than this cloudlua's " + std::to_string(kSchemaVersion) + ": use a newer cloudlua");
  for (; at < kSchemaVersion; ++at) {
    std::string step = std::string("BEGIN IMMEDIATE;") + kMigrations[at] +
                       "PRAGMA user_version=" + std::to_string(at + 1) + ";COMMIT;";
    if (sqlite3_exec(db_, step.c_str(), nullptr, nullptr, nullptr) != SQLITE_OK) {
      Error e = failure("cannot migrate to schema " + std::to_string(at + 1));
      sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
      return e;
    }
  }
  return true;
}

// The change queued, numbered; committed by durable() (or by whatever needs the
// connection next). Refused after a failed commit until load() has been read again:
// the platform's records would not follow from what is saved.
Outcome<bool> StateDatabase::save(const json& header, const std::map<std::string, StateRecords>& changes) {
  std::vector<std::string> written = files_->take_written();
  std::lock_guard<std::mutex> hold(queue_mutex_);
  if (refusing_) {
    files_->rolled_back(written);
    return make_error(
        ErrorKind::config, "StateDatabase",
        "the state database " + path_ + " takes no change until the platform is read back from it (a commit failed)");
  }
  queue_.push_back({header, changes, std::move(written)});
  ++saved_;
  return true;
}

// Returns once `change` is committed: by an earlier caller, or now, with every change
// queued (the caller holding the connection meanwhile, the others queueing more or
// waiting for it). The failure of its commit, if it failed.
Outcome<bool> StateDatabase::durable(std::uint64_t change) {
  if (change <= durable_ && !any_failed_) return true;  // without waiting for a commit under way
  std::lock_guard<std::mutex> hold(connection_);
  if (change > durable_ && db_ && prepared_) commit_queued();
  auto failed = failed_.lower_bound(change);
  if (failed != failed_.end() && failed->second.first <= change) return failed->second.second;
  return true;
}

// Every change queued, in one transaction: each one's records (and byte files), then
// the last header; the folder of bytes flushed once, then one commit (with
// synchronous=FULL, on the disk when it returns); the names the changes dropped lose
// their files after. A commit that fails fails its changes and those queued meanwhile.
void StateDatabase::commit_queued() {
  std::vector<Queued> batch;
  std::uint64_t last;
  {
    std::lock_guard<std::mutex> hold(queue_mutex_);
    batch.swap(queue_);
    last = saved_;
  }
  if (batch.empty()) return;
  std::vector<std::string> written;
  for (Queued& q : batch) written.insert(written.end(), q.written.begin(), q.written.end());
  std::set<std::string> dropped;
  Outcome<bool> done = apply_batch(batch, dropped);
  if (done.ok()) done = files_->flush(!written.empty());
  Prepared& p = *prepared_;
  if (done.ok() && !p.commit.reset().run()) done = failure("cannot commit to");
  p.reset();
  if (!done.ok()) return fail_commit(written, done.error());
  files_->committed(written, dropped);
  ++commits_;
  durable_ = last;
}

// The batch's changes in one transaction, left open for the commit; `dropped`: the
// names of bytes their records no longer hold.
Outcome<bool> StateDatabase::apply_batch(const std::vector<Queued>& batch, std::set<std::string>& dropped) {
  Prepared& p = *prepared_;
  if (!p.begin.reset().run()) return failure("cannot begin a change in");
  for (const Queued& q : batch)
    if (auto applied = apply(q.changes, dropped); !applied.ok()) return applied;
  if (!p.header.bind({batch.back().header.dump()}).run()) return failure("cannot save the header in");
  return true;
}

// The batch rolled back (`why`, for each of its changes): its files go (`written`),
// and so do the changes queued since, made on top of it; changes are refused until
// load() is read again.
void StateDatabase::fail_commit(std::vector<std::string>& written, const Error& why) {
  Prepared& p = *prepared_;
  p.reset();
  p.rollback.run();
  p.rollback.reset();
  std::lock_guard<std::mutex> hold(queue_mutex_);
  for (Queued& q : queue_) written.insert(written.end(), q.written.begin(), q.written.end());
  queue_.clear();
  files_->rolled_back(written);
  failed_.emplace(saved_.load(), std::make_pair(durable_ + 1, why));
  any_failed_ = true;
  refusing_ = true;
  durable_ = saved_.load();
}

// The records of `changes`, in the open transaction: objects to their table (their
// byte file in their row), others to records (their byte files in byte_files). The
// names of bytes a record holds: an object's version_id, a part's id. `dropped`
// receives the names the records held before, but for those they still hold (a name
// held again by a later change of the batch is struck off too).
Outcome<bool> StateDatabase::apply(const std::map<std::string, StateRecords>& changes, std::set<std::string>& dropped) {
  Prepared& p = *prepared_;
  std::set<std::string> named;  // names the records saved here hold
  auto held_before = [&](Statement& s) {
    while (s.step() == SQLITE_ROW) dropped.insert(s.text(0));
  };
  for (const auto& [api, records] : changes) {
    for (const StateRecord& r : records) {
      bool ok;
      if (r.kind == "*") {
        held_before(p.all_owned.bind({api}));
        held_before(p.all_objects_owned.bind({api}));
        ok = p.unown_all.bind({api}).run() && p.remove_all.bind({api}).run() && p.remove_objects.bind({api}).run();
      } else if (r.kind == "object") {
        const std::string& bucket = r.object ? r.object->bucket : r.bucket;
        held_before(p.object_owned.bind({api, bucket, r.key}));
        ok = r.object ? put_object(api, *r.object, named) : p.remove_object.bind({api, bucket, r.key}).run();
      } else {
        held_before(p.owned.bind({api, r.kind, r.key}));
        ok = p.unown.bind({api, r.kind, r.key}).run();
        if (ok)
          ok = r.value.is_null() ? p.remove.bind({api, r.kind, r.key}).run()
                                 : p.put.bind({api, r.kind, r.key, r.value.dump()}).run();
        std::string name = r.value.is_object() ? r.value.value("id", "") : "";
        std::string file = name.empty() ? "" : files_->file_of(name);
        if (ok && !file.empty()) {  // not every id names bytes (an upload's does not)
          named.insert(name);
          ok = p.own.bind({name, file, api, r.kind, r.key}).run();
        }
      }
      if (!ok) return failure("cannot save a record in");
    }
  }
  for (const std::string& name : named) dropped.erase(name);
  return true;
}

// An object's row, with the file of its bytes (none when they were not kept).
bool StateDatabase::put_object(const std::string& api, const ObjectRow& o, std::set<std::string>& named) {
  Statement& put = prepared_->put_object.bind(
      {api, o.bucket, o.key, o.etag, o.last_modified, o.version_id, o.checksum, o.upload_id, o.headers});
  put.bind_int(10, o.size);
  put.bind_text(12, o.owner).bind_text(13, o.grants);
  std::string file = files_->file_of(o.version_id);
  if (!file.empty()) {
    put.bind_text(11, file);
    named.insert(o.version_id);
  }
  return put.run();
}

Outcome<bool> StateDatabase::put_meta(const std::string& name, const json& value) {
  std::lock_guard<std::mutex> hold(connection_);  // never inside a batch's commit
  if (!db_) return make_error(ErrorKind::config, "StateDatabase", "the state database " + path_ + " is not open");
  Statement put(db_, "INSERT INTO meta(name, value) VALUES(?1, ?2) ON CONFLICT(name) DO UPDATE SET value = ?2");
  if (!put.ready() || !put.bind({name, value.dump()}).run()) return failure("cannot save the " + name + " of");
  return true;
}

Outcome<std::optional<json>> StateDatabase::meta(const std::string& name) {
  std::lock_guard<std::mutex> hold(connection_);
  if (!db_) return make_error(ErrorKind::config, "StateDatabase", "the state database " + path_ + " is not open");
  Statement read(db_, "SELECT value FROM meta WHERE name = ?1");
  if (!read.ready()) return failure("cannot read");
  if (read.bind({name}).step() != SQLITE_ROW) return std::optional<json>();
  bool too_deep = false;
  json value = parse_json_text(read.text(0), too_deep);
  if (too_deep || value.is_discarded())
    return make_error(ErrorKind::config, "BadStateFile",
                      "the state database " + path_ + " holds " + name + " that are not JSON");
  return std::optional<json>(std::move(value));
}

Outcome<std::optional<RecordStore::Saved>> StateDatabase::load() {
  std::lock_guard<std::mutex> hold(connection_);
  if (db_ && prepared_) commit_queued();  // what the platform holds is read back whole
  {
    std::lock_guard<std::mutex> queue(queue_mutex_);
    refusing_ = false;  // the platform follows from what is saved again
  }
  if (!db_) return make_error(ErrorKind::config, "StateDatabase", "the state database " + path_ + " is not open");
  Statement header(db_, "SELECT value FROM meta WHERE name = 'header'");
  if (!header.ready()) return failure("cannot read");
  if (header.step() != SQLITE_ROW) return std::optional<Saved>();
  Saved saved;
  bool too_deep = false;  // depth watched: a record is the file's, which anyone may have written
  saved.header = parse_json_text(header.text(0), too_deep);
  Statement records(db_, "SELECT api, kind, key, value FROM records");
  if (!records.ready()) return failure("cannot read the records of");
  while (!too_deep && records.step() == SQLITE_ROW) {
    json value = parse_json_text(records.text(3), too_deep);
    if (too_deep) break;
    if (value.is_discarded() || saved.header.is_discarded())
      return make_error(ErrorKind::config, "BadStateFile",
                        "the state database " + path_ + " holds a record that is not JSON");
    saved.records[records.text(0)][records.text(1)][records.text(2)] = std::move(value);
  }
  if (too_deep)
    return make_error(ErrorKind::config, "BadStateFile", too_deep_message("a record of the state database " + path_));
  Statement objects(db_,
                    "SELECT api, bucket, key, etag, last_modified, version_id, size, checksum, upload_id, "
                    "headers, owner, grants FROM objects ORDER BY api, bucket, key");
  if (!objects.ready()) return failure("cannot read the objects of");
  Statement count(db_, "SELECT api, count(*) FROM objects GROUP BY api");
  while (count.ready() && count.step() == SQLITE_ROW)
    saved.objects[count.text(0)].reserve(static_cast<size_t>(count.integer(1, 0)));
  ObjectRows* rows = nullptr;
  std::string api;
  while (objects.step() == SQLITE_ROW) {
    if (!rows || objects.text(0) != api) rows = &saved.objects[api = objects.text(0)];
    rows->push_back({objects.text(1), objects.text(2), objects.text(3), objects.text(4), objects.text(5),
                     objects.text(7), objects.text(8), objects.integer(6, -1), objects.text(9), objects.text(10),
                     objects.text(11)});
  }
  return std::optional<Saved>(std::move(saved));
}

// ---------------------------------------------------------------- checkpoints

namespace {

// `from` hard-linked as `to`; one already there is taken when it is that same file.
bool link_file(const std::string& from, const std::string& to) {
  if (hard_link(from, to)) return true;
  struct stat a {
  }, b{};
  return errno == EEXIST && ::stat(from.c_str(), &a) == 0 && ::stat(to.c_str(), &b) == 0 && a.st_dev == b.st_dev &&
         a.st_ino == b.st_ino;
}

// Links each byte file `files` lists (one a row) from the folder `from` into `to`;
// `what` names the failure.
Outcome<bool> link_listed(Statement& files, const std::string& from, const std::string& to, const char* what) {
  while (files.step() == SQLITE_ROW) {
    std::string file = files.text(0);
    if (!plain_file_name(file) || !link_file(from + "/" + file, to + "/" + file))
      return state_file_error(what, from + "/" + file);
  }
  return true;
}

}  // namespace

Outcome<bool> StateDatabase::checkpoint_to(const std::string& dir) {
  std::lock_guard<std::mutex> hold(connection_);
  if (!db_) return make_error(ErrorKind::config, "StateDatabase", "the state database " + path_ + " is not open");
  if (prepared_) commit_queued();  // every change answered is in the checkpoint
  if (::mkdir(dir.c_str(), 0700) != 0 || ::mkdir((dir + "/bytes").c_str(), 0700) != 0)
    return state_file_error("cannot create", dir);
  Statement vacuum(db_, "VACUUM INTO ?1");
  if (!vacuum.ready() || !vacuum.bind({dir + "/state.db"}).run()) return failure("cannot checkpoint");
  Statement files(db_, "SELECT file FROM byte_files UNION ALL SELECT file FROM objects WHERE file IS NOT NULL");
  if (!files.ready()) return failure("cannot read the byte files of");
  if (auto linked = link_listed(files, bytes_dir_, dir + "/bytes", "cannot link into the checkpoint"); !linked.ok())
    return linked;
  if (!fsync_directory(dir + "/bytes") || !fsync_directory(dir)) return state_file_error("cannot flush", dir);
  return true;
}

// The byte files of the attached checkpoint in `dir`, linked into the folder of bytes.
Outcome<bool> StateDatabase::link_checkpoint_files(const std::string& dir) {
  Statement version(db_, "PRAGMA checkpoint.user_version");
  if (!version.ready() || version.step() != SQLITE_ROW || std::atoi(version.text(0).c_str()) != kSchemaVersion)
    return make_error(ErrorKind::config, "BadCheckpoint",
                      "the checkpoint " + dir + " is not of this cloudlua's schema");
  Statement files(db_, kCheckpointFiles);
  if (!files.ready()) return failure("cannot read the byte files of the checkpoint for");
  if (auto linked = link_listed(files, dir + "/bytes", bytes_dir_, "cannot link from the checkpoint"); !linked.ok())
    return linked;
  if (!fsync_directory(bytes_dir_)) return state_file_error("cannot flush", bytes_dir_);
  return true;
}

namespace {

// The checkpoint in `dir` brought up to this schema when it is of an older one (taken by
// an older cloudlua): migrated in place as a state database is at start. One of a newer
// schema is refused by link_checkpoint_files().
Outcome<bool> upgrade_checkpoint(const std::string& dir) {
  std::string path = dir + "/state.db";
  sqlite3* raw = nullptr;
  int version = kSchemaVersion;
  if (sqlite3_open_v2(path.c_str(), &raw, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOFOLLOW, nullptr) == SQLITE_OK) {
    Statement read(raw, "PRAGMA user_version");
    if (read.ready() && read.step() == SQLITE_ROW) version = std::atoi(read.text(0).c_str());
  }
  sqlite3_close(raw);
  if (version >= kSchemaVersion) return true;
  StateDatabase old(path, ::write, dir + "/bytes");
  return old.open(false);
}

}  // namespace

// The checkpoint's byte files are linked in first, so that its records, once committed,
// name files that are there; a crash before the commit leaves links no record names,
// removed at the next start.
Outcome<bool> StateDatabase::restore_from(const std::string& dir) {
  std::lock_guard<std::mutex> hold(connection_);
  if (!db_) return make_error(ErrorKind::config, "StateDatabase", "the state database " + path_ + " is not open");
  if (prepared_) commit_queued();  // the changes queued before are committed first, as answered
  if (auto upgraded = upgrade_checkpoint(dir); !upgraded.ok()) return upgraded;
  {
    Statement attach(db_, "ATTACH DATABASE ?1 AS checkpoint");
    if (!attach.ready() || !attach.bind({dir + "/state.db"}).run())
      return failure("cannot read the checkpoint " + dir + " for");
  }
  Outcome<bool> done = link_checkpoint_files(dir);
  const char* copy =
      "BEGIN IMMEDIATE; DELETE FROM main.meta; DELETE FROM main.records; DELETE FROM main.objects;"
      "DELETE FROM main.byte_files; INSERT INTO main.meta SELECT * FROM checkpoint.meta;"
      "INSERT INTO main.records SELECT * FROM checkpoint.records; INSERT INTO main.objects SELECT * FROM "
      "checkpoint.objects;"
      "INSERT INTO main.byte_files SELECT * FROM checkpoint.byte_files; COMMIT;";
  if (done.ok() && sqlite3_exec(db_, copy, nullptr, nullptr, nullptr) != SQLITE_OK) {
    done = failure("cannot restore the checkpoint " + dir + " into");
    sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
  }
  sqlite3_exec(db_, "DETACH DATABASE checkpoint", nullptr, nullptr, nullptr);
  if (done.ok()) done = open_locked(true, {});
  return done;
}

// ---------------------------------------------------------------- the owner

namespace {

// The PID an earlier version's lock file `fd` names, read a few times over 0.1 s (its
// holder wrote it just after taking the lock); "unknown" when it names none.
std::string holder_of(int fd) {
  for (int tries = 0; tries < 20; ++tries) {
    char text[32] = {};
    ssize_t n = ::pread(fd, text, sizeof text - 1, 0);
    long pid = n > 0 ? std::strtol(text, nullptr, 10) : 0;
    if (pid > 0) return std::to_string(pid);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return "unknown";
}

// The PID of the process holding a flock(2) lock on the file `st`, as /proc/locks
// lists it ("1: FLOCK  ADVISORY  WRITE 4242 08:01:1234567 0 EOF"); the device too
// when it matches, since a layered file system may show another; "unknown" when none.
std::string flock_holder(const struct stat& st) {
  std::FILE* locks = std::fopen("/proc/locks", "re");
  if (!locks) return "unknown";
  std::string by_inode = "unknown", by_both;
  char line[256];
  while (by_both.empty() && std::fgets(line, sizeof line, locks)) {
    char kind[16] = {};
    long pid = 0;
    unsigned major_id = 0, minor_id = 0;
    unsigned long long inode = 0;
    if (std::sscanf(line, "%*d: %15s %*s %*s %ld %x:%x:%llu", kind, &pid, &major_id, &minor_id, &inode) != 5 ||
        std::strcmp(kind, "FLOCK") != 0 || pid <= 0 || inode != st.st_ino)
      continue;
    if (makedev(major_id, minor_id) == st.st_dev) by_both = std::to_string(pid);
    else by_inode = std::to_string(pid);
  }
  std::fclose(locks);
  return by_both.empty() ? by_inode : by_both;
}

// StateInUse: the state at `path` is held by `holder` (a PID, or "unknown").
Error state_in_use(const std::string& path, const std::string& holder, const std::string& by) {
  return make_error(ErrorKind::config, "StateInUse",
                    "the state " + path + " is in use by " + by + " (pid " + holder +
                        "): one process at a time owns a state, whatever name reaches its file; stop that one, "
                        "or give another --state FILE");
}

// Why the state file `path` (open as `fd`, `st`) is not taken by the name it was given,
// or "": a symbolic link or a second name (a hard link) would give SQLite's journal, kept
// beside the name (FILE-wal, FILE-shm), a second place.
std::string name_problem(const std::string& path, bool link, const struct stat& st) {
  const std::string why = ": SQLite keeps a state's journal beside the name it is given (" + path + "-wal, " + path +
                          "-shm), so that two names of one file would lose changes; ";
  if (link) {
    char* target = ::realpath(path.c_str(), nullptr);
    std::string to = target ? target : "the file it points to";
    std::free(target);
    return "the state file " + path + " is a symbolic link" + why + "give --state " + to + " itself";
  }
  if (st.st_nlink > 1)
    return "the state file " + path + " has " + std::to_string(st.st_nlink) + " names (hard links)" + why +
           "remove the other names (find / -xdev -samefile " + path + " lists them) or give --state a copy";
  return "";
}

}  // namespace

// The state file opened without following a link (made empty when there is none; SQLite
// takes an empty file as a new database), or, at a link, opened through it only to name
// the serve that holds it. Locked before anything else is looked at, so that a second
// serve by any name is refused as StateInUse; then a name serve does not take is refused.
Outcome<std::unique_ptr<StoreLock>> StoreLock::take(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
  bool link = fd < 0 && errno == ELOOP;
  if (link) fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  struct stat st {};
  if (fd < 0 && !link) return state_file_error("cannot open the state file", path);
  if (fd >= 0 && ::fstat(fd, &st) != 0) {
    Error e = state_file_error("cannot examine the state file", path);
    ::close(fd);
    return e;
  }
  if (fd >= 0 && ::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    int failed = errno;
    ::close(fd);
    errno = failed;
    if (failed != EWOULDBLOCK) return state_file_error("cannot lock the state file", path);
    return state_in_use(path, flock_holder(st), "another cloudlua serve");
  }
  if (std::string problem = name_problem(path, link, st); !problem.empty()) {
    if (fd >= 0) ::close(fd);
    return make_error(ErrorKind::config, "StateFile", problem);
  }
  auto lock = std::unique_ptr<StoreLock>(new StoreLock(fd));
  if (auto earlier = lock->take_earlier(path); !earlier.ok()) return earlier.error();
  return lock;
}

// An earlier version locked `path`.lock instead: when that file is there it is locked
// too (never made, written or removed), so that such a serve still running is refused.
Outcome<bool> StoreLock::take_earlier(const std::string& path) {
  std::string file = path + ".lock";
  earlier_fd_ = ::open(file.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (earlier_fd_ < 0 || ::flock(earlier_fd_, LOCK_EX | LOCK_NB) == 0) return true;
  if (errno != EWOULDBLOCK) return state_file_error("cannot lock", file);
  return state_in_use(path, holder_of(earlier_fd_), "an earlier version's cloudlua serve");
}

StoreLock::~StoreLock() {
  ::close(fd_);
  if (earlier_fd_ >= 0) ::close(earlier_fd_);
}

Outcome<int> open_own_folder(const std::string& path, const std::string& what) {
  if (::mkdir(path.c_str(), 0700) != 0 && errno != EEXIST) return state_file_error("cannot create " + what, path);
  auto unsafe = [&](const std::string& why) {
    return make_error(ErrorKind::config, "UnsafeFolder",
                      what + " " + path + " " + why +
                          ": serve uses only a folder it made, or one of this user's that "
                          "no one else can write; remove it or move it away, or give another --state FILE");
  };
  int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  struct stat st {};
  if (fd < 0) {
    int failed = errno;
    if (::lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode)) return unsafe("is a symbolic link");
    if (::lstat(path.c_str(), &st) == 0 && !S_ISDIR(st.st_mode)) return unsafe("is not a folder");
    errno = failed;
    return state_file_error("cannot open " + what, path);
  }
  std::string why;
  if (::fstat(fd, &st) != 0) why = std::string("cannot be examined (") + std::strerror(errno) + ")";
  else if (st.st_uid != ::geteuid())
    why =
        "belongs to uid " + std::to_string(st.st_uid) + ", not to this user (uid " + std::to_string(::geteuid()) + ")";
  else if (st.st_mode & (S_IWGRP | S_IWOTH)) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
    why = std::string("can be written by other users (mode ") + mode + ")";
  }
  if (why.empty()) return fd;
  ::close(fd);
  return unsafe(why);
}

// ---------------------------------------------------------------- start

Outcome<bool> open_state(Platform& platform, StateDatabase& db, const std::string& path,
                         std::unique_ptr<StoreLock>* lock) {
  if (is_json_state_file(path)) {
    Outcome<bool> imported = import_state_file(platform, path, lock);
    if (!imported.ok()) return imported;
  }
  Outcome<bool> opened = db.open();
  if (opened.ok()) opened = platform.keep_records_in(&db);
  if (!opened.ok()) {
    Error e = opened.error();
    if (e.message.find(path) == std::string::npos) e.message = "state " + path + ": " + e.message;
    return e;
  }
  return true;
}

}  // namespace cloud
