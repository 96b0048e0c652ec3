// Bodies kept out of memory (core/model/body): what validation says about a payload file
// and its range (file, offset, length on PutObject and UploadPart) and about a
// download target (GetObject's file), that help() shows them, that the model refuses
// a payloadFile naming a member that is not local, the hash of a range read once,
// and the sink that leaves no temporary file and an untouched target unless committed.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/model/body.h"
#include "core/net/file_sink.h"
#include "core/net/range_reader.h"
#include "core/base/crypto.h"
#include "core/model/help.h"
#include "core/base/limits.h"
#include "core/net/redact.h"
#include "core/model/validate.h"

using namespace cloud;

namespace {

// A temporary directory, removed with what it holds when the test ends.
struct TempDir {
  std::string path;
  TempDir() {
    char pattern[] = "/tmp/cloudlua-body-XXXXXX";
    path = ::mkdtemp(pattern);
  }
  ~TempDir() { std::filesystem::remove_all(path); }
  std::string file(const std::string& name, const std::string& bytes) const {
    std::ofstream(path + "/" + name, std::ios::binary) << bytes;
    return path + "/" + name;
  }
  std::vector<std::string> entries() const {
    std::vector<std::string> out;
    for (const auto& e : std::filesystem::directory_iterator(path)) out.push_back(e.path().filename().string());
    std::sort(out.begin(), out.end());
    return out;
  }
};

const Operation& op(const char* name) { return *Model::builtin().find(name); }

// The problems validation finds in `args` of `operation` ("path: problem" each).
std::vector<std::string> problems(const char* operation, const json& args) {
  std::vector<std::string> out;
  auto v = validate_input(op(operation), args);
  if (!v.ok())
    for (const FieldProblem& p : v.error().fields) out.push_back(p.path + ": " + p.problem);
  return out;
}

json part(json extra) {
  json args = {{"Bucket", "bkt"}, {"Object", "k"}, {"uploadId", "u"}, {"partNumber", 1}};
  args.update(extra);
  return args;
}

}  // namespace

TEST_CASE("A payload file is checked with the arguments, each problem on its field") {
  TempDir dir;
  std::string ten = dir.file("ten", "0123456789");
  CHECK(problems("UploadPart", part({{"file", ten}})).empty());
  CHECK(problems("UploadPart", part({{"file", ten}, {"offset", 4}, {"length", 6}})).empty());
  CHECK(problems("UploadPart", part({{"file", ten}, {"offset", 10}})).empty());  // an empty range
  CHECK(problems("UploadPart", part({{"file", ten}, {"body", "x"}})) ==
        std::vector<std::string>{"file: give body or file, not both"});
  CHECK(problems("PutObject", {{"Bucket", "bkt"}, {"Object", "k"}, {"file", ten}, {"Body", "x"}}) ==
        std::vector<std::string>{"file: give Body or file, not both"});
  CHECK(problems("UploadPart", part({{"file", dir.path + "/missing"}})) ==
        std::vector<std::string>{"file: cannot read '" + dir.path + "/missing': No such file or directory"});
  CHECK(problems("UploadPart", part({{"file", dir.path}})) ==
        std::vector<std::string>{"file: cannot read '" + dir.path + "': Is a directory"});
  CHECK(problems("UploadPart", part({{"file", "/dev/null"}})) ==
        std::vector<std::string>{"file: cannot read '/dev/null': a character device, not a regular file"});
  CHECK(problems("UploadPart", part({{"file", ten}, {"offset", 11}})) ==
        std::vector<std::string>{"offset: at most 10, the size of '" + ten + "' (got 11)"});
  CHECK(problems("UploadPart", part({{"file", ten}, {"offset", 4}, {"length", 7}})) ==
        std::vector<std::string>{"length: at most 6, the bytes of '" + ten + "' from offset 4 on (got 7)"});
  CHECK(problems("UploadPart", part({{"offset", 1}, {"length", 2}, {"body", "x"}})) ==
        std::vector<std::string>{"offset: only with file", "length: only with file"});
  CHECK(problems("UploadPart", part({{"file", true}})) ==
        std::vector<std::string>{"file: string expected, got boolean"});
  CHECK(problems("UploadPart", part({{"file", ten}, {"offset", -1}})) ==
        std::vector<std::string>{"offset: at least 0 (got -1)"});
}

TEST_CASE("A payload file over 5 GiB is refused, and a range of it of 5 GiB at most is not") {
  TempDir dir;
  std::string big = dir.path + "/big";
  int fd = ::open(big.c_str(), O_CREAT | O_WRONLY, 0600);
  REQUIRE(fd >= 0);
  REQUIRE(::ftruncate(fd, static_cast<off_t>(kMaxBodyBytes + 1)) == 0);  // sparse: takes no disk
  ::close(fd);
  CHECK(problems("PutObject", {{"Bucket", "bkt"}, {"Object", "k"}, {"file", big}}) ==
        std::vector<std::string>{"file: '" + big +
                                 "': 5368709121 bytes, more than 5 GiB, the most a part or an object "
                                 "may hold (send it in parts with offset and length)"});
  json whole = {{"Bucket", "bkt"}, {"Object", "k"}, {"file", big}, {"offset", 0}};
  whole["length"] = kMaxBodyBytes + 1;
  CHECK(problems("PutObject", whole).at(0).rfind("length: '" + big + "': 5368709121 bytes, more than 5 GiB", 0) == 0);
  CHECK(problems("PutObject", {{"Bucket", "bkt"}, {"Object", "k"}, {"file", big}, {"offset", 1}}).empty());
}

TEST_CASE("A download target must be a file in a directory that exists") {
  TempDir dir;
  json in_dir = {{"Bucket", "bkt"}, {"Object", "k"}, {"file", dir.path + "/new"}};
  CHECK(problems("GetObject", in_dir).empty());
  in_dir["file"] = dir.path;
  CHECK(problems("GetObject", in_dir) ==
        std::vector<std::string>{"file: cannot write '" + dir.path + "': Is a directory"});
  in_dir["file"] = dir.path + "/no/such";
  CHECK(problems("GetObject", in_dir) ==
        std::vector<std::string>{"file: cannot write '" + dir.path + "/no/such': No such file or directory"});
}

TEST_CASE("help shows file, offset and length as local fields") {
  OperationHelp help = describe_operation(op("UploadPart"));
  std::vector<std::string> local;
  for (const FieldHelp& f : help.parameters)
    if (f.location == "local") local.push_back(f.path);
  CHECK(local == std::vector<std::string>{"file", "offset", "length"});
  std::string text = format_operation_help(help, "cloud.storage.upload_part", 200);
  CHECK(text.find("file") != std::string::npos);
  CHECK(text.find("read from disk as they go") != std::string::npos);
  CHECK(text.find("  offset: integer, not sent (read by cloudlua), at least 0") != std::string::npos);
  bool result_file = false;
  for (const FieldHelp& f : describe_operation(op("GetObject")).results) result_file = result_file || f.path == "file";
  CHECK(result_file);
}

TEST_CASE("The model refuses a payloadFile that names a member sent on the wire") {
  const char* text = R"({ "api": "shop", "protocol": "xml", "service": "s3", "operations": { "Put": {
      "method": "PUT", "path": "/{Key}", "payload": "Body",
      "payloadFile": { "path": "file", "offset": "offset", "length": "length" },
      "input": { "Key": { "in": "path", "type": "string" }, "Body": { "type": "blob" },
                 "file": { "type": "string" }, "offset": { "in": "local", "type": "integer" },
                 "length": { "in": "local", "type": "integer" } } } } })";
  auto loaded = Model::load({{"shop.json", text}});
  REQUIRE_FALSE(loaded.ok());
  CHECK(loaded.error().message.find("payloadFile.path") != std::string::npos);
  CHECK(loaded.error().message.find("\"in\": \"local\"") != std::string::npos);
}

TEST_CASE("The model refuses a payloadFile mediaType that is not a string header member") {
  const char* text = R"({ "api": "shop", "protocol": "xml", "service": "s3", "operations": { "Put": {
      "method": "PUT", "path": "/{Key}", "payload": "Body",
      "payloadFile": { "path": "file", "offset": "offset", "length": "length", "mediaType": "Kind" },
      "input": { "Key": { "in": "path", "type": "string" }, "Body": { "type": "blob" },
                 "Kind": { "in": "query", "type": "string" },
                 "file": { "in": "local", "type": "string" }, "offset": { "in": "local", "type": "integer" },
                 "length": { "in": "local", "type": "integer" } } } } })";
  auto loaded = Model::load({{"shop.json", text}});
  REQUIRE_FALSE(loaded.ok());
  INFO(loaded.error().message);
  CHECK(loaded.error().message.find("payloadFile.mediaType") != std::string::npos);
}

TEST_CASE("PutObject's ContentType is filled from the file's name unless given, and an unknown extension gets none") {
  const Operation& put = op("PutObject");
  json args = {{"Bucket", "b"}, {"Object", "k"}, {"file", "site/page.html"}};
  fill_media_type(put, args);
  CHECK(args.value("ContentType", "") == "text/html");
  args = {{"Bucket", "b"}, {"Object", "k"}, {"file", "site/page.html"}, {"ContentType", "text/plain"}};
  fill_media_type(put, args);
  CHECK(args["ContentType"] == "text/plain");
  args = {{"Bucket", "b"}, {"Object", "k"}, {"file", "site/notes.no-such-extension"}};
  fill_media_type(put, args);
  CHECK_FALSE(args.contains("ContentType"));
  args = {{"Bucket", "b"}, {"Object", "k"}, {"file", "a.html"}, {"partNumber", 1}, {"uploadId", "u"}};
  fill_media_type(op("UploadPart"), args);  // no mediaType: nothing
  CHECK_FALSE(args.contains("ContentType"));
}

TEST_CASE("MD5 and SHA-256 in one pass are each digest of the whole, across block boundaries", "[body][crypto]") {
  std::string bytes;
  for (size_t i = 0; i < (200u << 10) + 7; ++i) bytes += static_cast<char>((i * 131) >> 3);
  for (size_t size : {size_t(0), size_t(1), size_t(64) << 10, (size_t(64) << 10) + 1, bytes.size()}) {
    std::string_view part(bytes.data(), size);
    cloud::BodyDigests d = cloud::md5_and_sha256(part);
    CHECK(d.md5 == cloud::md5(part));
    CHECK(d.sha256_hex == cloud::sha256_hex(part));
  }
}

TEST_CASE("The hash of a file range is the hash of those bytes, read once, a range the file lost fails") {
  TempDir dir;
  std::string bytes(700000, '\0');
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>(i * 7);
  std::string path = dir.file("data", bytes);
  CHECK(sha256_hex_of({path, 0, bytes.size()}).value() == sha256_hex(bytes));
  CHECK(sha256_hex_of({path, 123, 400000}).value() == sha256_hex(bytes.substr(123, 400000)));
  CHECK(hex_digest_of({path, 123, 400000}, Digest::md5).value() == hex(md5(bytes.substr(123, 400000))));
  CHECK(hex_digest_of({path, 0, 0}, Digest::md5).value() == "d41d8cd98f00b204e9800998ecf8427e");  // of nothing
  auto cut = sha256_hex_of({path, 0, bytes.size() + 1});
  REQUIRE_FALSE(cut.ok());
  CHECK(cut.error().message.find("ended before its 700001 bytes were sent") != std::string::npos);
}

TEST_CASE("A file sink renames onto its target only when committed, and leaves no temporary file") {
  TempDir dir;
  std::string target = dir.file("target", "old");
  {
    FileSink sink(target);
    REQUIRE(sink.open().empty());
    REQUIRE(sink.write("new bytes", 9));
    CHECK(dir.entries().size() == 2);  // the target and the temporary file beside it
  }                                    // not committed: the temporary goes, the target stays
  CHECK(dir.entries() == std::vector<std::string>{"target"});
  std::stringstream old;
  old << std::ifstream(target).rdbuf();
  CHECK(old.str() == "old");
  FileSink sink(target);
  REQUIRE(sink.open().empty());
  REQUIRE(sink.write("new bytes", 9));
  CHECK(sink.commit().empty());
  std::stringstream now;
  now << std::ifstream(target).rdbuf();
  CHECK(now.str() == "new bytes");
  CHECK(dir.entries() == std::vector<std::string>{"target"});
}

TEST_CASE("The --debug text names a body kept in a file instead of showing it") {
  HttpRequest request{"PUT",
                      "http://127.0.0.1:1/b/k",
                      {{"Host", "127.0.0.1:1"}},
                      "",
                      {FileRange{"/tmp/x", 1000, 5000}, "", "", std::nullopt, true, "", nullptr}};
  HttpResponse response{200, {{"Content-Length", "5000"}}, "", "/tmp/back"};
  std::string text = describe_exchange(request, response, ExchangeInfo{"GetObject", 1, 0.1, {}});
  CHECK(text.find(">\n> (5000 bytes from '/tmp/x' at offset 1000)\n") != std::string::npos);
  CHECK(text.find("<\n< (body written to '/tmp/back')\n") != std::string::npos);
}
