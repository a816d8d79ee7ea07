// `nodeaudit learn --vary` end to end: a discarded warm-up, then values in random order per repeat, the order of two DataLoader
// worker counts on a loader-bound job (not a speed), an environment variable reaching the job, a
// value the job fails on kept beside the others, and the settings refused before (or, for a job
// without a DataLoader, at) the first run.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>

#include "tests/harness/learn/learn_test_util.hpp"

namespace nodeaudit::learn::test {
namespace {

namespace fs = std::filesystem;

class LearnVary : public LearnCli {
 protected:
  // The job runs with OMP_NUM_THREADS=1 (quick and steady on 2 cores) unless the test varies it.
  proc::ProcessResult learn_vary(const std::vector<std::string>& flags, const std::vector<std::string>& python_args, bool one_thread = true) {
    std::vector<std::string> argv{NODEAUDIT_BINARY, "learn", "--out", result_path(), "--warmup", "1", "--steps", "4"};
    argv.insert(argv.end(), flags.begin(), flags.end());
    argv.push_back("--");
    if (one_thread) argv.insert(argv.end(), {"env", "OMP_NUM_THREADS=1"});
    argv.push_back(torch_python());
    argv.insert(argv.end(), python_args.begin(), python_args.end());
    return proc::run_process(argv);
  }
  std::string images() {
    const std::string dir = dir_ + "/images";
    if (!fs::exists(dir)) run_python({script("make_jpegs.py"), dir, "16", "32"});
    return dir;
  }
  static nlohmann::json value_entry(const nlohmann::json& entry, const std::string& value) {
    for (const auto& v : entry["info"]["values"])
      if (v["value"] == value) return v;
    ADD_FAILURE() << "no value " << value;
    return {};
  }
};

// Each sample sleeps 15 ms in the dataset (a loader bound by I/O latency, not by these 2 CPUs), so two
// workers fetch a batch in about half the time of one: the order is certain, the speed is not checked.
// The job's own setting (train_cnn.py: 2 workers) is found by the probe run and is the baseline.
TEST_F(LearnVary, TwoLoaderWorkersBeatOneOnALoaderBoundJob) {
  TORCH_OR_SKIP();
  const std::string md = dir_ + "/vary.md", html = dir_ + "/vary.html";
  // The default 3 repeats: at 2 the rule's t (9.9) leaves a 2x slower loader inside the interval here
  // (+125% +/- 132% in one run of this test), which is what 2 repeats can and cannot tell.
  const auto r = learn_vary({"--vary", "num_workers=1,2", "--md", md, "--html", html, "--price-per-hour", "3"},
                            {script("train_cnn.py"), images(), "--item-sleep-ms", "15"});
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  const nlohmann::json e = learn_entry();
  EXPECT_EQ(e["id"], "learn.vary");
  EXPECT_EQ(e["info"]["own_value"], "2");
  EXPECT_EQ(e["info"]["baseline"], "2");
  EXPECT_GT(e["info"]["probe_s"].get<double>(), 0);
  // The warm-up run is not among the measured runs; each repeat runs every value once, in its own order.
  ASSERT_EQ(e["info"]["runs"].size(), 6u);
  EXPECT_EQ(e["info"]["warm_up"]["discarded"], true);
  EXPECT_TRUE(e["info"]["order_seed"].is_number());
  for (std::size_t block = 0; block < 3; ++block) {
    std::set<std::string> values = {e["info"]["runs"][2 * block]["value"], e["info"]["runs"][2 * block + 1]["value"]};
    EXPECT_EQ(values, (std::set<std::string>{"1", "2"})) << "repeat " << block + 1 << ": " << e["info"]["runs"].dump();
  }
  EXPECT_NE(r.err.find("warm-up run (not counted)"), std::string::npos) << r.err;
  EXPECT_EQ(value_entry(e, "2")["verdict"], "baseline");
  // Each value's verdict names its statistic, and the repeats are the runs compare reads.
  EXPECT_EQ(value_entry(e, "1")["statistic"].get<std::string>().rfind("99% t-interval of the difference of means, 3 + 3 runs: ", 0), 0u)
      << value_entry(e, "1").dump();
  for (const auto& metric : e["metrics"]) EXPECT_EQ(metric["round_medians"], metric["samples"]) << metric.dump();
  EXPECT_EQ(value_entry(e, "1")["verdict"], "worse") << e["info"].dump(1);
  EXPECT_EQ(e["info"]["best"], "2");
  EXPECT_LT(value_entry(e, "2")["median"].get<double>(), value_entry(e, "1")["median"].get<double>());
  EXPECT_NE(r.out.find("best: num_workers=2, the baseline itself"), std::string::npos) << r.out;
  // Solidify: each value's command, the best value's profile beside the result, the cost before/after.
  EXPECT_EQ(value_entry(e, "1")["command"].get<std::string>().find("NODEAUDIT_LEARN_OVERRIDES='{\"dataloader\":{\"num_workers\":1}}' nodeaudit learn --warmup 1 --steps 4"), 0u)
      << value_entry(e, "1")["command"];
  const std::string profile = e["info"]["best_profile"];
  EXPECT_EQ(profile, fs::path(result_path()).replace_extension(".toml").string());
  const auto shown = proc::run_process({NODEAUDIT_BINARY, "profiles", "show", profile});
  EXPECT_EQ(shown.exit_code, 0) << shown.err;
  // One pass over the 32 images at the best value's median rate, at 3 per hour.
  const nlohmann::json best = value_entry(e, "2");
  std::vector<double> rates = best["samples_per_s"].get<std::vector<double>>();
  ASSERT_EQ(rates.size(), 3u);
  std::sort(rates.begin(), rates.end());
  const double rate = rates[1];  // the median of three
  EXPECT_EQ(best["target_samples"], 32.0);
  EXPECT_NEAR(best["run_cost"].get<double>(), 3.0 * 32 / rate / 3600, 1e-12);
  EXPECT_NE(r.out.find("cost of one run before (num_workers=2)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("optimize or upgrade: not judged (no GPU on this node"), std::string::npos) << r.out;
  EXPECT_TRUE(fs::exists(md));
  EXPECT_TRUE(fs::exists(html));
}

TEST_F(LearnVary, AnEnvironmentVariableReachesTheJob) {
  TORCH_OR_SKIP();
  const auto r = learn_vary({"--vary", "env:OMP_NUM_THREADS=1,2", "--repeats", "2"}, {script("train_cnn.py"), images(), "--workers", "0"}, false);
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  EXPECT_NE(r.out.find("threads 1\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("threads 2\n"), std::string::npos) << r.out;
  const std::string verdict = value_entry(learn_entry(), "2")["verdict"];
  EXPECT_TRUE(verdict == "better" || verdict == "worse" || verdict == "no difference") << verdict;
}

// batch_size changes the samples per step, so samples/s is the figure judged; the job's own 8
// (train_cnn.py's default) is the baseline, and each run's batch is the value it was given.
TEST_F(LearnVary, BatchSizeIsJudgedBySamplesPerSecond) {
  TORCH_OR_SKIP();
  const auto r = learn_vary({"--vary", "batch_size=4,8", "--repeats", "2"}, {script("train_cnn.py"), images(), "--workers", "0"});
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  const nlohmann::json e = learn_entry();
  EXPECT_EQ(e["info"]["own_value"], "8");
  EXPECT_EQ(e["info"]["baseline"], "8");
  EXPECT_EQ(value_entry(e, "4")["figure"], "samples_per_s");
  const auto rates = value_entry(e, "4")["samples_per_s"];
  ASSERT_EQ(rates.size(), 2u);
  EXPECT_DOUBLE_EQ(value_entry(e, "4")["median"].get<double>(), (rates[0].get<double>() + rates[1].get<double>()) / 2);
  ASSERT_EQ(e["info"]["runs"].size(), 4u);
  for (const auto& run : e["info"]["runs"]) EXPECT_EQ(run["samples_per_step"].get<double>(), std::stod(run["value"].get<std::string>())) << run;
  EXPECT_NE(r.out.find("samples/s"), std::string::npos) << r.out;
}

TEST_F(LearnVary, AValueTheJobFailsOnIsReportedAndTheOthersKept) {
  TORCH_OR_SKIP();
  // prefetch_factor needs worker processes: the job's DataLoader refuses num_workers=0.
  const auto r = learn_vary({"--vary", "num_workers=1,0", "--repeats", "2"}, {script("train_cnn.py"), images(), "--prefetch", "2"});
  EXPECT_EQ(r.exit_code, 1) << r.err << r.out;
  const nlohmann::json e = learn_entry();
  EXPECT_EQ(e["status"], "failed");
  const auto failures = value_entry(e, "0")["failures"];
  ASSERT_EQ(failures.size(), 2u);
  EXPECT_NE(failures[0].get<std::string>().find("exited with code 1"), std::string::npos) << failures;
  EXPECT_NE(failures[0].get<std::string>().find("prefetch_factor"), std::string::npos) << failures;
  EXPECT_GT(value_entry(e, "1")["median"].get<double>(), 0);
}

TEST_F(LearnVary, ADataLoaderSettingOnAJobWithoutOneIsRefused) {
  TORCH_OR_SKIP();
  const std::string tokens = write_token_file(65536);
  const auto r = learn_vary({"--vary", "num_workers=0,2"}, {script("train_gpt.py"), tokens});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("nodeaudit: --vary num_workers: the job makes no torch DataLoader"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("repeat 1 of"), std::string::npos) << "refused by the probe run, before any measured run: " << r.err;
  EXPECT_FALSE(fs::exists(result_path()));
}

// --data-dir-copy: the job from its own image folder and from a copy in nodeaudit's own folder
// under DIR (nodeaudit-copy-<pid>, owner-marked); the copy is gone afterwards, DIR and the original
// stay as they were, and a user's folder named like the data there is never touched.
TEST_F(LearnVary, TheDataDirectoryCopiedAndRemovedAfter) {
  TORCH_OR_SKIP();
  const std::string place = dir_ + "/fast-disk", original = images();
  fs::create_directories(place + "/images");
  std::ofstream(place + "/someone-elses-file") << "kept";
  std::ofstream(place + "/images/theirs") << "kept";
  const auto r = learn_vary({"--data-dir-copy", place, "--repeats", "2"}, {script("train_cnn.py"), original, "--workers", "0"});
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  const nlohmann::json e = learn_entry();
  EXPECT_EQ(e["params"]["setting"], "data_dir");
  ASSERT_EQ(e["params"]["values"].size(), 2u);
  EXPECT_EQ(e["params"]["values"][0], original);
  const std::string copy = e["params"]["values"][1];
  EXPECT_EQ(copy.rfind(place + "/nodeaudit-copy-", 0), 0u) << copy;
  EXPECT_EQ(fs::path(copy).filename(), "images");
  EXPECT_EQ(e["info"]["baseline"], original);
  EXPECT_NE(value_entry(e, copy)["command"].get<std::string>().find(" " + copy + " --workers 0"), std::string::npos);
  EXPECT_GT(value_entry(e, copy)["median"].get<double>(), 0) << "the job read its images from the copy";
  EXPECT_FALSE(fs::exists(fs::path(copy).parent_path())) << "the copy and its folder are gone";
  EXPECT_TRUE(fs::exists(place + "/someone-elses-file"));
  EXPECT_TRUE(fs::exists(place + "/images/theirs"));
  EXPECT_EQ(std::distance(fs::directory_iterator(original + "/class_a"), fs::directory_iterator()), 16);
}

TEST_F(LearnVary, BadSettingsAreRefusedBeforeAnythingRuns) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--vary", "workers=1,2"}, "nodeaudit: --vary workers=1,2: unknown setting 'workers'; accepted: num_workers, prefetch_factor, batch_size, pin_memory, persistent_workers, env:NAME, cpus\n"},
      {{"--vary", "num_workers=4"}, "nodeaudit: --vary num_workers=4: give at least two values to compare, e.g. num_workers=1,2\n"},
      {{"--vary", "num_workers=2,many"}, "nodeaudit: --vary num_workers=many: 'many' is not a whole number from 0 to 4096\n"},
      {{"--vary", "num_workers=abc"}, "nodeaudit: --vary num_workers=abc: 'abc' is not a whole number from 0 to 4096\n"},
      {{"--vary", "pin_memory=true,yes"}, "nodeaudit: --vary pin_memory=yes: 'yes' is not true or false\n"},
      {{"--vary", "num_workers=1,2", "--repeats", "0"}, "nodeaudit: --repeats 0: must be a whole number from 1 to 20\n"},
      {{"--vary", "num_workers=1,2", "--repeats", "1"},
       "nodeaudit: --repeats 1: a verdict needs at least 2 runs of each value (their scatter is what a difference is judged against); "
       "the default 3 calls a 10% change in a figure that scatters 2% between runs 4 times in 5\n"},
      {{"--vary", "num_workers=1,2", "--data-dir-copy", "/tmp"}, "nodeaudit: --data-dir-copy /tmp: not with --vary: one change at a time, and the data directory's place is this one\n"},
      {{"--data-dir-copy", "/tmp"}, "nodeaudit: --data-dir-copy /tmp: the job's command names no directory; --data-dir-copy copies the one data directory the command names\n"},
      {{"--price-per-hour", "3"}, "nodeaudit: --price-per-hour 3: only with --vary\n"},
      {{"--vary", "num_workers=1,2", "--price-per-hour", "-1"}, "nodeaudit: --price-per-hour -1: expected a positive number in any currency (12, 12.5)\n"},
  };
  for (const auto& [flags, expected] : cases) {
    std::vector<std::string> argv{NODEAUDIT_BINARY, "learn", "--out", result_path()};
    argv.insert(argv.end(), flags.begin(), flags.end());
    argv.insert(argv.end(), {"--", "python3", "train.py"});
    const auto r = proc::run_process(argv);
    EXPECT_EQ(r.exit_code, 2) << flags[1];
    EXPECT_EQ(r.err, expected);
    EXPECT_FALSE(fs::exists(result_path()));
  }
}

}  // namespace
}  // namespace nodeaudit::learn::test
