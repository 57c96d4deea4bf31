// A backend for an OST whose directory did not answer when the filesystem
// was mounted (a stopped disk): the mount goes on without it, and whatever
// reaches it waits, on the OST's service threads, until the directory
// answers. The service sees those waits as tasks in service and marks the
// OST unresponsive meanwhile (ost/service.h), so its queued requests fail
// after the timeout instead of waiting for ever.
//
// Thread safety: every method may be called from any thread.
#pragma once

#include <memory>
#include <string>

#include "common/status.h"
#include "ost/backend.h"

namespace sfs::ost {

class LateAttach {
 public:
  virtual ~LateAttach() = default;
  // The directory answered: calls go to `backend` from now on.
  virtual void Attach(std::unique_ptr<Backend> backend) = 0;
  // It answered, but is not this OST (a wrong label): calls fail with
  // `why` from now on.
  virtual void Fail(Status why) = 0;
  // Shutdown: waiting and later calls fail with EIO; a later Attach or Fail
  // changes nothing.
  virtual void Abandon() = 0;
};

// `describe` names the OST in messages (its path). `control` receives the
// handle the opener keeps to attach it later.
std::unique_ptr<Backend> NewLateBackend(const std::string& describe,
                                        std::shared_ptr<LateAttach>* control);

}  // namespace sfs::ost
