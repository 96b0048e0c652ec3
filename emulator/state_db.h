// The database of `cloudlua serve --state PATH`: SQLite in PATH, bytes in files of their
// own in PATH.bytes/. A change (the records the services changed (RecordStore), the
// platform's header, and which byte file holds which bytes) is queued by save(); the
// changes queued together are committed as one (group commit: the first caller of
// durable() that finds its change not committed commits every change queued, in one
// transaction, while later changes queue behind it). Before that commit their byte
// files are flushed (each by its own request's thread when it can: prepare()) and
// their folder once; the database is in WAL mode with synchronous=FULL (a database
// SQLite will not put in WAL mode is refused at open), so the commit has reached the
// disk when it returns, and a change is answered only then. Byte files a committed
// change no longer names are removed after it; files no committed change names (a
// crash between writing them and committing) are removed at the next start. The cost
// of a change is that of its records and their bytes, not of what is stored; its
// statements are prepared once. Any thread may save or wait.
#pragma once

#include <sys/types.h>
#include <unistd.h>

#include <functional>
#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core/base/error.h"
#include "emulator/service.h"

struct sqlite3;

namespace cloud {

class StateDatabase : public RecordStore {
 public:
  // The database in `path`, bytes in `bytes_dir` ("": `path`.bytes/), written with
  // `write` (the seam for tests of a full disk).
  explicit StateDatabase(std::string path, WriteCall write = ::write, std::string bytes_dir = "");
  ~StateDatabase() override;

  // Opens the database, creating it and its folder of bytes when there are none, and
  // brings its schema to this version (migrations, in one transaction each). A database
  // of a newer schema is refused. With `collect`, byte files the database does not name
  // are removed. `adopted`: bytes already in the folder by name (name -> file), taken
  // as they are when a save puts them (an import from a state file).
  Outcome<bool> open(bool collect = true, std::map<std::string, std::string> adopted = {});
  // Closes the database (its WAL checkpointed into it).
  void close();

  ByteStore& bytes() override;
  // The folder of byte files: a file made there (a body streamed to it) is linked in by
  // bytes().put, not copied.
  const std::string& bytes_folder() const { return bytes_dir_; }
  // The change queued (not yet durable: see durable()).
  Outcome<bool> save(const json& header, const std::map<std::string, StateRecords>& changes) override;
  std::uint64_t last_saved() const override;
  // Commits every change queued when `change` is not committed yet: their byte files'
  // folder flushed, then one commit. An error when the commit of `change` failed.
  Outcome<bool> durable(std::uint64_t change) override;
  // Bytes about to be saved whole from their file in the folder of bytes (a body streamed
  // there), flushed now by the caller's thread, before the platform's lock: many callers
  // flush at once, and their change does not flush them again.
  void prepare(const SharedBytes& bytes) override;
  // What is saved, the changes queued committed first; after a failed commit, changes
  // are refused until this has been read again.
  Outcome<std::optional<Saved>> load() override;
  // How many changes were saved and in how many commits, since this object was made.
  struct Commits {
    std::uint64_t changes = 0;
    std::uint64_t commits = 0;
  };
  Commits commits() const;
  // A document the database keeps beside the platform's records, by name (the world's
  // accounts: "accounts"), each put in one transaction of its own; `meta` is nullopt
  // when none was put (a database of an earlier version).
  Outcome<bool> put_meta(const std::string& name, const json& value);
  Outcome<std::optional<json>> meta(const std::string& name);

  // A checkpoint in the folder `dir` (made here; it must not exist): the records in
  // `dir`/state.db, written by VACUUM INTO in one read transaction, and the byte files
  // they name hard-linked into `dir`/bytes/ (shared, not copied: a byte file is never
  // changed once written). The caller holds the platform still meanwhile.
  Outcome<bool> checkpoint_to(const std::string& dir);
  // The checkpoint in `dir` in place of what the database holds: its byte files linked
  // into the folder of bytes, then its records copied over this database's in one
  // transaction, then the database reopened (files it no longer names removed). A
  // checkpoint of an older schema is first brought up to this one, in its folder.
  Outcome<bool> restore_from(const std::string& dir);

  // The schema version this build writes.
  static int schema_version();
  // How many SQL statements the state databases of this process have prepared: those of
  // a change once, when a database is opened, never for each change.
  static std::size_t statements_prepared();

 private:
  class Files;
  struct Prepared;
  Outcome<bool> open_locked(bool collect, std::map<std::string, std::string> adopted);
  Outcome<bool> use_wal();
  Outcome<bool> migrate();
  Outcome<bool> link_checkpoint_files(const std::string& dir);
  Outcome<bool> apply(const std::map<std::string, StateRecords>& changes, std::set<std::string>& dropped);
  struct Queued {  // a change saved, not yet committed
    json header;
    std::map<std::string, StateRecords> changes;
    std::vector<std::string> written;  // the names of the byte files written for it
  };
  bool put_object(const std::string& api, const ObjectRow& o, std::set<std::string>& named);
  void commit_queued();
  Outcome<bool> apply_batch(const std::vector<Queued>& batch, std::set<std::string>& dropped);
  void fail_commit(std::vector<std::string>& written, const Error& why);
  void close_locked();
  Error failure(const std::string& what) const;
  std::string path_;
  std::string bytes_dir_;
  sqlite3* db_ = nullptr;
  std::unique_ptr<Files> files_;
  std::unique_ptr<Prepared> prepared_;     // the statements of a change, while open
  std::mutex connection_;                  // db_, prepared_ and failed_: one committer or reader at a time
  std::mutex queue_mutex_;                 // queue_ and refusing_
  std::vector<Queued> queue_;              // changes saved, not yet committed, in order
  bool refusing_ = false;                  // a commit failed: changes are refused until load() is read again
  std::atomic<std::uint64_t> saved_{0};    // changes saved, numbered from 1
  std::atomic<std::uint64_t> durable_{0};  // the last change committed, or failed to
  std::atomic<std::uint64_t> commits_{0};  // commits made
  std::atomic<bool> any_failed_{false};    // a commit failed once: durable() looks at failed_
  std::map<std::uint64_t, std::pair<std::uint64_t, Error>> failed_;  // last change of a failed commit -> its first, why
};

// The one owner of the state at `path`: an exclusive flock(2) on the state file itself
// (one lock per file, whatever name reaches it: a hard or a symbolic link to it is
// refused as the same state), held for as long as this object lives (the process's
// life, for serve). The holder's PID is read from /proc/locks for the message.
class StoreLock {
 public:
  // The lock, or StateInUse naming the PID that holds it (a second serve on the same
  // state, even in this process); StateFile when `path` is a symbolic link or has a
  // second name (SQLite's journal follows the name), or cannot be opened.
  static Outcome<std::unique_ptr<StoreLock>> take(const std::string& path);
  // Takes over `older`'s lock of an earlier version's lock file, when it holds one (the
  // import's new database taking the state file's place).
  void keep_earlier_of(StoreLock& older) { std::swap(earlier_fd_, older.earlier_fd_); }
  ~StoreLock();
  StoreLock(const StoreLock&) = delete;
  StoreLock& operator=(const StoreLock&) = delete;

 private:
  explicit StoreLock(int fd) : fd_(fd) {}
  Outcome<bool> take_earlier(const std::string& path);
  int fd_;
  int earlier_fd_ = -1;  // an earlier version's lock file, `path`.lock, when there
};

// The folder `path` open (O_DIRECTORY|O_NOFOLLOW), made with mode 0700 when there is
// none, and checked as this user's own: not a link, owned by our uid, writable by
// nobody else. Anything else is refused (UnsafeFolder, naming `what` and why), since
// another user could plant links or files in it.
Outcome<int> open_own_folder(const std::string& path, const std::string& what);

// `serve --state PATH` at start: a JSON state file in PATH is imported into a database
// (import_state_file, emulator/state_import.h; `lock`, when given, moved onto the new
// database before it takes PATH's place); then the database in PATH is opened and
// `platform` restored from it, or, when it holds nothing yet, saved to it whole. From
// then on every change of `platform` is saved to `db` before it is answered.
Outcome<bool> open_state(Platform& platform, StateDatabase& db, const std::string& path,
                         std::unique_ptr<StoreLock>* lock = nullptr);

}  // namespace cloud
