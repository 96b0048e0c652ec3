// Fuzz target: validation of an arbitrary argument document against every operation
// of the model, and what follows for a document the client accepts: the request it
// is sent as reaches the emulator as the same operation with the same arguments, and
// the emulator accepts them too. Input: a JSON document (other bytes are skipped).
#include "core/wire/http.h"
#include "core/model/validate.h"
#include "fuzz_input.h"

namespace {

using cloud::json;

// True when `text` holds no control character (CR, LF and NUL among them).
bool printable(const std::string& text) {
  for (unsigned char c : text)
    if (c < 0x20 || c == 0x7f) return false;
  return true;
}

// True when a header of this value reaches the server as it is: no line break or
// other control character but a tab, and no space or tab at either end (HTTP trims them).
bool header_survives(const std::string& value) {
  auto edge = [](char c) { return c == ' ' || c == '\t'; };
  return cloud::header_value_ok(value) && (value.empty() || (!edge(value.front()) && !edge(value.back())));
}

// A refusal names what was wrong: a validation error with at least one field problem.
void check_refusal(const cloud::Error& e) {
  FUZZ_CHECK(e.kind == cloud::ErrorKind::validation && !e.message.empty());
  for (const cloud::FieldProblem& f : e.fields) FUZZ_CHECK(!f.problem.empty());
}

// The client's request for `args`, read back as the emulator reads it.
void check_round_trip(const cloud::Operation& op, const json& args) {
  const cloud::Api& api = *cloud::Model::builtin().api(op.api);
  cloud::WireRequest w = cloud::serialize_request(api, op, args);
  FUZZ_CHECK(printable(w.path) && printable(w.query));
  for (const cloud::Header& h : w.headers) FUZZ_CHECK(header_survives(h.second));  // no injection, no change
  std::map<std::string, std::string> labels;
  const cloud::Operation* matched = cloud::match_operation(api, w.method, w.path, w.query, labels);
  FUZZ_CHECK(matched == &op);
  auto parsed = cloud::parse_request(api, op, labels, w.query, w.headers, w.body);
  FUZZ_CHECK(parsed.ok());
  auto accepted = cloud::validate_input(op, *parsed, cloud::Checker::server);
  json expected = args;  // no body and an empty one are the same on the wire
  for (const cloud::Member& m : op.input->members) {
    if (m.location == cloud::Location::local) expected.erase(m.name);  // never sent (file, offset, length)
    // a map of headers (Metadata) with no entry and none at all are the same on the wire
    if (m.location == cloud::Location::headers && !expected.contains(m.name)) expected[m.name] = json::object();
  }
  if (!op.payload.empty() && !expected.contains(op.payload)) expected[op.payload] = "";
  if (!accepted.ok() || *accepted != expected)
    std::fprintf(stderr, "%s: sent %s, received %s\n", op.name.c_str(), expected.dump(-1, ' ', true).c_str(),
                 accepted.ok() ? accepted->dump(-1, ' ', true).c_str() : accepted.error().describe().c_str());
  FUZZ_CHECK(accepted.ok());
  FUZZ_CHECK(*accepted == expected);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  json args = json::parse(data, data + size, nullptr, false);
  if (args.is_discarded()) return 0;
  for (const cloud::Operation* op : cloud::Model::builtin().operations()) {
    auto client = cloud::validate_input(*op, args);
    auto server = cloud::validate_input(*op, args, cloud::Checker::server);
    if (!server.ok()) check_refusal(server.error());
    if (!client.ok()) {
      check_refusal(client.error());
      continue;
    }
    FUZZ_CHECK(server.ok());  // the server leaves rules to its handlers, never adds one
    check_round_trip(*op, *client);
  }
  return 0;
}
