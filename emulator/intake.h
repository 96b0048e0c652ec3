// Request intake: a request as it arrives, taken in once. At the first look at it
// (httplib's Expect: 100-continue or pre-routing handler, before a byte of its body is
// read) its headers get back the values they were sent with, its operation is matched
// and its body's destination decided from that one match: a raw payload (PutObject's,
// UploadPart's) to a file of the folder of bytes when there is one, anything else to
// memory, within the bodies' budget. Its handler then reads the body, the one way
// every body is read, hashed on the way, and checks the signature.
#pragma once

#include <httplib.h>

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "core/wire/http.h"
#include "core/model/model.h"
#include "core/wire/sigv4.h"
#include "emulator/answers.h"
#include "emulator/connection.h"
#include "emulator/incoming.h"

namespace cloud {

// The first value of a request's header, or null, and the same as a value, "" when
// it is absent.
const std::string* request_header(const httplib::Request& req, std::string_view name);
std::string request_header_value(const httplib::Request& req, std::string_view name);
// Signed in the aws dialect: by its Authorization header or as a presigned URL (its
// answer then says x-amz-* where the platform says x-ext-*).
bool is_aws_request(const httplib::Request& req);

// A request as taken in: what its handler serves it from.
struct Arrival : RequestNote {
  Headers headers;  // as sent (httplib's decoding undone), a signed one sent empty put back
  std::string path, query;
  bool post_form = false;                     // a browser upload (post_object.h): matched to no operation
  const Operation* op = nullptr;              // the operation that answers it; nullptr: none
  std::map<std::string, std::string> labels;  // the path's labels, by name
  bool raw_payload = false;                   // its body is op's payload as it is, kept beside the arguments
  std::string body_folder;                    // where its body goes: "" memory, else a file there
  std::string access_key;                     // its signer's, once read_body checked it ("": unsigned, anonymous)
};

// The secret of an access key, whichever account of whichever world has it; nullopt
// when none has (emulator/worlds.h: Worlds::caller).
using SecretOf = std::function<std::optional<Credentials>(const std::string& access_key)>;

class Intake {
 public:
  // Signatures are checked for `region`, in `dialect` ("any": either), with the
  // credentials `secret_of` finds for the key a request names.
  Intake(const std::string& region, const std::string& dialect, SecretOf secret_of)
      : region_(region), dialect_(dialect), secret_of_(std::move(secret_of)) {}
  // Where raw payloads go from now on ("": memory): serve's folder of bytes.
  void set_body_folder(std::string folder) { body_folder_ = std::move(folder); }

  // The request's arrival at the first look, kept for its handler in its connection's
  // note; the handler takes it (take), or it is made then (a request served without a
  // socket, or one no hook looked at).
  const Arrival& look(const Api& api, httplib::Request& req);
  Arrival take(const Api& api, httplib::Request& req);
  // How many requests have been matched to an operation, in this process: what a test
  // counts to show that a request is matched once.
  static unsigned long operations_matched() { return matched_; }

  // Whether a request's body may be read: one that declares more than the platform
  // takes is EntityTooLarge (400, as S3 says) before a byte of it is read, one of
  // undeclared length MissingContentLength (411), and one held in memory that does not
  // fit in what the bodies in flight may hold SlowDown (503). The connection then ends:
  // the unread body cannot be told from a next request.
  std::optional<Refusal> admit(const Api& api, httplib::Request& req);

  // Reads the request's body into `body` (where the arrival says) and checks the
  // signature: before the body when it is streaming (its chunks checked on the way),
  // after it otherwise (its hash taken on the way). A body refused is read to its end
  // and dropped, so that the answer reaches a client still sending.
  std::optional<SignatureRefusal> read_body(const Api& api, const httplib::Request& req,
                                            const httplib::ContentReader* reader, Arrival& in,
                                            std::unique_ptr<IncomingBody>& body) const;

  // The body to `into`, from the connection or req.body; false when it ended early.
  // httplib reads a multipart/form-data body as its parts, with handlers for them: the
  // emulator takes every body as bytes, so httplib is told the type is not that (the
  // headers the emulator reads were copied before).
  template <class Into>
  static bool read_into(const httplib::Request& req, const httplib::ContentReader* reader, Into into) {
    if (!reader) return into(req.body), true;
    if (req.is_multipart_form_data())
      for (auto& [name, value] : const_cast<httplib::Request&>(req).headers)  // httplib's own, not const
        if (iequals(name, "Content-Type")) value = "application/octet-stream";
    return (*reader)([&into](const char* data, size_t size) { return into(std::string_view(data, size)), true; });
  }

  // Content-MD5, when sent, must be the base64 of the body's MD5 (`md5`, raw), as S3
  // checks; an operation whose model says checksumRequired (DeleteObjects) needs it,
  // or one of the x-*-checksum-* headers that stand for it.
  static std::optional<Refusal> check_content_md5(const httplib::Request& req, const std::string& md5);
  static std::optional<Refusal> check_checksum_sent(const Operation& op, const Headers& headers);

  // GET /_cloudlua/discover without a body (docs/emulator.md, "Reaching serve").
  static bool is_discovery(const httplib::Request& req);

  // httplib routes by matching the path against each handler's libstdc++ regex, which
  // recurses once per character: a path of the longest request line httplib takes
  // (8 KiB) needed about 5 MiB of stack. The emulator routes by the target itself, so
  // every path is replaced by kRoute, the one path its handlers are registered for,
  // before httplib routes: its regex never sees the client's path. httplib then still
  // reads the body, answers HEAD as GET without the body, and answers 404 (OPTIONS) or
  // 400 (other methods) to methods no handler takes.
  static constexpr const char* kRoute = "/";
  static void route_anywhere(const httplib::Request& req);
  // Marks a request the emulator has whole (httplib has read its body, if it declared
  // one); read_whole() is what its connection asks before serving another request
  // after it (ConnectionServer's ReadWhole).
  static void note_read_whole(const httplib::Request& req);
  static bool read_whole(const httplib::Request& req);

 private:
  Arrival arrive(const Api& api, httplib::Request& req) const;
  bool goes_to_file(const Api& api, httplib::Request& req);
  std::optional<SignatureRefusal> check_signature(const Api& api, const httplib::Request& req, Arrival& arrival,
                                                  const std::string& sha256_hex,
                                                  std::unique_ptr<StreamCheck>* later) const;

  const std::string& region_;
  const std::string& dialect_;
  SecretOf secret_of_;
  std::string body_folder_;
  static std::atomic<unsigned long> matched_;
};

}  // namespace cloud
