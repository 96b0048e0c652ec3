// The local emulator of the platform: a real HTTP server per API on loopback that
// verifies signatures with core's signer, parses and validates requests with core's
// model and protocol code, keeps state and answers as the spec's samples do.
// It knows nothing of Lua; its Lua face (cloud.emulator) lives in lua/.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/base/error.h"
#include "core/model/model.h"
#include "core/wire/sigv4.h"
#include "emulator/faults.h"
#include "emulator/serve_limits.h"

namespace cloud {

// The credentials the emulator accepts unless told otherwise (documented in README).
extern const char* const kEmulatorAccessKey;
extern const char* const kEmulatorSecretKey;

// Whether `host` is a loopback address: 127.0.0.0/8, ::1 or "localhost". Any other
// address or name may be reached from elsewhere.
bool is_loopback(const std::string& host);

struct EmulatorOptions {
  std::string host = "127.0.0.1";  // beyond loopback, the built-in credentials are refused
  int port = 0;                    // 0: a free port per API; N: storage on N, then catalog,
                                   // cluster, devops on N+1..N+3 (serve_order)
  std::string dialect = "any";     // "ext", "aws" or "any": which signatures are accepted
  Credentials credentials{kEmulatorAccessKey, kEmulatorSecretKey, ""};  // the default world's first account
  std::vector<Credentials> accounts;  // more accounts of the default world (serve --account, --accounts)
  std::string region = "jp-east-1";
  bool fixtures = true;               // start with the documented fixture set
  std::optional<std::uint64_t> seed;  // repeatable ids and times from the start (set_seed)
  std::string state_file;             // "": state in memory only; else the database read at
                                      // start (when it holds a platform, in place of the
                                      // fixtures) and saved to after every change, before
                                      // the change is answered (state_db.h)
  std::string body_folder;            // "": the bodies of PutObject and UploadPart in memory;
                                      // else streamed to files there as they arrive, the
                                      // objects and parts made from those files (serve
                                      // without --state; with it, the state's folder of bytes)
  ConnectionLimits limits;            // what a connection may take (docs/emulator.md, "Limits")
};

class Platform;
class Worlds;

class Emulator {
 public:
  explicit Emulator(EmulatorOptions options = {}, const Model& model = Model::builtin());
  ~Emulator();
  Emulator(const Emulator&) = delete;
  Emulator& operator=(const Emulator&) = delete;

  // Takes up the state file if one is set, binds every API's port and starts serving
  // in background threads. A host beyond loopback with the built-in credentials, which
  // are public, is refused (PublicCredentials).
  Outcome<bool> start();
  // Stops serving and joins the threads; safe to call twice.
  void stop();
  // With a state file, how many changes were saved to it since start and in how many
  // commits (changes that arrive together share one): "the state FILE: N changes saved
  // in M commits"; "" without one.
  std::string state_commits() const;

  // api name -> base URL ("http://127.0.0.1:45001"), in serve_order.
  std::vector<std::pair<std::string, std::string>> endpoints() const;
  const EmulatorOptions& options() const;
  // The default world's platform; the worlds and their accounts (emulator/worlds.h).
  // The faults, seed and checkpoints below are the default world's too.
  Platform& platform();
  Worlds& worlds();

  void add_fault(Fault fault);
  // Removes every queued fault and sets the counts of requests_served() to zero.
  void clear_faults();
  // Repeatable answers from now on (cloud.emulator.configure{ seed = N }, cloudlua test
  // --seed N): the platform's ids and times (Platform::set_seed), and the request ids
  // and Date headers of the answers, derived from `seed` and counted from it.
  void set_seed(std::uint64_t seed);

  // Checkpoints: the whole platform saved by name (emulator/checkpoints.h): with a state
  // file, folders of <state file>.snapshots/; without, in memory. Faults and request
  // counts are not part of them. Restoring an unknown name is NoSuchCheckpoint.
  Outcome<bool> checkpoint(const std::string& name);
  Outcome<bool> restore(const std::string& name);
  std::vector<std::string> checkpoints() const;

  // The requests routed to each operation (by name) since the last clear_faults(),
  // faulted ones included: what a test counts to show that nothing was written.
  std::map<std::string, unsigned long> requests_served() const;

  // Answers one request as a server thread does (signature, route, parse, validate,
  // the platform, the answer), without a socket: `target` is the request line's path
  // and query as on the wire. Exceptions propagate, where the server would answer 500.
  // The fuzz target of the emulator drives it; it need not be started.
  Outcome<HttpResponse> answer(const std::string& api, const std::string& method, const std::string& target,
                               const Headers& headers, const std::string& body);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace cloud
