// A backend for an OST whose directory did not answer when the filesystem
// was mounted (a stopped disk): the mount goes on without it. Until the
// directory answers, Available() is false, so the service counts the OST as
// unresponsive (no new files on it, requests queued on it fail after the
// timeout: ost/service.h), and a call waits for it at most `timeout`, then
// fails with EIO: nothing was started on the disk.
//
// Thread safety: every method may be called from any thread.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "common/status.h"
#include "ost/backend.h"

namespace sfs::ost {

class LateAttach {
 public:
  virtual ~LateAttach() = default;
  // The directory answered: calls go to `backend` from now on. False if it
  // came too late (after Abandon, or a second answer): nothing changed.
  virtual bool Attach(std::unique_ptr<Backend> backend) = 0;
  // It answered, but is not this OST (a wrong label): calls fail with EIO
  // and `why`'s message from now on.
  virtual void Fail(Status why) = 0;
  // Shutdown: waiting and later calls fail with EIO; a later Attach or Fail
  // changes nothing.
  virtual void Abandon() = 0;
};

// `describe` names the OST in messages (its path). `control` receives the
// handle the opener keeps to attach it later.
std::unique_ptr<Backend> NewLateBackend(const std::string& describe,
                                        std::chrono::nanoseconds timeout,
                                        std::shared_ptr<LateAttach>* control);

}  // namespace sfs::ost
