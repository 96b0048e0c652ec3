// Client::presign_post: the fields of a browser upload's form (S3's POST object) and
// the policy they carry, signed with the client's key as S3 checks it (the base64
// policy signed with the day's SigV4 key: core/wire/sigv4's policy_signature). The
// emulator's side is emulator/post_object.cpp.
#include <algorithm>
#include <ctime>
#include <set>

#include "core/client/client.h"
#include "core/base/crypto.h"
#include "core/base/dates.h"
#include "core/base/limits.h"
#include "core/base/suggest.h"

namespace cloud {
namespace {

Error bad_argument(const std::string& message) { return make_error(ErrorKind::validation, "BadArgument", message); }

// The lower-cased field a condition names ("$Content-Type" or { ["Content-Type"] = v }),
// or an error saying what a condition may be.
Outcome<std::string> condition_field(const json& c, size_t index) {
  std::string where = "conditions[" + std::to_string(index + 1) + "]";
  if (c.is_object()) {
    if (c.size() != 1 || !c.begin().value().is_string())
      return bad_argument(where + " must be { field = \"value\" } (one field, a string value)");
    return to_lower(c.begin().key());
  }
  if (!c.is_array() || c.size() != 3 || !c[0].is_string())
    return bad_argument(where +
                        " must be { field = \"value\" }, { \"eq\" | \"starts-with\", \"$field\", \"value\" } "
                        "or { \"content-length-range\", min, max }");
  std::string op = c[0].get<std::string>();
  if (op == "content-length-range") {
    if (!c[1].is_number_integer() || !c[2].is_number_integer() || c[1].get<long long>() < 0 ||
        c[2].get<long long>() < c[1].get<long long>())
      return bad_argument(where + ": content-length-range takes two integers, 0 <= min <= max");
    return std::string();
  }
  if (op != "eq" && op != "starts-with")
    return bad_argument(where + ": unknown operator '" + op + "' (eq, starts-with or content-length-range)");
  if (!c[1].is_string() || c[1].get<std::string>().size() < 2 || c[1].get<std::string>()[0] != '$' || !c[2].is_string())
    return bad_argument(where + ": " + op + " takes \"$field\" and a string value");
  return to_lower(c[1].get<std::string>().substr(1));
}

// The arguments presign_post knows, checked for unknown names and types.
std::optional<Error> check_arguments(const json& args) {
  static const std::vector<std::string> known = {"Bucket", "Object", "conditions", "fields", "expires"};
  if (!args.is_object()) return bad_argument("table expected");
  for (const auto& [name, value] : args.items()) {
    if (std::find(known.begin(), known.end(), name) != known.end()) continue;
    return bad_argument(unknown_field(name, known));
  }
  if (args.contains("fields") && !(args["fields"].is_object() || (args["fields"].is_array() && args["fields"].empty())))
    return bad_argument("field 'fields' must be a table of form fields (name = \"value\")");
  if (args.contains("conditions") && !args["conditions"].is_array() &&
      !(args["conditions"].is_object() && args["conditions"].empty()))
    return bad_argument("field 'conditions' must be a list of conditions");
  if (args.contains("expires") && !args["expires"].is_number_integer())
    return bad_argument("field 'expires' must be an integer number of seconds");
  return std::nullopt;
}

}  // namespace

Outcome<Client::PostForm> Client::presign_post(const json& args) {
  if (std::optional<Error> bad = check_arguments(args)) return *bad;
  long expires = args.value("expires", 3600L);
  if (expires < 1 || expires > kMaxPresignSeconds)
    return bad_argument("field 'expires' must be between 1 and " + std::to_string(kMaxPresignSeconds) +
                        " seconds (a week), got " + std::to_string(expires));
  if (std::optional<Error> incomplete = complete_config()) return *incomplete;
  json where = {{"Bucket", args.value("Bucket", json())}, {"Object", args.value("Object", json())}};
  auto put = operation_request("PutObject", where);  // Bucket and Object checked as a PUT's are
  if (!put.ok()) return put.error();
  auto bucket_request = operation_request("HeadBucket", {{"Bucket", where["Bucket"]}});
  if (!bucket_request.ok()) return bucket_request.error();
  const std::string bucket = where["Bucket"], key = where["Object"];
  const Dialect& d = *config_.dialect;
  const std::string prefix = to_lower(d.query_prefix);

  json conditions = json::array();
  std::set<std::string> named;  // the fields the caller's conditions name
  const json given = args.value("conditions", json::array());
  for (size_t i = 0; i < given.size(); ++i) {
    Outcome<std::string> field = condition_field(given[i], i);
    if (!field.ok()) return field.error();
    named.insert(*field);
    conditions.push_back(given[i]);
  }
  PostForm form;
  form.url = bucket_request->url.origin() + bucket_request->url.path;
  form.fields.emplace_back("key", key);
  static const char* const reserved[] = {"key",        "file", "policy",    "algorithm",
                                         "credential", "date", "signature", "security-token"};
  const json fields = args.value("fields", json::object());
  for (const auto& [name, value] : fields.items()) {
    std::string lower = to_lower(name);
    for (const char* r : reserved)
      if (lower == r || lower == prefix + r)
        return bad_argument("fields." + name + " is set by presign_post itself (the key comes from Object)");
    if (!value.is_string()) return bad_argument("fields." + name + " must be a string");
    form.fields.emplace_back(name, value.get<std::string>());
    if (!named.count(lower)) conditions.push_back({{name, value}});
  }
  conditions.push_back({{"bucket", bucket}});
  const std::string token = "${filename}";
  if (key.size() >= token.size() && key.compare(key.size() - token.size(), token.size(), token) == 0)
    conditions.push_back({"starts-with", "$key", key.substr(0, key.size() - token.size())});
  else conditions.push_back({{"key", key}});

  std::time_t now = std::time(nullptr);
  const std::string date = format_date(now, DateForm::sigv4), service = service_of(*bucket_request->api);
  const std::string credential = config_.credentials.access_key_id + "/" + date.substr(0, 8) + "/" + config_.region +
                                 "/" + service + "/" + d.terminator;
  std::vector<std::pair<std::string, std::string>> signing = {
      {prefix + "algorithm", d.algorithm}, {prefix + "credential", credential}, {prefix + "date", date}};
  if (!config_.credentials.session_token.empty())
    signing.emplace_back(prefix + "security-token", config_.credentials.session_token);
  for (const auto& [name, value] : signing) {
    conditions.push_back({{name, value}});
    form.fields.emplace_back(name, value);
  }
  json policy = {{"expiration", format_date(now + expires, DateForm::iso)}, {"conditions", conditions}};
  std::string policy64 = base64(policy.dump());
  form.fields.emplace_back("policy", policy64);
  form.fields.emplace_back(prefix + "signature", policy_signature(d, config_.credentials, date.substr(0, 8),
                                                                  config_.region, service, policy64));
  return form;
}

}  // namespace cloud
