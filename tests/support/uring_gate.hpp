// When a test that needs io_uring may skip: only where the kernel refuses io_uring itself (ENOSYS:
// not built in; EPERM: a seccomp filter such as Docker 25+'s default profile, or
// kernel.io_uring_disabled), asked with the raw system call rather than through the code under
// test. Any other set-up error is a failure. With NODEAUDIT_EXPECT_IO_URING=1 (CI on a machine known
// to allow io_uring) even a refusal fails, so the io tests cannot turn into skips unnoticed.
#pragma once

#include <gtest/gtest.h>
#include <linux/io_uring.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>

namespace nodeaudit::test {

// Why io_uring is not permitted here, or empty when the kernel grants a ring.
inline std::string io_uring_refusal() {
  io_uring_params params{};
  const long fd = syscall(__NR_io_uring_setup, 1, &params);
  if (fd >= 0) {
    close(static_cast<int>(fd));
    return {};
  }
  const int error = errno;
  if (error != ENOSYS && error != EPERM) return {};
  return std::string("io_uring not permitted here (io_uring_setup: ") + std::strerror(error) + ")";
}

inline bool io_uring_expected() {
  const char* value = std::getenv("NODEAUDIT_EXPECT_IO_URING");
  return value && std::string(value) == "1";
}

}  // namespace nodeaudit::test

// For a test whose io_uring set-up did not succeed (`what` says how): a skip only where the kernel
// refuses io_uring, a failure everywhere else.
#define SKIP_ONLY_IF_IO_URING_REFUSED(what)                                                                  \
  do {                                                                                                       \
    const std::string uring_refusal_ = ::nodeaudit::test::io_uring_refusal();                                \
    if (uring_refusal_.empty()) FAIL() << "io_uring works here (io_uring_setup succeeds), yet " << (what);   \
    if (::nodeaudit::test::io_uring_expected())                                                              \
      FAIL() << "NODEAUDIT_EXPECT_IO_URING=1, yet " << uring_refusal_ << "; " << (what);                     \
    GTEST_SKIP() << uring_refusal_ << ": " << (what);                                                        \
  } while (0)
