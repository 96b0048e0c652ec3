// cloud.fs: the file-system calls Lua's standard library lacks, which the tree
// transfers (lua/sync.lua) and user scripts compose: list a directory tree, stat,
// mkdir, remove, set a file's time, make a file system's writes durable, and match
// relative paths with globs (core's Pattern::glob, RE2).
//
// Decisions: directories are read through std::filesystem; a name is its bytes as the
// system gives them (spaces, newlines, bytes that are not UTF-8), never converted.
// Sizes, times and types come from lstat/stat, which give the time in nanoseconds
// without std::filesystem's clock of its own. walk() gives the entries in the byte
// order of their relative path, the order a bucket lists its keys in, so the two can be
// merged as two sorted streams; it holds one directory's entries per level entered
// (read and sorted when entered), not the tree; list() is a walk collected. With
// follow_links, a link to a directory that is one of its own ancestors (a loop) is
// listed as a link and not entered: the walk ends. Every
// failure is an error object of kind io whose code is the system's name for it
// (ENOENT) and whose message names the path and the system's reason.
#include <fcntl.h>
#include <lua.hpp>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "core/base/files.h"
#include "core/base/mime.h"
#include "core/base/pattern.h"
#include "lua/binding.h"

namespace cloud {

namespace {

namespace fs = std::filesystem;

struct Entry {
  std::string path;  // relative, '/'-separated
  std::uint64_t size = 0;
  double mtime = 0;
  const char* type = "file";
};

// Raises the io error for `what` failing on `path` with errno value `code`.
[[noreturn]] void raise_io(lua_State* L, const char* function, const std::string& what, const std::string& path,
                           int code) {
  const char* name = strerrorname_np(code);
  Error e = make_error(ErrorKind::io, name ? name : "EIO", what + " '" + path + "': " + std::strerror(code));
  e.operation = function;
  raise(L, e);
}

// The entry's fields from a stat buffer (the link itself when `st` came from lstat).
void fill(Entry& e, const struct stat& st) {
  e.type = S_ISDIR(st.st_mode) ? "dir" : S_ISLNK(st.st_mode) ? "link" : S_ISREG(st.st_mode) ? "file" : "other";
  e.size = S_ISREG(st.st_mode) || S_ISLNK(st.st_mode) ? static_cast<std::uint64_t>(st.st_size) : 0;
  e.mtime = static_cast<double>(st.st_mtim.tv_sec) + static_cast<double>(st.st_mtim.tv_nsec) / 1e9;
}

// Pushes an entry as the table { path =, size =, mtime =, type = }.
void push_entry(lua_State* L, const Entry& e) {
  lua_createtable(L, 0, 4);
  lua_pushlstring(L, e.path.data(), e.path.size());
  lua_setfield(L, -2, "path");
  lua_pushinteger(L, static_cast<lua_Integer>(e.size));
  lua_setfield(L, -2, "size");
  lua_pushnumber(L, e.mtime);
  lua_setfield(L, -2, "mtime");
  lua_pushstring(L, e.type);
  lua_setfield(L, -2, "type");
}

// One entry of a directory being walked. Its key orders it among its siblings: the
// name, and for a directory to enter a second item keyed name + "/", standing for
// everything under it; sorted by these keys, siblings and the folders' contents come in
// the byte order of full relative paths ("a", "a-c", "a/b": '-' is below '/').
struct Item {
  std::string key;
  Entry entry;
  bool enter = false;                // the contents of the directory entry.path
  std::pair<dev_t, ino_t> id{0, 0};  // that directory's, for loops
};

// A directory being walked: its items sorted, the next one to give.
struct Frame {
  std::pair<dev_t, ino_t> id;
  std::vector<Item> items;
  size_t next = 0;
};

// A walk in progress: the root, the options and one frame per directory entered, so
// that what is held is one directory's entries per level, never the whole tree.
struct Walker {
  const char* function;  // the Lua function walking, for errors: cloud.fs.list or cloud.fs.walk
  std::string root;
  bool recursive = false;
  bool follow_links = false;
  std::vector<Frame> frames;
};

const char* const kWalkerMeta = "cloud.fs.walker";

// Whether a directory of identity `id` is one of the directories being walked.
bool is_ancestor(const Walker& w, std::pair<dev_t, ino_t> id) {
  for (const Frame& f : w.frames) {
    if (f.id == id) return true;
  }
  return false;
}

// Adds the items of the entry `name` of directory `full` (relative path `prefix`).
void add_item(lua_State* L, Walker& w, Frame& frame, const std::string& dir, const std::string& prefix,
              std::string name) {
  std::string full = dir + "/" + name;
  struct stat st {};
  if (::lstat(full.c_str(), &st) != 0) {
    if (errno == ENOENT) return;  // gone since the directory was read
    raise_io(L, w.function, "cannot read", full, errno);
  }
  struct stat target = st;
  bool followed = w.follow_links && S_ISLNK(st.st_mode) && ::stat(full.c_str(), &target) == 0;
  Item item;
  item.entry.path = prefix + name;
  fill(item.entry, followed ? target : st);
  std::pair<dev_t, ino_t> id{target.st_dev, target.st_ino};
  bool is_dir = S_ISDIR((followed ? target : st).st_mode);
  bool loop = followed && is_dir && (is_ancestor(w, id) || frame.id == id);
  if (loop) item.entry.type = "link";
  if (w.recursive && is_dir && !loop) {
    Item inside{name + "/", item.entry, true, id};
    frame.items.push_back(std::move(inside));
  }
  item.key = std::move(name);
  frame.items.push_back(std::move(item));
}

// Enters the directory of relative path `path` ("" for the root; identity `id`): its
// items, sorted, become the walk's newest frame.
void enter(lua_State* L, Walker& w, const std::string& path, std::pair<dev_t, ino_t> id) {
  std::string dir = path.empty() ? w.root : w.root + "/" + path;
  std::string prefix = path.empty() ? "" : path + "/";
  Frame frame{id, {}, 0};
  std::error_code ec;
  fs::directory_iterator it(dir, ec), end;
  for (; !ec && it != end; it.increment(ec)) add_item(L, w, frame, dir, prefix, it->path().filename().native());
  if (ec && !(ec.value() == ENOENT && !path.empty())) raise_io(L, w.function, "cannot list", dir, ec.value());
  std::sort(frame.items.begin(), frame.items.end(), [](const Item& a, const Item& b) { return a.key < b.key; });
  w.frames.push_back(std::move(frame));
}

// The walk's next entry, or false when it has ended (entering directories on the way).
bool next_entry(lua_State* L, Walker& w, Entry& out) {
  while (!w.frames.empty()) {
    Frame& top = w.frames.back();
    if (top.next == top.items.size()) {
      w.frames.pop_back();
      continue;
    }
    Item item = std::move(top.items[top.next++]);
    if (!item.enter) {
      out = std::move(item.entry);
      return true;
    }
    enter(L, w, item.entry.path, item.id);
  }
  return false;
}

// Starts the walk of `dir` (a directory, or an io error).
void start_walk(lua_State* L, Walker& w, const char* dir) {
  struct stat st {};
  if (::stat(dir, &st) != 0) raise_io(L, w.function, "cannot list", dir, errno);
  if (!S_ISDIR(st.st_mode)) raise_io(L, w.function, "cannot list", dir, ENOTDIR);
  w.root = dir;
  enter(L, w, "", {st.st_dev, st.st_ino});
}

int walker_gc(lua_State* L) {
  static_cast<Walker*>(luaL_checkudata(L, 1, kWalkerMeta))->~Walker();
  return 0;
}

// Pushes a new walker (a userdata) for `dir`, started.
Walker& push_walker(lua_State* L, const char* function, const char* dir, bool recursive, bool follow_links) {
  auto* w = new (lua_newuserdatauv(L, sizeof(Walker), 0)) Walker();
  w->function = function;
  if (luaL_newmetatable(L, kWalkerMeta)) {
    lua_pushcfunction(L, walker_gc);
    lua_setfield(L, -2, "__gc");
  }
  lua_setmetatable(L, -2);
  w->recursive = recursive;
  w->follow_links = follow_links;
  start_walk(L, *w, dir);
  return *w;
}

// Argument `arg`, a path (a string, as luaL_checkstring, with the function named in full).
const char* path_arg(lua_State* L, int arg) {
  if (lua_type(L, arg) != LUA_TSTRING) type_error(L, arg, "string");
  return lua_tostring(L, arg);
}

// The string option `name` of the table at `arg` ("" when absent).
std::string string_option(lua_State* L, int arg, const char* name) {
  if (lua_isnoneornil(L, arg)) return "";
  check_type(L, arg, LUA_TTABLE);
  int t = lua_getfield(L, arg, name);
  if (t != LUA_TNIL && t != LUA_TSTRING) arg_error(L, arg, std::string("field '") + name + "' must be a string");
  std::string out = t == LUA_TNIL ? "" : lua_tostring(L, -1);
  lua_pop(L, 1);
  return out;
}

// Raises the io error of a destination folder that could not be opened: a link in the
// way is LinkInDestination, anything else the system's name for it.
[[noreturn]] void raise_beneath(lua_State* L, const char* function, const std::string& problem, int code) {
  const char* name = code == ELOOP ? "LinkInDestination" : strerrorname_np(code);
  Error e = make_error(ErrorKind::io, name ? name : "EIO", problem);
  e.operation = function;
  raise(L, e);
}

bool bool_option(lua_State* L, int arg, const char* name, bool fallback) {
  if (lua_isnoneornil(L, arg)) return fallback;
  check_type(L, arg, LUA_TTABLE);
  int t = lua_getfield(L, arg, name);
  if (t != LUA_TNIL && t != LUA_TBOOLEAN) arg_error(L, arg, std::string("field '") + name + "' must be a boolean");
  bool out = t == LUA_TNIL ? fallback : lua_toboolean(L, -1) != 0;
  lua_pop(L, 1);
  return out;
}

// cloud.fs.list(dir [, { recursive = false, follow_links = false }]): the entries of
// dir, in the order of cloud.fs.walk (the bytes of their relative path).
int l_list(lua_State* L) {
  check_declared(L, "cloud.fs.list");
  const char* dir = path_arg(L, 1);
  bool recursive = bool_option(L, 2, "recursive", false), follow_links = bool_option(L, 2, "follow_links", false);
  Walker& w = push_walker(L, "cloud.fs.list", dir, recursive, follow_links);
  lua_newtable(L);
  Entry e;
  for (lua_Integer n = 1; next_entry(L, w, e); ++n) {
    push_entry(L, e);
    lua_rawseti(L, -2, n);
  }
  return 1;
}

// The iterator cloud.fs.walk returns: the next entry, nil at the end.
int walk_next(lua_State* L) {
  auto* w = static_cast<Walker*>(luaL_checkudata(L, lua_upvalueindex(1), kWalkerMeta));
  Entry e;
  if (!next_entry(L, *w, e)) return lua_pushnil(L), 1;
  push_entry(L, e);
  return 1;
}

// cloud.fs.walk(dir [, { recursive = true, follow_links = false }]): an iterator over
// the entries of cloud.fs.list, in the same order, holding one directory's entries per
// level entered rather than the whole tree:  for e in cloud.fs.walk(dir) do ... end
int l_walk(lua_State* L) {
  check_declared(L, "cloud.fs.walk");
  const char* dir = path_arg(L, 1);
  push_walker(L, "cloud.fs.walk", dir, bool_option(L, 2, "recursive", true), bool_option(L, 2, "follow_links", false));
  lua_pushcclosure(L, protect<walk_next>, 1);
  return 1;
}

// cloud.fs.stat(path [, { follow_links = true }]): { path =, size =, mtime =, type = },
// or nil when nothing is at path.
int l_stat(lua_State* L) {
  check_declared(L, "cloud.fs.stat");
  const char* path = path_arg(L, 1);
  bool follow = bool_option(L, 2, "follow_links", true);
  struct stat st {};
  if ((follow ? ::stat(path, &st) : ::lstat(path, &st)) != 0) {
    if (errno == ENOENT || errno == ENOTDIR) return lua_pushnil(L), 1;
    raise_io(L, "cloud.fs.stat", "cannot stat", path, errno);
  }
  Entry e;
  e.path = path;
  fill(e, st);
  push_entry(L, e);
  return 1;
}

// cloud.fs.mkdir(path [, { beneath = root }]): makes the directory and its missing
// parents; true when it made one, false when it was there already. With beneath (a
// folder path is under), no link between the two is followed: one in the way is an io
// error LinkInDestination.
int l_mkdir(lua_State* L) {
  check_declared(L, "cloud.fs.mkdir");
  const char* path = path_arg(L, 1);
  std::string beneath = string_option(L, 2, "beneath");
  if (!beneath.empty()) {
    struct stat st {};
    bool there = ::lstat(path, &st) == 0 && S_ISDIR(st.st_mode);
    std::error_code made_root;  // the root is the caller's: made (and followed) as without beneath
    fs::create_directories(beneath, made_root);
    std::string problem;
    int fd = open_folder_at(path, beneath, true, problem);
    if (fd < 0)
      raise_beneath(L, "cloud.fs.mkdir", "cannot make the directory '" + std::string(path) + "': " + problem, errno);
    ::close(fd);
    lua_pushboolean(L, !there);
    return 1;
  }
  std::error_code ec;
  bool made = fs::create_directories(path, ec);
  if (ec) raise_io(L, "cloud.fs.mkdir", "cannot make the directory", path, ec.value());
  lua_pushboolean(L, made);
  return 1;
}

// Removes the file (or link) `path` under `beneath`, through its folder opened without
// following links: a link in the way is an error, never crossed. True when removed.
bool remove_beneath(lua_State* L, const std::string& path, const std::string& beneath) {
  std::string problem;
  int fd = open_folder_of(path, beneath, problem);
  if (fd < 0 && errno == ENOENT) return false;
  if (fd < 0) raise_beneath(L, "cloud.fs.remove", "cannot remove '" + path + "': " + problem, errno);
  int failed = ::unlinkat(fd, name_of(path).c_str(), 0) == 0 ? 0 : errno;
  ::close(fd);
  if (failed == ENOENT) return false;
  if (failed) raise_io(L, "cloud.fs.remove", "cannot remove", path, failed);
  return true;
}

// cloud.fs.remove(path [, { recursive = false, beneath = root }]): removes a file, a
// link or an empty directory (with recursive, a directory and all it holds); true when
// something was removed, false when nothing was there. With beneath (a folder path is
// under; files and links only), no link between the two is crossed.
int l_remove(lua_State* L) {
  check_declared(L, "cloud.fs.remove");
  const char* path = path_arg(L, 1);
  bool recursive = bool_option(L, 2, "recursive", false);
  std::string beneath = string_option(L, 2, "beneath");
  if (!beneath.empty()) {
    if (recursive) arg_error(L, 2, "'beneath' removes one file; not with 'recursive'");
    lua_pushboolean(L, remove_beneath(L, path, beneath));
    return 1;
  }
  std::error_code ec;
  std::uintmax_t removed = recursive ? fs::remove_all(path, ec) : (fs::remove(path, ec) ? 1 : 0);
  if (ec) raise_io(L, "cloud.fs.remove", "cannot remove", path, ec.value());
  lua_pushboolean(L, removed > 0);
  return 1;
}

// cloud.fs.create(path): makes a new, empty file at `path`; a file or link already
// there is an io error (EEXIST), never opened or followed (core/base/files).
int l_create(lua_State* L) {
  const char* path = path_arg(L, 1);
  int fd = create_exclusive(path);
  if (fd < 0) raise_io(L, "cloud.fs.create", "cannot create", path, errno);
  ::close(fd);
  return 0;
}

const char* const kPartMeta = "cloud.fs.part";

PartFile& check_part(lua_State* L) { return *static_cast<PartFile*>(luaL_checkudata(L, 1, kPartMeta)); }

// part:path(): the part file's name (nil once committed or discarded).
int part_path(lua_State* L) {
  PartFile& part = check_part(L);
  if (part.fd < 0) return lua_pushnil(L), 1;
  lua_pushlstring(L, part.path.data(), part.path.size());
  return 1;
}

// part:commit(target [, { durable = true }]): flushes the part file (unless durable is
// false: a batch made durable at once), renames it onto target (the target it was made
// for); an io error on failure (the part file removed).
int part_commit(lua_State* L) {
  PartFile& part = check_part(L);
  const char* target = path_arg(L, 2);
  bool durable = bool_option(L, 3, "durable", true);
  if (part.fd < 0) arg_error(L, 1, "the part file was committed or discarded already");
  if (name_of(target) != part.target || directory_of(target) != directory_of(part.path))
    arg_error(L, 2, "the target the part file was made for expected");
  std::string problem = commit_part(part, durable);
  if (!problem.empty()) {
    Error e = make_error(ErrorKind::io, "EIO", problem);
    e.operation = "cloud.fs.part";
    raise(L, e);
  }
  return 0;
}

// part:discard() (also when the handle is collected or closed): removes the part file.
int part_discard(lua_State* L) {
  discard_part(check_part(L));
  return 0;
}

int part_gc(lua_State* L) {
  PartFile& part = check_part(L);
  discard_part(part);
  part.~PartFile();
  return 0;
}

// cloud.fs.part(target [, { beneath = root }]): the part file of a download of target
// (core/base/files.h: a new random name in target's folder, made exclusively; with beneath,
// that folder reached without following links), as a handle: part:path(),
// part:commit(target [, { durable }]), part:discard(). What download_file writes its
// ranges into, as get_object{ file = } writes its body.
int l_part(lua_State* L) {
  check_declared(L, "cloud.fs.part");
  const char* target = path_arg(L, 1);
  std::string beneath = string_option(L, 2, "beneath");
  auto* part = new (lua_newuserdatauv(L, sizeof(PartFile), 0)) PartFile();
  if (luaL_newmetatable(L, kPartMeta)) {
    const luaL_Reg methods[] = {{"commit", protect<part_commit>},
                                {"discard", protect<part_discard>},
                                {"path", protect<part_path>},
                                {nullptr, nullptr}};
    luaL_newlib(L, methods);
    lua_setfield(L, -2, "__index");
    lua_pushcfunction(L, part_gc);
    lua_setfield(L, -2, "__gc");
    lua_pushcfunction(L, part_discard);
    lua_setfield(L, -2, "__close");
  }
  lua_setmetatable(L, -2);
  *part = create_part(target, beneath);
  if (part->fd < 0)
    raise_beneath(L, "cloud.fs.part", "cannot write beside '" + std::string(target) + "': " + part->problem, errno);
  return 1;
}

// cloud.fs.part_state(path [, { remove_stale = false, beneath = root }]): what the
// file at path is to downloads (core/base/files.h part_state): nil for any file that is not
// a part file of cloudlua's (a user's, whatever its name), "live" for the part file of
// a download under way, "stale" for one a killed run left; with remove_stale, a stale
// one is removed (reached as beneath says) and "removed" is the answer.
int l_part_state(lua_State* L) {
  check_declared(L, "cloud.fs.part_state");
  const char* path = path_arg(L, 1);
  bool remove = bool_option(L, 2, "remove_stale", false);
  std::string beneath = string_option(L, 2, "beneath");
  PartState state = part_state(path);
  if (state == PartState::none) return lua_pushnil(L), 1;
  if (state == PartState::stale && remove && remove_stale_part(path, beneath)) return lua_pushstring(L, "removed"), 1;
  lua_pushstring(L, state == PartState::live ? "live" : "stale");
  return 1;
}

// cloud.fs.media_type(name): the media type of a file named `name` from its extension
// in the system's table (core/base/mime: /etc/mime.types), or nil when the table has none:
// what an upload sends as its ContentType when the caller gives none.
int l_media_type(lua_State* L) {
  std::string type = media_type_of(luaL_checkstring(L, 1));
  if (type.empty()) return lua_pushnil(L), 1;
  lua_pushstring(L, type.c_str());
  return 1;
}

// cloud.fs.set_mtime(path, seconds): sets the file's modification time (fractions
// kept to the nanosecond); a download gets its object's time this way.
int l_set_mtime(lua_State* L) {
  const char* path = path_arg(L, 1);
  int is_number = 0;
  lua_Number t = lua_tonumberx(L, 2, &is_number);
  if (!is_number) type_error(L, 2, "number");
  if (!std::isfinite(t) || t < 0) arg_error(L, 2, "seconds must be a finite number >= 0");
  double whole = std::floor(t);
  struct timespec times[2] = {{0, UTIME_OMIT}, {static_cast<time_t>(whole), static_cast<long>((t - whole) * 1e9)}};
  if (::utimensat(AT_FDCWD, path, times, AT_SYMLINK_NOFOLLOW) != 0)
    raise_io(L, "cloud.fs.set_mtime", "cannot set the time of", path, errno);
  return 0;
}

// cloud.fs.sync(path): makes what was written durable: a file's bytes (fsync: what
// download_file does once its ranges are in), or, for a folder, everything written to
// the file system holding it, once for all of it (syncfs: what a batch of downloads
// does at its end, instead of one flush per file).
int l_sync(lua_State* L) {
  const char* path = path_arg(L, 1);
  int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) raise_io(L, "cloud.fs.sync", "cannot open", path, errno);
  struct stat st {};
  bool folder = ::fstat(fd, &st) == 0 && S_ISDIR(st.st_mode);
  int failed = (folder ? flush_file_system(fd) : flush_file(fd)) ? 0 : errno;
  ::close(fd);
  if (failed) raise_io(L, "cloud.fs.sync", "cannot make durable the file system of", path, failed);
  return 0;
}

const char* const kGlobMeta = "cloud.glob";

// A compiled glob's __call: glob(path) is true when the glob matches the whole path.
int glob_call(lua_State* L) {
  auto* glob = static_cast<Pattern*>(luaL_checkudata(L, 1, kGlobMeta));
  size_t length = 0;
  const char* path = luaL_checklstring(L, 2, &length);
  lua_pushboolean(L, glob->full_match(std::string_view(path, length)));
  return 1;
}

int glob_gc(lua_State* L) {
  static_cast<Pattern*>(luaL_checkudata(L, 1, kGlobMeta))->~Pattern();
  return 0;
}

int glob_tostring(lua_State* L) {
  auto* glob = static_cast<Pattern*>(luaL_checkudata(L, 1, kGlobMeta));
  lua_pushfstring(L, "cloud.glob (%s)", glob->expression().c_str());
  return 1;
}

// cloud.fs.glob(glob): a matcher, called with a relative path (see Pattern::glob for
// the syntax); a bad glob is a config error InvalidGlob.
int l_glob(lua_State* L) {
  size_t length = 0;
  if (lua_type(L, 1) != LUA_TSTRING) type_error(L, 1, "string");
  const char* text = lua_tolstring(L, 1, &length);
  Outcome<Pattern> glob = Pattern::glob(std::string_view(text, length));
  if (!glob.ok()) raise(L, glob.error());
  new (lua_newuserdatauv(L, sizeof(Pattern), 0)) Pattern(std::move(glob.value()));
  if (luaL_newmetatable(L, kGlobMeta)) {
    const luaL_Reg meta[] = {
        {"__call", protect<glob_call>}, {"__gc", glob_gc}, {"__tostring", protect<glob_tostring>}, {nullptr, nullptr}};
    luaL_setfuncs(L, meta, 0);
  }
  lua_setmetatable(L, -2);
  return 1;
}

}  // namespace

void open_fs(lua_State* L, int module) {
  const luaL_Reg fns[] = {{"create", protect<l_create>},
                          {"glob", protect<l_glob>},
                          {"list", protect<l_list>},
                          {"media_type", protect<l_media_type>},
                          {"mkdir", protect<l_mkdir>},
                          {"part", protect<l_part>},
                          {"part_state", protect<l_part_state>},
                          {"remove", protect<l_remove>},
                          {"set_mtime", protect<l_set_mtime>},
                          {"stat", protect<l_stat>},
                          {"sync", protect<l_sync>},
                          {"walk", protect<l_walk>},
                          {nullptr, nullptr}};
  luaL_newlib(L, fns);
  lua_setfield(L, module, "fs");
}

}  // namespace cloud
