// Fuzz target: the JSON APIs' answers (devops, cluster, catalog), read as the client
// reads them (parse_result, parse_error). Input, in the form of fuzz_input.h:
//   <Operation> <status>      UpdateSnapshot 200
//   header lines, an empty line, the body
#include "fuzz_input.h"

namespace {

// Every operation of the APIs that speak JSON.
std::vector<const cloud::Operation*> json_operations() {
  std::vector<const cloud::Operation*> out;
  for (const cloud::Api& api : cloud::Model::builtin().apis())
    if (api.protocol->format == cloud::Format::json)
      out.insert(out.end(), api.operations.begin(), api.operations.end());
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::vector<const cloud::Operation*> operations = json_operations();
  fuzz::Message m = fuzz::read_message(data, size, 2);
  const cloud::Operation& op = fuzz::pick_operation(operations, m.words[0]);
  const cloud::Api& api = *cloud::Model::builtin().api(op.api);
  fuzz::read_answer(api, op, {fuzz::read_status(m.words[1]), m.headers, m.body});
  return 0;
}
