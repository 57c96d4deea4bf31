#include "ost/service.h"

namespace sfs::ost {

Result<ObjectFile*> ObjectHandle::Get(bool create) {
  std::lock_guard<std::mutex> lock(mu_);
  if (file_) return file_.get();
  auto opened = backend_->Open(object_id_, create);
  if (!opened.ok()) return opened.status();
  file_ = std::move(opened).value();
  return file_.get();
}

}  // namespace sfs::ost
