// A request's body read as it arrives (incoming.h): hashed, checked and kept on the way.
#include "emulator/incoming.h"

#include <algorithm>

#include "core/wire/http.h"

namespace cloud {

IncomingBody::IncomingBody(std::unique_ptr<StreamCheck> stream, std::string folder, std::vector<ChecksumAlgorithm> sums)
    : stream_(std::move(stream)) {
  if (!folder.empty()) file_ = std::make_unique<BodyFile>(folder);
  for (ChecksumAlgorithm a : sums) sums_.emplace_back(a);
}

void IncomingBody::feed(std::string_view received) {
  if (refused_) return;
  if (!stream_) {
    sha256_.update(received);
    keep(received);
    return;
  }
  if (stream_->feed(received, [this](std::string_view decoded) { return keep(decoded); })) return;
  refused_ = stream_->refused();
  file_.reset();  // nothing of a refused body stays
}

// Bytes of the body to keep: hashed, then to the file or memory.
bool IncomingBody::keep(std::string_view bytes) {
  md5_.update(bytes);
  for (ChecksumStream& s : sums_) s.update(bytes);
  if (file_) file_->write(bytes.data(), bytes.size());
  else memory_.append(bytes);
  return true;
}

std::optional<SignatureRefusal> IncomingBody::finish() {
  if (!refused_ && stream_) refused_ = stream_->finish();
  if (refused_) {
    file_.reset();
    return refused_;
  }
  if (stream_) trailers_ = std::move(stream_->trailers());
  digests_.md5 = md5_.digest();
  if (!stream_) digests_.sha256_hex = sha256_.hex_digest();
  for (ChecksumStream& s : sums_) checksums_[s.algorithm()] = s.digest();
  if (file_) file_bytes_ = file_->finish(), file_.reset();
  return std::nullopt;
}

SharedBytes IncomingBody::take_bytes() {
  if (file_bytes_) return std::move(file_bytes_);
  return memory_blob(std::move(memory_));
}

std::vector<ChecksumAlgorithm> named_checksums(const Headers& headers) {
  std::vector<ChecksumAlgorithm> named;
  auto add = [&named](std::string_view name) {
    std::optional<ChecksumAlgorithm> a = find_checksum_algorithm(name);
    if (a && std::find(named.begin(), named.end(), *a) == named.end()) named.push_back(*a);
  };
  for (const auto& [header, value] : headers) {
    std::string name = to_lower(header);
    if (name.rfind("x-amz-", 0) != 0 && name.rfind("x-ext-", 0) != 0) continue;
    std::string_view rest = std::string_view(name).substr(6);
    if (rest.rfind("checksum-", 0) == 0) add(rest.substr(9));
    if (rest == "sdk-checksum-algorithm") add(value);
    if (rest != "trailer") continue;
    std::string names = to_lower(value);  // "x-amz-checksum-crc32, ..."
    for (size_t at = names.find("checksum-"); at != std::string::npos; at = names.find("checksum-", at + 1)) {
      size_t end = names.find_first_of(", \t", at);
      add(std::string_view(names).substr(at + 9, end == std::string::npos ? std::string::npos : end - at - 9));
    }
  }
  return named;
}

}  // namespace cloud
