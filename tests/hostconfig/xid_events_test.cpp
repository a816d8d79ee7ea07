// NVIDIA Xid events are found in recorded kernel logs of every format, judged per code, and an
// unreadable or empty log is "not judged", never a pass.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <string>

#include "hostconfig/kernel_log.hpp"
#include "hostconfig/xid_events.hpp"

namespace nodeaudit::host {
namespace {

const std::string logs = std::string(NODEAUDIT_FIXTURES) + "/host/kernel-log/";

bool mentions(const Finding& f, const std::string& text) {
  return f.message.find(text) != std::string::npos;
}

// The host_config.xid finding for one GPU and code (by its "GPU <address>: Xid <code> " prefix).
const Finding* xid_finding(const std::vector<Finding>& findings, const std::string& gpu, int code) {
  const std::string prefix = "GPU " + gpu + ": Xid " + std::to_string(code) + " ";
  for (const Finding& f : findings)
    if (f.code == "host_config.xid" && f.message.rfind(prefix, 0) == 0) return &f;
  return nullptr;
}

TEST(XidParse, KmsgRecordsGiveEveryXidWithItsGpuCodeAndTime) {
  const KernelLog log = read_kernel_log(logs + "kmsg-several-gpus.txt");
  ASSERT_TRUE(log.text.has_value()) << log.why_unreadable;
  EXPECT_EQ(log.records, 14) << "dictionary lines continue a record and are not counted";
  const std::vector<XidEvent> events = parse_xid_events(*log.text);
  ASSERT_EQ(events.size(), 10u);
  EXPECT_EQ(events.front().gpu, "0000:3b:00");
  EXPECT_EQ(events.front().code, 13);
  ASSERT_TRUE(events.front().seconds_since_boot.has_value());
  EXPECT_DOUBLE_EQ(*events.front().seconds_since_boot, 1834.520117);
  EXPECT_EQ(events.back().code, 79);
  EXPECT_EQ(events.back().detail, "pid='<unknown>', name=<unknown>, GPU has fallen off the bus.");
  std::map<std::string, int> per_gpu;
  for (const XidEvent& e : events) ++per_gpu[e.gpu];
  EXPECT_EQ(per_gpu,
            (std::map<std::string, int>{{"0000:3b:00", 3}, {"0000:5e:00", 3}, {"0000:86:00", 2}, {"0000:b7:00", 2}}));
}

TEST(XidParse, DmesgLinesAndTheOlderAddressFormAreRead) {
  const KernelLog log = read_kernel_log(logs + "dmesg-timestamps.txt");
  ASSERT_TRUE(log.text.has_value());
  const std::vector<XidEvent> events = parse_xid_events(*log.text);
  ASSERT_EQ(events.size(), 2u) << "the 'GPU has fallen off the bus' line without 'Xid' is not a second event";
  EXPECT_EQ(events[0].gpu, "0000:3b:00") << "addresses are compared in lower case";
  EXPECT_EQ(events[0].code, 79);
  EXPECT_DOUBLE_EQ(events[0].seconds_since_boot.value_or(-1), 1834.520117);
  EXPECT_EQ(events[1].gpu, "0000:5e:00");
  EXPECT_EQ(events[1].code, 48);
  EXPECT_DOUBLE_EQ(events[1].seconds_since_boot.value_or(-1), 2101.87734);
}

TEST(XidParse, LinesWithoutTimestampsHaveNone) {
  const KernelLog log = read_kernel_log(logs + "syslog-no-timestamps.txt");
  ASSERT_TRUE(log.text.has_value());
  const std::vector<XidEvent> events = parse_xid_events(*log.text);
  ASSERT_EQ(events.size(), 3u);
  for (const XidEvent& e : events) EXPECT_FALSE(e.seconds_since_boot.has_value()) << e.detail;
  EXPECT_EQ(events[0].code, 94);
  EXPECT_EQ(events[1].detail, "GPU recovery action changed from 0x0 (None) to 0x1 (GPU Reset Required)");
}

TEST(XidParse, TimestampsOfBothFormats) {
  EXPECT_DOUBLE_EQ(log_line_seconds("4,2502,3611204455,-;NVRM: Xid").value_or(-1), 3611.204455);
  EXPECT_DOUBLE_EQ(log_line_seconds("[    4.310876] NVRM: loading").value_or(-1), 4.310876);
  EXPECT_FALSE(log_line_seconds("NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus.").has_value());
  EXPECT_FALSE(log_line_seconds("Dec  3 11:02:14 gpu-node-07 kernel: NVRM: Xid").has_value());
}

TEST(XidTable, HardwareFaultsFailMemoryRepairWarnsApplicationFaultsInform) {
  for (int code : {48, 62, 74, 79, 95, 119, 120}) EXPECT_EQ(xid_meaning(code)->severity, Severity::fail) << code;
  for (int code : {8, 32, 61, 63, 64, 92, 94}) EXPECT_EQ(xid_meaning(code)->severity, Severity::warn) << code;
  for (int code : {13, 31, 43, 45}) EXPECT_EQ(xid_meaning(code)->severity, Severity::info) << code;
  EXPECT_NE(xid_meaning(63)->action.find("row remap"), std::string_view::npos);
  EXPECT_NE(xid_meaning(64)->action.find("row remap"), std::string_view::npos);
  EXPECT_NE(xid_meaning(94)->meaning.find("contained"), std::string_view::npos);
  EXPECT_NE(xid_meaning(95)->meaning.find("uncontained"), std::string_view::npos);
  EXPECT_NE(xid_meaning(79)->action.find("drain the node"), std::string_view::npos);
  EXPECT_NE(xid_meaning(48)->action.find("RMA"), std::string_view::npos);
  EXPECT_FALSE(xid_meaning(999).has_value());
}

TEST(XidJudge, SeveralGpusGiveOneFindingPerGpuAndCodeWorstFirst) {
  const std::vector<Finding> findings = judge_kernel_log(read_kernel_log(logs + "kmsg-several-gpus.txt"));
  ASSERT_EQ(findings.size(), 10u) << "the summary and 9 (GPU, code) groups";
  EXPECT_EQ(findings[0].code, "host_config.kernel_log");
  EXPECT_EQ(findings[0].severity, Severity::info);
  EXPECT_TRUE(mentions(findings[0], "10 NVIDIA Xid events on 4 GPUs")) << findings[0].message;
  EXPECT_TRUE(mentions(findings[0], "reaches back to 4.2 s after boot")) << findings[0].message;
  for (std::size_t i = 2; i < findings.size(); ++i) {
    const auto rank = [](Severity s) { return s == Severity::fail ? 0 : s == Severity::warn ? 1 : 2; };
    EXPECT_LE(rank(findings[i - 1].severity), rank(findings[i].severity)) << "fail, then warn, then info";
  }
  const Finding* off_the_bus = xid_finding(findings, "0000:3b:00", 79);
  ASSERT_NE(off_the_bus, nullptr);
  EXPECT_EQ(off_the_bus->severity, Severity::fail);
  EXPECT_TRUE(mentions(*off_the_bus, "logged 1 time, at 3611.2 s after boot")) << off_the_bus->message;
  EXPECT_TRUE(mentions(*off_the_bus, "drain the node")) << off_the_bus->message;
  EXPECT_TRUE(mentions(*off_the_bus, "docs.nvidia.com/deploy/xid-errors")) << "the source is stated";
  const Finding* remap = xid_finding(findings, "0000:5e:00", 63);
  ASSERT_NE(remap, nullptr);
  EXPECT_EQ(remap->severity, Severity::warn);
  EXPECT_TRUE(mentions(*remap, "logged 2 times, first at 2101.9 s after boot, last at 2209.1 s after boot"))
      << remap->message;
  EXPECT_TRUE(mentions(*remap, "row remap")) << remap->message;
  EXPECT_EQ(xid_finding(findings, "0000:5e:00", 48)->severity, Severity::fail);
  EXPECT_EQ(xid_finding(findings, "0000:86:00", 94)->severity, Severity::warn);
  EXPECT_EQ(xid_finding(findings, "0000:86:00", 95)->severity, Severity::fail);
  EXPECT_EQ(xid_finding(findings, "0000:b7:00", 74)->severity, Severity::fail);
  EXPECT_EQ(xid_finding(findings, "0000:3b:00", 13)->severity, Severity::info);
  const Finding* unknown = xid_finding(findings, "0000:b7:00", 999);
  ASSERT_NE(unknown, nullptr);
  EXPECT_EQ(unknown->severity, Severity::warn) << "an unknown code is reported, not dropped";
  EXPECT_TRUE(mentions(*unknown, "not in nodeaudit's table")) << unknown->message;
  EXPECT_TRUE(mentions(*unknown, "Ch 0000000a")) << "the driver's own text is kept";
}

TEST(XidJudge, RecoveryActionChangedFailsUntilItIsBackToNone) {
  const std::vector<Finding> findings = judge_kernel_log(read_kernel_log(logs + "syslog-no-timestamps.txt"));
  EXPECT_EQ(xid_finding(findings, "0000:3b:00", 154)->severity, Severity::fail);
  const Finding* back_to_none = xid_finding(findings, "0000:5e:00", 154);
  ASSERT_NE(back_to_none, nullptr);
  EXPECT_EQ(back_to_none->severity, Severity::info);
  EXPECT_TRUE(mentions(*back_to_none, "action: none")) << back_to_none->message;
  const Finding* contained = xid_finding(findings, "0000:3b:00", 94);
  ASSERT_NE(contained, nullptr);
  EXPECT_TRUE(mentions(*contained, "logged 1 time: "))
      << "no time is claimed for a line without one: " << contained->message;
}

TEST(XidJudge, ACleanLogIsOneInfoFindingSayingWhatWasRead) {
  const std::vector<Finding> findings = judge_kernel_log(read_kernel_log(logs + "kmsg-no-xid.txt"));
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].code, "host_config.kernel_log");
  EXPECT_EQ(findings[0].severity, Severity::info);
  EXPECT_TRUE(mentions(findings[0], "read 4 records from")) << findings[0].message;
  EXPECT_TRUE(mentions(findings[0], "no NVIDIA Xid events")) << findings[0].message;
}

TEST(XidJudge, AnUnreadableLogIsNotJudgedWithTheReason) {
  const KernelLog missing = read_kernel_log(logs + "no-such-log.txt");
  EXPECT_FALSE(missing.text.has_value());
  const std::vector<Finding> findings = judge_kernel_log(missing);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].code, "host_config.kernel_log");
  EXPECT_EQ(findings[0].severity, Severity::info);
  EXPECT_TRUE(mentions(findings[0], "not judged (open ")) << findings[0].message;
  EXPECT_TRUE(mentions(findings[0], "No such file or directory")) << findings[0].message;
  EXPECT_FALSE(mentions(findings[0], "no NVIDIA Xid events")) << "an unread log is never reported clean";
  // A path that opens but cannot be read (a directory) names the read that failed.
  const KernelLog directory = read_kernel_log(logs);
  EXPECT_FALSE(directory.text.has_value());
  EXPECT_NE(directory.why_unreadable.find("read "), std::string::npos) << directory.why_unreadable;
  EXPECT_NE(judge_kernel_log(directory)[0].message.find("not judged"), std::string::npos);
}

TEST(XidJudge, AnEmptyLogIsNotJudged) {
  const std::vector<Finding> findings = judge_kernel_log(read_kernel_log(logs + "empty.txt"));
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_TRUE(mentions(findings[0], "not judged")) << findings[0].message;
  EXPECT_TRUE(mentions(findings[0], "holds no records")) << findings[0].message;
}

// As root on Linux /dev/kmsg is readable: the non-blocking read ends at the buffer's end instead
// of waiting for the next message. Elsewhere the reason is checked instead.
TEST(KernelLogRead, DevKmsgReadsToTheEndWithoutBlocking) {
  const KernelLog log = read_kernel_log("/dev/kmsg");
  if (!log.text) {
    EXPECT_FALSE(log.why_unreadable.empty());
    GTEST_SKIP() << "/dev/kmsg not readable here: " << log.why_unreadable;
  }
  EXPECT_GT(log.records, 0);
}

}  // namespace
}  // namespace nodeaudit::host
