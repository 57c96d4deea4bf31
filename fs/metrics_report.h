// What the metrics server (-o metrics=ADDRESS:PORT, metrics/http_server.h)
// shows: per OST its state, space, weight, bytes, requests, queue and
// errors; per NRS policy and class the scheduler's counters; per job the
// job_stats counters. Metric names and labels are in docs/design.md.
#pragma once

#include <string>

namespace sfs::fs {

class Filesystem;

// Prometheus text; never waits on a disk (the figures are counters and
// background samples).
std::string RenderMetrics(Filesystem& fs);

}  // namespace sfs::fs
