#include "rpc/nrs_wire.h"

#include <cerrno>

#include "nrs/crrn_weights.h"
#include "nrs/tbf_rules.h"

namespace sfs::rpc {
namespace {

uint64_t Nanos(std::chrono::nanoseconds d) { return static_cast<uint64_t>(d.count()); }
std::chrono::nanoseconds FromNanos(uint64_t ns) {
  return std::chrono::nanoseconds(static_cast<int64_t>(ns));
}

NrsTunables TunablesToWire(const nrs::Tunables& t) {
  NrsTunables out;
  out.set_crrn_quantum(t.crrn_quantum);
  if (t.crrn_weights) out.set_crrn_weights(t.crrn_weights->Serialize());
  out.set_orr_quantum(t.orr_quantum);
  out.set_orr_quantum_bytes(t.orr_quantum_bytes);
  out.set_orr_supported(static_cast<uint32_t>(t.orr_supported));
  out.set_tbf_default_rate(t.tbf_default_rate);
  if (t.tbf_rules) out.set_tbf_rules(t.tbf_rules->Serialize());
  out.set_tbf_idle_class_limit(t.tbf_idle_class_limit);
  out.set_tbf_scope(static_cast<uint32_t>(t.tbf_scope));
  out.set_epoch_max_ns(Nanos(t.epoch_max));
  out.set_delay_pct(t.delay_pct);
  out.set_delay_min_ns(Nanos(t.delay_min));
  out.set_delay_max_ns(Nanos(t.delay_max));
  out.set_random_seed(t.random_seed);
  return out;
}

Result<nrs::Tunables> TunablesFromWire(const NrsTunables& w) {
  nrs::Tunables t;
  t.crrn_quantum = w.crrn_quantum();
  auto weights = nrs::CrrnWeights::Deserialize(w.crrn_weights());
  if (!weights.ok()) return Status::Error(EINVAL, "CRR-N weights: " + weights.status().message());
  t.crrn_weights = *weights;
  t.orr_quantum = w.orr_quantum();
  t.orr_quantum_bytes = w.orr_quantum_bytes();
  if (w.orr_supported() > static_cast<uint32_t>(nrs::OrrSupported::kReadsAndWrites)) {
    return Status::Error(EINVAL, "orr_supported " + std::to_string(w.orr_supported()));
  }
  t.orr_supported = static_cast<nrs::OrrSupported>(w.orr_supported());
  t.tbf_default_rate = w.tbf_default_rate();
  auto rules = nrs::TbfRuleSet::Deserialize(w.tbf_rules());
  if (!rules.ok()) return Status::Error(EINVAL, "TBF rules: " + rules.status().message());
  t.tbf_rules = *rules;
  t.tbf_idle_class_limit = w.tbf_idle_class_limit();
  if (w.tbf_scope() > static_cast<uint32_t>(nrs::TbfScope::kFs)) {
    return Status::Error(EINVAL, "tbf scope " + std::to_string(w.tbf_scope()));
  }
  t.tbf_scope = static_cast<nrs::TbfScope>(w.tbf_scope());
  t.epoch_max = FromNanos(w.epoch_max_ns());
  t.delay_pct = w.delay_pct();
  t.delay_min = FromNanos(w.delay_min_ns());
  t.delay_max = FromNanos(w.delay_max_ns());
  t.random_seed = w.random_seed();
  return t;
}

void HistogramToWire(const nrs::LatencyHistogram& h, Histogram* out) {
  for (int i = 0; i < nrs::LatencyHistogram::kBuckets; i++) {
    if (h.bucket(i) == 0) continue;
    out->add_bucket(static_cast<uint32_t>(i));
    out->add_count(h.bucket(i));
  }
}

nrs::LatencyHistogram HistogramFromWire(const Histogram& w) {
  nrs::LatencyHistogram h;
  const int n = std::min(w.bucket_size(), w.count_size());
  for (int i = 0; i < n; i++) h.AddToBucket(static_cast<int>(w.bucket(i)), w.count(i));
  return h;
}

}  // namespace

NrsSettings ToWire(const nrs::TargetSettings& settings) {
  NrsSettings out;
  for (size_t head = 0; head < 2; head++) {
    out.add_specs(settings.specs[head]);
    *out.add_tunables() = TunablesToWire(settings.tunables[head]);
  }
  out.set_hp_ops(settings.hp_ops);
  out.set_hp_ratio(settings.hp_ratio);
  out.set_epoch_length_ns(Nanos(settings.epoch_length));
  out.set_eh_timeout_ns(Nanos(settings.eh_timeout));
  return out;
}

Result<nrs::TargetSettings> FromWire(const NrsSettings& wire) {
  if (wire.specs_size() != 2 || wire.tunables_size() != 2) {
    return Status::Error(EINVAL, "NRS settings need both heads' policies and tunables");
  }
  nrs::TargetSettings out;
  for (int head = 0; head < 2; head++) {
    out.specs[head] = nrs::PolicyRegistry::Canonical(wire.specs(head));
    auto tunables = TunablesFromWire(wire.tunables(head));
    if (!tunables.ok()) return tunables.status();
    out.tunables[head] = std::move(tunables).value();
  }
  out.hp_ops = wire.hp_ops();
  out.hp_ratio = wire.hp_ratio();
  out.epoch_length = FromNanos(wire.epoch_length_ns());
  out.eh_timeout = FromNanos(wire.eh_timeout_ns());
  // The settings layer keeps both within an hour (control/nrs_settings.h).
  constexpr uint64_t kHourNs = 3600ull * 1000 * 1000 * 1000;
  if (wire.epoch_length_ns() == 0 || wire.epoch_length_ns() > kHourNs ||
      wire.eh_timeout_ns() == 0 || wire.eh_timeout_ns() > kHourNs) {
    return Status::Error(EINVAL, "epoch length and eh timeout must be within (0, 1h]");
  }
  return out;
}

void ToWire(const std::vector<nrs::PolicyStatus>& policies, const nrs::HeadStats& head,
            NrsStatusReply* reply) {
  for (const nrs::PolicyStatus& p : policies) {
    PolicyStatus* w = reply->add_policies();
    w->set_name(p.name);
    w->set_state(static_cast<uint32_t>(p.state));
    w->set_fallback(p.fallback);
    w->set_primary(p.primary);
    w->set_description(p.description);
    w->set_queued(p.stats.queued);
    w->set_active(p.stats.active);
    w->set_completed(p.stats.completed);
    w->set_bytes(p.stats.bytes);
    w->set_wait_ns(p.stats.wait_ns);
    w->set_service_ns(p.stats.service_ns);
    for (const nrs::ClassStats& c : p.classes) {
      ClassStats* wc = w->add_classes();
      wc->set_name(c.name);
      wc->set_requests(c.requests);
      wc->set_bytes(c.bytes);
      HistogramToWire(c.wait, wc->mutable_wait());
      HistogramToWire(c.service, wc->mutable_service());
    }
  }
  reply->set_dequeued(head.dequeued);
  reply->set_seek_bytes(head.seek_bytes);
  reply->set_object_switches(head.object_switches);
}

std::vector<nrs::PolicyStatus> PoliciesFromWire(const NrsStatusReply& reply) {
  std::vector<nrs::PolicyStatus> out;
  for (const PolicyStatus& w : reply.policies()) {
    nrs::PolicyStatus& p = out.emplace_back();
    p.name = w.name();
    p.state = w.state() <= static_cast<uint32_t>(nrs::PolicyState::kStopping)
                  ? static_cast<nrs::PolicyState>(w.state())
                  : nrs::PolicyState::kStopped;
    p.fallback = w.fallback();
    p.primary = w.primary();
    p.description = w.description();
    p.stats.queued = w.queued();
    p.stats.active = w.active();
    p.stats.completed = w.completed();
    p.stats.bytes = w.bytes();
    p.stats.wait_ns = w.wait_ns();
    p.stats.service_ns = w.service_ns();
    for (const ClassStats& wc : w.classes()) {
      nrs::ClassStats& c = p.classes.emplace_back();
      c.name = wc.name();
      c.requests = wc.requests();
      c.bytes = wc.bytes();
      c.wait = HistogramFromWire(wc.wait());
      c.service = HistogramFromWire(wc.service());
    }
  }
  return out;
}

nrs::HeadStats HeadStatsFromWire(const NrsStatusReply& reply) {
  nrs::HeadStats out;
  out.dequeued = reply.dequeued();
  out.seek_bytes = reply.seek_bytes();
  out.object_switches = reply.object_switches();
  return out;
}

}  // namespace sfs::rpc
