// Pearson's chi-square goodness of fit for the placement tests. Every test
// uses a fixed seed, so a pass is deterministic; the bound is the 0.1% tail,
// which a correct sampler exceeds for one seed in a thousand.
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

namespace sfs::layout::testing {

// sum (observed - expected)^2 / expected over cells with expected > 0;
// `probabilities` need not be normalised.
inline double ChiSquare(const std::vector<uint64_t>& observed,
                        const std::vector<double>& probabilities) {
  double total = 0, mass = 0;
  for (uint64_t o : observed) total += static_cast<double>(o);
  for (double p : probabilities) mass += p;
  double chi = 0;
  for (size_t i = 0; i < observed.size(); ++i) {
    const double expected = total * probabilities[i] / mass;
    if (expected > 0) chi += std::pow(static_cast<double>(observed[i]) - expected, 2) / expected;
  }
  return chi;
}

// The 99.9% quantile of chi-square with `df` degrees of freedom
// (Wilson-Hilferty; within 1% for df >= 2).
inline double ChiSquareBound(int df) {
  const double z = 3.090;  // standard normal 99.9% quantile
  const double k = 2.0 / (9.0 * df);
  return df * std::pow(1 - k + z * std::sqrt(k), 3);
}

// Degrees of freedom of a fit: cells with positive probability, minus one.
inline int DegreesOfFreedom(const std::vector<double>& probabilities) {
  int cells = 0;
  for (double p : probabilities) cells += p > 0;
  return cells - 1;
}

}  // namespace sfs::layout::testing
