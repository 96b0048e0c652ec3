// Checkpoints of the whole platform by name: cloud.emulator.checkpoint/restore/checkpoints,
// the control plane's, and `serve --state PATH --restore NAME`. With a state database
// a checkpoint is a folder of PATH.snapshots/ (the name from when they were called snapshots; the records by VACUUM INTO, the byte files
// hard-linked: nothing copied but the records), a folder serve made and owns; without, it is held in memory (the
// platform's records, sharing their bytes) and goes with the process.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/base/error.h"
#include "emulator/service.h"

namespace cloud {

class HeldRecords;
class StateDatabase;

// Whether `name` may name a checkpoint: 1 to 64 letters, digits, '.', '-' or '_',
// starting with a letter or a digit (a file name on every system, never hidden,
// never "..", the same in a URL path). An error saying so otherwise.
Outcome<bool> check_checkpoint_name(const std::string& name);

class Checkpoints {
 public:
  // The checkpoints of `platform`: folders of `folder` when `db` keeps its records,
  // else in memory.
  Checkpoints(Platform& platform, StateDatabase* db, std::string folder);
  ~Checkpoints();
  Checkpoints(const Checkpoints&) = delete;
  Checkpoints& operator=(const Checkpoints&) = delete;

  // With a database: the checkpoints folder made (mode 0700) or, when there, checked as
  // this user's own (open_own_folder); its descriptor is kept, and every checkpoint is
  // taken, listed and removed relative to it. An error when it is not ours.
  Outcome<bool> open();

  // Saves the platform as `name` (replacing a checkpoint of that name), consistent: no
  // change happens while it is taken.
  Outcome<bool> take(const std::string& name);
  // Puts the platform saved as `name` in place of the platform; an unknown name is an
  // error (NoSuchCheckpoint) listing the known ones, and changes nothing.
  Outcome<bool> restore(const std::string& name);
  // The names of the checkpoints, sorted.
  std::vector<std::string> names() const;

 private:
  Outcome<bool> take_folder(const std::string& name);
  std::vector<std::string> names_locked() const;
  Outcome<bool> open_locked() const;
  mutable std::mutex mutex_;  // one checkpoint taken, restored or listed at a time
  Platform& platform_;
  StateDatabase* db_;
  std::string folder_;
  mutable int dir_fd_ = -1;                                   // the checkpoints folder, once opened
  std::map<std::string, std::unique_ptr<HeldRecords>> held_;  // in memory, without db_
};

}  // namespace cloud
