// Records held in memory: a RecordStore that keeps what it is given, the bytes shared
// with the platform (a blob never changes once made). An emulator's checkpoint without a
// state database is one; the JSON state file's import reads its records into one.
#pragma once

#include <map>
#include <string>
#include <utility>

#include "emulator/service.h"

namespace cloud {

class HeldRecords : public RecordStore, private ByteStore {
 public:
  ByteStore& bytes() override { return *this; }
  // The changes applied as the database applies them: a "*" drops the service's records,
  // a record without a value (an object without a row) drops that one.
  Outcome<bool> save(const json& header, const std::map<std::string, StateRecords>& changes) override;
  // A copy of what is held (the platform takes its records apart); none before a save.
  Outcome<std::optional<Saved>> load() override;
  // The header held (a test moves its saved_at back, as if the platform had been down).
  json& header() { return header_; }

 private:
  SharedBytes put(const std::string& name, const SharedBytes& bytes) override { return named_[name] = bytes; }
  SharedBytes get(const std::string& name) const override;

  json header_;                                                                              // null: nothing saved yet
  std::map<std::string, RecordsByKind> records_;                                             // by API
  std::map<std::string, std::map<std::pair<std::string, std::string>, ObjectRow>> objects_;  // by API, bucket, key
  std::map<std::string, SharedBytes> named_;
};

}  // namespace cloud
