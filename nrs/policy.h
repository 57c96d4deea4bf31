// The one narrow interface every NRS policy implements (seed 000: a
// thread-less policy; seed 002: incoming_request never blocks, the service
// asks for the next request).
//
// Thread safety: a Policy is a plain data structure and is NOT thread-safe.
// Its owner (nrs::Scheduler, itself serialized by its caller) calls it from
// one thread at a time. Time is always passed in, never read, so policies are
// deterministic under test.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <span>
#include <vector>

#include "common/status.h"
#include "nrs/epoch_data.h"
#include "nrs/request.h"
#include "nrs/tunables.h"

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

// The shortest epoch an early end (Policy::EpochDone) may make: a round
// through the epoch handler costs every OST a report and a start, so
// epochs are kept to at most about a thousand per second. Measured with
// tools/bench/nrs_bench (BM_Fleet_EpochJobid_*): without it an epoch ended
// every ~10 requests and the 4-OST fleet served 0.53 M requests/s with 100
// jobs instead of 1.6 M with local epochs.
inline constexpr std::chrono::milliseconds kMinEpochSpan{1};

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

  // True when, with nothing queued, Enqueue followed by Dequeue always
  // hands the arriving request straight back and leaves no state behind
  // (fifo): requests may then be served past it and counted afterwards
  // (Scheduler::ServesEveryArrivalAtOnce), in its one class.
  virtual bool ServesArrivalAtOnce() const { return false; }

  // Any request it holds, ignoring every throttle, or null when empty: the
  // OST is shutting down and serves what is left at once. The default suits
  // policies whose Dequeue holds nothing back for long; throttling ones
  // (TBF) override it.
  virtual Request* TakeAny() { return Dequeue(TimePoint::max()).request; }

  // Takes `request` back unserved, as if it had never been queued here
  // except for what the policy counted at its arrival (a batch slot, a
  // class's arrivals): seed 000's nrs_priority moves it to the other head
  // (Nrs::Raise). False, and nothing changed, if the policy does not hold
  // it. `request` is alive (its caller knows it is not completed), so a
  // policy may read it; a policy that cannot remove says false (the
  // default). Rare: O(queued) is acceptable.
  virtual bool Remove(Request* request, TimePoint now) { return false; }

  // Called when a request this policy handed out has finished service.
  virtual void Served(Request* request, TimePoint now) {}

  // Requests held and not yet handed out.
  virtual size_t Queued() const = 0;

  // Takes new tunables at `now` (a setting changed). Each policy documents
  // how a change affects requests it already holds. The settings layer has
  // validated `tunables` by building a policy with them first (a factory
  // refuses what it cannot use), so Retune cannot fail.
  virtual void Retune(const Tunables& tunables, TimePoint now) {}

  // The class `request` belongs to, for per-class statistics: a short
  // "key=value" label such as "uid=1000" or "object=0x1f". Called while the
  // policy holds or serves the request. A policy without classes says "all".
  virtual std::string ClassOf(const Request& request) const { return "all"; }

  // Policy-specific settings and state for status reports: "key=value"
  // words, one item per line (TBF: one line per rule, "rule <name> ...").
  virtual std::string Describe() const { return ""; }

  // Seed 002, for a policy that coordinates with its peers on the other
  // OSTs through the epoch handler. A policy that does not (the default)
  // says kNone and is never asked for data.
  virtual EpochKind EpochDataKind() const { return EpochKind::kNone; }
  // Its policy data as the epoch ends (at most kMaxEpochPayload bytes, in
  // the kind's byte-order-defined format).
  virtual std::vector<uint8_t> ReportEpoch(TimePoint now) { return {}; }
  // The next epoch starts: `reduced` is the combination of the data every
  // participating OST's policy of this kind on this head reported (empty
  // when none did). Never fails; a policy that cannot use the data keeps
  // deciding alone.
  virtual void StartEpoch(Epoch epoch, std::span<const uint8_t> reduced, TimePoint now) {}
  // Whether the policy is through with the current epoch before its length
  // has passed (the epoch policy: its group has nothing queued here); the
  // service then asks for the next epoch at once, but never sooner than
  // kMinEpochSpan after the epoch started. Cheap: asked after every enqueue
  // and dequeue.
  virtual bool EpochDone(TimePoint now) const { return false; }
  // How long this policy's epochs last at most; nullopt: the service's
  // nrs_epoch_ms.
  virtual std::optional<std::chrono::nanoseconds> EpochLength() const { return std::nullopt; }
};

// The FIFO policy: serves requests in arrival order, refuses none.
std::unique_ptr<Policy> NewFifoPolicy();

// The policies stripefs ships. `args` are the words after the policy name
// ("crrn uid" -> "uid"); a factory returns EINVAL with a message for
// arguments or tunables it cannot use, and builds nothing.
//
// CRR-N: round robin over clients, crrn_quantum requests each per round.
// args: "" or "jobid" (client = job id), "uid".
Result<std::unique_ptr<Policy>> NewCrrnPolicy(std::string_view args, const Tunables& tunables);
// ORR: per-object batches sorted by offset, round robin between objects.
// args: "" only.
Result<std::unique_ptr<Policy>> NewOrrPolicy(std::string_view args, const Tunables& tunables);
// TBF: token buckets per class. args: classification type, "uid", "gid",
// "jobid", "opcode" or a '+' combination; "" = all four.
Result<std::unique_ptr<Policy>> NewTbfPolicy(std::string_view args, const Tunables& tunables);
// Epoch (seed 002's coordinated epochs): each epoch every OST serves the
// group the epoch handler's reduction chose first, the others in arrival
// order when that group has nothing queued here. args: "" or "jobid"
// (group = job id), "uid".
Result<std::unique_ptr<Policy>> NewEpochPolicy(std::string_view args, const Tunables& tunables);
// Delay: holds delay_pct percent of requests for a random time. args: "".
Result<std::unique_ptr<Policy>> NewDelayPolicy(std::string_view args, const Tunables& tunables);

}  // namespace sfs::nrs
