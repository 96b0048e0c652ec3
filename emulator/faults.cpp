// Injected faults (faults.h): queued, taken one request at a time, acted out.
#include "emulator/faults.h"

#include <httplib.h>

#include <chrono>

#include "emulator/answers.h"

namespace cloud {

namespace {

// The request as received, one header a line, for the echo fault (httplib's own
// LOCAL_*/REMOTE_* entries are not headers the client sent), and its body when it
// was kept in memory.
std::string echo_of(const httplib::Request& req, const std::string& body) {
  std::string out = "you sent: " + req.method + " " + req.target;
  for (const auto& [name, value] : req.headers)
    if (name.rfind("LOCAL_", 0) != 0 && name.rfind("REMOTE_", 0) != 0) out += "\n" + name + ": " + value;
  return out + "\n\n" + body;
}

// Headers go out, then the body provider fails: the client sees the connection
// closed mid-answer.
bool drop(httplib::Response& res) {
  res.set_chunked_content_provider("application/octet-stream", [](size_t, httplib::DataSink&) { return false; });
  return true;
}

}  // namespace

void Faults::add(Fault fault) {
  std::lock_guard<std::mutex> lock(mutex_);
  queue_.push_back(std::move(fault));
}

void Faults::clear() {
  std::lock_guard<std::mutex> lock(mutex_);
  queue_.clear();
  served_.clear();
}

std::map<std::string, unsigned long> Faults::served() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return served_;
}

std::optional<Fault> Faults::take(const Api& api, const std::string& operation) {
  std::lock_guard<std::mutex> lock(mutex_);
  ++served_[operation];
  for (auto it = queue_.begin(); it != queue_.end(); ++it) {
    if (!it->operation.empty() && it->operation != operation) continue;
    if (it->json_only && api.protocol->format != Format::json) continue;
    Fault f = *it;
    if (--it->times <= 0) queue_.erase(it);
    return f;
  }
  return std::nullopt;
}

bool Faults::act(const Api& api, const Fault& f, const httplib::Request& req, const std::string& body,
                 httplib::Response& res, const std::string& request_id) {
  if (f.delay > 0) {  // waited on the stop's condition rather than slept
    std::unique_lock<std::mutex> lock(stop_mutex_);
    if (stop_cv_.wait_for(lock, std::chrono::duration<double>(f.delay), [this] { return stopping_; })) return drop(res);
  }
  if (f.drop) return drop(res);
  if (!f.status && !f.error_in_200 && f.code.empty() && !f.echo) return false;
  std::string code = f.code.empty() ? "InternalError" : f.code;
  std::string message = f.echo              ? echo_of(req, body)
                        : f.message.empty() ? "fault injected by cloud.emulator.fault"
                                            : f.message;
  int status = f.error_in_200 ? 200 : (f.status ? f.status : 500);
  send_error(api, res, status, code, message, request_id);
  return true;
}

void Faults::stop() {
  {
    std::lock_guard<std::mutex> lock(stop_mutex_);
    stopping_ = true;
  }
  stop_cv_.notify_all();
}

void Faults::resume() {
  std::lock_guard<std::mutex> lock(stop_mutex_);
  stopping_ = false;
}

}  // namespace cloud
