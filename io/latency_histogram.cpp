#include "io/latency_histogram.hpp"

#include <algorithm>
#include <bit>
#include <cmath>

namespace nodeaudit::io {

int LatencyHistogram::bucket_of(std::uint64_t ns) {
  constexpr std::uint64_t exact_limit = 1ull << sub_bucket_bits;
  if (ns < exact_limit) return static_cast<int>(ns);
  const int exponent = std::min(63 - std::countl_zero(ns), max_exponent);
  if (exponent == max_exponent && ns >= (2ull << max_exponent)) return bucket_count - 1;
  const int shift = exponent - sub_bucket_bits;
  const auto sub = static_cast<int>((ns >> shift) & (exact_limit - 1));
  return ((exponent - sub_bucket_bits + 1) << sub_bucket_bits) + sub;
}

std::uint64_t LatencyHistogram::bucket_low(int bucket) {
  const int group = bucket >> sub_bucket_bits;
  const std::uint64_t sub = static_cast<std::uint64_t>(bucket) & ((1ull << sub_bucket_bits) - 1);
  if (group == 0) return sub;
  const int exponent = group + sub_bucket_bits - 1;
  return (1ull << exponent) + (sub << (exponent - sub_bucket_bits));
}

std::uint64_t LatencyHistogram::bucket_width(int bucket) {
  const int group = bucket >> sub_bucket_bits;
  return group == 0 ? 1 : 1ull << (group - 1);
}

void LatencyHistogram::merge(const LatencyHistogram& other) {
  for (int i = 0; i < bucket_count; ++i) counts_[i] += other.counts_[i];
  total_ += other.total_;
  max_ns_ = std::max(max_ns_, other.max_ns_);
}

double LatencyHistogram::percentile_ns(double q) const {
  if (total_ == 0) return 0;
  q = std::clamp(q, 0.0, 1.0);
  const auto rank = std::max<std::uint64_t>(1, static_cast<std::uint64_t>(std::ceil(q * static_cast<double>(total_))));
  std::uint64_t seen = 0;
  for (int i = 0; i < bucket_count; ++i) {
    seen += counts_[i];
    if (seen >= rank) {
      const double width = static_cast<double>(bucket_width(i));
      const double mid = static_cast<double>(bucket_low(i)) + (width > 1 ? width / 2 : 0);
      return std::min(mid, static_cast<double>(max_ns_));
    }
  }
  return static_cast<double>(max_ns_);
}

}  // namespace nodeaudit::io
