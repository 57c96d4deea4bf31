// Helpers shared by the nrs tests: owned requests numbered by object_id and a
// fake clock made of plain TimePoint values.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <vector>

#include "nrs/request.h"

namespace sfs::nrs::testing {

// An arbitrary fixed origin; only differences from it matter.
inline TimePoint T0() { return TimePoint(std::chrono::seconds(1000)); }

inline TimePoint At(std::chrono::nanoseconds offset) { return T0() + offset; }

// Requests 0..n-1, with info.object_id == index so a test can tell them apart.
inline std::vector<std::unique_ptr<Request>> MakeRequests(size_t n, TimePoint arrival = T0()) {
  std::vector<std::unique_ptr<Request>> requests;
  requests.reserve(n);
  for (size_t i = 0; i < n; i++) {
    auto r = std::make_unique<Request>();
    r->info.object_id = i;
    r->info.arrival = arrival;
    requests.push_back(std::move(r));
  }
  return requests;
}

}  // namespace sfs::nrs::testing
