// Browser uploads (S3's POST object): the form, its policy and its signature, then
// the object stored by PutObject's handler. Every byte of the form is hostile: the
// fields before the file are bounded (kMaxPostFieldBytes), the file found with a
// linear search, nothing of the form read past its end.
#include "emulator/post_object.h"

#include <algorithm>
#include <cstdlib>
#include <ctime>
#include <functional>
#include <map>
#include <optional>
#include <set>

#include "core/base/crypto.h"
#include "core/base/dates.h"
#include "core/model/protocol.h"
#include "core/wire/uri.h"
#include "core/model/validate.h"

namespace cloud {
namespace {

// One field of the form, its name lower-cased (S3 compares them so).
struct Field {
  std::string name, value;
};

struct Form {
  std::vector<Field> fields;  // those before the file, in order
  bool has_file = false;
  std::string filename;                 // the file part's, for ${filename}
  size_t file_begin = 0, file_end = 0;  // the file's bytes in the body

  // The value of the field `name` (lower case), or nullptr.
  const std::string* value(const std::string& name) const {
    for (const Field& f : fields)
      if (f.name == name) return &f.value;
    return nullptr;
  }
};

ApiError refusal(int status, std::string code, std::string message, json details = json::object()) {
  return ApiError{status, std::move(code), std::move(message), std::move(details)};
}

ApiError malformed(const std::string& why) {
  return refusal(400, "MalformedPOSTRequest",
                 "The body of your POST request is not well-formed multipart/form-data (" + why + ").");
}

ApiError too_much_before_file() {
  return refusal(400, "MaxPostPreDataLengthExceededError",
                 "Your POST request fields preceding the upload file were too large: at most " +
                     std::to_string(kMaxPostFieldBytes) + " bytes may come before the file.");
}

// The value of parameter `name` of a header such as `form-data; name="key"` or
// `multipart/form-data; boundary=x`, unquoted; nullopt when it is absent.
std::optional<std::string> header_param(std::string_view header, std::string_view name) {
  size_t at = header.find(';');
  while (at != std::string_view::npos) {
    size_t start = header.find_first_not_of(" \t", at + 1);
    if (start == std::string_view::npos) return std::nullopt;
    size_t eq = header.find('=', start);
    if (eq == std::string_view::npos) return std::nullopt;
    std::string_view key = header.substr(start, eq - start);
    while (!key.empty() && (key.back() == ' ' || key.back() == '\t')) key.remove_suffix(1);
    std::string value;
    size_t next = eq + 1;
    if (next < header.size() && header[next] == '"') {  // a quoted string, \-escapes kept out
      for (++next; next < header.size() && header[next] != '"'; ++next) {
        if (header[next] == '\\' && next + 1 < header.size()) ++next;
        value += header[next];
      }
      next = header.find(';', next);
    } else {
      size_t end = header.find(';', next);
      value = std::string(header.substr(next, end == std::string_view::npos ? std::string_view::npos : end - next));
      while (!value.empty() && (value.back() == ' ' || value.back() == '\t')) value.pop_back();
      next = end;
    }
    if (iequals(key, name)) return value;
    at = next;
  }
  return std::nullopt;
}

// The name, filename (if any) and whether a part is a form-data one, from its headers
// ("Name: value" lines joined by CRLF).
struct PartHead {
  std::string name;
  std::optional<std::string> filename;
};

std::optional<PartHead> read_part_head(std::string_view head) {
  for (size_t start = 0; start < head.size();) {
    size_t end = std::min(head.find("\r\n", start), head.size());
    std::string_view line = head.substr(start, end - start);
    size_t colon = line.find(':');
    if (colon != std::string_view::npos && iequals(line.substr(0, colon), "Content-Disposition")) {
      std::string_view value = line.substr(colon + 1);
      auto name = header_param(value, "name");
      if (!name) return std::nullopt;
      return PartHead{to_lower(*name), header_param(value, "filename")};
    }
    start = end + 2;
  }
  return std::nullopt;
}

// The form of `body`, split on the boundary of `content_type`: the fields up to the
// one named "file" (S3 ignores those after it), the file's place in the body.
std::optional<ApiError> parse_form(const std::string& content_type, const std::string& body, Form& form) {
  std::optional<std::string> boundary = header_param(content_type, "boundary");
  if (!boundary || boundary->empty() || boundary->size() > 70)
    return malformed("no usable boundary in its Content-Type");
  const std::string delimiter = "\r\n--" + *boundary;
  // The body begins with the first delimiter, without its line break.
  if (body.compare(0, delimiter.size() - 2, delimiter, 2, std::string::npos) != 0)
    return malformed("it does not begin with its boundary");
  size_t at = delimiter.size() - 2;
  std::set<std::string> seen;
  std::boyer_moore_horspool_searcher find_delimiter(delimiter.begin(), delimiter.end());
  for (;;) {
    if (body.compare(at, 2, "--") == 0) break;  // the closing delimiter: no file
    if (body.compare(at, 2, "\r\n") != 0) return malformed("a boundary is not followed by a line break");
    at += 2;
    if (at > kMaxPostFieldBytes) return too_much_before_file();
    size_t head_end = body.find("\r\n\r\n", at);
    if (head_end == std::string::npos || head_end > kMaxPostFieldBytes) {
      if (body.size() > kMaxPostFieldBytes) return too_much_before_file();
      return malformed("a part's headers do not end");
    }
    std::optional<PartHead> head = read_part_head(std::string_view(body).substr(at, head_end - at));
    if (!head) return malformed("a part has no Content-Disposition with a name");
    size_t begin = head_end + 4;
    bool file = head->name == "file";
    // A field's value ends within the bound; the file's anywhere in the body.
    auto limit = file ? body.end() : body.begin() + std::min(body.size(), kMaxPostFieldBytes + delimiter.size());
    auto found = std::search(body.begin() + std::min(begin, body.size()), limit, find_delimiter);
    if (found == limit) {
      if (!file && body.size() > kMaxPostFieldBytes) return too_much_before_file();
      return malformed("a part does not end with the boundary");
    }
    size_t end = static_cast<size_t>(found - body.begin());
    if (file) {
      form.has_file = true;
      form.filename = head->filename.value_or("");
      form.file_begin = begin, form.file_end = end;
      return std::nullopt;
    }
    if (!seen.insert(head->name).second)
      return refusal(400, "InvalidArgument", "the form field '" + head->name + "' is given more than once",
                     {{"ArgumentName", head->name}});
    form.fields.push_back({head->name, body.substr(begin, end - begin)});
    at = end + delimiter.size();
  }
  return std::nullopt;
}

// ---------------------------------------------------------------- the signature

// The dialect whose algorithm field (x-amz-algorithm, x-ext-algorithm) the form has.
const Dialect* form_dialect(const Form& form) {
  for (const Dialect* d : {&Dialect::aws(), &Dialect::ext()})
    if (form.value(to_lower(d->query_prefix) + "algorithm")) return d;
  return nullptr;
}

ApiError missing_field(const std::string& name) {
  return refusal(400, "InvalidArgument",
                 "Bucket POST must contain a field named '" + name +
                     "'. If it is specified, please check the order of the fields.",
                 {{"ArgumentName", name}});
}

// `text` cut at every '/'.
std::vector<std::string> split_slash(const std::string& text) {
  std::vector<std::string> parts;
  for (size_t start = 0;;) {
    size_t end = text.find('/', start);
    parts.push_back(text.substr(start, end == std::string::npos ? std::string::npos : end - start));
    if (end == std::string::npos) return parts;
    start = end + 1;
  }
}

// Whether a form is signed the older way (S3's signature V2): an AWSAccessKeyId field
// and no algorithm field of either dialect.
bool is_v2_form(const Form& form) { return !form_dialect(form) && form.value("awsaccesskeyid"); }

// A V2 form's signature, as S3 checks it: the accepted key, and its signature field the
// base64 HMAC-SHA1 of the base64 policy (policy_signature_v2). Only where the aws
// dialect is accepted: the platform's own (ext) forms are signed with its algorithm.
std::optional<ApiError> check_v2_signature(const PostObjectRequest& in, const Form& form, const std::string& policy) {
  if (in.dialect && in.dialect != &Dialect::aws())
    return missing_field(to_lower(in.dialect->query_prefix) + "algorithm");
  if (!form.value("signature")) return missing_field("signature");
  const Credentials* credentials = in.credentials(*form.value("awsaccesskeyid"));
  if (!credentials)
    return refusal(403, "InvalidAccessKeyId", "The access key id you provided does not exist in our records.",
                   {{"AWSAccessKeyId", *form.value("awsaccesskeyid")}});
  if (!constant_time_equal(policy_signature_v2(*credentials, policy), *form.value("signature")))
    return refusal(403, "SignatureDoesNotMatch",
                   "The request signature we calculated does not match the signature you provided. Check your key "
                   "and signing method.");
  return std::nullopt;
}

// The policy's signature fields, checked as S3 checks them: the algorithm of the
// dialect, a credential of the accepted key scoped to this region and service, a
// date of the credential's day, and the signature of the base64 policy.
std::optional<ApiError> check_signature(const PostObjectRequest& in, const Form& form, const std::string& policy) {
  if (is_v2_form(form)) return check_v2_signature(in, form, policy);
  const Dialect* d = form_dialect(form);
  std::string prefix = to_lower((d ? d : in.dialect ? in.dialect : &Dialect::aws())->query_prefix);
  if (!d || (in.dialect && in.dialect != d)) return missing_field(prefix + "algorithm");
  for (const char* name : {"credential", "date", "signature"})
    if (!form.value(prefix + name)) return missing_field(prefix + name);
  if (*form.value(prefix + "algorithm") != d->algorithm)
    return refusal(400, "InvalidArgument", "the " + prefix + "algorithm field must be " + d->algorithm,
                   {{"ArgumentName", prefix + "algorithm"}});
  const std::string& credential = *form.value(prefix + "credential");
  std::vector<std::string> scope = split_slash(credential);
  const std::string& date = *form.value(prefix + "date");
  if (scope.size() != 5 || scope[4] != d->terminator || date.size() != 16 || date.compare(0, 8, scope[1]) != 0)
    return refusal(400, "InvalidArgument",
                   "the " + prefix + "credential field must be <access key>/<yyyymmdd>/<region>/<service>/" +
                       d->terminator + " of the day of " + prefix + "date (yyyymmddThhmmssZ)",
                   {{"ArgumentName", prefix + "credential"}});
  const Credentials* credentials = in.credentials(scope[0]);
  if (!credentials)
    return refusal(403, "InvalidAccessKeyId", "The access key id you provided does not exist in our records.",
                   {{"AWSAccessKeyId", scope[0]}});
  if (scope[2] != in.region)
    return refusal(
        400, "AuthorizationHeaderMalformed",
        "The authorization header is malformed; the region '" + scope[2] + "' is wrong; expecting '" + in.region + "'",
        {{"Region", in.region}});
  if (scope[3] != in.api->service)
    return refusal(400, "AuthorizationHeaderMalformed",
                   "The authorization header is malformed; incorrect service '" + scope[3] +
                       "'. This endpoint belongs to '" + in.api->service + "'.");
  std::string expected = policy_signature(*d, *credentials, scope[1], scope[2], scope[3], policy);
  if (!constant_time_equal(expected, *form.value(prefix + "signature")))
    return refusal(403, "SignatureDoesNotMatch",
                   "The request signature we calculated does not match the signature you provided. Check your key "
                   "and signing method.");
  return std::nullopt;
}

// ---------------------------------------------------------------- the policy

ApiError invalid_policy(const std::string& why) {
  return refusal(400, "InvalidPolicyDocument", "Invalid Policy: " + why);
}

ApiError denied(const std::string& why) { return refusal(403, "AccessDenied", "Invalid according to Policy: " + why); }

// Seconds since 1970 of an ISO 8601 UTC time ("2026-11-28T08:00:00Z", fractions of a
// second allowed); nullopt when it is not one.
std::optional<std::time_t> parse_expiration(const std::string& text) {
  if (text.empty() || text.back() != 'Z') return std::nullopt;  // UTC, as S3 writes it
  Outcome<std::int64_t> t = parse_date(text, DateForm::iso);
  if (!t.ok()) return std::nullopt;
  return static_cast<std::time_t>(*t);
}

// What the policy's conditions are checked against: the form's fields by lower-cased
// name, and the bucket of the URL.
struct Checked {
  const Form& form;
  const std::string& bucket;
  std::set<std::string> covered;  // the fields some condition names
  std::optional<std::pair<long long, long long>> length_range;

  // The value a condition's field stands for ("" when the form lacks it).
  std::string value_of(const std::string& field) {
    covered.insert(field);
    if (field == "bucket") return bucket;
    const std::string* v = form.value(field);
    return v ? *v : std::string();
  }
};

// A condition's field name, "$Content-Type" as "content-type"; nullopt when not "$name".
std::optional<std::string> field_of(const json& name) {
  if (!name.is_string()) return std::nullopt;
  const std::string& s = name.get_ref<const std::string&>();
  if (s.size() < 2 || s[0] != '$') return std::nullopt;
  return to_lower(s.substr(1));
}

// One condition: an error when it is malformed (InvalidPolicyDocument) or not met
// (AccessDenied); a content-length-range is kept for the file's size.
std::optional<ApiError> check_condition(const json& c, Checked& checked) {
  const std::string shown = c.dump();
  if (c.is_object()) {  // { "field": "value" }: an exact match
    if (c.size() != 1 || !c.begin().value().is_string())
      return invalid_policy("Invalid Condition: an exact match names one field and a text value: " + shown);
    if (checked.value_of(to_lower(c.begin().key())) != c.begin().value().get_ref<const std::string&>())
      return denied("Policy Condition failed: " + shown);
    return std::nullopt;
  }
  if (!c.is_array() || c.size() != 3 || !c[0].is_string()) return invalid_policy("Invalid Condition: " + shown);
  const std::string op = to_lower(c[0].get<std::string>());
  if (op == "content-length-range") {
    if (!c[1].is_number_integer() || !c[2].is_number_integer() || c[1].get<long long>() < 0 ||
        c[2].get<long long>() < c[1].get<long long>())
      return invalid_policy("Invalid Condition: content-length-range takes two integers, min <= max: " + shown);
    checked.length_range = std::make_pair(c[1].get<long long>(), c[2].get<long long>());
    return std::nullopt;
  }
  std::optional<std::string> field = field_of(c[1]);
  if ((op != "eq" && op != "starts-with") || !field || !c[2].is_string())
    return invalid_policy("Invalid Condition: expected [\"eq\" or \"starts-with\", \"$field\", \"value\"]: " + shown);
  std::string value = checked.value_of(*field);
  const std::string& want = c[2].get_ref<const std::string&>();
  bool met = op == "eq" ? value == want : value.compare(0, want.size(), want) == 0;
  if (!met) return denied("Policy Condition failed: " + shown);
  return std::nullopt;
}

// Whether a form field needs no condition: the signature, the file, the policy
// itself and x-ignore-* fields, as S3 says; in a V2 form (d null), its AWSAccessKeyId
// and signature.
bool exempt(const std::string& name, const Dialect* d) {
  std::string signature = d ? to_lower(d->query_prefix) + "signature" : "signature";
  return name == signature || (!d && name == "awsaccesskeyid") || name == "file" || name == "policy" ||
         name.rfind("x-ignore-", 0) == 0;
}

// The decoded policy: not expired at `now`, every condition met, every field but the
// exempt ones named by one, the file's size in the content-length-range. `d` is the
// form's dialect, null for a V2 form.
std::optional<ApiError> check_policy(const std::string& policy64, const Form& form, const std::string& bucket,
                                     const Dialect* d, std::time_t now) {
  std::optional<std::string> text = unbase64(policy64);
  if (!text) return invalid_policy("the policy field is not base64");
  bool too_deep = false;
  json policy = parse_json_text(*text, too_deep);  // depth watched: the policy is the client's
  if (policy.is_discarded() || !policy.is_object()) return invalid_policy("the policy is not a JSON object");
  auto expiration = policy.find("expiration");
  if (expiration == policy.end() || !expiration->is_string()) return invalid_policy("Policy missing expiration.");
  std::optional<std::time_t> expires = parse_expiration(expiration->get<std::string>());
  if (!expires) return invalid_policy("Invalid 'expiration' value: '" + expiration->get<std::string>() + "'");
  if (*expires <= now) return denied("Policy expired.");
  auto conditions = policy.find("conditions");
  if (conditions == policy.end() || !conditions->is_array()) return invalid_policy("Policy missing conditions.");
  Checked checked{form, bucket, {}, std::nullopt};
  for (const json& c : *conditions)
    if (std::optional<ApiError> failed = check_condition(c, checked)) return failed;
  std::string extra;
  for (const Field& f : form.fields)
    if (!exempt(f.name, d) && !checked.covered.count(f.name)) extra += (extra.empty() ? "" : ", ") + f.name;
  if (!extra.empty()) return denied("Extra input fields: " + extra);
  long long size = static_cast<long long>(form.file_end - form.file_begin);
  if (checked.length_range && size > checked.length_range->second)
    return refusal(400, "EntityTooLarge", "Your proposed upload exceeds the maximum allowed size",
                   {{"ProposedSize", size}, {"MaxSizeAllowed", checked.length_range->second}});
  if (checked.length_range && size < checked.length_range->first)
    return refusal(400, "EntityTooSmall", "Your proposed upload is smaller than the minimum allowed size",
                   {{"ProposedSize", size}, {"MinSizeAllowed", checked.length_range->first}});
  return std::nullopt;
}

// ---------------------------------------------------------------- storing

// THE ONE PLACE where the form's fields become the object's HTTP metadata: the
// content headers, x-amz-meta-* / x-ext-meta-* fields and its acl, passed as the headers a PUT
// would carry, so PutObject's model reads whichever of them it has members for (its
// ContentType, Metadata and the rest, where the model has them; ignored where not).
Headers object_headers(const Form& form) {
  static const char* const content[] = {"content-type",     "cache-control",    "content-disposition",
                                        "content-encoding", "content-language", "expires"};
  Headers headers;
  for (const Field& f : form.fields) {
    bool meta = f.name.rfind("x-amz-meta-", 0) == 0 || f.name.rfind("x-ext-meta-", 0) == 0;
    if (meta || std::any_of(std::begin(content), std::end(content), [&](const char* c) { return f.name == c; }))
      headers.emplace_back(f.name, f.value);
    if (f.name == "acl") headers.emplace_back("x-ext-acl", f.value);  // the object's canned ACL, as S3 takes it
  }
  return headers;
}

// The key as stored: ${filename} replaced by the file's name, as S3 does.
std::string object_key(std::string key, const std::string& filename) {
  const std::string token = "${filename}";
  size_t at = key.find(token);
  if (at != std::string::npos) key.replace(at, token.size(), filename);
  return key;
}

// The object stored by PutObject's handler, as a PUT with the form's headers would;
// the result's ETag, or the error.
HandlerResult store(PostObjectRequest& in, const Form& form, const std::string& bucket, const std::string& key) {
  const Operation* put = nullptr;
  for (const Operation* op : in.api->operations)
    if (op->name == "PutObject") put = op;
  if (!put) return HandlerResult::failure(501, "NotImplemented", "this API stores no objects");
  std::map<std::string, std::string> labels{{"Bucket", bucket}, {"Object", key}};
  auto args = parse_request(*in.api, *put, labels, "", object_headers(form), "");
  if (!args.ok()) return HandlerResult::failure(400, args.error().code, args.error().message);
  auto valid = validate_input(*put, std::move(*args), Checker::server);
  if (!valid.ok()) {
    std::string code = in.api->protocol->invalid_argument_code;
    for (const FieldProblem& f : valid.error().fields)
      if (!f.code.empty()) code = f.code;
    return HandlerResult::failure(400, code, valid.error().message);
  }
  in.body.erase(form.file_end);  // the file's bytes kept in place, not copied
  in.body.erase(0, form.file_begin);
  RequestBody bytes;
  bytes.bytes = memory_blob(std::move(in.body));
  return in.platform->handle(*put, *valid, &bytes, in.account);
}

// A success_action_redirect (or redirect) the client may be sent to: an http(s) URL.
bool redirect_ok(const std::string& url) {
  bool scheme = url.size() > 8 && (iequals(url.substr(0, 7), "http://") || iequals(url.substr(0, 8), "https://"));
  return scheme &&
         std::none_of(url.begin(), url.end(), [](char c) { return static_cast<unsigned char>(c) < 33 || c == 127; });
}

// The answer S3 gives a stored upload: a 303 to the redirect, with bucket, key and
// etag added to its query; else success_action_status's 200 or 201 (with the
// PostResponse XML), else 204.
PostObjectAnswer success(const PostObjectRequest& in, const Form& form, const std::string& bucket,
                         const std::string& key, const std::string& etag) {
  PostObjectAnswer a;
  std::string location = "http://" + in.host + "/" + uri_encode(bucket) + "/" + uri_encode(key, true);
  a.headers = {{"ETag", etag}, {"Location", location}};
  const std::string* redirect = form.value("success_action_redirect");
  if (!redirect) redirect = form.value("redirect");
  if (redirect && redirect_ok(*redirect)) {
    a.status = 303;
    a.headers[1].second = *redirect + (redirect->find('?') == std::string::npos ? "?" : "&") +
                          "bucket=" + uri_encode(bucket) + "&key=" + uri_encode(key) + "&etag=" + uri_encode(etag);
    return a;
  }
  const std::string* status = form.value("success_action_status");
  a.status = status && *status == "200" ? 200 : status && *status == "201" ? 201 : 204;
  if (a.status != 201) return a;
  a.body = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<PostResponse><Location>";
  xml_escape(a.body, location, false);
  a.body += "</Location><Bucket>";
  xml_escape(a.body, bucket, false);
  a.body += "</Bucket><Key>";
  xml_escape(a.body, key, false);
  a.body += "</Key><ETag>";
  xml_escape(a.body, etag, false);
  a.body += "</ETag></PostResponse>";
  return a;
}

PostObjectAnswer failure(ApiError e) {
  PostObjectAnswer a;
  a.ok = false;
  a.error = std::move(e);
  return a;
}

}  // namespace

bool is_post_object(const std::string& method, const std::string& path, const std::string& query,
                    const Headers& headers) {
  if (method != "POST" || !query.empty() || path.size() < 2 || path[0] != '/') return false;
  size_t slash = path.find('/', 1);
  if (slash != std::string::npos && slash != path.size() - 1) return false;
  std::string type = to_lower(header_value(headers, "Content-Type"));
  return type.rfind("multipart/form-data", 0) == 0;
}

PostObjectAnswer post_object(PostObjectRequest& in) {
  std::string bucket = uri_decode(in.path.substr(1, in.path.find('/', 1) - 1));
  Form form;
  if (std::optional<ApiError> bad = parse_form(in.content_type, in.body, form)) return failure(std::move(*bad));
  if (!form.value("key")) return failure(missing_field("key"));
  if (!form.has_file) return failure(missing_field("file"));
  const std::string* policy = form.value("policy");
  if (!policy)  // unsigned: an anonymous write, which no bucket of the emulator allows
    return failure(refusal(403, "AccessDenied",
                           "Access Denied: an upload without a signed policy is anonymous, "
                           "and the emulator's buckets take no anonymous writes"));
  if (std::optional<ApiError> bad = check_signature(in, form, *policy)) return failure(std::move(*bad));
  if (std::optional<ApiError> bad = check_policy(*policy, form, bucket, form_dialect(form), in.platform->now_wall()))
    return failure(std::move(*bad));
  std::string key = object_key(*form.value("key"), form.filename);
  HandlerResult stored = store(in, form, bucket, key);  // the body goes; the fields are copies
  if (!stored.ok) return failure(stored.error);
  return success(in, form, bucket, key, stored.result.value("ETag", ""));
}

}  // namespace cloud
