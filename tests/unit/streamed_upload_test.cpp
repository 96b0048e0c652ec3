// File bodies signed as they stream (issue 23, "each byte of a file read once"): the
// reader frames a file range as aws-chunked, each chunk signed as it is read, exactly
// as S3's worked example does; put_object{ file = } and upload_part read the file
// once (inotify counts the passes that read it) and the emulator stores its bytes,
// in both dialects; a chunk changed on the way is refused by the emulator's verifier;
// payload_signing = "whole" keeps the SHA-256 pass (the file read twice).
#include <catch2/catch.hpp>
#include <sys/inotify.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "core/wire/aws_chunked.h"
#include "core/net/range_reader.h"
#include "core/net/redact.h"
#include "emulator_harness.h"

using namespace cloud;

namespace {

const Credentials kDocsCredentials{"AKIAIOSFODNN7EXAMPLE", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", ""};

// A file holding `bytes`, removed when the test ends.
struct TempFile {
  std::string path;
  explicit TempFile(const std::string& bytes) {
    char pattern[] = "/tmp/cloudlua-stream-XXXXXX";
    int fd = ::mkstemp(pattern);
    REQUIRE(fd >= 0);
    ::close(fd);
    path = pattern;
    std::ofstream(path, std::ios::binary) << bytes;
  }
  ~TempFile() { std::filesystem::remove(path); }
};

// Everything a reader gives, read in pieces of `piece` bytes (as curl asks).
std::string read_all(RangeReader& reader, size_t piece = 16384) {
  std::string out, buffer(piece, '\0');
  for (long long n; (n = reader.read(&buffer[0], piece)) > 0;) out.append(buffer, 0, static_cast<size_t>(n));
  return out;
}

// Counts the passes that read a file: an open followed by at least one read, until
// its close (inotify; merged read events do not matter).
class ReadPasses {
 public:
  explicit ReadPasses(const std::string& path) : fd_(::inotify_init1(IN_NONBLOCK | IN_CLOEXEC)) {
    REQUIRE(fd_ >= 0);
    REQUIRE(::inotify_add_watch(fd_, path.c_str(), IN_OPEN | IN_ACCESS | IN_CLOSE) >= 0);
  }
  ~ReadPasses() { ::close(fd_); }
  int count() {
    alignas(inotify_event) char buffer[4096];
    for (ssize_t n; (n = ::read(fd_, buffer, sizeof buffer)) > 0;)
      for (char* at = buffer; at < buffer + n;
           at += sizeof(inotify_event) + reinterpret_cast<inotify_event*>(at)->len) {
        auto* e = reinterpret_cast<inotify_event*>(at);
        if (e->mask & IN_OPEN) read_ = false;
        if ((e->mask & IN_ACCESS) && !read_) read_ = true, ++passes_;
      }
    return passes_;
  }

 private:
  int fd_;
  int passes_ = 0;
  bool read_ = true;
};

}  // namespace

TEST_CASE("A file range streamed signed is S3's worked example, chunk for chunk", "[body][chunked]") {
  // S3's sigv4-streaming example: 66560 bytes of 'a' in 64 KiB chunks, Content-Length 66824.
  TempFile file(std::string(66560, 'a'));
  auto stream = std::make_shared<ChunkStream>();
  stream->scope = ChunkScope{&Dialect::aws(), kDocsCredentials, "us-east-1", "s3", "20130524T000000Z"};
  stream->seed = "4f232c4386841ef735655705268965c44a0e4690baa4adea153f7db9fa80a0a9";  // the example's request signature
  stream->chunk_size = 65536;
  RangeReader reader;
  REQUIRE(reader.open(FileRange{file.path, 0, 66560}, stream) == "");
  std::string body = read_all(reader);
  CHECK(body.size() == 66824);
  CHECK(aws_chunked_length(66560, 65536) == 66824);
  std::vector<std::string> expected = {"ad80c730a21e5b8d04586a2213dd63b9a0e99e0e2307b0ade35a65485a288648",
                                       "0055627c9e194cb4542bae2aa5492e3c1575bbb81b612b7d234b86a503ef5497",
                                       "b6c6ea8a5354eaf15b3cb7646744f4275b71ea724fed81ceb9323e279d449df9"};
  CHECK(stream->signatures == expected);
  Outcome<AwsChunkedBody> parsed = parse_aws_chunked(body);
  REQUIRE(parsed.ok());
  CHECK(joined_data(*parsed) == std::string(66560, 'a'));
  REQUIRE(parsed->chunks.size() == 3);
  CHECK(parsed->chunks[0].signature == expected[0]);

  SECTION("a retry sends the same stream again from its seed") {
    REQUIRE(reader.rewind());
    CHECK(read_all(reader, 1000) == body);
    CHECK(stream->signatures == expected);
  }
  SECTION("its lengths are computed, not read: an empty body and an exact multiple") {
    CHECK(aws_chunked_length(0, 65536) == 86);  // "0;chunk-signature=<64>\r\n\r\n"; "10000;...": 88
    CHECK(aws_chunked_length(131072, 65536) == 2 * (65536 + 88 + 2) + 86);
  }
  SECTION("the chunk signatures are secrets of the request that sent them") {
    HttpRequest sent;
    sent.files.stream = stream;
    std::vector<std::string> secrets = request_signatures(sent);
    CHECK(std::find(secrets.begin(), secrets.end(), expected[1]) != secrets.end());
    CHECK(redact("echoed " + expected[1], secrets).find(expected[1]) == std::string::npos);
    CHECK(redact("0;chunk-signature=" + expected[2]).find(expected[2]) == std::string::npos);
  }
}

namespace {

// A stream signed with the worked example's scope, in chunks of `chunk_size`.
std::shared_ptr<ChunkStream> example_stream(std::uint64_t chunk_size) {
  auto stream = std::make_shared<ChunkStream>();
  stream->scope = ChunkScope{&Dialect::aws(), kDocsCredentials, "us-east-1", "s3", "20130524T000000Z"};
  stream->seed = "4f232c4386841ef735655705268965c44a0e4690baa4adea153f7db9fa80a0a9";
  stream->chunk_size = chunk_size;
  return stream;
}

// How far this process has read `path` through its one open descriptor of it (its
// offset, from /proc/self/fdinfo); -1 when it has none open.
long long read_offset(const std::string& path) {
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd")) {
    std::error_code ignored;
    if (std::filesystem::read_symlink(entry.path(), ignored) != path) continue;
    std::ifstream info("/proc/self/fdinfo/" + entry.path().filename().string());
    std::string field;
    long long pos = -1;
    while (info >> field)
      if (field == "pos:" && info >> pos) return pos;
  }
  return -1;
}

// How many descriptors of `path` this process holds open.
int open_descriptors(const std::string& path) {
  int count = 0;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd")) {
    std::error_code ignored;
    count += std::filesystem::read_symlink(entry.path(), ignored) == path;
  }
  return count;
}

// Bytes that differ from chunk to chunk.
std::string varied_bytes(std::size_t size) {
  std::string bytes(size, '\0');
  for (std::size_t i = 0; i < size; ++i) bytes[i] = static_cast<char>((i * 131 + i / 65536) >> 2);
  return bytes;
}

}  // namespace

TEST_CASE("A streamed range is read and signed a few chunks ahead of the sending, no more", "[body][chunked]") {
  const std::uint64_t chunk = 65536;
  std::string bytes = varied_bytes(40 * chunk + 100);
  TempFile file(bytes);
  auto stream = example_stream(chunk);
  RangeReader reader;
  REQUIRE(reader.open(FileRange{file.path, 0, bytes.size()}, stream) == "");
  CHECK(read_offset(file.path) == 0);  // nothing is read before the transport asks
  char first[100];
  REQUIRE(reader.read(first, sizeof first) == 100);
  // The next chunks are read (and hashed) while the first one is still being sent.
  long long ahead = 0;
  for (int i = 0; i < 1000 && ahead < static_cast<long long>(3 * chunk); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    ahead = read_offset(file.path);
  }
  CHECK(ahead == static_cast<long long>(3 * chunk));  // the chunk sent and two waiting
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  CHECK(read_offset(file.path) == static_cast<long long>(3 * chunk));  // bounded: no further

  std::string body = std::string(first, sizeof first) + read_all(reader);
  Outcome<AwsChunkedBody> parsed = parse_aws_chunked(body);
  REQUIRE(parsed.ok());
  CHECK(joined_data(*parsed) == bytes);
  REQUIRE(stream->signatures.size() == 42);  // 40 full chunks, a short one, the empty one
  std::string previous = stream->seed;
  for (std::size_t i = 0; i < parsed->chunks.size(); ++i) {  // the chain as one thread signs it
    CHECK(parsed->chunks[i].signature == chunk_signature(stream->scope, previous, parsed->chunks[i].data));
    CHECK(stream->signatures[i] == parsed->chunks[i].signature);
    previous = parsed->chunks[i].signature;
  }

  SECTION("a rewind in the middle sends the same stream again from its seed") {
    std::vector<std::string> signatures = stream->signatures;
    REQUIRE(reader.rewind());
    char piece[5000];
    REQUIRE(reader.read(piece, sizeof piece) == 5000);
    REQUIRE(reader.rewind());
    CHECK(read_all(reader, 7000) == body);
    CHECK(stream->signatures == signatures);
  }
  SECTION("a reader let go in the middle (a cancelled transfer) stops its thread") {
    for (int i = 0; i < 20; ++i) {
      RangeReader cancelled;
      REQUIRE(cancelled.open(FileRange{file.path, 0, bytes.size()}, example_stream(chunk)) == "");
      char piece[1000];
      REQUIRE(cancelled.read(piece, sizeof piece) == 1000);
    }
    CHECK(open_descriptors(file.path) == 1);  // the first reader's: every other closed, after its thread ended
  }
}

TEST_CASE("A file that shrinks while it streams ends the body with its error, after the chunks it still had",
          "[body][chunked]") {
  const std::uint64_t chunk = 65536;
  std::string bytes = varied_bytes(10 * chunk);
  TempFile file(bytes);
  RangeReader reader;
  REQUIRE(reader.open(FileRange{file.path, 0, bytes.size()}, example_stream(chunk)) == "");
  char piece[1000];
  REQUIRE(reader.read(piece, sizeof piece) == 1000);
  std::filesystem::resize_file(file.path, 5 * chunk + chunk / 2);
  std::string buffer(16384, '\0');
  long long n;
  std::uint64_t sent = sizeof piece;
  while ((n = reader.read(&buffer[0], buffer.size())) > 0) sent += static_cast<std::uint64_t>(n);
  CHECK(n == -1);
  CHECK(reader.error().find("ended before its " + std::to_string(bytes.size()) + " bytes were sent") !=
        std::string::npos);
  CHECK(sent >= 3 * chunk);                             // the chunks framed before the cut went
  CHECK(sent < 6 * (chunk + 100));                      // but no chunk past the file's new end
  CHECK(reader.read(&buffer[0], buffer.size()) == -1);  // and it stays failed
}

TEST_CASE("put_object and upload_part of a file read it once, and the emulator stores its bytes",
          "[body][chunked][emulator]") {
  harness::Running e;
  std::string bytes;
  for (int i = 0; bytes.size() < 600 * 1024 + 7; ++i) bytes += std::to_string(i) + ",";  // 3 chunks and a short one
  TempFile file(bytes);
  for (const Dialect* d : {&Dialect::aws(), &Dialect::ext()}) {
    INFO(d->name);
    ClientConfig config = e.client_config();
    config.dialect = d;
    Client client(config);
    ReadPasses passes(file.path);
    auto put = client.call("PutObject", {{"Bucket", "demo-bucket"}, {"Object", "streamed.bin"}, {"file", file.path}});
    INFO((put.ok() ? "" : put.error().message));
    REQUIRE(put.ok());
    CHECK(passes.count() == 1);
    auto got = client.call("GetObject", {{"Bucket", "demo-bucket"}, {"Object", "streamed.bin"}});
    REQUIRE(got.ok());
    CHECK(got->result["Body"] == bytes);
    CHECK(got->result["ETag"] == "\"" + hex(md5(bytes)) + "\"");

    auto upload = client.call("CreateMultipartUpload", {{"Bucket", "demo-bucket"}, {"Object", "parts.bin"}});
    REQUIRE(upload.ok());
    json part = {{"Bucket", "demo-bucket"}, {"Object", "parts.bin"}, {"uploadId", upload->result["UploadId"]},
                 {"partNumber", 1},         {"file", file.path},     {"offset", 5},
                 {"length", 300000}};
    auto uploaded = client.call("UploadPart", part);
    REQUIRE(uploaded.ok());
    CHECK(passes.count() == 2);
    CHECK(uploaded->result["ETag"] == "\"" + hex(md5(bytes.substr(5, 300000))) + "\"");
  }
}

TEST_CASE("payload_signing whole hashes a file body first: the file is read twice", "[body][chunked][emulator]") {
  harness::Running e;
  TempFile file(std::string(100000, 'w'));
  ClientConfig config = e.client_config();
  config.stream_payloads = false;
  Client client(config);
  ReadPasses passes(file.path);
  REQUIRE(client.call("PutObject", {{"Bucket", "demo-bucket"}, {"Object", "whole.bin"}, {"file", file.path}}).ok());
  CHECK(passes.count() == 2);
  CHECK(client.call("GetObject", {{"Bucket", "demo-bucket"}, {"Object", "whole.bin"}})->result["Body"] ==
        std::string(100000, 'w'));
}

TEST_CASE("A chunk of a streamed file changed on the way is refused by the emulator", "[body][chunked][emulator]") {
  harness::Running e;
  std::string data(70000, 'q');
  TempFile file(data);
  const Dialect& d = Dialect::aws();
  cloud::SignInput in = harness::storage_request(e.urls["storage"], "PUT", "/demo-bucket/tampered.bin");
  in.dialect = &d;
  in.time = amz_time_now();
  in.headers = {{"Content-Encoding", "aws-chunked"}, {"x-amz-decoded-content-length", std::to_string(data.size())}};
  in.payload_sha256 = streaming_payload(d, false);
  auto s = cloud::sign(in);
  REQUIRE(s.ok());
  auto stream = std::make_shared<ChunkStream>(
      ChunkStream{ChunkScope{&d, in.credentials, in.region, in.service, in.time}, s->signature, kStreamChunkSize});
  RangeReader reader;
  REQUIRE(reader.open(FileRange{file.path, 0, data.size()}, stream) == "");
  std::string body = read_all(reader);
  auto sent = harness::send(e.urls["storage"], *s, "PUT", body);
  REQUIRE(sent);
  CHECK(sent->status == 200);
  body[body.find('q') + 1000] = 'Q';
  REQUIRE(reader.rewind());
  auto tampered = harness::send(e.urls["storage"], *s, "PUT", body);
  REQUIRE(tampered);
  CHECK(tampered->status == 403);
  CHECK(tampered->body.find("SignatureDoesNotMatch") != std::string::npos);
}
