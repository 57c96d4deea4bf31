#include "fs/ost_status.h"

#include <fmt/format.h>

namespace sfs::fs {
namespace {

int64_t Millis(std::chrono::nanoseconds span) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(span).count();
}

}  // namespace

std::string FormatOstStatus(const std::vector<ost::Service*>& osts,
                            std::chrono::nanoseconds ost_timeout, nrs::TimePoint now) {
  std::string out;
  for (ost::Service* service : osts) {
    const ost::ServiceCounters c = service->Counters();
    const ost::SpaceSample space = service->LastSpace();
    std::string age = "none";
    bool stale = false;
    if (space.at.has_value()) {
      age = std::to_string(Millis(now - *space.at));
      stale = now - *space.at > ost_timeout;
    }
    out += fmt::format(
        "ost{} state={} queued={} in_service={} raised={} cancelled={} started={} oldest_ms={} "
        "errors={} io_errors={} read_only={} space_age_ms={}{} epoch={} eh={} path={}\n",
        service->index(), c.responsive ? "ok" : "unresponsive", c.queued, c.active, c.raised,
        c.cancelled, c.started, Millis(c.oldest_in_service), c.errors, c.io_errors,
        service->read_only() ? "yes" : "no", age, stale ? " space=stale" : "", service->epoch(),
        nrs::StandingName(service->EpochStanding()), service->backend().Describe());
  }
  return out;
}

}  // namespace sfs::fs
