// Helpers for the io tests: a temporary directory removed at the end, a ring or a skip, the CLI's
// output as one stream, and a scratch file system mounted for one test (root only).
#pragma once

#include <gtest/gtest.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "io/generated_data.hpp"
#include "io/uring_engine.hpp"
#include "tests/support/cli_expect.hpp"
#include "tests/support/temp_dir.hpp"
#include "tests/support/uring_gate.hpp"

namespace nodeaudit::io::test {

// The io tests' directories are in the build tree's scratch folder (tests/support/temp_dir.hpp).
struct TempDir : test_files::TempDir {
  TempDir() : test_files::TempDir(NODEAUDIT_IO_SCRATCH, "io") {}
};

// A file system of `type` mounted with `options` on a fresh directory for one test; `why` says why
// not (not root, no such file system) and the test skips. Unmounted and removed at the end.
struct ScratchMount {
  std::string path, why;
  ScratchMount(const char* type, const char* options, unsigned long flags = 0) {
    std::string tmpl = std::string(NODEAUDIT_IO_SCRATCH) + "/mnt-XXXXXX";
    std::filesystem::create_directories(NODEAUDIT_IO_SCRATCH);
    if (!mkdtemp(tmpl.data())) {
      why = std::string("mkdtemp: ") + std::strerror(errno);
      return;
    }
    if (mount(type, tmpl.c_str(), type, flags, options) != 0) {
      why = std::string("mount -t ") + type + ": " + std::strerror(errno);
      rmdir(tmpl.c_str());
      return;
    }
    path = tmpl;
  }
  ~ScratchMount() {
    if (path.empty()) return;
    umount2(path.c_str(), MNT_DETACH);
    rmdir(path.c_str());
  }
  bool ok() const { return !path.empty(); }
  std::size_t entries() const {
    std::size_t n = 0;
    for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(path)) ++n;
    return n;
  }
};

#define MOUNT_OR_SKIP(var, ...)                   \
  ::nodeaudit::io::test::ScratchMount var(__VA_ARGS__); \
  if (!var.ok()) GTEST_SKIP() << var.why

// The CLI with stdout and stderr as one stream in `out` (tests/support/cli_expect.hpp runs it).
using CliResult = proc::ProcessResult;
inline CliResult run_cli(const std::string& args, const proc::ChildSetup& setup = {}) {
  return proc::run_nodeaudit_merged(args, setup);
}

// Bad input: exit 2 and one line, "nodeaudit: ..." containing `needle`.
inline void expect_one_line_exit_two(const CliResult& r, const std::string& needle) {
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_EQ(r.out.rfind("nodeaudit: ", 0), 0u) << r.out;
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << r.out;
  EXPECT_NE(r.out.find(needle), std::string::npos) << r.out;
}

inline nlohmann::json probe_entry(const CliResult& r) {
  const auto brace = r.out.find('{');
  return nlohmann::json::parse(r.out.substr(brace))["probes"][0];
}

// A worker ring, or nullptr with the reason (io_uring may be refused in a sandbox).
inline std::unique_ptr<UringWorker> make_ring(const EngineOptions& options, std::string& why) {
  return UringWorker::create(options, why);
}

#define IO_RING_OR_SKIP(var, options)                                              \
  std::string var##_why;                                                           \
  auto var = ::nodeaudit::io::test::make_ring(options, var##_why);                 \
  if (!var) SKIP_ONLY_IF_IO_URING_REFUSED("UringWorker::create: " + var##_why)

}  // namespace nodeaudit::io::test
