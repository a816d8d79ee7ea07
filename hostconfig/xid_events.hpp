// NVIDIA Xid events in the kernel log: the parser, the table of codes (meaning, severity, action)
// and host.config's findings on them. Pure functions on text, tested on recorded kernel logs.
//
// The driver logs a GPU fault as one line, with or without the log's timestamp:
//   NVRM: Xid (PCI:0000:3b:00): 79, pid=2231, name=python3, GPU has fallen off the bus.
// Meanings and actions: NVIDIA, "XID Errors", GPU Deployment and Management Documentation
// (docs.nvidia.com/deploy/xid-errors), and its Xid catalog for Ampere and later GPUs. A code that
// is not in the table is still reported (warn), with a pointer to that catalog.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "harness/core/metric.hpp"
#include "hostconfig/kernel_log.hpp"

namespace nodeaudit::host {

struct XidEvent {
  std::string gpu;  // the PCI address as the driver prints it: "0000:3b:00"
  int code = 0;
  std::optional<double> seconds_since_boot;  // from /dev/kmsg's microseconds or dmesg's "[ 12.345]"
  std::string detail;                        // the rest of the line after "<code>, "
};

// Every Xid line in `log_text`, in log order. Accepts /dev/kmsg records ("6,1234,5678901,-;NVRM:
// ..."), dmesg lines ("[ 5678.901234] NVRM: ..."), syslog lines and bare messages.
std::vector<XidEvent> parse_xid_events(std::string_view log_text);

// Seconds since boot of a /dev/kmsg record or a dmesg line; std::nullopt when the line has none.
std::optional<double> log_line_seconds(std::string_view line);

struct XidMeaning {
  int code = 0;
  Severity severity = Severity::warn;
  std::string_view meaning;  // NVIDIA's description
  std::string_view action;   // what an operator does: reset the GPU, drain the node, RMA, check the application
};
// The table entry for `code`; std::nullopt for a code the table does not hold.
std::optional<XidMeaning> xid_meaning(int code);

// host_config.kernel_log (what was read, or "not judged" with the reason: never a pass when the log
// could not be read or is empty) and one host_config.xid finding per GPU and code, worst first,
// with the count, the last time, the meaning and the action.
std::vector<Finding> judge_kernel_log(const KernelLog& log);

}  // namespace nodeaudit::host
