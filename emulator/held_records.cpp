// Records held in memory (held_records.h).
#include "emulator/held_records.h"

#include <stdexcept>

namespace cloud {

Outcome<bool> HeldRecords::save(const json& header, const std::map<std::string, StateRecords>& changes) {
  for (const auto& [api, list] : changes) {
    for (const StateRecord& r : list) {
      if (r.kind == "*") {
        records_.erase(api), objects_.erase(api);
      } else if (r.kind == "object") {
        if (r.object) objects_[api][{r.object->bucket, r.object->key}] = *r.object;
        else objects_[api].erase({r.bucket, r.key});
      } else if (r.value.is_null()) {
        records_[api][r.kind].erase(r.key);
      } else {
        records_[api][r.kind][r.key] = r.value;
      }
    }
  }
  header_ = header;
  return true;
}

Outcome<std::optional<RecordStore::Saved>> HeldRecords::load() {
  if (header_.is_null()) return std::optional<Saved>();
  Saved saved{header_, records_, {}};
  for (const auto& [api, rows] : objects_)
    for (const auto& [where, row] : rows) saved.objects[api].push_back(row);
  return std::optional<Saved>(std::move(saved));
}

SharedBytes HeldRecords::get(const std::string& name) const {
  auto it = named_.find(name);
  if (it == named_.end()) throw std::runtime_error("no bytes named " + name + " in the records held");
  return it->second;
}

}  // namespace cloud
