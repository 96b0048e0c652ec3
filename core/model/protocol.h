// The wire protocols of the four APIs, both directions, driven by the model: the
// client serialises requests and parses responses; the emulator parses requests and
// serialises responses with the same code, so the two can never disagree.
// JSON APIs: path/query/header members placed as the model says, the rest a JSON body.
// The storage API: XML bodies in the API's namespace, lists flattened as repeated elements.
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "core/base/error.h"
#include "core/wire/http.h"
#include "core/model/model.h"

namespace cloud {

// A request before it has a host: what the serialiser hands to the signer.
struct WireRequest {
  std::string method;
  std::string path;   // percent-encoded
  std::string query;  // percent-encoded, without '?'
  Headers headers;
  std::string body;
  BodyFiles files{};  // a payload sent from a file (upload sha256 still to compute), a download target
};

// --- client side
WireRequest serialize_request(const Api& api, const Operation& op, const json& input);
// The same, moving the payload member's bytes out of `input` instead of copying them.
WireRequest serialize_request(const Api& api, const Operation& op, json&& input);
// A 2xx answer's result table; an unreadable body is an Error of kind api.
Outcome<json> parse_result(const Api& api, const Operation& op, const HttpResponse& response);
// The request an error answer is to, for the answers that do not explain themselves.
struct AnsweredRequest {
  const Operation* op = nullptr;  // its errorsByStatus name the code of a bodiless answer
  std::string method;             // "HEAD"
  std::string url;                // without the query's secrets (redacted)
  std::string host;               // host[:port]
};

// The Error for a non-2xx answer (or a 200 carrying an XML <Error>); the field
// problems the answer lists (serialize_error's "fields") become its fields. An answer
// that is no API error is summarised: an HTML page (a proxy's 502) by its title or
// first heading, an empty body by the status and the request (method, URL, host);
// the code is then the operation's errorsByStatus entry, else HTTPnnn.
Error parse_error(const Api& api, const HttpResponse& response, const AnsweredRequest& request = {});
// The request id of an answer, from whichever header the server used.
std::string request_id_of(const Headers& headers);

// A JSON text as a document (any value at the top), for cloud.json.decode: a text that
// is not JSON is InvalidJSON (validation) whose message names the byte where it
// stopped ("the text is not JSON: at byte 7: syntax error ..."), counted from 1; one
// nested more than kMaxDepth levels is DocumentTooDeep. `what` names the text.
Outcome<json> parse_json_document(const std::string& text, const std::string& what);

// --- server side
// The operation of `api` addressed by method, wire path, query and headers, with the
// decoded path labels; nullptr when none matches. Query keys no operation asks for
// (the vendor SDK's x-id=PutObject) play no part; of the operations a request fits,
// the one selected by the most query keys and headers wins.
const Operation* match_operation(const Api& api, const std::string& method, const std::string& path,
                                 const std::string& query, std::map<std::string, std::string>& labels,
                                 const Headers& headers = {});
// A key of `query` written bare (`?acl`, `?tagging`: a sub-resource, in S3's terms)
// that `op` neither is selected by nor takes as a member; "" when there is none. A
// request naming a sub-resource the model lacks is not the operation its path fits
// (GET /bucket?acl is no ListObjects).
std::string untaken_subresource(const Operation& op, const std::string& query);
// A received request turned back into the arguments the client was given.
Outcome<json> parse_request(const Api& api, const Operation& op, const std::map<std::string, std::string>& labels,
                            const std::string& query, const Headers& headers, const std::string& body);
// A result as the server sends it: the body, and header members added to `headers`.
std::string serialize_result(const Api& api, const Operation& op, const json& result, Headers& headers);
// An error body in the API's format; `details` are added to it, "fields" (a list of
// { path, problem }) as a list in either format. Bytes that are not UTF-8 (quoted
// from a request) are replaced by U+FFFD, so the body is always well-formed.
std::string serialize_error(const Api& api, const std::string& code, const std::string& message,
                            const std::string& request_id, const json& details = json::object());

const char* content_type_of(const Api& api);

// Appends `s` to `out` escaped as XML text (`attribute` false) or an attribute's value,
// as every XML body the protocol writes is: for a body written by hand (the emulator's
// PostResponse).
void xml_escape(std::string& out, std::string_view s, bool attribute);

// Whether `text` may open more than kMaxDepth containers one inside another (brackets
// counted outside strings; never fewer than a parser meets).
bool may_be_too_deep(std::string_view text);
// "<what> is nested more than 200 levels deep (the limit for any document)": the words
// of every refusal of a document deeper than kMaxDepth.
std::string too_deep_message(const std::string& what);
// A JSON text parsed with its depth watched: deeper than kMaxDepth, it is dropped as it
// is read (`too_deep` set, discarded) and never walked. Not JSON: discarded.
json parse_json_text(const std::string& text, bool& too_deep);

}  // namespace cloud
