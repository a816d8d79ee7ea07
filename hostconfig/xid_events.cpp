// Xid parsing, the table of Xid codes and host.config's kernel-log findings (see xid_events.hpp).
#include "hostconfig/xid_events.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <map>
#include <regex>
#include <set>

#include <fmt/format.h>

namespace nodeaudit::host {
namespace {

constexpr std::string_view xid_source = "NVIDIA Xid documentation, docs.nvidia.com/deploy/xid-errors";

// Severity here is what the event says about the node: fail when the GPU must be reset or the node
// drained before it is trusted with work, warn when it needs attention at the next drain, info when
// it most often comes from the application rather than the node.
constexpr std::array<XidMeaning, 19> xid_table{{
    {8, Severity::warn, "GPU stopped processing (a channel timed out)",
     "restart the application; if it recurs without a code change, reset the GPU and report it to NVIDIA support"},
    {13, Severity::info, "graphics engine exception (most often an out-of-range access in the application)",
     "check the application (compute-sanitizer); if it recurs across applications on one GPU, reset the GPU and run "
     "gpu.memory-integrity"},
    {31, Severity::info, "GPU memory page fault (most often an illegal address in the application)",
     "check the application; if it recurs across applications on one GPU, reset the GPU and run gpu.memory-integrity"},
    {32, Severity::warn, "invalid or corrupted push buffer stream (commands damaged over PCIe or in host memory)",
     "check the PCIe link (gpu.config replay count, gpu.pcie) and host memory errors; reset the GPU"},
    {43, Severity::info, "GPU stopped processing (the driver reset a channel after an application fault)",
     "none for the node: the faulting application was stopped and the GPU stays usable"},
    {45, Severity::info, "preemptive cleanup after a previous error or a killed process",
     "read the Xid logged before it on the same GPU; on its own none"},
    {48, Severity::fail, "double-bit ECC error (uncorrectable) in GPU memory",
     "drain the GPU and reset it (nvidia-smi -r) so the page is retired or the row remapped; RMA if it recurs"},
    {61, Severity::warn, "internal micro-controller breakpoint or warning",
     "reset the GPU at the next drain; report it to NVIDIA support if it recurs"},
    {62, Severity::fail, "internal micro-controller halt", "drain and reset the GPU; RMA if it recurs"},
    {63, Severity::warn, "ECC page retirement or row remapping recorded",
     "a row remap (page retirement before Ampere) is pending: drain and reset the GPU to apply it; RMA when one GPU "
     "keeps needing remaps"},
    {64, Severity::warn, "ECC page retirement or row remapping could not be recorded",
     "the row remap (page retirement before Ampere) was not recorded: drain and reset the GPU; RMA if it recurs"},
    {74, Severity::fail, "NVLink error",
     "drain and reset the GPU (on a baseboard, its peers too); check the links (nvidia-smi nvlink -s, -e); "
     "RMA the board if it recurs"},
    {79, Severity::fail, "GPU has fallen off the bus",
     "drain the node: the GPU no longer answers on PCIe; check seating, riser, power and cooling, then "
     "power-cycle the node (a GPU reset cannot reach it); RMA if it recurs"},
    {92, Severity::warn, "high single-bit ECC error rate",
     "corrected, but the memory is degrading: watch the counts (gpu.config) and plan an RMA if they keep rising"},
    {94, Severity::warn, "contained ECC error (uncorrectable; only the application using that memory was stopped)",
     "reset the GPU at the next drain so the row is remapped; other applications continue"},
    {95, Severity::fail, "uncontained ECC error (uncorrectable; every application on the GPU was stopped)",
     "drain and reset the GPU so the row is remapped; RMA if it recurs"},
    {119, Severity::fail, "GSP RPC timeout (the GPU System Processor did not answer the driver)",
     "drain and reset the GPU (or reboot the node); update the driver if it recurs"},
    {120, Severity::fail, "GSP error (the GPU System Processor reported an error)",
     "drain and reset the GPU; report it to NVIDIA support if it recurs"},
    {154, Severity::warn, "GPU recovery action changed (the message names the recovery the driver now requires)",
     "do what the message names (GPU reset, node reboot, drain) before trusting the GPU with work"},
}};

// Xid 154 names the new recovery action: "... changed from 0x0 (None) to 0x1 (GPU Reset Required)".
// Anything but None is a recovery still owed, so it fails the node until done.
Severity severity_of(const XidMeaning& meaning, const std::string& detail) {
  if (meaning.code != 154) return meaning.severity;
  const auto to = detail.rfind(" to ");
  if (to == std::string::npos) return meaning.severity;
  return detail.find("(None)", to) != std::string::npos ? Severity::info : Severity::fail;
}

int severity_rank(Severity s) {
  return s == Severity::fail ? 0 : s == Severity::warn ? 1 : 2;
}

std::string seconds_text(double s) {
  return fmt::format("{:.1f} s after boot", s);
}

struct XidGroup {
  int count = 0;
  std::optional<double> first_s, last_s;
  std::string last_detail;
};

// ", at 12.0 s after boot" / ", first at ..., last at ..."; empty when the lines carry no time.
std::string when_logged(const XidGroup& g) {
  if (!g.last_s) return "";
  if (g.count == 1) return fmt::format(", at {}", seconds_text(*g.last_s));
  if (g.first_s) return fmt::format(", first at {}, last at {}", seconds_text(*g.first_s), seconds_text(*g.last_s));
  return fmt::format(", last at {}", seconds_text(*g.last_s));
}

Finding group_finding(const std::string& gpu, int code, const XidGroup& g) {
  const std::optional<XidMeaning> meaning = xid_meaning(code);
  const std::string seen = fmt::format("GPU {}: Xid {} logged {} time{}{}: \"{}\"", gpu, code, g.count,
                                       g.count == 1 ? "" : "s", when_logged(g), g.last_detail);
  if (!meaning)
    return {Severity::warn, "host_config.xid",
            fmt::format("{}; not in nodeaudit's table of Xid codes: look it up in NVIDIA's Xid catalog ({})", seen,
                        xid_source)};
  const Severity severity = severity_of(*meaning, g.last_detail);
  const std::string_view action = meaning->code == 154 && severity == Severity::info
                                      ? "none: the driver no longer asks for a recovery"
                                      : meaning->action;
  return {severity, "host_config.xid",
          fmt::format("{}; {}; action: {} (per the {})", seen, meaning->meaning, action, xid_source)};
}

}  // namespace

std::optional<double> log_line_seconds(std::string_view line) {
  // /dev/kmsg: "<priority>,<sequence>,<microseconds>,<flags>[,...];<message>"; dmesg: "[ 5678.901234] <message>".
  static const std::regex kmsg_stamp(R"(^[0-9]+,[0-9]+,([0-9]+),[^;]*;)");
  static const std::regex dmesg_stamp(R"(^\[\s*([0-9]+\.[0-9]+)\])");
  std::match_results<std::string_view::const_iterator> m;
  if (std::regex_search(line.begin(), line.end(), m, kmsg_stamp)) return std::stod(m[1].str()) / 1e6;
  if (std::regex_search(line.begin(), line.end(), m, dmesg_stamp)) return std::stod(m[1].str());
  return std::nullopt;
}

std::vector<XidEvent> parse_xid_events(std::string_view log_text) {
  // Older drivers print the address without "PCI:"; the function (".0") is optional.
  static const std::regex xid_line(
      R"(NVRM: Xid \((?:PCI:)?([0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}(?:\.[0-7])?)\): ([0-9]+),?\s*(.*))");
  std::vector<XidEvent> events;
  for (std::size_t start = 0; start < log_text.size();) {
    std::size_t end = log_text.find('\n', start);
    if (end == std::string_view::npos) end = log_text.size();
    const std::string_view line = log_text.substr(start, end - start);
    start = end + 1;
    if (line.find("NVRM: Xid") == std::string_view::npos) continue;
    std::match_results<std::string_view::const_iterator> m;
    if (!std::regex_search(line.begin(), line.end(), m, xid_line)) continue;
    XidEvent event;
    event.gpu = m[1].str();
    std::transform(event.gpu.begin(), event.gpu.end(), event.gpu.begin(),
                   [](unsigned char c) { return std::tolower(c); });
    const std::string code = m[2].str();
    if (std::from_chars(code.data(), code.data() + code.size(), event.code).ec != std::errc()) continue;
    event.detail = m[3].str();
    while (!event.detail.empty() && (event.detail.back() == '\r' || event.detail.back() == ' '))
      event.detail.pop_back();
    event.seconds_since_boot = log_line_seconds(line);
    events.push_back(std::move(event));
  }
  return events;
}

std::optional<XidMeaning> xid_meaning(int code) {
  const auto it =
      std::find_if(xid_table.begin(), xid_table.end(), [code](const XidMeaning& m) { return m.code == code; });
  if (it == xid_table.end()) return std::nullopt;
  return *it;
}

std::vector<Finding> judge_kernel_log(const KernelLog& log) {
  if (!log.text)
    return {{Severity::info, "host_config.kernel_log",
             fmt::format(
                 "kernel log not judged ({}): NVIDIA Xid events (GPU faults the driver logged) could not be checked",
                 log.why_unreadable)}};
  if (log.records == 0)
    return {{Severity::info, "host_config.kernel_log",
             fmt::format("kernel log not judged ({} holds no records): NVIDIA Xid events could not be checked",
                         log.source)}};
  std::optional<double> oldest_s;
  for (std::size_t start = 0; start < log.text->size() && !oldest_s;) {
    const std::size_t end = std::min(log.text->find('\n', start), log.text->size());
    oldest_s = log_line_seconds(std::string_view(*log.text).substr(start, end - start));
    start = end + 1;
  }
  // The ring buffer is bounded: on a long-running node its oldest record is well after boot.
  std::string span;
  if (oldest_s && *oldest_s < 1.0)
    span = " (the ring buffer still holds this boot from its start)";
  else if (oldest_s)
    span = fmt::format(" (the ring buffer reaches back to {}; this boot's earlier events are gone)",
                       seconds_text(*oldest_s));
  const std::vector<XidEvent> events = parse_xid_events(*log.text);
  std::map<std::pair<std::string, int>, XidGroup> groups;
  for (const XidEvent& e : events) {
    XidGroup& g = groups[{e.gpu, e.code}];
    ++g.count;
    if (!g.first_s) g.first_s = e.seconds_since_boot;
    if (e.seconds_since_boot) g.last_s = e.seconds_since_boot;
    g.last_detail = e.detail;
  }
  std::set<std::string> gpus;
  for (const auto& [key, g] : groups) gpus.insert(key.first);
  std::vector<Finding> findings{
      {Severity::info, "host_config.kernel_log",
       events.empty() ? fmt::format("read {} records from {}{}: no NVIDIA Xid events", log.records, log.source, span)
                      : fmt::format("read {} records from {}{}: {} NVIDIA Xid event{} on {} GPU{} (host_config.xid)",
                                    log.records, log.source, span, events.size(), events.size() == 1 ? "" : "s",
                                    gpus.size(), gpus.size() == 1 ? "" : "s")}};
  std::vector<Finding> per_group;
  for (const auto& [key, g] : groups) per_group.push_back(group_finding(key.first, key.second, g));
  std::stable_sort(per_group.begin(), per_group.end(), [](const Finding& a, const Finding& b) {
    return severity_rank(a.severity) < severity_rank(b.severity);
  });
  findings.insert(findings.end(), per_group.begin(), per_group.end());
  return findings;
}

}  // namespace nodeaudit::host
