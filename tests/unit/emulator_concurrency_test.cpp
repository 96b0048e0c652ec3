// Many clients at once against one emulator, over HTTP: changes to different
// resources all land; races for the same name have exactly one winner; parts of one
// upload arrive in parallel and make one object; faults are used up exactly N times;
// and the clock may be read and advanced while requests run. Each client thread has
// its own cloud::Client, as separate programs would.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <thread>
#include <vector>

#include "emulator/service.h"
#include "emulator_harness.h"

namespace {

using cloud::json;
using harness::Running;

constexpr int kThreads = 16;

// Runs body(thread_index) on kThreads threads at once and joins them.
template <typename Body>
void at_once(Body body) {
  std::atomic<bool> go{false};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      while (!go) std::this_thread::yield();  // start together: the races are the point
      body(t);
    });
  go = true;
  for (auto& th : threads) th.join();
}

cloud::ClientConfig single_attempt(const Running& e) {
  cloud::ClientConfig config = e.client_config();
  config.retry.max_attempts = 1;
  return config;
}

}  // namespace

TEST_CASE("Many clients at once: every change to its own resource lands") {
  Running e;
  json seeds = json::array();
  for (int t = 0; t < kThreads; ++t) seeds.push_back({{"name", "snap-t" + std::to_string(t)}});
  e.emulator.platform().seed({{"snapshots", seeds}});
  std::atomic<int> failures{0};
  at_once([&](int t) {
    cloud::Client client(e.client_config());
    std::string name = "snap-t" + std::to_string(t);
    for (int i = 1; i <= 20; ++i) {
      json args = {{"SnapshotName", name}, {"snapshot", {{"description", std::to_string(i)}}}};
      if (!client.call("UpdateSnapshot", args).ok()) ++failures;
      json put = {{"Bucket", "demo-bucket"}, {"Object", name + "/" + std::to_string(i)}, {"Body", name}};
      if (!client.call("PutObject", put).ok()) ++failures;
    }
  });
  CHECK(failures == 0);
  json state = e.emulator.platform().state();
  int updated = 0;
  for (const json& s : state["snapshots"]) updated += s["description"] == "20";
  CHECK(updated == kThreads);
  CHECK(state["buckets"][0]["objects"].size() == kThreads * 20);
}

TEST_CASE("Many clients racing for one name: exactly one wins, the others are told it is taken") {
  Running e;
  std::atomic<int> buckets_won{0}, buckets_taken{0}, servers_won{0}, servers_taken{0}, other{0};
  at_once([&](int) {
    cloud::Client client(single_attempt(e));
    auto bucket = client.call("CreateBucket", {{"Bucket", "contended"}});
    if (bucket.ok()) ++buckets_won;
    else if (bucket.error().code == "BucketAlreadyOwnedByYou") ++buckets_taken;
    else ++other;
    auto server =
        client.call("RestoreInstance", {{"backupId", "0123456789abcdef0123456789abcdef"}, {"instanceId", "contended"}});
    if (server.ok()) ++servers_won;
    else if (server.error().code == "InstanceAlreadyExists") ++servers_taken;
    else ++other;
  });
  CHECK(other == 0);
  CHECK(buckets_won == 1);
  CHECK(buckets_taken == kThreads - 1);
  CHECK(servers_won == 1);
  CHECK(servers_taken == kThreads - 1);
  CHECK(e.emulator.platform().state()["instances"].size() == 1);
}

TEST_CASE("Parts of one upload sent in parallel make one object") {
  Running e;
  REQUIRE(e.emulator.platform().set_setting("min_part_size", 1).ok());
  cloud::Client starter(e.client_config());
  auto up = starter.call("CreateMultipartUpload", {{"Bucket", "demo-bucket"}, {"Object", "parallel"}});
  REQUIRE(up.ok());
  std::string id = up->result["UploadId"];
  std::vector<json> listed(kThreads * 4);
  std::atomic<int> failures{0};
  at_once([&](int t) {
    cloud::Client client(e.client_config());
    for (int n = t + 1; n <= kThreads * 4; n += kThreads) {  // each thread its own part numbers
      std::string bytes(1000 + n, static_cast<char>('a' + n % 26));
      auto r = client.call(
          "UploadPart",
          {{"Bucket", "demo-bucket"}, {"Object", "parallel"}, {"uploadId", id}, {"partNumber", n}, {"body", bytes}});
      if (!r.ok()) ++failures;
      else listed[n - 1] = {{"PartNumber", n}, {"ETag", r->result["ETag"]}};
    }
  });
  REQUIRE(failures == 0);
  auto done = starter.call("CompleteMultipartUpload",
                           {{"Bucket", "demo-bucket"}, {"Object", "parallel"}, {"uploadId", id}, {"Part", listed}});
  REQUIRE(done.ok());
  CHECK(done->result["ETag"].get<std::string>().find("-" + std::to_string(kThreads * 4) + "\"") != std::string::npos);
  auto got = starter.call("GetObject", {{"Bucket", "demo-bucket"}, {"Object", "parallel"}});
  REQUIRE(got.ok());
  std::string expected;
  for (int n = 1; n <= kThreads * 4; ++n) expected += std::string(1000 + n, static_cast<char>('a' + n % 26));
  CHECK(got->result["Body"] == expected);
}

TEST_CASE("A fault for N requests misbehaves exactly N times among many clients") {
  Running e;
  cloud::Fault fault;
  fault.operation = "UpdateSnapshot";
  fault.times = 5;
  fault.status = 503;
  fault.code = "SlowDown";
  e.emulator.add_fault(fault);
  std::atomic<int> slowed{0}, served{0}, other{0};
  at_once([&](int) {
    cloud::Client client(single_attempt(e));
    for (int i = 0; i < 3; ++i) {
      auto r = client.call("UpdateSnapshot", {{"SnapshotName", "snap-1"}, {"snapshot", json::object()}});
      if (r.ok()) ++served;
      else if (r.error().code == "SlowDown") ++slowed;
      else ++other;
    }
  });
  CHECK(other == 0);
  CHECK(slowed == 5);
  CHECK(served == kThreads * 3 - 5);
}

TEST_CASE("The clock may be advanced and the state read while requests run") {
  Running e;
  cloud::Platform& platform = e.emulator.platform();
  platform.set_real_time(false);
  std::atomic<bool> done{false};
  std::thread ticker([&] {
    while (!done) {
      platform.advance(1);
      (void)platform.state();
    }
  });
  std::atomic<int> failures{0};
  at_once([&](int t) {
    cloud::Client client(e.client_config());
    std::string group = "fw-c" + std::to_string(t);
    platform.seed({{"firewall_groups", {{{"firewallGroupName", group}}}}});
    for (int i = 0; i < 10; ++i) {
      json rule = {
          {"protocol", "TCP"}, {"port", 22}, {"cidrIp", "10.0." + std::to_string(t) + "." + std::to_string(i)}};
      auto r = client.call("AuthorizeFirewallRules", {{"FirewallGroupName", group}, {"rules", {rule}}});
      // refused while PROCESSING is the platform's rule; anything else is a fault
      if (!r.ok() && r.error().code != "FirewallGroupBusy") ++failures;
    }
  });
  done = true;
  ticker.join();
  CHECK(failures == 0);
  platform.advance(10);
  json state = platform.state();  // kept: a range-for over a member of a temporary dangles
  for (const json& g : state["firewall_groups"]) CHECK(g["state"] == "APPLIED");
}

TEST_CASE("Idle connections and bursts of new ones do not keep other clients waiting") {
  Running e;
  std::string url = e.urls["cluster"];
  int port = std::stoi(url.substr(url.rfind(':') + 1));
  // Silent connections, opened at once: more than httplib's own pool has threads
  // (each would hold one until its 5 s read time-out) and more than its listen
  // backlog of 5 (the rest would wait for SYNs resent after a second and more).
  std::vector<int> idle;
  for (int i = 0; i < 2 * kThreads; ++i) {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
    idle.push_back(fd);
  }
  cloud::ClientConfig config = single_attempt(e);
  config.transport.timeout_ms = 3000;  // well under the 5 s an idle connection holds a thread
  auto r = cloud::Client(config).call("UpdateSnapshot", {{"SnapshotName", "snap-1"}, {"snapshot", json::object()}});
  for (int fd : idle) ::close(fd);
  INFO((r.ok() ? std::string("ok") : r.error().describe()));
  CHECK(r.ok());
}
