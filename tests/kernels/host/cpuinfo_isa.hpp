// The widest vector set /proc/cpuinfo's flags list (the kernel clears a flag where the OS does not
// save its registers), as host.memory-bandwidth names it in info.isa: read independently of the
// probe's own __builtin_cpu_supports. Empty where there is no flags line (not x86, no procfs).
#pragma once

#include <algorithm>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

namespace nodeaudit::host {

inline std::string widest_isa_in_cpuinfo() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("flags", 0) != 0) continue;
    std::istringstream words(line.substr(line.find(':') + 1));
    const std::vector<std::string> flags{std::istream_iterator<std::string>(words), {}};
    const auto has = [&](const char* flag) { return std::find(flags.begin(), flags.end(), flag) != flags.end(); };
    return has("avx512f") ? "avx512" : has("avx2") ? "avx2" : has("sse2") ? "sse2" : "portable";
  }
  return "";
}

}  // namespace nodeaudit::host
