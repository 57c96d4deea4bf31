#include "mds/extent_master.h"

#include <algorithm>

namespace sfs::mds {

bool ExtentMaster::Ask(uint64_t ino, SessionId session, uint64_t generation, Mode mode,
                       std::vector<Grant>* conflicts) {
  std::lock_guard lock(mu_);
  auto& holders = files_[ino];
  conflicts->clear();
  for (const auto& [holder, held] : holders) {
    if (holder == session) continue;
    if (mode == Mode::kWrite || held.mode == Mode::kWrite) {
      conflicts->push_back(Grant{holder, held.number});
    }
  }
  if (!conflicts->empty()) return false;
  Held& mine = holders[session];
  // Asking again (after a revocation the client saw, or for more) is a
  // new grant: a revocation of the old one in flight must not end it.
  mine.mode = std::max(mine.number == 0 ? mode : mine.mode, mode);
  mine.generation = generation;
  mine.number = next_number_++;
  return true;
}

void ExtentMaster::Revoked(uint64_t ino, const Grant& grant) {
  std::lock_guard lock(mu_);
  auto file = files_.find(ino);
  if (file == files_.end()) return;
  auto held = file->second.find(grant.session);
  if (held != file->second.end() && held->second.number == grant.number) file->second.erase(held);
  if (file->second.empty()) files_.erase(file);
}

void ExtentMaster::Closed(uint64_t ino, SessionId session) {
  std::lock_guard lock(mu_);
  auto file = files_.find(ino);
  if (file == files_.end()) return;
  file->second.erase(session);
  if (file->second.empty()) files_.erase(file);
}

void ExtentMaster::StreamEnded(SessionId session, uint64_t generation) {
  std::lock_guard lock(mu_);
  for (auto file = files_.begin(); file != files_.end();) {
    auto held = file->second.find(session);
    if (held != file->second.end() && held->second.generation <= generation) {
      file->second.erase(held);
    }
    file = file->second.empty() ? files_.erase(file) : std::next(file);
  }
}

size_t ExtentMaster::size() const {
  std::lock_guard lock(mu_);
  size_t count = 0;
  for (const auto& [ino, holders] : files_) count += holders.size();
  return count;
}

}  // namespace sfs::mds
