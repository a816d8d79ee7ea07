// The one writer of result documents: the first version claims a new file, every later write
// replaces it whole, a string that is not UTF-8 is kept as \xHH, and discard removes the claim.
#include <gtest/gtest.h>

#include <filesystem>

#include "harness/core/errors.hpp"
#include "harness/session/result_file.hpp"
#include "tests/support/fixtures.hpp"

using namespace nodeaudit;
using nodeaudit::test_files::read_text;
using nodeaudit::test_files::TempDir;

namespace {

TEST(ResultFile, ClaimsANewFileAndRewritesItWhole) {
  const TempDir dir;
  const session::OutPath out{dir.path + "/r.json", false, false};
  const session::ResultFile result(out, nlohmann::json{{"probes", nlohmann::json::array()}}, 1);
  EXPECT_EQ(result.path(), out.path);
  EXPECT_EQ(read_text(out.path), "{\n \"probes\": []\n}\n");
  result.write(nlohmann::json{{"probes", {1}}, {"name", std::string("caf\xe9")}});
  EXPECT_EQ(read_text(out.path), "{\n \"name\": \"caf\\\\xE9\",\n \"probes\": [\n  1\n ]\n}\n");
}

TEST(ResultFile, RefusesAFileThatExistsAndDiscardRemovesItsClaim) {
  const TempDir dir;
  const session::OutPath out{dir.path + "/r.json", false, false};
  const session::ResultFile result(out, nlohmann::json::object(), 2);
  EXPECT_THROW({ const session::ResultFile again(out, nlohmann::json::object(), 2); }, UsageError);
  result.discard();
  EXPECT_FALSE(std::filesystem::exists(out.path));
}

}  // namespace
