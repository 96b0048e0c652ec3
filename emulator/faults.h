// Injected faults (cloud.emulator.fault): the queue of them, the count of requests
// routed to each operation, and a fault acted out on a request (a delay, a dropped
// connection, an error answer, the request echoed back).
#pragma once

#include <condition_variable>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "core/model/model.h"

namespace httplib {  // the requests and answers acted on (httplib.h stays out of emulator.h)
struct Request;
struct Response;
}  // namespace httplib

namespace cloud {

// A misbehaviour for the next `times` requests of `operation` (empty: any): wait
// `delay` seconds first, then drop the connection, or answer `status` with `code`,
// or answer 200 with an error body (the storage API's known trap). `echo` makes the
// error's message the request as received (method, target, headers, body), as some
// servers do: what a client must keep out of what it shows.
struct Fault {
  std::string operation;
  int times = 1;
  int status = 0;
  std::string code;
  std::string message;
  double delay = 0;
  bool drop = false;
  bool error_in_200 = false;
  bool echo = false;
  bool json_only = false;  // matches requests to the JSON APIs only (the maintenance fault)
};

class Faults {
 public:
  void add(Fault fault);
  // Removes every queued fault and sets the counts of served() to zero.
  void clear();
  // The requests routed to each operation (by name) since the last clear().
  std::map<std::string, unsigned long> served() const;
  // The first queued fault for `operation` of `api`, used up one time; counts the
  // request as one to `operation`.
  std::optional<Fault> take(const Api& api, const std::string& operation);
  // Acts out `fault` on a request (its body `body`, when kept in memory); false when
  // only a delay was asked and the request goes on.
  bool act(const Api& api, const Fault& fault, const httplib::Request& req, const std::string& body,
           httplib::Response& res, const std::string& request_id);
  // Ends the delays being waited out at once, and every later one, until resume():
  // stop() of the emulator need not wait for requests their clients gave up on.
  void stop();
  void resume();

 private:
  mutable std::mutex mutex_;
  std::vector<Fault> queue_;
  std::map<std::string, unsigned long> served_;  // requests routed to each operation
  std::mutex stop_mutex_;
  std::condition_variable stop_cv_;
  bool stopping_ = false;
};

}  // namespace cloud
