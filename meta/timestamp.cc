#include <time.h>

#include "meta/meta_store.h"

namespace sfs::meta {

Timestamp Timestamp::Now() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return Timestamp{ts.tv_sec, ts.tv_nsec};
}

}  // namespace sfs::meta
