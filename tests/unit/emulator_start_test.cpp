// Starting and stopping the emulator's servers: a start that fails half-way stops
// what it started, and says which address could not be had; a model the handler
// tables do not match is refused before anything listens.
#include <catch2/catch.hpp>

#include <functional>
#include <memory>
#include <string>

#include "core/base/embedded.h"
#include "emulator/emulator.h"
#include "emulator/service.h"

using namespace cloud;

namespace {

int port_of(const std::string& url) { return std::stoi(url.substr(url.rfind(':') + 1)); }

// The built-in model with cluster.json's operations changed by `change`.
std::shared_ptr<Model> cluster_changed(const std::function<void(nlohmann::ordered_json&)>& change) {
  std::vector<std::pair<std::string, std::string>> files;
  for (const EmbeddedFile* f = model_files; f->name; ++f) {
    std::string text = f->text;
    if (std::string(f->name).find("cluster") != std::string::npos) {
      auto doc = nlohmann::ordered_json::parse(text);
      change(doc["operations"]);
      text = doc.dump();
    }
    files.emplace_back(f->name, text);
  }
  auto loaded = Model::load(files);
  REQUIRE(loaded.ok());
  return loaded.value();
}

// The error of starting an emulator on `model`; fails the test when it starts.
Error start_error(const Model& model) {
  Emulator emulator({}, model);
  auto started = emulator.start();
  REQUIRE_FALSE(started.ok());
  CHECK(emulator.endpoints().empty());  // nothing listens
  return started.error();
}

}  // namespace

TEST_CASE("A start with a port taken stops the servers it started and names the port") {
  Emulator holder;
  REQUIRE(holder.start().ok());
  int taken = port_of(holder.endpoints().front().second);
  // Many times, with one to three servers started before the bind that fails: the
  // stop of a server whose thread has not begun to listen yet must not be lost.
  for (int run = 0; run < 60; ++run) {
    EmulatorOptions options;
    options.port = taken - 1 - run % 3;
    Emulator emulator(options);
    auto started = emulator.start();
    REQUIRE_FALSE(started.ok());
    CHECK(started.error().code == "BindFailed");
    // The port named is `taken`, or one below it that another test's connection holds
    // at this moment (ctest runs tests side by side): either way the one that failed.
    bool named = false;
    for (int p = options.port; p <= taken; ++p)
      named = named || started.error().message.find(":" + std::to_string(p) + " ") != std::string::npos;
    CHECK(named);
    CHECK(emulator.endpoints().empty());
  }
}

TEST_CASE("The built-in model and the handler tables agree") {
  CHECK(Platform("jp-east-1", Model::builtin()).check().ok());
}

TEST_CASE("An operation of the model without a handler stops the emulator from starting, named") {
  auto model = cluster_changed([](nlohmann::ordered_json& ops) {
    ops["DeleteSnapshot"] = {{"method", "DELETE"},
                             {"path", "/v1/snapshots/{SnapshotName}"},
                             {"input", {{"SnapshotName", {{"in", "path"}, {"type", "string"}, {"required", true}}}}}};
  });
  Error e = start_error(*model);
  CHECK(e.code == "EmulatorModelMismatch");
  CHECK_THAT(e.message, Catch::Contains("cluster.DeleteSnapshot has no handler (add its row to the table in "
                                        "emulator/cluster.cpp)"));
}

TEST_CASE("A handler naming no operation of the model stops the emulator from starting, named") {
  auto model = cluster_changed([](nlohmann::ordered_json& ops) { ops.erase("UpdateSnapshot"); });
  Error e = start_error(*model);
  CHECK(e.code == "EmulatorModelMismatch");
  CHECK_THAT(e.message, Catch::Contains("the cluster service's handler UpdateSnapshot names no operation of the "
                                        "model's cluster API"));
}
