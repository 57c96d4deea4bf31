// What the metrics server (-o metrics=ADDRESS:PORT, metrics/http_server.h)
// shows: per OST its state, space, weight, bytes, requests, queue and
// errors; the metadata service's queue; per NRS policy and class the
// schedulers' counters (the OSTs' and the metadata service's); per job the
// job_stats counters. Metric names and labels are in the README.
#pragma once

#include <string>

namespace sfs::fs {

class Filesystem;

// Prometheus text; never waits on a disk (the figures are counters and
// background samples).
std::string RenderMetrics(Filesystem& fs);

}  // namespace sfs::fs
