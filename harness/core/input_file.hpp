// Reading a file the user named (a result, a profile): only a regular file, or `-` for standard
// input, and only up to a stated size, so a wrong path such as /dev/zero, /dev/urandom, a FIFO or a
// disk image is refused at once instead of being read until memory runs out.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

namespace nodeaudit {

// A result of a soak run with every sample and telemetry summary is a few MiB; 256 MiB leaves
// room for a large fleet merge and still fits any node's memory.
inline constexpr std::uint64_t max_result_bytes = 256ull << 20;
// The largest shipped profile is a few KiB.
inline constexpr std::uint64_t max_profile_bytes = 1ull << 20;

// The bytes of `path` (`-`: standard input). Throws UsageError naming `what` (e.g. the path, or
// "profile 'x'") when it is not a regular file, larger than `max_bytes`, or cannot be read.
std::string read_input_file(const std::string& path, const std::string& what, std::uint64_t max_bytes);

// JSON text parsed; a syntax error, a number out of range (1e999) or nesting too deep is a
// UsageError naming `what` and, for a bad number, the field it was in ("probes[].metrics[].median").
nlohmann::json parse_json_input(const std::string& text, const std::string& what);

}  // namespace nodeaudit
