#include "core/base/mime.h"

#include <catch2/catch.hpp>

using cloud::media_type_in;
using cloud::media_type_of;

TEST_CASE("media types: a name's extension looked up in a mime.types table") {
  const char* table =
      "# comment line\n"
      "text/html\t\thtml htm\n"
      "application/wasm  wasm # trailing comment\n"
      "application/x-empty\n"
      "notatype  txt\n"
      "text/plain txt\n"
      "text/other txt\n";
  CHECK(media_type_in(table, "index.html") == "text/html");
  CHECK(media_type_in(table, "www/INDEX.HTM") == "text/html");
  CHECK(media_type_in(table, "app.wasm") == "application/wasm");
  CHECK(media_type_in(table, "notes.txt") ==
        "text/plain");  // the first type given wins; a line without '/' is not a type
  CHECK(media_type_in(table, "README").empty());
  CHECK(media_type_in(table, ".htaccess").empty());      // a dot file has no extension
  CHECK(media_type_in(table, "dir.html/file").empty());  // only the last component counts
  CHECK(media_type_in(table, "trailing.").empty());
  CHECK(media_type_in(table, "x.unknown").empty());
  CHECK(media_type_in("", "a.html").empty());
}

TEST_CASE("media types: the system's table (Debian's media-types) types a website's files") {
  CHECK(media_type_of("site/index.html") == "text/html");
  CHECK(media_type_of("site/style.css") == "text/css");
  CHECK(media_type_of("site/app.js") == "text/javascript");
  CHECK(media_type_of("site/logo.svg") == "image/svg+xml");
  CHECK(media_type_of("site/data.json") == "application/json");
  CHECK(media_type_of("site/module.wasm") == "application/wasm");
  CHECK(media_type_of("site/file.no-such-extension").empty());
}
