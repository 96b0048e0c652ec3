// Fuzz target: the storage API's XML answers, read as the client reads them
// (parse_result, parse_error). Input, in the form of fuzz_input.h:
//   <Operation> <status>      CompleteMultipartUpload 200
//   header lines, an empty line, the body
#include "fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const cloud::Api& api = *cloud::Model::builtin().api("storage");
  fuzz::Message m = fuzz::read_message(data, size, 2);
  const cloud::Operation& op = fuzz::pick_operation(api.operations, m.words[0]);
  fuzz::read_answer(api, op, {fuzz::read_status(m.words[1]), m.headers, m.body});
  return 0;
}
