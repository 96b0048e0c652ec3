// Data files compiled into the binary (cmake/EmbedFiles.cmake writes the arrays).
// Each array ends with a {nullptr, nullptr} entry.
#pragma once

namespace cloud {

struct EmbeddedFile {
  const char* name;
  const char* text;
};

// One operation of the model, as the build read it from its file.
struct ModelIndexEntry {
  const char* file;       // storage.json
  const char* api;        // storage
  const char* service;    // s3: the API's default signing service
  const char* operation;  // CreateBucket
};

extern const EmbeddedFile model_files[];       // core/model/*.json
extern const ModelIndexEntry model_index[];    // every operation of model_files, in file order
extern const EmbeddedFile lua_module_files[];  // lua/*.lua

}  // namespace cloud
