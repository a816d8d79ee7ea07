// Atomic result writing: whole file or nothing, no temp files left, never overwrite a new name.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "harness/core/errors.hpp"
#include "harness/core/result.hpp"

namespace fs = std::filesystem;
using namespace nodeaudit;

namespace {
fs::path fresh_dir(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("nodeaudit-atomic-" + name + "-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}
std::string read_all(const fs::path& p) {
  std::ifstream in(p);
  return {std::istreambuf_iterator<char>(in), {}};
}
std::size_t entries(const fs::path& dir) {
  return static_cast<std::size_t>(std::distance(fs::directory_iterator(dir), fs::directory_iterator()));
}
}  // namespace

TEST(AtomicFile, WritesAndReplacesItsOwnFile) {
  const fs::path dir = fresh_dir("replace");
  const fs::path file = dir / "r.json";
  write_file_atomic(file.string(), "first", true);
  EXPECT_EQ(read_all(file), "first");
  write_file_atomic(file.string(), "second", false);
  EXPECT_EQ(read_all(file), "second");
  EXPECT_EQ(entries(dir), 1u) << "a temp file was left behind";
  fs::remove_all(dir);
}

TEST(AtomicFile, RefusesToOverwriteWhenTheNameMustBeNew) {
  const fs::path dir = fresh_dir("noreplace");
  const fs::path file = dir / "theirs.json";
  std::ofstream(file) << "not ours";
  EXPECT_THROW(write_file_atomic(file.string(), "ours", true), UsageError);
  EXPECT_EQ(read_all(file), "not ours");
  EXPECT_EQ(entries(dir), 1u);
  fs::remove_all(dir);
}

TEST(AtomicFile, MissingDirectoryIsAClearError) {
  try {
    write_file_atomic("/nonexistent/dir/x.json", "x", true);
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/dir"), std::string::npos) << e.what();
  }
}
