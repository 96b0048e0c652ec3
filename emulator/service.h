// The emulated platform, split by API: each Service owns the state of its resources
// and the behaviour of its operations, independent of HTTP. Each service has one
// handler table keyed by operation name; handlers take the matched Operation and the
// parsed, validated arguments of a call and return the result document (shaped as the
// spec's samples) or an API error. The Platform checks the tables against the model
// (every operation handled, every handler an operation's), serialises every call
// behind one mutex, so services need no locking of their own, and gives them a clock
// and an id source.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <ctime>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/wire/checksum.h"
#include "core/base/error.h"
#include "core/model/model.h"
#include "emulator/blob.h"

namespace cloud {

// An error the platform answers with: HTTP status, code, message, extra fields
// (XML elements or JSON members of the error body).
struct ApiError {
  int status = 400;
  std::string code;
  std::string message;
  json details = json::object();
};

// A range of stored bytes that is an answer's body, sent as it stands: a GetObject
// answer references an object's bytes (no copy; a file held open), and a later
// PutObject of the key replaces the store's pointer while the answer still holds the
// old bytes.
struct BytesSlice {
  SharedBytes bytes;  // nullptr: none (the body is in the result, if any)
  std::uint64_t offset = 0;
  std::uint64_t length = 0;
};

struct HandlerResult {
  bool ok = true;
  int status = 200;
  json result = json::object();
  ApiError error;
  BytesSlice payload;  // the operation's output payload (GetObject's bytes), kept out of `result`

  static HandlerResult success(json result, int status = 200) { return {true, status, std::move(result), {}, {}}; }
  static HandlerResult failure(int status, std::string code, std::string message, json details = json::object()) {
    return {false, status, json::object(), {status, std::move(code), std::move(message), std::move(details)}, {}};
  }
  // A failure of the server's own (a disk, the database): S3's 500 InternalError with
  // no detail (it would show the server's paths and errors to the client); `detail`
  // goes to the server's stderr, redacted.
  static HandlerResult internal(const std::string& detail);
};

// A read operation's answer: { <wrapper> = the record called `name` }, or 404 with the
// platform's `code` and "no <what> named '<name>'" when there is none.
inline HandlerResult read_record(const std::map<std::string, json>& records, const std::string& name,
                                 const char* wrapper, const char* code, const char* what) {
  auto it = records.find(name);
  if (it == records.end())
    return HandlerResult::failure(404, code, std::string("no ") + what + " named '" + name + "'");
  return HandlerResult::success({{wrapper, it->second}});
}

// The latest the platform's clock may read: 9000-01-01T00:00:00Z. A date is written with
// a four-digit year (format_date: up to 9999), and times set later than now (an
// expiry, a transition due) need room after it; advance() goes no further.
constexpr std::time_t kLatestClock = 221845392000;

// Platform time in seconds. Virtual time (advance()) always counts; real time counts
// too while the clock runs in real mode (`serve`, and sessions outside `cloudlua test`).
// Switching modes keeps now() where it is, so nothing due jumps.
class Clock {
 public:
  explicit Clock(bool real = true) : real_(real), start_(std::chrono::steady_clock::now()) {}
  double now() const;
  // Whether platform time `at` has come. Times are sums of fractions of seconds, which
  // floating point does not add exactly: a microsecond's slack makes advance(9),
  // advance(1), advance(20) reach what was due 30 s after.
  bool reached(double at) const { return at <= now() + 1e-6; }
  void advance(double seconds) { base_ += seconds, advanced_ += seconds; }
  void set_real(bool real);
  bool real() const { return real_; }
  // Virtual seconds advanced so far (they shift the wall-clock stamps too).
  double advanced() const { return advanced_; }
  // Carries on from a saved clock: now() is `now` from here on, `advanced` as saved.
  void resume(double now, double advanced);
  // Wall-clock ISO 8601 UTC of the platform's now plus `later` seconds.
  std::string iso8601(double later = 0) const;
  std::time_t wall(double later = 0) const;  // the same, as seconds since 1970
  // Seconds the clock may still move on before its wall clock reads kLatestClock.
  double room() const;
  // Wall-clock times from `epoch` (seconds since 1970) plus now(), not from the
  // machine's clock: what a seed makes repeatable.
  void set_epoch(double epoch) { epoch_ = epoch; }

 private:
  bool real_;
  double epoch_ = -1;                            // < 0: the machine's wall clock
  std::chrono::steady_clock::time_point start_;  // when real time began to count
  double base_ = 0;                              // now() when real time began to count
  double advanced_ = 0;
};

// A numeric setting of the platform (cloud.emulator.configure{}): transition durations
// in seconds, the minimum part size in bytes.
struct PlatformSetting {
  const char* name;
  double default_value;
  const char* doc;
  bool transition = false;  // the duration of a transition (`serve --settle` sets them all)
};

// Every setting there is, with its default; the one list configure{} checks names against.
const std::vector<PlatformSetting>& platform_settings();

// A request's body as the server received it, kept out of the call's arguments so
// that its bytes go into the store without a copy (in memory, or the file it was
// streamed to); its MD5 and the checksums it names, taken as it arrived.
struct RequestBody {
  SharedBytes bytes;                                   // a handler may take them; nullptr: none kept
  std::string md5;                                     // raw 16 bytes; empty: not hashed yet
  std::map<ChecksumAlgorithm, std::string> checksums;  // raw, those taken as it arrived
};

// Who acts: an account is 12 digits, as AWS's (emulator/worlds.h makes them from access
// keys); the built-in test key's is fixed, as LocalStack's; the requester of an unsigned
// request is kAnonymous, which no account can be.
inline constexpr const char* kBuiltInAccountId = "000000000000";
inline constexpr const char* kAnonymous = "anonymous";

// What every service may use: the clock, the region, the APIs' base URLs, fresh ids
// and the settings.
struct PlatformContext {
  Clock clock;
  std::string region = "jp-east-1";
  std::map<std::string, std::string> endpoints;  // api -> base URL, once serving
  unsigned long long counter = 0;
  std::map<std::string, double> settings;  // those changed from their defaults
  // Whether services note the records each change touches (Service::changed_records):
  // only while a RecordStore keeps them, so that the embedded emulator pays nothing.
  bool note_records = false;
  // The account that owns what the platform makes on its own (fixtures) and that a call
  // or seed without an account acts as: the world's first; and the account acting (the
  // signer of the request or seed being handled, `owner` outside one; kAnonymous an
  // unsigned request's), set by Platform under its lock.
  // What it may do is emulator/access.h's to say.
  std::string owner = kBuiltInAccountId;
  std::string account = owner;
  // The accounts of the world (a grant may name only one of them), the owner first.
  std::vector<std::string> accounts{owner};

  std::string next_id(const std::string& prefix);  // prefix + 12 hex digits
  std::string uuid();                              // 8-4-4-4-12 hex
  std::string nrn(const std::string& service, const std::string& kind);
  double setting(const std::string& name) const;  // the value, else the default
};

// Where the records keep the bytes of objects and parts, and a restore finds them
// again: under a name the service gives them, unique to those bytes (an object's
// version id, a part's id), so that a store keeping them apart writes each only once.
// Records held in memory (HeldRecords) share the blobs; the database of `serve
// --state` keeps them in files of their own beside it, and gives back blobs of those
// files: a restart reads no bytes, and bytes once saved leave memory.
class ByteStore {
 public:
  virtual ~ByteStore() = default;
  // Keeps `bytes` under `name` (read a piece at a time); throws std::runtime_error when
  // they cannot be kept. The bytes as the store keeps them: its file, or `bytes`.
  virtual SharedBytes put(const std::string& name, const SharedBytes& bytes) = 0;
  // The bytes kept under `name` (a file is not read); throws std::runtime_error when
  // there are none.
  virtual SharedBytes get(const std::string& name) const = 0;
  // The same, `size` bytes long as their record says: a store that would look the size
  // up (a file's) need not.
  virtual SharedBytes get(const std::string& name, std::uint64_t size) const {
    (void)size;
    return get(name);
  }
};

// A stored object's record in columns (kind "object"), named by its bucket and key: a
// large state is mostly objects, and a restart reads them all, so the database keeps
// them typed rather than as JSON documents. `checksum` is the JSON text of the checksum
// by member name ("{}": none); `size` the length of its bytes, -1 when not known (saved
// before it was kept); its bytes are named by its version id.
struct ObjectRow {
  std::string bucket, key, etag, last_modified, version_id, checksum = "{}", upload_id;
  std::int64_t size = -1;
  // The object's content headers and user metadata (JSON), and a multipart upload's
  // object's part sizes under kPartSizesMember (the row has no column of its own).
  std::string headers = "{}";
  // Its owner's account ("": saved before owners were kept, the built-in account's) and
  // the JSON of the grants on it ("": the canned private), as emulator/access.h keeps them.
  std::string owner = "", grants = "";
};
inline constexpr const char* kPartSizesMember = "PartSizes";

// One record of a service's state, as a store that saves only what changed keeps it
// (`serve --state`'s database): `kind` and `key` name it, `value` is its document, or
// null when it is gone. An object (kind "object") is named by `bucket` and `key`, and
// its record is `object` in place of a document (none: it is gone). The kind "*" (no
// key, no value) says that every record of the service went (a reset or a restore),
// before the records that follow it.
struct StateRecord {
  std::string kind, key;
  json value;
  std::optional<ObjectRow> object = std::nullopt;
  std::string bucket = "";  // kind "object": the bucket of the object `key`
};
using StateRecords = std::vector<StateRecord>;
// Every record of a service, by kind then key, and its objects in order of bucket and
// key: what a store gives back to restore_records().
using RecordsByKind = std::map<std::string, std::map<std::string, json>>;
using ObjectRows = std::vector<ObjectRow>;

class Service {
 public:
  // What the service does for one operation: the matched operation, its validated
  // arguments and the payload the server kept out of them (Platform::handle's `body`;
  // nullptr: it is in the arguments, if any) in, the answer out.
  using Handler = std::function<HandlerResult(const Operation&, const json&, RequestBody*)>;
  using Handlers = std::map<std::string, Handler>;

  Service(const char* api, PlatformContext& context) : api_(api), ctx_(context) {}
  virtual ~Service() = default;
  const char* api() const { return api_; }  // the API it serves: "storage", ...
  // Operation name -> handler, one row per operation of its API. Adding an operation
  // to the model means adding its row here and the handler it names.
  virtual Handlers handlers() = 0;
  virtual void load_fixtures() = 0;             // the documented default set
  virtual void seed(const json& fixtures) = 0;  // its part of cloud.emulator.seed{}
  virtual void settle() {}                      // apply transitions that are due
  virtual json state() const = 0;               // its part of cloud.emulator.state()
  virtual void reset() = 0;                     // empty
  // Whether its resources' names are the world's, one of each name for all accounts (S3's
  // bucket names), rather than each account's own. A service whose names are each
  // account's is made once for each account that acts on it (Platform), so that an
  // account sees, names and owns only its own.
  virtual bool names_are_global() const { return false; }
  // Whether the account `id` owns any of its resources (an account that does is not removed).
  virtual bool owns(const std::string& id) const {
    (void)id;
    return false;
  }
  // The one way its state leaves and comes back (`serve --state`, checkpoints): records.
  // Everything needed to carry on: resources, pending transitions (platform times),
  // counters. changed_records() gives the records changed since the last call, their
  // bytes put to `bytes` (every record, after a "*", with `all`); restore_records()
  // takes all of them, in place of all it holds, and throws (json::exception,
  // std::runtime_error) on records of another form. The cost of a change is that of
  // what it changed, not of what is stored. The defaults make the service one record
  // ("service", "": record()): for a service whose state stays small. (The records
  // are the service's to take apart: moved from, not copied.)
  virtual StateRecords changed_records(ByteStore& bytes, bool all) {
    (void)bytes, (void)all;
    return {{"service", "", record()}};
  }
  virtual void restore_records(RecordsByKind& records, ObjectRows& objects, const ByteStore& bytes) {
    (void)objects, (void)bytes;
    restore_record(records.at("service").at(""));
  }

 private:
  const char* api_;

 protected:
  // A small service's whole state as its one record, and back (the defaults above); a
  // service that overrides neither these nor those is a mistake, caught by the first save.
  virtual json record() const { throw std::logic_error(std::string("the ") + api_ + " service keeps no records"); }
  virtual void restore_record(const json& saved) {
    (void)saved;
    throw std::logic_error(std::string("the ") + api_ + " service keeps no records");
  }
  PlatformContext& ctx_;  // the clock, ids and settings every service shares
};

// What keeps the platform's state as records (the database of `serve --state`): after
// each change the platform hands save() its header (the records without its services:
// the clock, ids, settings) and, by API, the records its services changed, their bytes
// put through bytes(); then, its lock let go, it waits for durable() before answering
// (a store may commit the changes that arrive meanwhile as one). An error makes the
// change's answer an error and undoes it: the platform is restored from load(), the
// state last saved.
class RecordStore {
 public:
  virtual ~RecordStore() = default;
  virtual ByteStore& bytes() = 0;
  virtual Outcome<bool> save(const json& header, const std::map<std::string, StateRecords>& changes) = 0;
  // The number of the last change saved (numbered from 1; 0: none), for durable().
  virtual std::uint64_t last_saved() const { return 0; }
  // Returns once change number `change` and every one before it are kept for good (at
  // once for a store in memory); an error when it could not be.
  virtual Outcome<bool> durable(std::uint64_t change) {
    (void)change;
    return true;
  }
  // `bytes`, a request's body about to be saved, made ready to keep before the
  // platform's lock is taken (a file flushed); nothing for a store in memory.
  virtual void prepare(const SharedBytes& bytes) { (void)bytes; }
  // The header saved and every service's records, by API: { header, records }; none
  // saved yet: nullopt in an Outcome that is ok.
  struct Saved {
    json header;
    std::map<std::string, RecordsByKind> records;
    std::map<std::string, ObjectRows> objects;  // by API
  };
  virtual Outcome<std::optional<Saved>> load() = 0;
};

// The handler that calls member function `fn` of `service`: a row of a handler table.
// An operation that takes a payload has `fn` take the body too; the others do not.
template <class S>
Service::Handler handler(S* service, HandlerResult (S::*fn)(const Operation&, const json&)) {
  return [service, fn](const Operation& op, const json& input, RequestBody*) { return (service->*fn)(op, input); };
}
template <class S>
Service::Handler handler(S* service, HandlerResult (S::*fn)(const Operation&, const json&, RequestBody*)) {
  return [service, fn](const Operation& op, const json& input, RequestBody* body) {
    return (service->*fn)(op, input, body);
  };
}

// A seed's bits spread over 64 (splitmix64), so that seeds 1 and 2 start far apart.
std::uint64_t mix_seed(std::uint64_t x);

class Platform {
 public:
  // The services, with their handler tables matched to the operations of `model`.
  Platform(std::string region, const Model& model);

  // Whether the handler tables and the model agree: every operation of the model has
  // a handler and every handler names an operation of its service's API. An error
  // (EmulatorModelMismatch) naming each mismatch otherwise; the emulator will not start.
  Outcome<bool> check() const;
  // Runs the handler of `op` (an operation of the model) on validated arguments.
  // With `body` (the server's calls) the payload comes in as `body` when its bytes are
  // set (in place of the argument), and an output payload goes out as
  // HandlerResult::payload, referencing the stored bytes; without, both are members
  // of the input and result documents.
  // `account`: the caller's account id (Worlds::caller of the key it was signed
  // with), what the services' access rules ask of (PlatformContext::account);
  // kAnonymous for an unsigned request (it owns nothing); none for a call made
  // without a server, which acts as the world's owner.
  HandlerResult handle(const Operation& op, const json& input, RequestBody* body = nullptr,
                       const std::optional<std::string>& account = std::nullopt);
  // The account fixtures belong to, and that a call or seed without one acts as.
  void set_owner(const std::string& id);
  // The world's accounts (PlatformContext::accounts), its owner first.
  void set_accounts(std::vector<std::string> ids);
  // Whether the account `id` owns any resource.
  bool owns(const std::string& id);

  // Fixtures, seeds and the state shown are the owner's, or those of `account`: the
  // world's buckets, and that account's resources of the APIs whose names are each
  // account's own (Service::names_are_global). With a store kept (keep_records_in), a
  // seed, a reset and an advance are saved, durably, before they return.
  void load_fixtures();
  Outcome<bool> seed(const json& fixtures, const std::optional<std::string>& account = std::nullopt);
  json state(const std::optional<std::string>& account = std::nullopt);
  Outcome<bool> reset();
  // Moves the clock on `seconds` (finite, 0 or more, and not past kLatestClock) and
  // settles what falls due; InvalidArgument saying what is allowed otherwise, nothing moved.
  Outcome<bool> advance(double seconds);
  void set_real_time(bool real);
  // From now on ids come from a counter that starts where `seed` says and times from
  // 2026-01-01T00:00:00Z plus the platform's time: the same seed and the same calls
  // give the same answers, byte for byte.
  void set_seed(std::uint64_t seed);
  std::time_t now_wall();  // the platform's wall-clock now
  // An unknown name or a negative value is refused, naming the known settings.
  Outcome<bool> set_setting(const std::string& name, double value);
  void set_endpoints(std::map<std::string, std::string> endpoints);
  // What a new world takes of this one: the settings changed from their defaults and
  // the APIs' base URLs.
  std::map<std::string, double> settings();
  std::map<std::string, std::string> endpoints();

  // Every record of the platform (the header: clock, ids, settings; every service's
  // records), to `store` at once: a copy (a checkpoint in memory). Not while a store
  // keeps the records (keep_records_in): that one's are copied whole instead.
  Outcome<bool> save_records_to(RecordStore& store);
  // The platform as `saved` says, its bytes from `bytes` (the records taken apart on the
  // way), in place of all it holds; records that fail change nothing (BadStateFile).
  // Time in real mode carries on from the saved clock plus the wall-clock time the
  // platform was down. The records kept (keep_records_in) follow.
  Outcome<bool> restore_records(RecordStore::Saved saved, const ByteStore& bytes);
  // The same from what `store` saved (an error when it saved nothing).
  Outcome<bool> restore_records_from(RecordStore& store);
  // The platform as `store` saved it, when it saved one (in place of all it holds);
  // then every record to it at once (all of them when it held none), and from then on
  // the records of every change before it is answered. An error when what it saved
  // cannot be read or restored, or the first save fails: no store is kept then.
  Outcome<bool> keep_records_in(RecordStore* store);
  // Runs `fn` with the platform's lock held: no call, change or save happens meanwhile,
  // so what `fn` copies of the store kept is consistent (a checkpoint).
  Outcome<bool> exclusive(const std::function<Outcome<bool>()>& fn);
  // Runs `replace`, which puts other records in the store kept (keep_records_in), and
  // restores the platform from them, under one hold of the lock (a checkpoint restored).
  Outcome<bool> reload_records(const std::function<Outcome<bool>()>& replace);

 private:
  void settle_all();
  void restore_header(const json& saved);
  void restore_records_unchecked(RecordStore::Saved& saved, const ByteStore& bytes);
  Outcome<bool> restore_records_locked(RecordStore::Saved saved, const ByteStore& bytes, bool checked);
  Outcome<bool> save_records_locked(RecordStore& store, bool all);
  Outcome<bool> save_durably_locked(RecordStore& store, bool all);
  Outcome<bool> load_records_locked(bool checked);
  json header_locked() const;
  HandlerResult saved(HandlerResult r, std::unique_lock<std::mutex>& lock);  // r, or the failure to save its change
  HandlerResult once_durable(HandlerResult r, std::unique_lock<std::mutex>& lock);
  HandlerResult undone(const Error& failed);
  void route();
  void bind(Service& service, std::map<const Operation*, Service::Handler>& handlers, bool note);
  // An account's own instances of the services whose names are each account's, other
  // than the owner's (those are services_), with their handlers; `changed`: since the
  // last save.
  struct AccountServices {
    std::vector<std::unique_ptr<Service>> services;
    std::map<const Operation*, Service::Handler> handlers;
    bool changed = false;
    Service* find(const std::string& api) const;
  };
  AccountServices& account_services(const std::string& id);  // made at its first use
  std::vector<Service*> services_of(const std::string& account);
  const Service::Handler& handler_for(const Operation& op, const Service::Handler& owners);
  Outcome<bool> keep_change_locked();
  mutable std::mutex mutex_;
  const Model& model_;
  PlatformContext context_;
  std::vector<std::unique_ptr<Service>> services_;         // one per API: the owner's, and the world's global names
  std::map<std::string, AccountServices> accounts_;        // by account id
  std::map<const Operation*, Service::Handler> handlers_;  // the model's operations, each to its handler
  std::vector<std::string> mismatches_;                    // where tables and model disagree
  std::atomic<RecordStore*> store_{nullptr};               // what keeps the records of every change, if anything
};

// The services, one per API (emulator/<api>.cpp).
std::unique_ptr<Service> make_cluster_service(PlatformContext& context);
std::unique_ptr<Service> make_storage_service(PlatformContext& context);
std::unique_ptr<Service> make_devops_service(PlatformContext& context);
std::unique_ptr<Service> make_catalog_service(PlatformContext& context);
// The zone a resource lands in when none is given, by region (spec, RestoreInstance).
std::string default_zone(const std::string& region);

}  // namespace cloud
