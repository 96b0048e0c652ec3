// Data files compiled into the binary (cmake/EmbedFiles.cmake writes the arrays).
// Each array ends with a {nullptr, nullptr} entry.
#pragma once

namespace cloud {

struct EmbeddedFile {
  const char* name;
  const char* text;
};

extern const EmbeddedFile model_files[];       // core/model/*.json
extern const EmbeddedFile lua_module_files[];  // lua/*.lua

}  // namespace cloud
