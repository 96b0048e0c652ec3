// The media type of a file from its name, looked up in the system's table
// (/etc/mime.types, Debian's media-types package), never in a table of our own: an
// upload's Content-Type when the caller gives none, as aws-cli and rclone guess it.
#pragma once

#include <string>
#include <string_view>

namespace cloud {

// "text/html" for "www/index.HTML": the type /etc/mime.types gives the name's
// extension (its last ".xxx", compared without case), or "" when the table has none,
// the name has no extension, or there is no table. The table is read once per process.
std::string media_type_of(std::string_view name);

// The same lookup in the table text `table` (the format of mime.types: a type, then
// its extensions, separated by blanks; '#' starts a comment): for tests.
std::string media_type_in(std::string_view table, std::string_view name);

}  // namespace cloud
