// Parsing and printing of sizes and durations as users type them.
// Sizes: a plain byte count (4096), IEC (4KiB, 1MiB, 4GiB, 1TiB) or SI (1kB, 1MB, 1GB, 1TB); a
// bare "K", "M", "G" is refused because it is ambiguous. Durations: 500ms, 30s, 5m, 2h, 1.5s.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace nodeaudit {

// Throws UsageError naming the text and the accepted forms.
std::uint64_t parse_size_bytes(std::string_view text);
double parse_duration_s(std::string_view text);
// The whole text as a finite decimal number ("12", "12.5", "1e3"); std::nullopt for anything else
// (empty, "12x", "nan", "inf"). Callers name the option and their own accepted range.
std::optional<double> parse_finite_number(std::string_view text);

// "4 GiB", "110 KiB", "512 B": the largest binary unit that divides evenly, else one decimal.
std::string format_bytes(double bytes);
// "1.5 s", "250 ms", "5 m 0 s"
std::string format_duration(double seconds);

}  // namespace nodeaudit
