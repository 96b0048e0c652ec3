// The exclusive creation of temporary files (files.h). glibc's mkostemps makes the
// name and opens it with O_CREAT | O_EXCL, trying other names while one exists.
#include "core/files.h"

#include <fcntl.h>
#include <stdlib.h>

namespace cloud {

TemporaryFile create_temporary(const std::string& base, const std::string& suffix) {
  TemporaryFile file;
  file.path = base + "XXXXXX" + suffix;
  file.fd = ::mkostemps(file.path.data(), static_cast<int>(suffix.size()), O_CLOEXEC);
  return file;
}

int create_exclusive(const std::string& path) {
  return ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
}

}  // namespace cloud
