// The ranges a number in a profile (or another TOML input of the scorer) may take: what the reader
// checks, and what the field table (profile_fields.hpp) declares for each field.
#pragma once

namespace nodeaudit::score::detail {

enum class Bound { positive, non_negative, fraction, any };

// The largest value any profile number may hold unless its field says less: far above every real
// workload (10^18 bytes is an exabyte, 10^18 samples or FLOPs per sample are not trained), and far
// enough below the double's range that the products the scorer forms stay finite.
inline constexpr double default_max_value = 1e18;

}  // namespace nodeaudit::score::detail
