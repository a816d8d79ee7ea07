// --keep-data never removes, reuses or replaces what nodeaudit did not write: a folder of the kept
// set's name with a foreign manifest, a file of the user's inside, or a symlink is left as it was
// (checked by sha256) and the set takes another name. Scratch directories are recognized by their
// owner marker: removed when the owner is gone, left alone when it lives or the marker is foreign.
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>

#include "harness/core/owned_dir.hpp"
#include "io/kept_data.hpp"
#include "tests/io/io_test_util.hpp"

namespace nodeaudit::io {
namespace {

using test::CliResult;
using test::probe_entry;
using test::run_cli;
using test::TempDir;
namespace fs = std::filesystem;

std::string sha256_of(const std::string& path) {
  return proc::run_process({"sha256sum", path}).out.substr(0, 64);
}

void write_text(const fs::path& path, const std::string& text) {
  std::ofstream(path) << text;
}

CliResult keep_data_read(const std::string& data_dir) {
  return run_cli(
      "probe storage.read --format json --keep-data --size 16MiB --runtime 0.2s --repetitions 2 --data-dir " +
      data_dir);
}

// The user's folder named as nodeaudit's kept set, with an empty manifest and a thesis in it.
TEST(UserFiles, KeepDataLeavesAFolderWithAForeignManifestAndTakesAnotherName) {
  TempDir dir;
  const fs::path users = fs::path(dir.path) / "nodeaudit-read-16777216";
  fs::create_directory(users);
  write_text(users / "manifest.json", "{}\n");
  write_text(users / "thesis.tex", "mine\n");
  const std::string thesis_sum = sha256_of((users / "thesis.tex").string());
  const std::string manifest_sum = sha256_of((users / "manifest.json").string());

  const CliResult r = keep_data_read(dir.path);
  const auto e = probe_entry(r);
  if (e["status"] == "skipped") SKIP_ONLY_IF_IO_URING_REFUSED("skipped: " + e["reason"].get<std::string>());
  EXPECT_EQ(r.exit_code, 0) << r.out;
  ASSERT_TRUE(fs::exists(users / "thesis.tex")) << r.out;
  EXPECT_EQ(sha256_of((users / "thesis.tex").string()), thesis_sum);
  EXPECT_EQ(sha256_of((users / "manifest.json").string()), manifest_sum);
  EXPECT_EQ(e["info"]["generated"]["dir"], users.string() + "-2") << r.out;
  EXPECT_EQ(e["info"]["generated"]["passed_over"], nlohmann::json::array({users.string()}));

  // The set it kept is its own and is reused; the user's folder still is not touched.
  const CliResult again = keep_data_read(dir.path);
  EXPECT_EQ(again.exit_code, 0) << again.out;
  EXPECT_EQ(probe_entry(again)["info"]["generated"]["reused"], true) << again.out;
  EXPECT_EQ(sha256_of((users / "thesis.tex").string()), thesis_sum);
}

// A manifest copied from a real kept set, in a folder that also holds a user's file.
TEST(UserFiles, KeepDataLeavesItsOwnManifestBesideAUsersFile) {
  TempDir dir;
  {
    GenerateResult g = generate_dataset(dir.path, {"s", 2, 4096, 1}, true, nullptr);
    ASSERT_EQ(g.error, "");
  }
  const fs::path kept = fs::path(dir.path) / "nodeaudit-s";
  ASSERT_TRUE(fs::exists(kept / "manifest.json"));
  write_text(kept / "notes.txt", "mine\n");
  const std::string sum = sha256_of((kept / "notes.txt").string());
  fs::resize_file(kept / "f0000001.bin", 10);  // damaged: a set of ours would be replaced
  GenerateResult g = generate_dataset(dir.path, {"s", 2, 4096, 1}, true, nullptr);
  ASSERT_EQ(g.error, "");
  EXPECT_EQ(g.data->dir(), kept.string() + "-2");
  EXPECT_EQ(sha256_of((kept / "notes.txt").string()), sum);
  EXPECT_EQ(fs::file_size(kept / "f0000001.bin"), 10u)
      << "the folder holding a user's file is not nodeaudit's to change";
}

TEST(UserFiles, KeepDataLeavesASymlinkOfTheSetsNameAndWhatItPointsTo) {
  TempDir dir;
  const fs::path target = fs::path(dir.path) / "photos";
  fs::create_directory(target);
  write_text(target / "a.jpg", "jpeg");
  const std::string sum = sha256_of((target / "a.jpg").string());
  const fs::path link = fs::path(dir.path) / "nodeaudit-l";
  fs::create_directory_symlink(target, link);
  GenerateResult g = generate_dataset(dir.path, {"l", 1, 4096, 1}, true, nullptr);
  ASSERT_EQ(g.error, "");
  EXPECT_EQ(g.data->dir(), link.string() + "-2");
  EXPECT_TRUE(fs::is_symlink(link));
  EXPECT_EQ(sha256_of((target / "a.jpg").string()), sum);
  EXPECT_EQ(std::distance(fs::directory_iterator(target), fs::directory_iterator()), 1);
}

// A scratch directory made by a process that has ended.
std::string owned_dir_of_ended_process(const std::string& parent) {
  int fds[2];
  if (pipe(fds) != 0) return {};
  const pid_t pid = fork();
  if (pid == 0) {
    std::string error;
    const std::string made = make_owned_dir(parent, "nodeaudit-dataset-x", error);
    (void)!write(fds[1], made.data(), made.size());
    _exit(0);
  }
  close(fds[1]);
  std::array<char, 4096> buf{};
  const ssize_t n = read(fds[0], buf.data(), buf.size());
  close(fds[0]);
  waitpid(pid, nullptr, 0);
  return n > 0 ? std::string(buf.data(), static_cast<std::size_t>(n)) : std::string();
}

TEST(OwnedDirs, RemovesOnlyScratchWhoseOwnerIsGone) {
  TempDir dir;
  const std::string abandoned = owned_dir_of_ended_process(dir.path);
  ASSERT_FALSE(abandoned.empty());
  write_text(fs::path(abandoned) / "f0000000.bin", "data");
  std::string error;
  const std::string live = make_owned_dir(dir.path, "nodeaudit-live", error);
  ASSERT_FALSE(live.empty()) << error;
  const fs::path forged = fs::path(dir.path) / "nodeaudit-users";
  fs::create_directory(forged);
  write_text(forged / owner_marker_name, "{\"schema\": \"something else\", \"pid\": 1}\n");
  write_text(forged / "data.csv", "1,2\n");

  EXPECT_TRUE(is_abandoned_dir(abandoned));
  EXPECT_FALSE(is_abandoned_dir(live));
  EXPECT_EQ(remove_abandoned_dirs(dir.path), std::vector<std::string>{abandoned});
  EXPECT_FALSE(fs::exists(abandoned));
  EXPECT_TRUE(fs::exists(live));
  EXPECT_TRUE(fs::exists(forged / "data.csv"));
}

}  // namespace
}  // namespace nodeaudit::io
