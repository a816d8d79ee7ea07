// Parameter declarations: parsing, bounds, per-level defaults, and the messages for bad values.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "harness/core/errors.hpp"
#include "harness/core/param.hpp"

using namespace nodeaudit;

namespace {
std::vector<ParamSpec> specs() {
  return {
      ParamSpec{.name = "block-size", .type = ParamType::size, .default_by_level = same_at_all_levels("1MiB"),
                .help = "I/O size", .min = 512, .max = 64.0 * 1024 * 1024, .power_of_two = true},
      ParamSpec{.name = "queue-depth", .type = ParamType::integer, .default_by_level = {"4", "16", "32"},
                .help = "I/Os in flight", .min = 1, .max = 4096},
      ParamSpec{.name = "pattern", .type = ParamType::choice, .default_by_level = same_at_all_levels("seq"),
                .help = "order", .choices = {"seq", "rand"}},
      ParamSpec{.name = "workers", .type = ParamType::int_list, .default_by_level = same_at_all_levels("1,2,4"),
                .help = "worker counts", .min = 1, .max = 256},
      ParamSpec{.name = "runtime", .type = ParamType::duration, .default_by_level = same_at_all_levels("30s"),
                .help = "time", .min = 0.1},
      ParamSpec{.name = "direct", .type = ParamType::boolean, .default_by_level = same_at_all_levels("true"), .help = "O_DIRECT"},
      ParamSpec{.name = "size", .type = ParamType::integer, .default_by_level = same_at_all_levels("8192"),
                .help = "M=N=K", .min = 256, .max = 65536, .multiple_of = 256},
  };
}

std::string error_of(const std::map<std::string, std::string>& given) {
  try {
    resolve_params(specs(), given, Level::standard);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST(Params, DefaultsFollowTheLevel) {
  EXPECT_EQ(resolve_params(specs(), {}, Level::quick).integer("queue-depth"), 4);
  EXPECT_EQ(resolve_params(specs(), {}, Level::soak).integer("queue-depth"), 32);
  const ParamValues v = resolve_params(specs(), {}, Level::standard);
  EXPECT_EQ(v.size_bytes("block-size"), 1048576u);
  EXPECT_EQ(v.text("pattern"), "seq");
  EXPECT_EQ(v.int_list("workers"), (std::vector<std::int64_t>{1, 2, 4}));
  EXPECT_DOUBLE_EQ(v.duration_s("runtime"), 30);
  EXPECT_TRUE(v.boolean("direct"));
  EXPECT_FALSE(v.given("direct"));
}

TEST(Params, GivenValuesAreParsedAndMarked) {
  const ParamValues v = resolve_params(specs(), {{"block-size", "4KiB"}, {"direct", "false"}}, Level::quick);
  EXPECT_EQ(v.size_bytes("block-size"), 4096u);
  EXPECT_FALSE(v.boolean("direct"));
  EXPECT_TRUE(v.given("direct"));
}

TEST(Params, BadValuesNameTheOptionAndTheRule) {
  EXPECT_EQ(error_of({{"block-size", "0"}}),
            "--block-size 0: must be a power of two size between 512 B and 64 MiB (4096, 4KiB, 1MiB, 1GB)");
  EXPECT_EQ(error_of({{"block-size", "3000"}}).find("--block-size 3000: must be a power of two"), 0u);
  EXPECT_EQ(error_of({{"queue-depth", "0"}}), "--queue-depth 0: must be an integer between 1 and 4096");
  EXPECT_EQ(error_of({{"queue-depth", "5000"}}), "--queue-depth 5000: must be an integer between 1 and 4096");
  EXPECT_EQ(error_of({{"pattern", "zigzag"}}), "--pattern zigzag: must be one of seq, rand");
  EXPECT_NE(error_of({{"workers", "1,0"}}).find("--workers 1,0"), std::string::npos);
  EXPECT_NE(error_of({{"runtime", "10"}}).find("--runtime 10: must be a duration"), std::string::npos);
  EXPECT_EQ(error_of({{"direct", "maybe"}}), "--direct maybe: must be true or false");
}

TEST(Params, UnknownParameterListsTheAcceptedOnes) {
  const std::string e = error_of({{"blocksize", "4KiB"}});
  EXPECT_NE(e.find("--blocksize"), std::string::npos);
  EXPECT_NE(e.find("--block-size"), std::string::npos);
  EXPECT_NE(e.find("--queue-depth"), std::string::npos);
}

TEST(Params, JsonBlockHoldsTypedValues) {
  const nlohmann::json j = resolve_params(specs(), {{"block-size", "4KiB"}}, Level::standard).to_json();
  EXPECT_EQ(j["block-size"], 4096);
  EXPECT_EQ(j["queue-depth"], 16);
  EXPECT_EQ(j["pattern"], "seq");
  EXPECT_EQ(j["workers"], nlohmann::json::array({1, 2, 4}));
  EXPECT_EQ(j["runtime"], 30.0);
  EXPECT_EQ(j["direct"], true);
}

TEST(Params, MultipleOfIsCheckedAndNamedInTheMessage) {
  EXPECT_EQ(error_of({{"size", "1000"}}), "--size 1000: must be an integer between 256 and 65536 and a multiple of 256");
  EXPECT_EQ(error_of({{"size", "768"}}), "");
  EXPECT_EQ(error_of({{"size", "65792"}}), "--size 65792: must be an integer between 256 and 65536 and a multiple of 256");
}
