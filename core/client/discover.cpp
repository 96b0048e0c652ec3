// endpoint_url: a serve's endpoints, region, dialect and (built-in) credentials asked
// of it; see discover.h.
#include "core/client/discover.h"

#include "core/model/model.h"
#include "core/model/protocol.h"
#include "core/net/redact.h"
#include "core/wire/uri.h"

namespace cloud {

namespace {

Error no_serve(const std::string& url, const std::string& why) {
  return make_error(ErrorKind::config, "NoServe",
                    "endpoint_url " + url + ": no cloudlua serve answers there (" + why +
                        "); endpoint_url is a running `cloudlua serve`'s URL, as it prints it; for another "
                        "server set endpoint.<api>");
}

// The port of `api` in the answer, or 0 when it has none that can be one.
int port_of(const json& apis, const std::string& api) {
  auto it = apis.find(api);
  if (it == apis.end() || !it->is_number_integer()) return 0;
  long long port = it->get<long long>();
  return port > 0 && port < 65536 ? static_cast<int>(port) : 0;
}

bool is_text(const json& answer, const char* key) { return answer.contains(key) && answer[key].is_string(); }

}  // namespace

std::optional<Error> apply_discovery(ClientConfig& c, const json& answer) {
  auto base = parse_url(c.endpoint_url);
  if (!base.ok()) return base.error();
  if (!answer.is_object() || answer.value("server", json()) != "cloudlua serve" || !answer.contains("apis") ||
      !answer["apis"].is_object() || !is_text(answer, "region") || !is_text(answer, "dialect"))
    return no_serve(c.endpoint_url, "its answer is not a serve's");
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
  HttpRequest request;
  request.method = "GET";
  request.url = base->origin() + "/_cloudlua/discover";
  auto response = transport.perform(request);
  if (!response.ok()) return no_serve(c.endpoint_url, response.error().message);
  if (response->status != 200)
    return no_serve(c.endpoint_url, "GET /_cloudlua/discover answered " + std::to_string(response->status));
  auto answer = parse_json_document(response->body, "the answer to GET /_cloudlua/discover");
  if (!answer.ok()) return no_serve(c.endpoint_url, answer.error().message);
  return apply_discovery(c, *answer);
}

}  // namespace cloud
