// endpoint_url: a serve's endpoints, region, dialect and (built-in) credentials asked
// of it; where another server answers, that server taken as S3's; see discover.h.
#include "core/client/discover.h"

#include <algorithm>

#include "core/model/model.h"
#include "core/model/protocol.h"
#include "core/net/redact.h"
#include "core/wire/uri.h"

namespace cloud {

namespace {

// A serve's discovery answer is some hundred bytes: more is not one. The probe waits
// at most this long, whatever the client's own time-outs.
constexpr std::uint64_t kMaxDiscoveryBytes = 64 * 1024;
constexpr long kDiscoveryTimeoutMs = 10000;

Error no_serve(const std::string& url, const std::string& why) {
  return make_error(ErrorKind::config, "NoServe",
                    "endpoint_url " + url + ": no usable answer there (" + why +
                        "); endpoint_url is a running `cloudlua serve`'s URL or an S3 server's");
}

// The port of `api` in the answer, or 0 when it has none that can be one.
int port_of(const json& apis, const std::string& api) {
  auto it = apis.find(api);
  if (it == apis.end() || !it->is_number_integer()) return 0;
  long long port = it->get<long long>();
  return port > 0 && port < 65536 ? static_cast<int>(port) : 0;
}

bool is_text(const json& answer, const char* key) { return answer.contains(key) && answer[key].is_string(); }

// Whether `answer` is a serve's discovery answer (docs/emulator.md, "Reaching serve").
bool is_serve_answer(const json& answer) {
  return answer.is_object() && answer.value("server", json()) == "cloudlua serve" && answer.contains("apis") &&
         answer["apis"].is_object() && is_text(answer, "region") && is_text(answer, "dialect");
}

// endpoint_url where a server answers, not as a serve: an S3 server, taken as the
// storage API's endpoint, signed the aws way unless a dialect is set; said under --debug.
void take_as_s3(ClientConfig& c, const std::string& why) {
  if (!c.endpoints.count("storage")) c.endpoints["storage"] = c.endpoint_url;
  if (!c.dialect_given) c.dialect = &Dialect::aws();
  c.endpoint_url_is_s3 = true;
  if (c.debug)
    c.debug(printable(redact("cloudlua: " + c.endpoint_url + " is not a cloudlua serve (" + why +
                             "): taken as the storage API's endpoint, " + c.dialect->name +
                             " dialect; the other APIs need endpoint.<api>\n")));
}

// GET /_cloudlua/discover, unsigned, on the client's loop with its TLS settings,
// bounded in time and size.
Outcome<HttpResponse> ask_discovery(const Url& base, Transport& transport) {
  TransportOptions options = transport.options();
  options.max_response_bytes = kMaxDiscoveryBytes;
  options.timeout_ms = std::min(options.timeout_ms, kDiscoveryTimeoutMs);
  options.connect_timeout_ms = std::min(options.connect_timeout_ms, kDiscoveryTimeoutMs);
  options.loop = &transport.loop();
  Transport probe(options);
  HttpRequest request;
  request.method = "GET";
  request.url = base.origin() + "/_cloudlua/discover";
  return probe.perform(request);
}

}  // namespace

std::optional<Error> apply_discovery(ClientConfig& c, const json& answer) {
  auto base = parse_url(c.endpoint_url);
  if (!base.ok()) return base.error();
  if (!is_serve_answer(answer)) return no_serve(c.endpoint_url, "its answer is not a serve's");
  for (const std::string& api : Model::builtin().api_names()) {
    int port = port_of(answer["apis"], api);
    if (port && !c.endpoints.count(api))
      c.endpoints[api] = base->scheme + "://" + base->host + ":" + std::to_string(port);
  }
  c.region = answer["region"].get<std::string>();  // serve takes its own region only
  const std::string& dialect = answer["dialect"].get_ref<const std::string&>();
  if (dialect == "ext" || dialect == "aws") c.dialect = Dialect::find(dialect);
  if (c.credentials.access_key_id.empty() && answer.value("credentials", "") == "built-in" &&
      is_text(answer, "access_key_id") && is_text(answer, "secret_access_key"))
    c.credentials = {answer["access_key_id"].get<std::string>(), answer["secret_access_key"].get<std::string>(), ""};
  return std::nullopt;
}

std::optional<Error> discover_serve(ClientConfig& c, Transport& transport) {
  auto base = parse_url(c.endpoint_url);
  if (!base.ok()) return no_serve(c.endpoint_url, base.error().message);
  if (!c.replay.empty()) {  // offline: the recording answers, whatever the URL
    for (const std::string& api : Model::builtin().api_names())
      if (!c.endpoints.count(api)) c.endpoints[api] = base->origin();
    return std::nullopt;
  }
  auto response = ask_discovery(*base, transport);
  if (!response.ok()) return no_serve(c.endpoint_url, response.error().message);
  if (response->status != 200) {
    take_as_s3(c, "GET /_cloudlua/discover answered " + std::to_string(response->status));
    return std::nullopt;
  }
  auto answer = parse_json_document(response->body, "the answer to GET /_cloudlua/discover");
  if (!answer.ok() || !is_serve_answer(*answer)) {
    take_as_s3(c, "its answer to GET /_cloudlua/discover is not a serve's");
    return std::nullopt;
  }
  return apply_discovery(c, *answer);
}

}  // namespace cloud
