#include "fs/metrics_report.h"

#include "fs/filesystem.h"
#include "control/nrs_heads.h"
#include "metrics/exposition.h"

namespace sfs::fs {
namespace {

using metrics::Exposition;
using metrics::Labels;
constexpr auto kCounter = Exposition::Type::kCounter;
constexpr auto kGauge = Exposition::Type::kGauge;

void Declare(Exposition& e) {
  e.Family("stripefs_ost_up", kGauge, "1 while the OST answers, 0 once a call has been in "
                                      "service longer than ost_timeout.");
  e.Family("stripefs_ost_read_only", kGauge, "1 if the OST's filesystem was last seen read-only.");
  e.Family("stripefs_ost_active", kGauge, "0 once an admin deactivated the OST (no new objects).");
  e.Family("stripefs_ost_weight", kGauge, "The OST's placement weight (admin x automatic).");
  e.Family("stripefs_ost_size_bytes", kGauge, "Size of the OST's filesystem (latest sample).");
  e.Family("stripefs_ost_avail_bytes", kGauge,
           "Bytes available to users on the OST's filesystem (latest sample).");
  e.Family("stripefs_ost_bytes_total", kCounter, "Bytes moved by the OST's reads and writes.");
  e.Family("stripefs_ost_queue_depth", kGauge, "Requests queued at the OST now.");
  e.Family("stripefs_ost_in_service", kGauge, "Requests in service at the OST now.");
  e.Family("stripefs_ost_errors_total", kCounter, "Requests the OST failed.");
  e.Family("stripefs_ost_io_errors_total", kCounter, "Requests the OST failed with EIO.");
  e.Family("stripefs_mdt_queue_depth", kGauge,
           "Metadata requests the metadata service's policies hold now.");
  e.Family("stripefs_mdt_in_service", kGauge, "Metadata requests in service now.");
  e.Family("stripefs_mdt_requests_total", kCounter,
           "Metadata requests the metadata service completed.");
  e.Family("stripefs_nrs_requests_total", kCounter,
           "Requests an NRS policy completed, by OST (or target=\"mdt\"), head, policy and class.");
  e.Family("stripefs_nrs_bytes_total", kCounter,
           "Bytes of the requests an NRS policy completed, by OST (or target=\"mdt\"), head, "
           "policy and class.");
  e.Family("stripefs_nrs_queued", kGauge, "Requests an NRS policy holds now.");
  e.Family("stripefs_nrs_wait_seconds_total", kCounter,
           "Time completed requests waited in an NRS policy (arrival to service).");
  e.Family("stripefs_nrs_service_seconds_total", kCounter,
           "Time completed requests were in service.");
  e.Family("stripefs_job_ops_total", kCounter,
           "Operations of a job, by target (mdt, ost0, ...) and kind (job_stats).");
  e.Family("stripefs_job_latency_microseconds_total", kCounter,
           "Sum of the latencies of a job's operations, by target and kind.");
  e.Family("stripefs_job_bytes_total", kCounter,
           "Bytes a job read or wrote, by target and direction.");
}

void AddJobs(Exposition& e, const std::string& target, const std::vector<jobstats::JobCounters>& jobs) {
  for (const jobstats::JobCounters& job : jobs) {
    e.Add("stripefs_job_bytes_total", {{"target", target}, {"job", job.job_id}, {"direction", "read"}},
          job.read_bytes.sum);
    e.Add("stripefs_job_bytes_total", {{"target", target}, {"job", job.job_id}, {"direction", "write"}},
          job.write_bytes.sum);
    for (size_t i = 0; i < jobstats::kJobOps; i++) {
      if (!job.ops[i]) continue;
      const Labels labels = {{"target", target},
                             {"job", job.job_id},
                             {"op", jobstats::JobOpName(static_cast<jobstats::JobOp>(i))}};
      e.Add("stripefs_job_ops_total", labels, job.ops[i]->latency_us.samples);
      e.Add("stripefs_job_latency_microseconds_total", labels, job.ops[i]->latency_us.sum);
    }
  }
}

// The NRS counters of every policy of both heads of one service; `where`
// names it ({ost="3"} or {target="mdt"}).
void AddPolicies(Exposition& e, const nrs::Target& service, const Labels& where) {
  for (size_t head = 0; head < std::size(control::kHeadOf); head++) {
    for (const nrs::PolicyStatus& policy : service.PolicyStatus(control::kHeadOf[head], {})) {
      Labels policy_labels = where;
      policy_labels.emplace_back("head", control::kHeadTitle[head]);
      policy_labels.emplace_back("policy", policy.name);
      e.Add("stripefs_nrs_queued", policy_labels, policy.stats.queued);
      e.Add("stripefs_nrs_wait_seconds_total", policy_labels, policy.stats.wait_ns / 1e9);
      e.Add("stripefs_nrs_service_seconds_total", policy_labels, policy.stats.service_ns / 1e9);
      for (const nrs::ClassStats& cls : policy.classes) {
        Labels class_labels = policy_labels;
        class_labels.emplace_back("class", cls.name);
        e.Add("stripefs_nrs_requests_total", class_labels, cls.requests);
        e.Add("stripefs_nrs_bytes_total", class_labels, cls.bytes);
      }
    }
  }
}

}  // namespace

std::string RenderMetrics(Filesystem& fs) {
  Exposition e;
  Declare(e);
  const std::vector<double> weights = fs.EffectiveWeights();
  const jobstats::TimePoint now = jobstats::Clock::now();
  for (uint32_t i = 0; i < fs.ost_count(); i++) {
    ost::Service& service = fs.ost(i);
    const std::string ost = std::to_string(service.index());
    const Labels labels = {{"ost", ost}};
    const ost::ServiceCounters c = service.Counters();
    e.Add("stripefs_ost_up", labels, uint64_t{c.responsive});
    e.Add("stripefs_ost_read_only", labels, uint64_t{service.read_only()});
    e.Add("stripefs_ost_active", labels, uint64_t{fs.OstActive(i)});
    e.Add("stripefs_ost_weight", labels, i < weights.size() ? weights[i] : 0.0);
    if (const auto space = service.LastSpace().space) {
      e.Add("stripefs_ost_size_bytes", labels, space->total_blocks * space->block_size);
      e.Add("stripefs_ost_avail_bytes", labels, space->avail_blocks * space->block_size);
    }
    e.Add("stripefs_ost_bytes_total", labels, c.bytes);
    e.Add("stripefs_ost_queue_depth", labels, c.queued);
    e.Add("stripefs_ost_in_service", labels, c.active);
    e.Add("stripefs_ost_errors_total", labels, c.errors);
    e.Add("stripefs_ost_io_errors_total", labels, c.io_errors);
    AddPolicies(e, service, labels);
  }
  if (mdt::Service* mdt = fs.mdt()) {
    const mdt::ServiceCounters c = mdt->Counters();
    e.Add("stripefs_mdt_queue_depth", {}, c.queued);
    e.Add("stripefs_mdt_in_service", {}, c.active);
    e.Add("stripefs_mdt_requests_total", {}, c.completed);
    AddPolicies(e, *mdt, {{"target", "mdt"}});
  }
  AddJobs(e, "mdt", fs.meta_job_stats().Snapshot(now));
  for (uint32_t i = 0; i < fs.ost_count(); i++) {
    AddJobs(e, "ost" + std::to_string(fs.ost(i).index()), fs.ost(i).job_stats().Snapshot(now));
  }
  return e.Text();
}

}  // namespace sfs::fs
