// Metrics and findings as probes record them.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace nodeaudit {

enum class Better { higher, lower };

using Labels = std::map<std::string, std::string>;

// Units in one place so every figure says what it is. Rates are decimal.
namespace unit {
inline constexpr const char* gbps = "GB/s";       // 1e9 bytes per second
inline constexpr const char* tflops = "TFLOP/s";  // 1e12 FLOP per second
inline constexpr const char* iops = "IOPS";
inline constexpr const char* us = "us";
inline constexpr const char* s = "s";
inline constexpr const char* bytes = "bytes";
inline constexpr const char* count = "count";
inline constexpr const char* percent = "%";
inline constexpr const char* images_per_s = "images/s";
inline constexpr const char* samples_per_s = "samples/s";
inline constexpr const char* s_per_gb = "s/GB";
}  // namespace unit

struct Metric {
  std::string name;
  std::string unit;
  Better better = Better::higher;
  Labels labels;
  std::vector<double> samples;  // one per repetition; a single figure is one sample
};

enum class Severity { fail, warn, info };
std::string to_string(Severity severity);

struct Finding {
  Severity severity = Severity::info;
  std::string code;  // "gemm.mismatch", "storage.direct_fallback"
  std::string message;
};

}  // namespace nodeaudit
