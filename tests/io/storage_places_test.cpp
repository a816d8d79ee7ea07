// Places storage.read is pointed at, through the CLI: a block device is read (read-only, its size
// from BLKGETSIZE64, as fio reads one) or, when it cannot be opened, the open's error is said; a
// --data-dir on a read-only file system is bad input said as such, with no O_DIRECT claim that
// was never tested.
#include <fcntl.h>
#include <linux/loop.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>

#include "tests/io/io_test_util.hpp"
#include "tests/support/uring_gate.hpp"

namespace nodeaudit::io {
namespace {

using test::CliResult;
using test::probe_entry;
using test::run_cli;
using test::TempDir;

constexpr std::uint64_t kBackingBytes = 8ull << 20;

// A loop device over a file of kBackingBytes for one test (root only); `why` says why not.
struct LoopDevice {
  std::string path, why;
  int fd = -1;
  explicit LoopDevice(const std::string& backing) {
    const int control = open("/dev/loop-control", O_RDWR | O_CLOEXEC);
    if (control < 0) {
      why = std::string("/dev/loop-control: ") + std::strerror(errno);
      return;
    }
    const int index = ioctl(control, LOOP_CTL_GET_FREE);
    close(control);
    if (index < 0) {
      why = std::string("LOOP_CTL_GET_FREE: ") + std::strerror(errno);
      return;
    }
    const std::string device = "/dev/loop" + std::to_string(index);
    const int file = open(backing.c_str(), O_RDWR | O_CLOEXEC);
    fd = open(device.c_str(), O_RDWR | O_CLOEXEC);
    if (file < 0 || fd < 0 || ioctl(fd, LOOP_SET_FD, file) != 0) {
      why = device + ": " + std::strerror(errno);
      if (file >= 0) close(file);
      return;
    }
    close(file);
    path = device;
  }
  ~LoopDevice() {
    if (!path.empty()) ioctl(fd, LOOP_CLR_FD, 0);
    if (fd >= 0) close(fd);
  }
};

TEST(StoragePlaces, ABlockDeviceIsReadWithItsRealSize) {
  TempDir dir;
  const std::string backing = dir.path + "/backing.img";
  {
    std::ofstream out(backing, std::ios::binary);
    const std::string mebibyte(1 << 20, '\x5a');
    for (std::uint64_t i = 0; i < kBackingBytes >> 20; ++i) out << mebibyte;
  }
  LoopDevice loop(backing);
  if (loop.path.empty()) GTEST_SKIP() << "no loop device: " << loop.why;
  const CliResult r = run_cli("probe storage.read --format json --block-size 1MiB --runtime 0.2s --repetitions 2 --path " +
                              loop.path);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const auto e = probe_entry(r);
  // storage.read may skip here only where the kernel refuses io_uring itself.
  if (e["status"] == "skipped") SKIP_ONLY_IF_IO_URING_REFUSED("storage.read skipped: " + e["reason"].get<std::string>());
  ASSERT_EQ(e["status"], "ok") << e.dump();
  EXPECT_EQ(e["info"]["file"], loop.path);
  EXPECT_EQ(e["info"]["region_bytes"], kBackingBytes);
  std::ifstream in(backing, std::ios::binary);
  const std::string first(std::istreambuf_iterator<char>(in), {});
  EXPECT_EQ(first.size(), kBackingBytes);
  EXPECT_EQ(first.find_first_not_of('\x5a'), std::string::npos) << "the device was written";
}

// A device node whose device cannot be opened (here: a major number no driver has; in a sandbox,
// the host's disk refused with EPERM) says so, not "0 bytes is smaller than --block-size".
TEST(StoragePlaces, ABlockDeviceThatCannotBeOpenedSaysWhy) {
  TempDir dir;
  const std::string node = dir.path + "/no-such-disk";
  constexpr unsigned experimental_major = 242;  // "local/experimental use" in the kernel's device list
  if (mknod(node.c_str(), S_IFBLK | 0600, makedev(experimental_major, 0)) != 0)
    GTEST_SKIP() << "mknod of a block device node: " << std::strerror(errno);
  const CliResult r = run_cli("probe storage.read --format json --path " + node);
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_EQ(r.out, "nodeaudit: storage.read: --path " + node +
                       ": cannot open the block device read-only: No such device or address\n");
}

TEST(StoragePlaces, AReadOnlyDataDirIsBadInputSaidAsSuch) {
  MOUNT_OR_SKIP(ro, "tmpfs", "size=1m", MS_RDONLY);
  const CliResult r = run_cli("probe storage.read --format json --data-dir " + ro.path);
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << r.out;
  EXPECT_NE(r.out.find("read-only file system"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("O_DIRECT"), std::string::npos) << "an O_DIRECT claim nobody tested: " << r.out;
  EXPECT_EQ(ro.entries(), 0u);
}

}  // namespace
}  // namespace nodeaudit::io
