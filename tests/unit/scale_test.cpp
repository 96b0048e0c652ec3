// Scale of input: a completion of 10,000 parts (the most PartNumber allows) is
// validated, serialised, signed, sent to the emulator over loopback, checked there
// part by part and parsed back. The parts are put into the emulator's platform
// directly, without HTTP, so the test stays quick; only the completion goes over the
// wire. Its time is measured by tests/bench/complete_10000.lua, not asserted here.
#include <catch2/catch.hpp>

#include <string>

#include "core/client/client.h"
#include "emulator/emulator.h"
#include "emulator/service.h"

using namespace cloud;

TEST_CASE("a completion of 10,000 parts builds, signs, sends and parses", "[scale]") {
  Emulator emulator;
  REQUIRE(emulator.start().ok());
  Platform& platform = emulator.platform();
  platform.set_setting("min_part_size", 1);
  REQUIRE(platform.handle(*Model::builtin().find("CreateBucket"), {{"Bucket", "bkt"}}).ok);
  HandlerResult started =
      platform.handle(*Model::builtin().find("CreateMultipartUpload"), {{"Bucket", "bkt"}, {"Object", "many parts"}});
  REQUIRE(started.ok);
  std::string upload_id = started.result["UploadId"];

  // Part n holds the decimal digits of n, so the object shows the parts' order.
  json parts = json::array();
  std::string whole;
  const Operation& upload_part = *Model::builtin().find("UploadPart");
  for (int n = 1; n <= 10000; ++n) {
    HandlerResult part = platform.handle(upload_part, {{"Bucket", "bkt"},
                                                       {"Object", "many parts"},
                                                       {"uploadId", upload_id},
                                                       {"partNumber", n},
                                                       {"body", std::to_string(n)}});
    REQUIRE(part.ok);
    parts.push_back({{"PartNumber", n}, {"ETag", part.result["ETag"]}});
    whole += std::to_string(n);
  }

  ClientConfig config;
  for (const auto& [api, url] : emulator.endpoints()) config.endpoints[api] = url;
  config.credentials = {kEmulatorAccessKey, kEmulatorSecretKey, ""};
  config.retry.max_attempts = 1;
  Client client(config);
  auto done = client.call("CompleteMultipartUpload",
                          {{"Bucket", "bkt"}, {"Object", "many parts"}, {"uploadId", upload_id}, {"Part", parts}});
  REQUIRE(done.ok());
  // MD5 of the 10,000 parts' binary MD5s, computed with Python's hashlib.
  CHECK(done->result["ETag"] == "\"21b252c78af9ee82ae11b0a01a98ed6c-10000\"");
  CHECK(done->result["Key"] == "many parts");
  CHECK(done->meta.status == 200);

  auto object = client.call("GetObject", {{"Bucket", "bkt"}, {"Object", "many parts"}});
  REQUIRE(object.ok());
  CHECK(object->result["Body"].get<std::string>().size() == 38894);
  CHECK(object->result["Body"] == whole);
}
