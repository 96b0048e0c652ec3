// What the emulator's HTTP-level tests share: an emulator started on free ports,
// a client configured for it, requests signed with core's signer and sent as they
// are (so each can be broken in exactly one way), and the error code of an answer.
#pragma once

#include <catch2/catch.hpp>
#include <httplib.h>

#include <map>
#include <string>

#include "core/client/client.h"
#include "core/base/crypto.h"
#include "emulator/emulator.h"

namespace harness {

using cloud::json;

struct Running {
  cloud::Emulator emulator;
  std::map<std::string, std::string> urls;
  explicit Running(cloud::EmulatorOptions options = {}) : emulator(std::move(options)) {
    REQUIRE(emulator.start().ok());
    for (const auto& [api, url] : emulator.endpoints()) urls[api] = url;
  }

  // A client of every API of this emulator, with the credentials it accepts.
  cloud::ClientConfig client_config() const {
    cloud::ClientConfig config;
    for (const auto& [api, url] : urls) config.endpoints[api] = url;
    config.credentials = emulator.options().credentials;
    return config;
  }
};

// A storage request signed S3-style (payload hash header, path encoded once).
inline cloud::SignInput storage_request(const std::string& base, const std::string& method, const std::string& target,
                                        const std::string& body = "") {
  cloud::SignInput in;
  in.method = method;
  in.url = base + target;
  in.body = body;
  in.region = "jp-east-1";
  in.service = "s3";
  in.credentials = {cloud::kEmulatorAccessKey, cloud::kEmulatorSecretKey, ""};
  in.policy = cloud::Model::builtin().api("storage")->signing;
  return in;
}

// Sends a signed request as it is, with `body` in place of the signed one.
inline httplib::Result send(const std::string& base, const cloud::SignOutput& s, const std::string& method,
                            const std::string& body) {
  httplib::Client client(base);
  httplib::Headers headers;
  std::string content_type = "application/octet-stream";  // passed apart: httplib would send a second one
  for (const auto& [name, value] : s.headers) {
    if (cloud::iequals(name, "Content-Type")) content_type = value;
    else if (!cloud::iequals(name, "Host")) headers.emplace(name, value);
  }
  std::string path = s.url.substr(base.size());
  if (method == "PUT") return client.Put(path.c_str(), headers, body, content_type.c_str());
  if (method == "POST") return client.Post(path.c_str(), headers, body, content_type.c_str());
  if (method == "HEAD") return client.Head(path.c_str(), headers);
  if (method == "DELETE") return client.Delete(path.c_str(), headers);
  return client.Get(path.c_str(), headers);
}

// Signs `in` and sends it with its own body.
inline httplib::Result send(const std::string& base, const cloud::SignInput& in) {
  auto s = cloud::sign(in);
  REQUIRE(s.ok());
  return send(base, *s, in.method, in.body);
}

// The error code of a JSON or XML error body.
inline std::string code_of(const httplib::Result& r) {
  json body = json::parse(r->body, nullptr, false);
  if (body.is_object()) return body.value("code", "");
  size_t at = r->body.find("<Code>");
  return at == std::string::npos ? "" : r->body.substr(at + 6, r->body.find("</Code>") - at - 6);
}

}  // namespace harness
