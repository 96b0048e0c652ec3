// Reaching a `cloudlua serve` from one setting (endpoint_url, CLOUDLUA_ENDPOINT_URL,
// `--endpoint URL`): the client asks the server at that URL, unsigned,
// `GET /_cloudlua/discover`, and takes from its answer the port of each API (on the
// URL's host), its region, its dialect when it accepts one only, and, when it takes
// its built-in credentials (public, in the docs) and none are set, those. Where a
// server answers that is not a serve (MinIO, s3rver, S3 itself), the URL is an S3
// server's: the storage API's endpoint, in the aws dialect unless one is set.
// docs/emulator.md, "Reaching serve".
#pragma once

#include <optional>

#include "core/client/client_config.h"
#include "core/base/error.h"
#include "core/model/model.h"
#include "core/net/transport.h"

namespace cloud {

// Fills in `config` from the serve at config.endpoint_url (asked on `transport`'s loop,
// within 10 s and 64 KiB); endpoints already set for an API stay. Another server's
// answer makes the URL storage's endpoint (endpoint_url_is_s3). A URL where nothing
// answers is a config error (NoServe) saying so. Replaying (offline), nothing is
// asked: every API's endpoint is the URL.
std::optional<Error> discover_serve(ClientConfig& config, Transport& transport);

// What `config` takes from a discovery answer `answer` (exposed for tests); an answer
// that is not one is NoServe.
std::optional<Error> apply_discovery(ClientConfig& config, const json& answer);

}  // namespace cloud
