// The Platform: dispatch to services by operation name under one mutex, the clock,
// ids and resource names shared by every service.
#include <cstdio>
#include <ctime>

#include "emulator/service.h"

namespace cloud {

double Clock::now() const {
  double real = real_ ? std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count() : 0;
  return real + offset_;
}

std::string Clock::iso8601(double later) const {
  std::time_t t = std::time(nullptr) + static_cast<std::time_t>(offset_ + later);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
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

// nrn:<provider>:<service>:<region>:<account>:<kind>:<uuid>, as the spec shapes it.
std::string PlatformContext::nrn(const std::string& service, const std::string& kind) {
  return "nrn:ext:" + service + ":" + region + ":000000000000:" + kind + ":" + uuid();
}

double PlatformContext::setting(const std::string& name, double fallback) const {
  auto it = settings.find(name);
  return it == settings.end() ? fallback : it->second;
}

Platform::Platform(std::string region) {
  context_.region = std::move(region);
  services_.push_back(make_cluster_service(context_));
  services_.push_back(make_storage_service(context_));
  services_.push_back(make_devops_service(context_));
  services_.push_back(make_catalog_service(context_));
  for (auto& s : services_)
    for (const std::string& op : s->operations()) by_operation_[op] = s.get();
}

bool Platform::serves(const std::string& operation) const { return by_operation_.count(operation) > 0; }

HandlerResult Platform::handle(const std::string& operation, const json& input) {
  auto it = by_operation_.find(operation);
  if (it == by_operation_.end()) return HandlerResult::failure(404, "UnknownOperation", operation);
  std::lock_guard<std::mutex> lock(mutex_);
  settle_all();
  return it->second->handle(operation, input);
}

void Platform::settle_all() {
  for (auto& s : services_) s->settle();
}

void Platform::load_fixtures() {
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto& s : services_) s->load_fixtures();
}

void Platform::seed(const json& fixtures) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto& s : services_) s->seed(fixtures);
}

json Platform::state() {
  std::lock_guard<std::mutex> lock(mutex_);
  settle_all();
  json out = json::object();
  for (auto& s : services_) out.update(s->state());
  return out;
}

void Platform::reset() {
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto& s : services_) s->reset();
  context_.counter = 0;
}

void Platform::advance(double seconds) {
  std::lock_guard<std::mutex> lock(mutex_);
  context_.clock.advance(seconds);
  settle_all();
}

void Platform::set_real_time(bool real) {
  std::lock_guard<std::mutex> lock(mutex_);
  context_.clock.set_real(real);
}

void Platform::set_setting(const std::string& name, double value) {
  std::lock_guard<std::mutex> lock(mutex_);
  context_.settings[name] = value;
}

void Platform::set_endpoints(std::map<std::string, std::string> endpoints) {
  std::lock_guard<std::mutex> lock(mutex_);
  context_.endpoints = std::move(endpoints);
}

}  // namespace cloud
