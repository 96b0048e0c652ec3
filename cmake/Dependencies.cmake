# Finds every dependency; each failure names the Debian package that provides it.
find_package(PkgConfig)
if(NOT PkgConfig_FOUND)
  message(FATAL_ERROR "pkg-config not found: apt-get install pkg-config (or run ./setup.sh)")
endif()

macro(cloudlua_require_config pkg debian)
  find_package(${pkg} ${ARGN} QUIET)
  if(NOT ${pkg}_FOUND)
    message(FATAL_ERROR "${pkg} not found: apt-get install ${debian} (or run ./setup.sh)")
  endif()
endmacro()

macro(cloudlua_require_pc var module debian)
  pkg_check_modules(${var} QUIET IMPORTED_TARGET ${module})
  if(NOT ${var}_FOUND)
    message(FATAL_ERROR "${module} not found: apt-get install ${debian} (or run ./setup.sh)")
  endif()
endmacro()

set(THREADS_PREFER_PTHREAD_FLAG ON)
find_package(Threads REQUIRED)
cloudlua_require_config(CURL libcurl4-openssl-dev)
cloudlua_require_config(OpenSSL libssl-dev)
# SHA-256, MD5, SHA-1, HMAC and base64 (GNU Nettle, which libcurl's TLS stack loads anyway).
cloudlua_require_pc(NETTLE nettle nettle-dev)
# CRC-32 of the storage API's checksums (zlib's crc32).
cloudlua_require_config(ZLIB zlib1g-dev)
cloudlua_require_config(nlohmann_json nlohmann-json3-dev 3.10)
cloudlua_require_config(pugixml libpugixml-dev)
cloudlua_require_config(CLI11 libcli11-dev)
cloudlua_require_config(Catch2 catch2 2.13)
# Lua built as C: its errors and yields are longjmps (a yield as a C++ throw costs
# about 26,000 instructions). No Lua error or yield crosses a C++ frame that holds an
# object: lua/binding.h's edge (call_protected) raises and yields for the bindings.
cloudlua_require_pc(LUA lua5.4 liblua5.4-dev)
cloudlua_require_pc(HTTPLIB cpp-httplib libcpp-httplib-dev)
# The event loop that holds serve's connections between requests (emulator/connection_loop.cpp),
# with its locks for the threads that hand connections to it.
cloudlua_require_pc(LIBEVENT libevent_core libevent-dev)
cloudlua_require_pc(LIBEVENT_PTHREADS libevent_pthreads libevent-dev)
# Patterns matched in linear time without recursion (libstdc++'s regex engine recurses per character and overflows the stack).
cloudlua_require_pc(RE2 re2 libre2-dev)
# The database of `cloudlua serve --state` (emulator/state_db.cpp).
cloudlua_require_pc(SQLITE3 sqlite3 libsqlite3-dev)
# Line editing is optional: without it the REPL reads plain lines.
pkg_check_modules(LIBEDIT QUIET IMPORTED_TARGET libedit)
