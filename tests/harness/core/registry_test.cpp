// The probe registry: lookup, glob matching, and the errors for patterns that match nothing.
#include <gtest/gtest.h>

#include "harness/core/errors.hpp"
#include "harness/core/registry.hpp"

using namespace nodeaudit;

namespace {
ProbeRegistry sample_registry() {
  ProbeRegistry r;
  for (const char* id : {"gpu.gemm", "gpu.pcie", "storage.read", "storage.dataset"})
    r.add(ProbeSpec{.id = id, .description = "d", .body = [](ProbeContext&) { return Outcome::ok(); }});
  r.add(ProbeSpec{.id = "comm.allreduce", .description = "d", .not_built_reason = "no CUDA toolkit"});
  return r;
}
}  // namespace

TEST(Registry, FindsAndSorts) {
  const ProbeRegistry r = sample_registry();
  ASSERT_NE(r.find("gpu.gemm"), nullptr);
  EXPECT_EQ(r.find("gpu.nothing"), nullptr);
  const auto all = r.all();
  ASSERT_EQ(all.size(), 5u);
  EXPECT_EQ(all.front()->id, "comm.allreduce");
  EXPECT_EQ(all.back()->id, "storage.read");
  EXPECT_TRUE(r.find("comm.allreduce")->not_built_reason.has_value());
}

TEST(Registry, GlobsSelectProbes) {
  const ProbeRegistry r = sample_registry();
  EXPECT_EQ(r.match("gpu.*"), (std::vector<std::string>{"gpu.gemm", "gpu.pcie"}));
  EXPECT_EQ(r.match("storage.read,gpu.gemm"), (std::vector<std::string>{"storage.read", "gpu.gemm"}));
  // A probe named twice is run once.
  EXPECT_EQ(r.match("gpu.gemm,gpu.*").size(), 2u);
}

TEST(Registry, PatternMatchingNothingIsAnError) {
  const ProbeRegistry r = sample_registry();
  try {
    r.match("disk.*");
    FAIL() << "accepted a pattern that matches nothing";
  } catch (const UsageError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("disk.*"), std::string::npos);
    EXPECT_NE(msg.find("gpu.gemm"), std::string::npos) << "should list the known ids: " << msg;
  }
}

TEST(Registry, ReservedNamesAreKnown) {
  const auto& names = reserved_option_names();
  EXPECT_NE(std::find(names.begin(), names.end(), "level"), names.end());
  EXPECT_NE(std::find(names.begin(), names.end(), "data-dir"), names.end());
}

TEST(RegistryDeathTest, MalformedSpecAbortsAtStartup) {
  ProbeRegistry r;
  EXPECT_DEATH(r.add(ProbeSpec{.id = "NoDot", .description = "d", .not_built_reason = "x"}), "domain.name");
  EXPECT_DEATH(r.add(ProbeSpec{.id = "a.b", .description = "d",
                               .params = {ParamSpec{.name = "level", .default_by_level = same_at_all_levels("x")}},
                               .not_built_reason = "x"}),
               "clashes");
  EXPECT_DEATH(r.add(ProbeSpec{.id = "a.c", .description = "d",
                               .params = {ParamSpec{.name = "n", .type = ParamType::integer,
                                                    .default_by_level = same_at_all_levels("many")}},
                               .not_built_reason = "x"}),
               "does not parse");
}
