#include "layout/rtds_placement.h"

#include <algorithm>
#include <atomic>
#include <map>
#include <mutex>

#include "layout/layout.h"
#include "layout/rtds_tree.h"

namespace sfs::layout {
namespace {

// One RTDS tree over a pool's OSTs (all OSTs for the unnamed pool).
struct PoolTree {
  std::vector<uint32_t> osts;  // sorted; tree item k is OST osts[k]
  RtdsTree tree;

  // The item of `ost`, or -1 when it is not in this pool.
  ptrdiff_t Position(uint32_t ost) const {
    auto it = std::lower_bound(osts.begin(), osts.end(), ost);
    return it != osts.end() && *it == ost ? it - osts.begin() : -1;
  }
};

// Everything derived from one configuration that never changes after it is
// built. Choose reads it under the tree lock.
struct Snapshot {
  std::shared_ptr<const PlacementConfig> config;
  // Rules in match order (rank, then name); pointers into *config.
  std::vector<std::pair<const std::string*, const PoolRule*>> rules;
  // Explicit RW(i, j) entries, by i.
  std::map<uint32_t, std::vector<std::pair<uint32_t, double>>> relative_rows;
  // Pool name -> index in the tree vector; the unnamed pool is index 0.
  std::map<std::string, size_t, std::less<>> pool_index;
};

uint64_t EffectiveUnits(const PlacementConfig& config, const std::vector<double>& factors,
                        uint32_t ost) {
  return WeightToUnits(config.weights[ost] * factors[ost]);  // clamps at kMaxWeight
}

std::shared_ptr<const Snapshot> MakeSnapshot(PlacementConfig config) {
  auto snapshot = std::make_shared<Snapshot>();
  snapshot->config = std::make_shared<const PlacementConfig>(std::move(config));
  const PlacementConfig& c = *snapshot->config;
  for (const auto& [name, rule] : c.rules) snapshot->rules.emplace_back(&name, &rule);
  std::stable_sort(snapshot->rules.begin(), snapshot->rules.end(),
                   [](const auto& a, const auto& b) { return a.second->rank < b.second->rank; });
  for (const auto& [pair, factor] : c.relative) {
    snapshot->relative_rows[pair.first].emplace_back(pair.second, factor);
  }
  size_t index = 1;
  for (const auto& [name, osts] : c.pools) snapshot->pool_index.emplace(name, index++);
  return snapshot;
}

std::vector<PoolTree> BuildTrees(const PlacementConfig& config,
                                 const std::vector<double>& factors) {
  std::vector<PoolTree> trees;
  auto build = [&](std::vector<uint32_t> osts) {
    std::vector<uint64_t> units;
    units.reserve(osts.size());
    for (uint32_t ost : osts) units.push_back(EffectiveUnits(config, factors, ost));
    trees.push_back({std::move(osts), RtdsTree(std::move(units))});
  };
  std::vector<uint32_t> all(config.ost_count());
  for (uint32_t i = 0; i < all.size(); ++i) all[i] = i;
  build(std::move(all));
  for (const auto& [name, osts] : config.pools) build(osts);  // map order = pool_index order
  return trees;
}

class RtdsPlacementImpl final : public RtdsPlacement {
 public:
  RtdsPlacementImpl(PlacementConfig config, uint64_t seed)
      : random_(seed), auto_(config.ost_count(), 1.0) {
    trees_ = BuildTrees(config, auto_);
    snapshot_ = MakeSnapshot(std::move(config));
  }

  const char* Name() const override { return "rtds"; }

  Result<PlacementChoice> Choose(uint32_t count, const PlacementContext& context) override {
    if (count == 0) return Status::Error(EINVAL, "a file needs at least one stripe");
    PlacementChoice choice;
    choice.wanted = std::min(count, kMaxStripeCount);
    std::lock_guard lock(mu_);
    const Snapshot& snapshot = *snapshot_;
    if (!context.osts.empty()) {
      SFS_RETURN_IF_ERROR(ChooseExplicit(snapshot, context, &choice));
      return choice;
    }
    auto pool = ResolvePool(snapshot, context, &choice);
    if (!pool.ok()) return pool.status();
    const PoolTree& pool_tree = trees_[*pool];
    if (pool_tree.tree.total() == 0) {
      return Status::Error(ENOSPC, choice.pool.empty()
                                       ? std::string("no OST has a positive weight")
                                       : "pool " + choice.pool + " has no OST of positive weight");
    }
    if (count == kAllStripes) {
      // "Every usable OST of the pool": with RW(i,i) > 0 the overlay never
      // empties, so the count must be bounded here, not by running out.
      uint32_t usable = 0;
      for (size_t i = 0; i < pool_tree.tree.size(); i++) usable += pool_tree.tree.weight(i) > 0;
      choice.wanted = std::min(choice.wanted, usable);
    }
    // Seed 004: a one-stripe file uses the shared weights; a wider one a
    // private copy that each pick changes through the relative weights.
    size_t item = pool_tree.tree.Find(random_.Below(pool_tree.tree.total()));
    choice.osts.reserve(std::min<size_t>(choice.wanted, pool_tree.osts.size()));
    choice.osts.push_back(pool_tree.osts[item]);
    if (choice.wanted == 1) return choice;
    WeightOverlay weights(&pool_tree.tree);
    while (choice.osts.size() < choice.wanted) {
      ApplyRelativeWeights(snapshot, pool_tree, choice.osts.back(), &weights);
      if (weights.total() == 0) break;  // as many as possible
      item = weights.Find(random_.Below(weights.total()));
      choice.osts.push_back(pool_tree.osts[item]);
    }
    return choice;
  }

  std::shared_ptr<const PlacementConfig> config() const override {
    std::lock_guard lock(mu_);
    return snapshot_->config;
  }

  Status Reconfigure(const Edit& edit, const Commit& commit) override {
    std::lock_guard writer(writer_mu_);
    // snapshot_ and auto_ change only under writer_mu_, which we hold.
    const PlacementConfig& old = *snapshot_->config;
    PlacementConfig next = old;
    SFS_RETURN_IF_ERROR(edit(&next));
    SFS_RETURN_IF_ERROR(ValidatePlacementConfig(next));
    if (commit) SFS_RETURN_IF_ERROR(commit(next));

    std::vector<double> factors = auto_;
    factors.resize(next.ost_count(), 1.0);
    std::shared_ptr<const Snapshot> snapshot = MakeSnapshot(std::move(next));
    const PlacementConfig& now = *snapshot->config;
    if (now.pools != old.pools || now.ost_count() != old.ost_count()) {
      std::vector<PoolTree> trees = BuildTrees(now, factors);
      std::unique_lock lock(mu_);
      snapshot_.swap(snapshot);
      trees_.swap(trees);
      auto_.swap(factors);
      return Status::Ok();  // the old trees and snapshot die after unlock
    }
    // Same pools: patch only the OSTs whose weight changed, O(log n) each.
    std::vector<std::pair<uint32_t, uint64_t>> changed;
    for (uint32_t ost = 0; ost < now.ost_count(); ++ost) {
      if (now.weights[ost] != old.weights[ost]) {
        changed.emplace_back(ost, EffectiveUnits(now, factors, ost));
      }
    }
    std::unique_lock lock(mu_);
    snapshot_.swap(snapshot);
    for (const auto& [ost, units] : changed) SetUnitsLocked(ost, units);
    return Status::Ok();
  }

  Status SetAutoFactor(uint32_t ost, double factor) override {
    SFS_RETURN_IF_ERROR(CheckFactor(factor, ost));
    std::lock_guard writer(writer_mu_);
    if (ost >= auto_.size()) {
      return Status::Error(
          EINVAL, "automatic factor for OST " + std::to_string(ost) + ", which does not exist");
    }
    const uint64_t units = WeightToUnits(snapshot_->config->weights[ost] * factor);
    std::unique_lock lock(mu_);
    auto_[ost] = factor;
    SetUnitsLocked(ost, units);
    return Status::Ok();
  }

  Status SetAutoFactors(const std::vector<double>& factors) override {
    for (uint32_t ost = 0; ost < factors.size(); ++ost)
      SFS_RETURN_IF_ERROR(CheckFactor(factors[ost], ost));
    std::lock_guard writer(writer_mu_);
    if (factors.size() != auto_.size()) {
      return Status::Error(EINVAL, std::to_string(factors.size()) + " automatic factors for " +
                                       std::to_string(auto_.size()) + " OSTs");
    }
    std::vector<std::pair<uint32_t, uint64_t>> changed;
    for (uint32_t ost = 0; ost < factors.size(); ++ost) {
      if (factors[ost] != auto_[ost]) {
        changed.emplace_back(ost, EffectiveUnits(*snapshot_->config, factors, ost));
      }
    }
    std::unique_lock lock(mu_);
    auto_ = factors;
    for (const auto& [ost, units] : changed) SetUnitsLocked(ost, units);
    return Status::Ok();
  }

  std::vector<double> AutoFactors() const override {
    std::lock_guard lock(mu_);
    return auto_;
  }

  std::vector<double> EffectiveWeights() const override {
    std::lock_guard lock(mu_);
    const PlacementConfig& config = *snapshot_->config;
    std::vector<double> out(config.ost_count());
    for (uint32_t ost = 0; ost < out.size(); ++ost) {
      out[ost] = std::min(kMaxWeight, config.weights[ost] * auto_[ost]);
    }
    return out;
  }

 private:
  static Status CheckFactor(double factor, uint32_t ost) {
    if (factor >= 0 && factor <= kMaxAutoFactor) return Status::Ok();
    return Status::Error(EINVAL, "automatic factor " + std::to_string(factor) + " of OST " +
                                     std::to_string(ost) + " is outside [0, 1e6]");
  }

  // REQUIRES: mu_ held exclusively.
  void SetUnitsLocked(uint32_t ost, uint64_t units) {
    for (PoolTree& pool_tree : trees_) {
      const ptrdiff_t item = pool_tree.Position(ost);
      if (item >= 0) pool_tree.tree.Set(static_cast<size_t>(item), units);
    }
  }

  // The tree index of the pool `context` selects (precedence in placement.h).
  // REQUIRES: mu_ held.
  static Result<size_t> ResolvePool(const Snapshot& snapshot, const PlacementContext& context,
                                    PlacementChoice* choice) {
    if (!context.pool.empty()) {
      auto it = snapshot.pool_index.find(context.pool);
      if (it == snapshot.pool_index.end()) {
        return Status::Error(EINVAL, "pool " + context.pool + " does not exist");
      }
      choice->pool = context.pool;
      return it->second;
    }
    for (const auto& [name, rule] : snapshot.rules) {
      if (rule->Matches(context)) {
        choice->rule = *name;
        choice->pool = rule->pool;
        return snapshot.pool_index.at(rule->pool);  // validation: rules name existing pools
      }
    }
    if (!context.fallback_pool.empty()) {
      auto it = snapshot.pool_index.find(context.fallback_pool);
      if (it != snapshot.pool_index.end()) {
        choice->pool = context.fallback_pool;
        return it->second;
      }
      choice->fallback_pool_missing = true;
    }
    return size_t{0};
  }

  // After OST `picked` got a stripe: W[j] *= RW(picked, j) for the OSTs of
  // this pool, in the file's private weights.
  static void ApplyRelativeWeights(const Snapshot& snapshot, const PoolTree& pool_tree,
                                   uint32_t picked, WeightOverlay* weights) {
    bool diagonal_given = false;
    auto scale = [&](uint32_t ost, double factor) {
      const ptrdiff_t item = pool_tree.Position(ost);
      if (item >= 0) weights->Set(item, ScaleUnits(weights->weight(item), factor));
    };
    if (auto row = snapshot.relative_rows.find(picked); row != snapshot.relative_rows.end()) {
      for (const auto& [ost, factor] : row->second) {
        diagonal_given |= ost == picked;
        scale(ost, factor);
      }
    }
    if (!diagonal_given) scale(picked, 0.0);  // default RW(i,i) = 0
  }

  // Explicit OSTs, in the given order, skipping those of weight 0.
  // REQUIRES: mu_ held.
  Status ChooseExplicit(const Snapshot& snapshot, const PlacementContext& context,
                        PlacementChoice* choice) const {
    const PlacementConfig& config = *snapshot.config;
    const std::vector<uint32_t>* pool = nullptr;
    if (!context.pool.empty()) {
      auto it = config.pools.find(context.pool);
      if (it == config.pools.end())
        return Status::Error(EINVAL, "pool " + context.pool + " does not exist");
      pool = &it->second;
      choice->pool = context.pool;
    }
    for (size_t k = 0; k < context.osts.size(); ++k) {
      const uint32_t ost = context.osts[k];
      if (ost >= config.ost_count()) {
        return Status::Error(EINVAL, "OST " + std::to_string(ost) + " does not exist");
      }
      if (std::find(context.osts.begin(), context.osts.begin() + k, ost) !=
          context.osts.begin() + k) {
        return Status::Error(EINVAL, "OST " + std::to_string(ost) + " is listed twice");
      }
      if (pool != nullptr && !std::binary_search(pool->begin(), pool->end(), ost)) {
        return Status::Error(EINVAL,
                             "OST " + std::to_string(ost) + " is not in pool " + context.pool);
      }
    }
    for (uint32_t ost : context.osts) {
      if (choice->osts.size() == choice->wanted) break;
      if (trees_[0].tree.weight(ost) > 0) choice->osts.push_back(ost);
    }
    if (choice->osts.empty()) return Status::Error(ENOSPC, "every OST asked for has weight 0");
    return Status::Ok();
  }

  SharedRandom random_;

  std::mutex writer_mu_;  // serialises Reconfigure and SetAutoFactor*; taken before mu_
  // Guards the three members below. A plain mutex, not a reader/writer lock:
  // with a thread changing weights nonstop, std::shared_mutex let picks wait
  // ~50 us each (writers first, readers convoy) against ~200 ns with this,
  // and creates are serialised by the metadata store anyway (rtds_bench).
  mutable std::mutex mu_;
  std::shared_ptr<const Snapshot> snapshot_;  // replaced whole; also read under writer_mu_
  std::vector<PoolTree> trees_;               // [0] all OSTs, then one per pool in name order
  std::vector<double> auto_;  // automatic factor per OST; also read under writer_mu_
};

}  // namespace

Result<std::unique_ptr<RtdsPlacement>> NewRtdsPlacement(PlacementConfig config, uint64_t seed) {
  SFS_RETURN_IF_ERROR(ValidatePlacementConfig(config));
  return std::unique_ptr<RtdsPlacement>(
      std::make_unique<RtdsPlacementImpl>(std::move(config), seed));
}

}  // namespace sfs::layout
