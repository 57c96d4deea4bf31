// The live tunables every policy of one NRS head reads: one immutable value,
// built and validated by the settings layer, handed to a policy when it is
// created and again (Policy::Retune) when a setting changes. A policy copies
// what it needs; it never keeps a reference to the Tunables it was given.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace sfs::nrs {

// Which requests ORR sorts; the others go to the fallback FIFO.
enum class OrrSupported { kReads, kWrites, kReadsAndWrites };
const char* OrrSupportedName(OrrSupported supported);

// Where a TBF rule's rate= and bps= hold: on each OST alone (Lustre's
// behaviour: a file striped over 4 OSTs gets 4x), or for the whole
// filesystem, shared among the OSTs each epoch by demand (tbf_shares.h).
enum class TbfScope { kOst, kFs };
const char* TbfScopeName(TbfScope scope);  // "ost", "fs"

// An ordered, immutable list of TBF rules (first match wins); defined in
// tbf_rules.h. Swapped whole when a rule starts, changes or stops.
class TbfRuleSet;
// CRR-N weight rules, defined in crrn_weights.h; swapped whole likewise.
class CrrnWeights;

struct Tunables {
  // CRR-N: requests per client per round (Lustre nrs_crrn_quantum).
  uint32_t crrn_quantum = 8;
  // CRR-N: per-client weights (batch = quantum x weight); null = all 1.
  std::shared_ptr<const CrrnWeights> crrn_weights;

  // ORR: requests per object per round, bytes per object per round (0 = no
  // byte bound; a batch closes at whichever quantum it reaches first), and
  // which ops it sorts.
  uint32_t orr_quantum = 256;
  uint64_t orr_quantum_bytes = 0;
  OrrSupported orr_supported = OrrSupported::kReads;

  // TBF: the rate of the always-present "default" rule (requests/s), the
  // rules of this head (null = only the default rule), and the number of
  // idle class queues kept before the least recently used are reclaimed.
  uint64_t tbf_default_rate = 10000;
  std::shared_ptr<const TbfRuleSet> tbf_rules;
  size_t tbf_idle_class_limit = 4096;
  TbfScope tbf_scope = TbfScope::kFs;

  // Epoch: how long every OST serves the chosen group first before asking
  // for the next epoch anyway (nrs_epoch_max_ms).
  std::chrono::nanoseconds epoch_max = std::chrono::milliseconds(100);

  // Delay (fault testing): nrs_delay_pct percent of requests wait a uniform
  // random time in [delay_min, delay_max].
  uint32_t delay_pct = 100;
  std::chrono::nanoseconds delay_min = std::chrono::milliseconds(10);
  std::chrono::nanoseconds delay_max = std::chrono::milliseconds(100);

  // Seed of a policy's random choices; 0 = seeded from std::random_device.
  // Tests set it so runs repeat.
  uint64_t random_seed = 0;
};

}  // namespace sfs::nrs
