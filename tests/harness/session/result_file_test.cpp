// The one writer of result documents: the first version claims a new file, every later write
// replaces it whole, a string that is not UTF-8 is kept as \xHH, and discard removes the claim.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "harness/core/errors.hpp"
#include "harness/session/result_file.hpp"
#include "tests/support/cli_expect.hpp"

namespace fs = std::filesystem;
using namespace nodeaudit;

namespace {

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(ResultFile, ClaimsANewFileAndRewritesItWhole) {
  const fs::path dir = proc::make_temp_dir("result-file");
  const session::OutPath out{(dir / "r.json").string(), false, false};
  const session::ResultFile result(out, nlohmann::json{{"probes", nlohmann::json::array()}}, 1);
  EXPECT_EQ(result.path(), out.path);
  EXPECT_EQ(read_text(out.path), "{\n \"probes\": []\n}\n");
  result.write(nlohmann::json{{"probes", {1}}, {"name", std::string("caf\xe9")}});
  EXPECT_EQ(read_text(out.path), "{\n \"name\": \"caf\\\\xE9\",\n \"probes\": [\n  1\n ]\n}\n");
  fs::remove_all(dir);
}

TEST(ResultFile, RefusesAFileThatExistsAndDiscardRemovesItsClaim) {
  const fs::path dir = proc::make_temp_dir("result-file");
  const session::OutPath out{(dir / "r.json").string(), false, false};
  const session::ResultFile result(out, nlohmann::json::object(), 2);
  EXPECT_THROW({ const session::ResultFile again(out, nlohmann::json::object(), 2); }, UsageError);
  result.discard();
  EXPECT_FALSE(fs::exists(out.path));
  fs::remove_all(dir);
}

}  // namespace
