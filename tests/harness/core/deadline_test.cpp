// A probe's deadline is sized for its level's repetitions; --repetitions above them grows it in
// proportion, so asking for more repetitions never turns a healthy probe into a timeout.
#include <gtest/gtest.h>

#include "harness/core/context.hpp"
#include "harness/core/probe.hpp"
#include "harness/core/deadline.hpp"

namespace nodeaudit {
namespace {

ProbeSpec spec_with_deadline(double seconds) {
  ProbeSpec spec;
  spec.id = "test.deadline";
  spec.deadline_s = [seconds](const ParamValues&, Level) { return seconds; };
  return spec;
}

TEST(ProbeDeadline, MoreRepetitionsThanTheLevelsGrowTheDeadlineInProportion) {
  RunSettings settings;
  settings.level = Level::quick;
  const int level_reps = default_policy(Level::quick).min_repetitions;
  ASSERT_GE(level_reps, 1);
  const ProbeSpec spec = spec_with_deadline(100);
  const ParamValues none = resolve_params({}, {}, Level::quick);
  EXPECT_DOUBLE_EQ(probe_deadline_s(spec, none, settings), 100);
  settings.repetitions = level_reps * 10;
  EXPECT_DOUBLE_EQ(probe_deadline_s(spec, none, settings), 1000);
}

TEST(ProbeDeadline, FewerRepetitionsKeepTheLevelsDeadline) {
  RunSettings settings;
  settings.level = Level::standard;
  settings.repetitions = 1;
  EXPECT_DOUBLE_EQ(deadline_for_repetitions(900, settings), 900);
}

}  // namespace
}  // namespace nodeaudit
