#include "fs/ost_attach.h"

#include <condition_variable>
#include <mutex>
#include <optional>
#include <thread>

#include <charconv>

#include "common/log.h"
#include "fs/settings_keys.h"
#include "ost/label.h"

namespace sfs::fs {
namespace {

// Checks the label of the OST at `id.path` and opens it. May hang with a
// hung disk: runs on a thread of its own.
Result<std::unique_ptr<ost::Backend>> Attach(const OstIdentity& id) {
  const std::string where = "OST " + std::to_string(id.index) + " at " + id.path;
  auto label = ost::ReadLabel(id.path);
  if (!label.ok()) {
    return Status::Error(label.err() == ENOENT ? ENOENT : EIO, where + ": no stripefs label (" +
                                                                   label.status().message() +
                                                                   "); is the right disk mounted?");
  }
  if (label->fs_uuid != id.fs_uuid || label->index != id.index || label->ost_uuid != id.ost_uuid) {
    return Status::Error(EIO, where + " carries the label of another filesystem or OST (fs " +
                                  label->fs_uuid + " index " + std::to_string(label->index) +
                                  "), expected fs " + id.fs_uuid + " ost " + id.ost_uuid);
  }
  auto backend = ost::NewPosixBackend(id.path);
  if (!backend.ok()) return Status::Error(backend.err(), where + ": " + backend.status().message());
  return backend;
}

// Where one opener thread leaves its result; shared with the mount, which
// may have stopped waiting (then `late` is set and takes the result).
struct Slot {
  std::mutex mu;  // guards the three below
  std::condition_variable done;
  std::optional<Result<std::unique_ptr<ost::Backend>>> result;
  std::shared_ptr<ost::LateAttach> late;
};

}  // namespace

Result<std::vector<OstIdentity>> ReadOstIdentities(meta::MetaStore& store) {
  auto fs_uuid = store.GetSetting(kFsUuidKey);
  auto count_text = store.GetSetting(kOstCountKey);
  uint32_t count = 0;
  if (count_text.ok()) {
    auto [end, ec] = std::from_chars(count_text->data(), count_text->data() + count_text->size(), count);
    if (ec != std::errc() || end != count_text->data() + count_text->size()) count = 0;
  }
  if (!fs_uuid.ok() || count == 0) return Status::Error(EIO, "metadata store lacks the OST list");
  std::vector<OstIdentity> identities;
  for (uint32_t index = 0; index < count; ++index) {
    auto path = store.GetSetting(OstPathKey(index));
    auto uuid = store.GetSetting(OstUuidKey(index));
    if (!path.ok() || !uuid.ok()) {
      return Status::Error(EIO, "metadata store lacks OST " + std::to_string(index));
    }
    identities.push_back(OstIdentity{index, *path, *fs_uuid, *uuid});
  }
  return identities;
}

OpenedOsts OpenOsts(const std::vector<OstIdentity>& osts, std::chrono::nanoseconds patience) {
  std::vector<std::shared_ptr<Slot>> slots;
  for (const OstIdentity& id : osts) {
    auto slot = std::make_shared<Slot>();
    slots.push_back(slot);
    // Detached: a hung disk keeps it in a system call, and nothing may wait
    // for it. It holds only its slot.
    std::thread([id, slot] {
      auto result = Attach(id);
      std::lock_guard<std::mutex> lock(slot->mu);
      if (slot->late == nullptr) {
        slot->result = std::move(result);
        slot->done.notify_all();
        return;
      }
      if (result.ok()) {
        // Logged only if taken: after Abandon the daemon may be exiting.
        if (slot->late->Attach(std::move(result).value())) {
          Logger("fs")->info("OST {} at {} answered; it joins the filesystem", id.index, id.path);
        }
      } else {
        Logger("fs")->error("OST {} answered but cannot be used: {}", id.index,
                            result.status().ToString());
        slot->late->Fail(result.status());
      }
    }).detach();
  }
  OpenedOsts opened;
  const auto deadline = std::chrono::steady_clock::now() + patience;
  for (size_t i = 0; i < slots.size(); ++i) {
    Slot& slot = *slots[i];
    std::unique_lock<std::mutex> lock(slot.mu);
    slot.done.wait_until(lock, deadline, [&] { return slot.result.has_value(); });
    if (slot.result.has_value()) {
      opened.backends.push_back(std::move(*slot.result));
      continue;
    }
    Logger("fs")->error(
        "OST {} at {} did not answer within {} ms; mounting without it: it joins "
        "when it answers",
        osts[i].index, osts[i].path,
        std::chrono::duration_cast<std::chrono::milliseconds>(patience).count());
    opened.backends.push_back(ost::NewLateBackend(osts[i].path, patience, &slot.late));
    opened.late.push_back(slot.late);
  }
  return opened;
}

}  // namespace sfs::fs
