// The emulator's blobs (emulator/blob.h): bytes in memory, in a file, joined, and a
// slice of any of them, read whole, in ranges and a piece at a time.
#include <catch2/catch.hpp>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "emulator/blob.h"

namespace {

// The bytes of every piece each_piece() hands over, joined.
std::string pieces_of(const cloud::Blob& blob) {
  std::string out;
  blob.each_piece([&out](const char* data, size_t size) { return out.append(data, size), true; });
  return out;
}

// `bytes` written to a new file of the temporary folder; its path.
std::string file_with(const std::string& bytes) {
  char path[] = "/tmp/cloudlua-blob-XXXXXX";
  int fd = ::mkstemp(path);
  REQUIRE(fd >= 0);
  REQUIRE(::write(fd, bytes.data(), bytes.size()) == static_cast<ssize_t>(bytes.size()));
  ::close(fd);
  return path;
}

// Bytes that differ at every offset for a while: a slice read from the wrong place shows.
std::string counted(size_t n) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i) s[i] = static_cast<char>(i % 251);
  return s;
}

}  // namespace

TEST_CASE("A slice of joined bytes reads across their parts, nothing copied", "[emulator][blob]") {
  std::string a = counted(cloud::Blob::kPiece + 17), b = "middle", c = counted(3 * cloud::Blob::kPiece);
  std::string path = file_with(c);
  cloud::SharedBytes joined =
      cloud::joined_blob({cloud::memory_blob(a), cloud::memory_blob(b), cloud::file_blob(path, c.size())});
  std::string all = a + b + c;
  REQUIRE(joined->all() == all);

  std::uint64_t from = a.size() - 5, length = 2 * cloud::Blob::kPiece + 11;  // from the first part into the third
  cloud::SharedBytes slice = cloud::sliced_blob(joined, from, length);
  CHECK(slice->size() == length);
  CHECK(slice->in_memory() == nullptr);
  CHECK(slice->all() == all.substr(from, length));
  CHECK(pieces_of(*slice) == all.substr(from, length));
  CHECK(slice->slice(7, 100) == all.substr(from + 7, 100));

  SECTION("the whole is the blob itself") { CHECK(cloud::sliced_blob(joined, 0, all.size()) == joined); }
  SECTION("opened, it stays readable after its file is removed") {
    cloud::SharedBytes open = slice->opened();
    ::unlink(path.c_str());
    CHECK(open->all() == all.substr(from, length));
  }
  ::unlink(path.c_str());
}

TEST_CASE("A slice of a file reads only its range, a piece at a time", "[emulator][blob]") {
  std::string bytes = counted(2 * cloud::Blob::kPiece + 3);
  std::string path = file_with(bytes);
  cloud::SharedBytes slice = cloud::sliced_blob(cloud::stored_file(path), 1, bytes.size() - 2);
  size_t calls = 0;
  std::string got;
  slice->each_piece([&](const char* data, size_t size) {
    ++calls;
    CHECK(size <= cloud::Blob::kPiece);
    return got.append(data, size), true;
  });
  CHECK(got == bytes.substr(1, bytes.size() - 2));
  CHECK(calls == 3);
  CHECK(cloud::sliced_blob(cloud::memory_blob(""), 0, 0)->all().empty());
  ::unlink(path.c_str());
}
