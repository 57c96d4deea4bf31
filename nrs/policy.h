// The one narrow interface every NRS policy implements (seed 000: a
// thread-less policy; seed 002: incoming_request never blocks, the service
// asks for the next request).
//
// Thread safety: a Policy is a plain data structure and is NOT thread-safe.
// Its owner (nrs::Scheduler, itself serialized by its caller) calls it from
// one thread at a time. Time is always passed in, never read, so policies are
// deterministic under test.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "nrs/request.h"

namespace sfs::nrs {

// What Dequeue hands back: a request; or nothing with a time before which
// nothing will be ready (a throttling policy); or plain nothing (empty).
struct Pick {
  Request* request = nullptr;
  std::optional<TimePoint> not_before;

  static Pick Of(Request* r) { return Pick{r, std::nullopt}; }
  static Pick Empty() { return Pick{}; }
  static Pick Until(TimePoint t) { return Pick{nullptr, t}; }
};

class Policy {
 public:
  Policy() = default;
  Policy(const Policy&) = delete;
  Policy& operator=(const Policy&) = delete;
  virtual ~Policy() = default;

  // Registry name, e.g. "fifo".
  virtual std::string_view Name() const = 0;

  // Takes the request and returns true, or returns false to refuse it (the
  // scheduler then gives it to the fallback policy). Must not block.
  virtual bool Enqueue(Request* request, TimePoint now) = 0;

  // The next request to serve, if any is allowed at `now`.
  virtual Pick Dequeue(TimePoint now) = 0;

  // Called when a request this policy handed out has finished service.
  virtual void Served(Request* request, TimePoint now) {}

  // Requests held and not yet handed out.
  virtual size_t Queued() const = 0;

  // Policy-specific settings as "key=value" text, for status reports.
  virtual std::string Describe() const { return ""; }
};

// The FIFO policy: serves requests in arrival order, refuses none.
std::unique_ptr<Policy> NewFifoPolicy();

}  // namespace sfs::nrs
