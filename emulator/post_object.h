// Browser uploads: S3's POST object, a multipart/form-data POST to a bucket's URL
// whose form carries the key, a signed policy and the file. The form is read whole
// (its size bounded as every body's is), the fields before the file bounded to S3's
// 20 KiB, the policy's signature checked with core's signer (policy_signature), its
// expiration and conditions with S3's answers, and the object stored through
// PutObject's own handler, as a PUT would store it.
#pragma once

#include <functional>
#include <string>

#include "core/model/model.h"
#include "core/wire/sigv4.h"
#include "emulator/service.h"

namespace cloud {

// The most the fields before the file may take, their part headers included (S3's
// MaxPostPreDataLengthExceededError beyond it): what bounds their number and lengths.
constexpr size_t kMaxPostFieldBytes = 20 * 1024;

// Whether a request is a browser upload: POST of a multipart/form-data body to a
// bucket's path ("/bucket" or "/bucket/"), with no query.
bool is_post_object(const std::string& method, const std::string& path, const std::string& query,
                    const Headers& headers);

// A browser upload as received, and what the emulator accepts.
struct PostObjectRequest {
  const Api* api = nullptr;
  Platform* platform = nullptr;
  std::string path;          // "/bucket"
  std::string host;          // the Host header, for the object's Location
  std::string content_type;  // the request's, with the boundary
  std::string body;          // the whole form; its file part becomes the object's bytes
  // The credentials of the key a form names, nullptr when no account has it; finding
  // them sets `platform` and `account` to the key's world's and account's.
  std::function<const Credentials*(const std::string& access_key)> credentials;
  std::string account;  // the account that stores the object
  std::string region;
  const Dialect* dialect = nullptr;  // the one dialect accepted; nullptr: either
};

// The answer: an error, or the status, headers and body of a success.
struct PostObjectAnswer {
  bool ok = true;
  ApiError error;
  int status = 204;
  Headers headers;
  std::string body;  // the 201 answer's XML
};

// Checks the form and its policy, then stores the object; `in.body` is consumed.
PostObjectAnswer post_object(PostObjectRequest& in);

}  // namespace cloud
