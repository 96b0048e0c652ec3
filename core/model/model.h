// The operation model: every operation of the four APIs described once, as data
// (core/model/*.json, compiled into the binary). The client validates and serialises
// from it, the emulator validates incoming requests from it, and help() prints from it.
// Adding an operation means adding data. docs/model.md describes the file format.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/base/error.h"
#include "core/base/pattern.h"
#include "core/wire/sigv4.h"

namespace cloud {

using json = nlohmann::json;

enum class ShapeType { structure, list, string, integer, boolean, timestamp, blob, map };
// `local`: read by cloudlua itself and never sent (the path of a file to send or to
// write an answer to, and its byte range). `headers`: a map whose every entry is a
// header of its own, named by the member's wire name (a prefix) and the entry's name
// (S3's user metadata: Metadata = { mtime = "1" } is x-ext-meta-mtime: 1).
enum class Location { body, path, query, header, local, headers };

const char* shape_type_name(ShapeType type);

// "required when sibling `field` equals `value`" and its twin "must be absent when".
struct Condition {
  std::string field;
  json value;
};

struct Shape;

struct Member {
  std::string name;       // the name Lua uses; for body members also the wire name
  std::string wire_name;  // query key or header name; equals name for body and path
  Location location = Location::body;
  bool greedy = false;  // path label {Object+}: keeps '/' unencoded
  bool required = false;
  bool nullable = false;  // cloud.null accepted, as the member left out
  std::vector<Condition> required_when;
  std::vector<Condition> absent_when;
  std::optional<json> default_value;              // what the server assumes when left out
  std::string default_text;                       // default described in words (per region...)
  std::map<std::string, json> default_by_region;  // region -> the default there
  std::string doc;
  bool xml_attribute = false;  // xml: an attribute of its structure's element (Grantee's xsi:type)
  const Shape* shape = nullptr;
};

struct Shape {
  ShapeType type = ShapeType::string;
  std::string name;                                 // set on named shapes only
  std::vector<Member> members;                      // structure
  const Shape* member = nullptr;                    // list element; map: the values' shape
  const Shape* key = nullptr;                       // map: the names' shape
  std::string member_name;                          // XML list with a wrapper: its items' element ("member" when "")
  bool flattened = false;                           // XML list: repeated elements without a wrapper
  std::string ascending_by;                         // list of structures: this integer member must rise
                                                    // strictly from item to item (no repeats)
  std::optional<long long> min_length, max_length;  // characters (strings), items (lists)
  std::optional<long long> max_bytes;               // strings: UTF-8 bytes; maps: names and values together
  std::map<std::string, std::string> error_codes;   // rule key (maxBytes) -> the code a server answers
  std::optional<long long> min, max;                // integers
  std::vector<json> allowed;                        // value set
  std::string pattern_text;                         // the pattern in words
  std::optional<Pattern> pattern;                   // the whole value must match
  std::string format;                               // "ipv4-or-cidr", "cidr", "iso8601"
  // xml structure: the namespace its element declares for the prefixes of its
  // attributes (xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"); "" for none.
  std::string xml_namespace_prefix, xml_namespace_uri;
  // A member of this shape stands for what another API calls by another name: that
  // name -> { what the member holds, the other API's name for it } ("Key" -> { "the
  // object's key", "S3's Key" }). An unknown field of that name beside such a member is
  // told the member's name.
  struct OtherName {
    std::string what, elsewhere;
  };
  std::map<std::string, OtherName> other_names;

  const Member* find_member(std::string_view name) const;
};

// The input members that name a file whose byte range is sent as the payload instead
// of the payload member's bytes (PutObject's and UploadPart's file, offset, length).
struct PayloadFile {
  std::string path;        // a string member: the file's path
  std::string offset;      // an integer member: the first byte sent (0 when left out)
  std::string length;      // an integer member: how many bytes (to the end when left out)
  std::string media_type;  // a string member the client fills, when the caller left it out,
                           // with the file's media type from its name (core/base/mime); "" for none
};

// How the pages of a listing follow each other (docs/model.md, "Paginators"): the
// input members a next request takes from the output paths of the answer before it,
// pair by pair, while the boolean at `more_results` is true. An output path may give
// alternatives, "NextMarker || Contents[-1].Key": the first one the answer has.
struct Paginator {
  std::vector<std::string> input_tokens;   // input members: ContinuationToken
  std::vector<std::string> output_tokens;  // output paths: NextContinuationToken
  std::string more_results;                // an output path to a boolean: IsTruncated
};

struct Operation {
  std::string name;                      // UpdateSnapshot
  std::string snake_name;                // update_snapshot
  std::string api;                       // cluster
  std::string method;                    // PUT
  std::string path;                      // /v1/snapshots/{SnapshotName}
  std::vector<std::string> fixed_query;  // keys that select the operation (?uploads),
                                         // "key=value" to select by a value too (?list-type=2)
  bool idempotent = true;                // false: never resent once it may have reached the server
  std::string doc;
  std::string input_root;                   // XML element of the request body ("" for JSON)
  std::string output_root;                  // XML element of the result body
  std::string payload;                      // member sent as the raw body (UploadPart), "" for none
  std::string output_payload;               // result member that is the raw answer body (GetObject)
  std::optional<PayloadFile> payload_file;  // the payload may come from a file range
  std::string output_file;                  // input (and result) member: the path the answer body is
                                            // written to instead of being returned as output_payload
  // The error code an answer of this status means when it names none itself (a HEAD
  // answer has no body: HeadObject's 404 is NoSuchKey).
  std::map<long, std::string> errors_by_status;
  std::string output_file_offset;      // input member: with output_file, write the body in
                                       // place at this byte of an existing file ("" for none)
  std::string output_file_durable;     // input member: with output_file, false skips the flush
                                       // to disk before the rename ("" for none)
  std::string output_file_beneath;     // input member: with output_file, the folder it lies under,
                                       // no link followed between the two ("" for none)
  bool checksum_required = false;      // the body's Content-MD5 is sent (and required by the server)
  std::optional<Paginator> paginator;  // a listing continued page by page (cloud.pages)
  // The platform's numeric limits of the operation that no member's rule can say
  // ("limits" in the model): CopyObject's largest source, the part sizes and count of
  // a multipart upload. Read by the emulator and, through cloud.describe, by Lua.
  std::map<std::string, std::uint64_t> limits;
  const Shape* input = nullptr;
  const Shape* output = nullptr;
};

// A named waiter (docs/model.md, "Waiters"): the operation to call every `delay`
// seconds, at most `max_attempts` times, and the acceptors that end the wait. Each
// acceptor is { state = success|failure|retry, and either error = "<code>" or path =
// "a.b[].c", comparator = equals|allEqual|anyEqual|prefix|empty, expected = value }.
// The engine that runs them is lua/wait.lua.
struct Waiter {
  std::string name;       // ClusterRunning
  std::string api;        // cluster
  std::string operation;  // GetCluster
  double delay = 0;       // seconds between tries
  int max_attempts = 0;
  std::string doc;
  std::string source;  // where the definition comes from
  json acceptors;      // array, in the order they are tried
};

// The format of an API's request, result and error bodies.
enum class Format { json, xml };

// What the code asks of an API's wire protocol, resolved once when the model loads
// (Api::protocol): callers ask it, and never compare protocol names.
struct Protocol {
  std::string name;  // "json" or "xml", as model files name it
  Format format = Format::json;
  std::string content_type;                     // of its bodies
  bool error_in_200 = false;                    // a 2xx answer that is an <Error> document where a result
                                                // document was due is a failure (S3's known trap)
  std::vector<std::string> error_code_headers;  // headers naming the error code, over the body's
  // Server side: the code of a request refused by validation, for a body field and for a
  // path, query or header member; and whether answers carry S3's support ids
  // (x-ext-id-2, x-storage-sg-trace-id, X-Gateway-Endpoint-Request).
  std::string invalid_body_code;
  std::string invalid_argument_code;
  bool support_ids = false;
  // Server side: a path ending in a one-segment label is matched with one '/' after it
  // too (S3 takes `PUT /bucket/` for `PUT /bucket`; s3cmd sends it).
  bool trailing_slash = false;
  // Server side: for a request that is not signed at all (no Authorization header, no
  // presigned parameters). Set (S3's AccessDenied, "Access Denied"): the API takes such
  // a request as anonymous, and answers this where it takes none (the control plane);
  // empty: the API refuses it with the signer's MissingAuthenticationToken (the JSON APIs).
  std::string unsigned_code;
  std::string unsigned_message;

  static const Protocol* find(std::string_view name);  // nullptr when there is none
};

struct Api {
  std::string name;                    // storage, devops, cluster, catalog
  const Protocol* protocol = nullptr;  // never null once loaded
  SigningPolicy signing;               // the model file's "signing"
  std::string service;                 // default signing service
  std::string xml_namespace;
  std::string doc;
  std::vector<const Operation*> operations;
  std::vector<const Waiter*> waiters;
};

class Model {
 public:
  // The model compiled into the binary. Each API's file is read when that API is first
  // used (an operation, a waiter or the API itself asked for), once, under a lock, so
  // that threads may share it; an index written at build time says which API holds
  // which operation. Never fails in a release (the unit tests read every file).
  static const Model& builtin();
  // Builds a model from the texts of model files, all at once; errors name the file
  // and the key.
  static Outcome<std::shared_ptr<Model>> load(const std::vector<std::pair<std::string, std::string>>& files);

  // By name or snake_name. The builtin model reads only what the operation needs (its
  // API's header and shapes, and its own text) until something asks for the whole API.
  const Operation* find(std::string_view name) const;
  const Api* api(std::string_view name) const;  // the whole API, read first when it is not
  // The API of an operation find() gave: its name, protocol, service, namespace and
  // signing policy, read; its operations and waiters only once api() or apis() asked.
  const Api& api_for(const Operation& op) const;
  const std::vector<Api>& apis() const;  // reads every API's file
  std::vector<const Operation*> operations() const;
  const Waiter* waiter(std::string_view name) const;
  std::vector<const Waiter*> waiters() const;  // every API's, in file order
  // Without reading any file: the APIs' names, in file order; the names of an API's
  // operations (in name order: the build's JSON reader sorts keys); the API holding
  // an operation ("" for none); an API's default signing service ("" for none).
  std::vector<std::string> api_names() const;
  bool has_api(std::string_view api) const;
  std::vector<std::string> operation_names(std::string_view api) const;
  std::string api_of(std::string_view operation) const;
  std::string default_service(std::string_view api) const;

 private:
  struct Loader;
  // An API's file not read yet (builtin only): its name and text, and what has been
  // read of it one operation at a time (under load_mutex_): the file split into its
  // operations' texts and the rest (base), the header and shapes, the operations.
  struct Source {
    std::string file;
    const char* text = nullptr;
    std::once_flag once;
    bool split = false;
    std::string base;
    std::map<std::string, std::string_view, std::less<>> operation_texts;
    bool header_read = false;
    bool whole = false;
    std::map<std::string, Shape*> shapes;
    std::map<std::string, Operation*> alone;
  };
  // An operation's name and the API that holds it (an index into apis_).
  struct Entry {
    std::string name, snake_name;
    size_t api = 0;
  };
  void read_api(size_t i) const;
  const Operation* read_alone(const Entry& e) const;
  // Fills by_name_ from index_, once index_ is complete.
  void index_names();
  // The entry of the operation called `name` (or its snake_case name); nullptr if none.
  const Entry* entry(std::string_view name) const;
  void split_source(size_t i) const;
  void read_header(size_t i) const;

  // Filled as APIs are read: the deques only under load_mutex_ (stable addresses for
  // the pointers into them), each apis_ entry (its size fixed before any reading) once.
  mutable std::deque<Shape> shapes_;
  mutable std::deque<Operation> operations_;
  mutable std::deque<Waiter> waiters_;
  mutable std::vector<Api> apis_;
  std::deque<Source> sources_;  // empty once everything is read (Model::load)
  std::vector<Entry> index_;
  // Each operation's name and snake_case name -> its entry in index_ (the views point
  // into index_, complete before this is filled): a call finds its operation at once.
  std::unordered_map<std::string_view, size_t> by_name_;
  std::vector<std::string> services_;  // each API's default service, beside apis_
  mutable std::mutex load_mutex_;
};

std::string snake_case(std::string_view camel);

// The members of the JSON object `text` as written, each key (between its quotes) and
// its value's text, in order; nullopt when `text` is no object (model.cpp says how).
using Members = std::vector<std::pair<std::string_view, std::string_view>>;
std::optional<Members> json_object_members(std::string_view text);

}  // namespace cloud
