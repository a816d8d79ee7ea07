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

// The one way a figure is written for a person (terminal, Markdown, HTML; JSON keeps full precision):
// three significant figures, thousands separators, never exponent notation, and the unit scaled to
// the value where it has a scale: seconds (ns, us, ms, s), bytes (B, kB, MB, GB, TB, PB; SI, as the
// figures are measured), a plain count (whole below a million, then M, G, T). Any other unit is written after the number as
// given. "1.19 ms", "5.14 us", "262 kB", "47.7 M", "12,300 samples/s", "0.000123".
std::string format_quantity(double value, std::string_view unit);
// The number alone: three significant figures, thousands separators, no exponent ("1,230", "0.0512";
// "~0" below a billionth, where only arithmetic rounding is left).
std::string format_number(double value);

}  // namespace nodeaudit
