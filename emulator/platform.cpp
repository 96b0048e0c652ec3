// The Platform: dispatch to services through their handler tables, matched to the
// model's operations once, under one mutex; the clock, ids and resource names shared
// by every service.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <set>
#include <stdexcept>

#include "core/base/dates.h"
#include "core/base/suggest.h"
#include "core/net/redact.h"
#include "emulator/service.h"

namespace cloud {

double Clock::now() const {
  double real = real_ ? std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count() : 0;
  return base_ + real;
}

void Clock::set_real(bool real) {
  base_ = now();
  start_ = std::chrono::steady_clock::now();
  real_ = real;
}

void Clock::resume(double now, double advanced) {
  base_ = now;
  advanced_ = advanced;
  start_ = std::chrono::steady_clock::now();
}

std::time_t Clock::wall(double later) const {
  return epoch_ >= 0 ? static_cast<std::time_t>(epoch_ + now() + later)
                     : std::time(nullptr) + static_cast<std::time_t>(advanced_ + later);
}

double Clock::room() const {
  double wall_now = epoch_ >= 0 ? epoch_ + now() : static_cast<double>(std::time(nullptr)) + advanced_;
  return static_cast<double>(kLatestClock) - wall_now;
}

std::string Clock::iso8601(double later) const { return format_date(wall(later), DateForm::iso); }

const std::vector<PlatformSetting>& platform_settings() {
  static const std::vector<PlatformSetting> settings = {
      {"firewall_settle", 10, "seconds a firewall group stays PROCESSING (and its rules AUTHORIZING or REVOKING)",
       true},
      {"instance_restore", 60, "seconds a restored code-host server stays RESTORING", true},
      {"cluster_provision", 120, "seconds a restored cluster, its node pools and nodes stay PROVISIONING", true},
      {"mesh_upgrade", 30, "seconds a service-mesh cluster stays configuring after an upgrade", true},
      {"min_part_size", 5 * 1024 * 1024, "bytes a multipart part must have unless it is the last (EntityTooSmall)"},
      {"max_copy_size", static_cast<double>(Model::builtin().find("CopyObject")->limits.at("maxSourceBytes")),
       "bytes CopyObject copies at most (InvalidRequest above; the model's CopyObject limit, maxSourceBytes)"},
  };
  return settings;
}

std::string PlatformContext::next_id(const std::string& prefix) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%012llx", ++counter);
  return prefix + buf;
}

std::string PlatformContext::uuid() {
  char buf[40];
  std::snprintf(buf, sizeof buf, "00000000-0000-4000-8000-%012llx", ++counter);
  return buf;
}

// nrn:<provider>:<service>:<region>:<account>:<kind>:<uuid>, as the spec shapes it: the
// account is the one acting, whose resource it names.
std::string PlatformContext::nrn(const std::string& service, const std::string& kind) {
  return "nrn:ext:" + service + ":" + region + ":" + (account == kAnonymous ? owner : account) + ":" + kind + ":" +
         uuid();
}

double PlatformContext::setting(const std::string& name) const {
  auto it = settings.find(name);
  if (it != settings.end()) return it->second;
  for (const PlatformSetting& s : platform_settings())
    if (name == s.name) return s.default_value;
  throw std::logic_error("no platform setting named " + name);  // a typo in a service
}

namespace {

// The services, one per API.
using MakeService = std::unique_ptr<Service> (*)(PlatformContext&);
constexpr MakeService kServices[] = {make_cluster_service, make_storage_service, make_devops_service,
                                     make_catalog_service};

}  // namespace

Platform::Platform(std::string region, const Model& model) : model_(model) {
  context_.region = std::move(region);
  for (MakeService make : kServices) services_.push_back(make(context_));
  route();
}

// Matches every service's handler table to the operations of its API in the model,
// noting each operation without a handler and each handler without an operation.
void Platform::route() {
  std::set<std::string> served;
  for (auto& s : services_) served.insert(s->api()), bind(*s, handlers_, true);
  for (const Api& api : model_.apis())
    if (!served.count(api.name))
      mismatches_.push_back("the model's " + api.name + " API has no service in the emulator");
}

// `service`'s handler of each operation of its API, into `handlers`; with `note`, each
// mismatch noted too (those of an account's instances are the owner's already).
void Platform::bind(Service& service, std::map<const Operation*, Service::Handler>& handlers, bool note) {
  const std::string name = service.api();
  const Api* api = model_.api(name);
  Service::Handlers table = service.handlers();
  for (const Operation* op : api ? api->operations : std::vector<const Operation*>{}) {
    auto row = table.find(op->name);
    if (row == table.end()) {
      if (note)
        mismatches_.push_back(name + "." + op->name + " has no handler (add its row to the table in emulator/" + name +
                              ".cpp)");
      continue;
    }
    handlers[op] = std::move(row->second);
    table.erase(row);
  }
  for (const auto& row : table)
    if (note)
      mismatches_.push_back("the " + name + " service's handler " + row.first + " names no operation of the model's " +
                            name + " API");
}

Service* Platform::AccountServices::find(const std::string& api) const {
  for (const auto& s : services)
    if (api == s->api()) return s.get();
  return nullptr;
}

// The account's own services (those whose names are not global), empty at first: an
// account starts with nothing, as a new cloud account does.
Platform::AccountServices& Platform::account_services(const std::string& id) {
  auto [it, made] = accounts_.try_emplace(id);
  if (!made) return it->second;
  for (MakeService make : kServices) {
    std::unique_ptr<Service> s = make(context_);
    if (s->names_are_global()) continue;
    bind(*s, it->second.handlers, false);
    it->second.services.push_back(std::move(s));
  }
  return it->second;
}

// The services `account` acts through: the world's for global names, its own for the others.
std::vector<Service*> Platform::services_of(const std::string& account) {
  AccountServices* own = account == context_.owner ? nullptr : &account_services(account);
  std::vector<Service*> out;
  for (auto& s : services_) out.push_back(own && !s->names_are_global() ? own->find(s->api()) : s.get());
  return out;
}

// The handler of `op` for the account acting: the owner's (`owners`), unless another
// account acts on an API whose names are each account's own.
const Service::Handler& Platform::handler_for(const Operation& op, const Service::Handler& owners) {
  if (context_.account == context_.owner) return owners;
  for (auto& s : services_)
    if (s->api() == op.api && s->names_are_global()) return owners;
  AccountServices& own = account_services(context_.account);
  own.changed = true;
  return own.handlers.at(&op);
}

Outcome<bool> Platform::check() const {
  if (mismatches_.empty()) return true;
  std::string all;
  for (const std::string& m : mismatches_) all += (all.empty() ? "" : "; ") + m;
  return make_error(ErrorKind::config, "EmulatorModelMismatch", "the emulator does not serve the model: " + all);
}

HandlerResult Platform::handle(const Operation& op, const json& input, RequestBody* body,
                               const std::optional<std::string>& account) {
  auto it = handlers_.find(&op);
  if (it == handlers_.end()) return HandlerResult::failure(404, "UnknownOperation", "no handler for " + op.name);
  if (RecordStore* store = store_; store && body) store->prepare(body->bytes);  // outside the lock: many at once
  std::unique_lock<std::mutex> lock(mutex_);
  settle_all();
  context_.account = account ? *account : context_.owner;
  HandlerResult r = handler_for(op, it->second)(op, input, body);
  context_.account = context_.owner;
  if (!body && r.payload.bytes) {  // a caller without a server: the bytes in the document
    r.result[op.output_payload] = r.payload.bytes->slice(r.payload.offset, r.payload.length);
    r.payload = {};
  }
  bool reads_only = op.method == "GET" || op.method == "HEAD";
  if (r.ok && !reads_only) return saved(std::move(r), lock);
  return once_durable(std::move(r), lock);
}

// The change saved (not yet durable: see once_durable). One that could not be is
// undone (undone()).
HandlerResult Platform::saved(HandlerResult r, std::unique_lock<std::mutex>& lock) {
  if (!store_) return r;
  Outcome<bool> written = save_records_locked(*store_.load(), false);
  if (!written.ok()) return undone(written.error());
  return once_durable(std::move(r), lock);
}

// `r`, answered once every change it may show (its own, or one it read) is durable: the
// lock is let go meanwhile, so that changes arriving together are committed together.
// A commit that failed undoes its changes.
HandlerResult Platform::once_durable(HandlerResult r, std::unique_lock<std::mutex>& lock) {
  RecordStore* store = store_;
  if (!store) return r;
  std::uint64_t change = store->last_saved();
  lock.unlock();
  Outcome<bool> durable = store->durable(change);
  if (durable.ok()) return r;
  lock.lock();
  return undone(durable.error());
}

// A change that could not be saved is undone (the platform read back from the store),
// so that no later request sees what was never acknowledged, and the next change is
// saved from the last saved state. The answer is S3's InternalError, with no detail (it
// would show the server's paths and errors to the client); the detail goes to the
// server's stderr, redacted. The lock is held.
HandlerResult Platform::undone(const Error& failed) {
  std::string detail = "the change could not be saved, so it is not acknowledged and was undone: " + failed.message;
  Outcome<bool> reloaded = load_records_locked(true);
  if (!reloaded.ok()) detail += "; undoing it failed too, and it stays: " + reloaded.error().message;
  return HandlerResult::internal(detail);
}

HandlerResult HandlerResult::internal(const std::string& detail) {
  std::fprintf(stderr, "cloudlua serve: %s\n", redact(detail).c_str());
  return failure(500, "InternalError", "We encountered an internal error. Please try again.");
}

void Platform::settle_all() {
  for (auto& s : services_) s->settle();
  for (auto& [id, own] : accounts_)
    for (auto& s : own.services) s->settle();
}

void Platform::set_owner(const std::string& id) {
  std::lock_guard<std::mutex> lock(mutex_);
  context_.owner = context_.account = id;
}

void Platform::set_accounts(std::vector<std::string> ids) {
  std::lock_guard<std::mutex> lock(mutex_);
  context_.accounts = std::move(ids);
}

// What it owns in the world's services, or any resource of its own services (whose
// state lists something).
bool Platform::owns(const std::string& id) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto& s : services_)
    if (s->owns(id)) return true;
  auto own = accounts_.find(id);
  if (own == accounts_.end()) return false;
  for (const auto& s : own->second.services) {
    const json listed = s->state();  // { kind = { ... } }
    for (const json& resources : listed)
      if (!resources.empty()) return true;
  }
  return false;
}

// A change made outside a request (a seed, a reset, an advance) kept as a request's
// is, when a store keeps the records; the lock is held.
Outcome<bool> Platform::keep_change_locked() {
  for (auto& [id, own] : accounts_) own.changed = true;
  return store_ ? save_durably_locked(*store_.load(), false) : Outcome<bool>(true);
}

void Platform::load_fixtures() {
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto& s : services_) s->load_fixtures();
}

Outcome<bool> Platform::seed(const json& fixtures, const std::optional<std::string>& account) {
  std::lock_guard<std::mutex> lock(mutex_);
  context_.account = account ? *account : context_.owner;
  for (Service* s : services_of(context_.account)) s->seed(fixtures);
  context_.account = context_.owner;
  return keep_change_locked();
}

json Platform::state(const std::optional<std::string>& account) {
  std::lock_guard<std::mutex> lock(mutex_);
  settle_all();
  json out = json::object();
  for (Service* s : services_of(account ? *account : context_.owner)) out.update(s->state());
  return out;
}

Outcome<bool> Platform::reset() {
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto& s : services_) s->reset();
  for (auto& [id, own] : accounts_)
    for (auto& s : own.services) s->reset();
  // The id counter goes on: no id is handed out twice, not even after a reset (the
  // state file names byte files by ids).
  return keep_change_locked();
}

Outcome<bool> Platform::advance(double seconds) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto refuse = [](const std::string& message) {
    return make_error(ErrorKind::validation, "InvalidArgument", message);
  };
  if (seconds < 0) return refuse("seconds must not be negative");
  double room = std::max(0.0, std::floor(context_.clock.room()));
  if (!(seconds <= room)) {  // NaN, infinity, or too far
    char given[32], most[32];
    std::snprintf(given, sizeof given, "%.17g", seconds);
    std::snprintf(most, sizeof most, "%.0f", room);
    return refuse(std::string("seconds must be at most ") + most + " (got " + given + "): the platform's clock, now " +
                  context_.clock.iso8601() + ", reads " + format_date(kLatestClock, DateForm::iso) +
                  " at the latest (dates have four-digit years)");
  }
  context_.clock.advance(seconds);
  settle_all();
  return keep_change_locked();
}

// splitmix64: well-spread bits from any seed, small ones included.
std::uint64_t mix_seed(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

void Platform::set_seed(std::uint64_t seed) {
  constexpr double kSeededEpoch = 1767225600;  // 2026-01-01T00:00:00Z
  std::lock_guard<std::mutex> lock(mutex_);
  // Ids stay 12 hex digits for 2^24 of them; seeded again, the count goes on (no id
  // is handed out twice), as deterministic as the calls made.
  context_.counter = std::max<unsigned long long>(context_.counter, (mix_seed(seed) & 0xFFFFF) << 24);
  context_.clock.set_epoch(kSeededEpoch);
}

std::time_t Platform::now_wall() {
  std::lock_guard<std::mutex> lock(mutex_);
  return context_.clock.wall();
}

void Platform::set_real_time(bool real) {
  std::lock_guard<std::mutex> lock(mutex_);
  context_.clock.set_real(real);
}

Outcome<bool> Platform::set_setting(const std::string& name, double value) {
  std::string known;
  for (const PlatformSetting& s : platform_settings()) {
    known += (known.empty() ? "" : ", ") + std::string(s.name);
    if (name != s.name) continue;
    if (value < 0) return make_error(ErrorKind::validation, "InvalidSetting", name + " must not be negative");
    std::lock_guard<std::mutex> lock(mutex_);
    context_.settings[name] = value;
    return true;
  }
  std::vector<std::string> names;
  for (const PlatformSetting& s : platform_settings()) names.push_back(s.name);
  return make_error(ErrorKind::validation, "UnknownSetting", unknown_name("setting", name, names, "known: " + known));
}

void Platform::set_endpoints(std::map<std::string, std::string> endpoints) {
  std::lock_guard<std::mutex> lock(mutex_);
  context_.endpoints = std::move(endpoints);
}

std::map<std::string, double> Platform::settings() {
  std::lock_guard<std::mutex> lock(mutex_);
  return context_.settings;
}

std::map<std::string, std::string> Platform::endpoints() {
  std::lock_guard<std::mutex> lock(mutex_);
  return context_.endpoints;
}

// ---------------------------------------------------------------- records

namespace {

constexpr int kRecordsFormat = 1;  // the header's "format"

double wall_seconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

Error not_records(const std::string& why) {
  return make_error(ErrorKind::config, "BadStateFile", "not a state this emulator saved: " + why);
}

}  // namespace

// The records without the services': the clock, the ids, the settings.
json Platform::header_locked() const {
  return {{"format", kRecordsFormat},
          {"saved_at", wall_seconds()},
          {"clock",
           {{"now", context_.clock.now()}, {"advanced", context_.clock.advanced()}, {"real", context_.clock.real()}}},
          {"region", context_.region},
          {"counter", context_.counter},
          {"settings", context_.settings}};
}

// The clock, ids and settings of a header; throws (json::exception) on another form.
void Platform::restore_header(const json& saved) {
  const json& clock = saved.at("clock");
  bool real = clock.at("real").get<bool>();
  double down = real ? std::max(0.0, wall_seconds() - saved.at("saved_at").get<double>()) : 0;
  double now = clock.at("now").get<double>() + down, advanced = clock.at("advanced").get<double>();
  context_.clock.set_real(real);
  context_.clock.resume(now, advanced);
  // A saved clock holds what advance holds a live one to: finite, and readable as a date.
  if (!std::isfinite(now) || now < 0 || !std::isfinite(advanced) || !(context_.clock.room() >= 0))
    throw std::runtime_error("its clock is past " + format_date(kLatestClock, DateForm::iso) + " or not a time");
  context_.counter = saved.at("counter").get<unsigned long long>();
  context_.settings = saved.at("settings").get<std::map<std::string, double>>();
}

// The header and every service's records (taken apart on the way); throws (json's own,
// std::runtime_error) on records of another form.
void Platform::restore_records_unchecked(RecordStore::Saved& saved, const ByteStore& bytes) {
  restore_header(saved.header);
  for (auto& s : services_) s->restore_records(saved.records[s->api()], saved.objects[s->api()], bytes);
  accounts_.clear();
  for (auto& [where, records] : saved.records) {  // "API/ACCOUNT": an account's own
    std::size_t slash = where.find('/');
    if (slash == std::string::npos) continue;
    Service* own = account_services(where.substr(slash + 1)).find(where.substr(0, slash));
    if (!own) throw std::runtime_error("records of '" + where + "', an API whose names are not each account's");
    own->restore_records(records, saved.objects[where], bytes);
  }
  settle_all();
}

// With `checked` the records are tried on a scratch platform first, so that records
// that fail change nothing; without, as at start, where a failure ends the start
// anyway, they are restored once.
Outcome<bool> Platform::restore_records_locked(RecordStore::Saved saved, const ByteStore& bytes, bool checked) {
  if (!saved.header.is_object() || saved.header.value("format", 0) != kRecordsFormat)
    return not_records("format " + std::to_string(kRecordsFormat) + " expected");
  try {
    if (checked) {
      RecordStore::Saved tried = saved;
      Platform scratch(context_.region, model_);
      scratch.restore_records_unchecked(tried, bytes);
    }
    restore_records_unchecked(saved, bytes);
  } catch (const std::exception& e) {  // json's own, a record missing, or bytes missing
    return not_records(std::string("its records: ") + e.what());
  }
  return true;
}

Outcome<bool> Platform::restore_records(RecordStore::Saved saved, const ByteStore& bytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  Outcome<bool> restored = restore_records_locked(std::move(saved), bytes, true);
  if (restored.ok() && store_) restored = save_durably_locked(*store_.load(), true);
  return restored;
}

Outcome<bool> Platform::restore_records_from(RecordStore& store) {
  auto saved = store.load();
  if (!saved.ok()) return saved.error();
  if (!*saved) return not_records("no records saved");
  return restore_records(std::move(**saved), store.bytes());
}

Outcome<bool> Platform::save_records_to(RecordStore& store) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (store_)
    return make_error(ErrorKind::config, "StateStoreKept", "the platform's records are kept in a store: copy that one");
  return save_durably_locked(store, true);
}

Outcome<bool> Platform::keep_records_in(RecordStore* store) {
  std::lock_guard<std::mutex> lock(mutex_);
  store_ = store;
  context_.note_records = store != nullptr;
  if (!store) return true;
  Outcome<bool> loaded = load_records_locked(false);
  Outcome<bool> written = loaded.ok() ? save_durably_locked(*store, !*loaded) : loaded;
  if (!written.ok()) store_ = nullptr, context_.note_records = false;
  return written;
}

// The records every service changed (all of them with `all`) and the header, to `store`.
Outcome<bool> Platform::save_records_locked(RecordStore& store, bool all) {
  std::map<std::string, StateRecords> changes;
  try {
    for (auto& s : services_) changes[s->api()] = s->changed_records(store.bytes(), all);
    for (auto& [id, own] : accounts_) {
      if (all || own.changed)
        for (auto& s : own.services) changes[s->api() + ("/" + id)] = s->changed_records(store.bytes(), all);
      own.changed = false;
    }
  } catch (const std::runtime_error& e) {  // bytes that could not be kept
    return make_error(ErrorKind::config, "StateFile", e.what());
  }
  return store.save(header_locked(), changes);
}

// The same, returning once it is durable (the lock held throughout: a rare change of
// all the records, as at start).
Outcome<bool> Platform::save_durably_locked(RecordStore& store, bool all) {
  Outcome<bool> saved = save_records_locked(store, all);
  return saved.ok() ? store.durable(store.last_saved()) : saved;
}

// The platform as store_ saved it (a restart reads every record); false when the store
// holds none (the platform is left as it is). `checked` as restore_records_locked().
Outcome<bool> Platform::load_records_locked(bool checked) {
  auto saved = store_.load()->load();
  if (!saved.ok()) return saved.error();
  if (!*saved) return false;
  Outcome<bool> restored = restore_records_locked(std::move(**saved), store_.load()->bytes(), checked);
  if (!restored.ok()) return restored.error();
  return true;
}

Outcome<bool> Platform::exclusive(const std::function<Outcome<bool>()>& fn) {
  std::lock_guard<std::mutex> lock(mutex_);
  return fn();
}

// The records replaced, then read back as at start; a store that fails to give them
// leaves the platform as it was.
Outcome<bool> Platform::reload_records(const std::function<Outcome<bool>()>& replace) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!store_) return make_error(ErrorKind::config, "NoStateStore", "the platform keeps no records to reload");
  Outcome<bool> done = replace();
  if (done.ok()) done = load_records_locked(true);
  return done;
}

}  // namespace cloud
