// The reaper of a probe child whose run is gone: every directory this process made is removed,
// even while another thread removes the same tree (the probe's own removal) and after that other
// removal has taken the owner marker; a directory disowned for --keep-data is kept.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "harness/core/owned_dir.hpp"
#include "tests/support/cli_process.hpp"

namespace nodeaudit {
namespace {

namespace fs = std::filesystem;

// Files spread over the directory and a subdirectory, as a generated data set.
std::string fmt_path(const std::string& dir, int i) { return dir + (i % 2 ? "/sub/f" : "/f") + std::to_string(i); }

std::string owned_dir_with_files(const std::string& parent, int files) {
  std::string error;
  const std::string dir = make_owned_dir(parent, "nodeaudit-reaper", error);
  EXPECT_FALSE(dir.empty()) << error;
  fs::create_directory(dir + "/sub");
  for (int i = 0; i < files; ++i) std::ofstream(fmt_path(dir, i)) << "x";
  return dir;
}

TEST(OwnedDir, TheReaperRemovesBesideAnotherRemover) {
  const std::string parent = proc::make_temp_dir("reaper");
  const std::string dir = owned_dir_with_files(parent, 1000);
  std::thread other([&] {
    std::error_code ec;
    fs::remove(fs::path(dir) / owner_marker_name, ec);  // the marker goes first
    fs::remove_all(dir, ec);
  });
  remove_dirs_made_here();
  other.join();
  EXPECT_FALSE(fs::exists(dir));
  fs::remove_all(parent);
}

TEST(OwnedDir, ADisownedDirectoryIsKept) {
  const std::string parent = proc::make_temp_dir("reaper");
  const std::string dir = owned_dir_with_files(parent, 3);
  disown_dir(dir);
  remove_dirs_made_here();
  EXPECT_TRUE(fs::exists(dir + "/sub/f1"));
  fs::remove_all(parent);
}

}  // namespace
}  // namespace nodeaudit
