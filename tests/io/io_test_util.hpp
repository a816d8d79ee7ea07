// Helpers for the io tests: a temporary directory removed at the end, and a ring or a skip.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>

#include "generated_data.hpp"
#include "uring_engine.hpp"

namespace nodeaudit::io::test {

struct TempDir {
  std::string path;
  TempDir() {
    // Under the build tree: on the disk, not a tmpfs that may refuse O_DIRECT.
    std::string tmpl = std::string(NODEAUDIT_IO_SCRATCH) + "/io-test-XXXXXX";
    std::filesystem::create_directories(NODEAUDIT_IO_SCRATCH);
    path = mkdtemp(tmpl.data()) ? tmpl : std::string();
  }
  ~TempDir() { remove_tree_quietly(path); }
  std::size_t entries() const {
    std::size_t n = 0;
    for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(path)) ++n;
    return n;
  }
};

// A worker ring, or nullptr with the reason (io_uring may be refused in a sandbox).
inline std::unique_ptr<UringWorker> make_ring(const EngineOptions& options, std::string& why) {
  return UringWorker::create(options, why);
}

#define IO_RING_OR_SKIP(var, options)                                              \
  std::string var##_why;                                                           \
  auto var = ::nodeaudit::io::test::make_ring(options, var##_why);                 \
  if (!var) GTEST_SKIP() << "io_uring unavailable: " << var##_why

}  // namespace nodeaudit::io::test
