// host.dataloader end to end: the real binary, real files, a real PyTorch DataLoader in the torch
// virtual environment under the build folder (`make torch-venv`; NODEAUDIT_TORCH_PYTHON elsewhere),
// and stand-in loader scripts (NODEAUDIT_LOADER_SCRIPT) for a report that is garbage or a loader
// that dies. Without the venv the real-torch test skips, except where NODEAUDIT_EXPECT_TORCH=1 (CI).
#include <sys/stat.h>

#include <fstream>

#include "tests/io/io_test_util.hpp"
#include "tests/pipeline/dataloader/torch_test_util.hpp"

namespace nodeaudit::io {
namespace {

using test::CliResult;
using test::expect_one_line_exit_two;
using test::probe_entry;
using test::run_cli;
using test::TempDir;
using test::torch_python;

const nlohmann::json* metric(const nlohmann::json& entry, const std::string& name, const std::string& decoder,
                             const std::string& workers = "") {
  for (const auto& m : entry["metrics"])
    if (m["name"] == name && m["labels"].value("decoder", "") == decoder &&
        (workers.empty() || m["labels"].value("workers", "") == workers))
      return &m;
  return nullptr;
}

TEST(DataLoaderCli, RealSweepAtOneAndTwoWorkersGivesPositiveFiguresAndTheKnee) {
  TORCH_OR_SKIP();
  TempDir dir;
  const CliResult r = run_cli("probe host.dataloader --format json --python " + torch_python() +
                              " --workers 1,2 --batch 8 --files 64 --data-dir " + dir.path);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const nlohmann::json e = probe_entry(r);
  ASSERT_EQ(e["status"], "ok") << e.dump(1);
  ASSERT_EQ(e.value("rounds", 1), 2) << "the quick level's two rounds";
  for (const std::string decoder : {"pil", "torchvision"}) {
    for (const std::string workers : {"1", "2"}) {
      const auto* rate = metric(e, "samples_per_s", decoder, workers);
      const auto* cpu = metric(e, "cpu_per_sample", decoder, workers);
      ASSERT_TRUE(rate && cpu) << decoder << " x " << workers << ": " << e["metrics"].dump();
      EXPECT_GT((*rate)["samples"][0].get<double>(), 0) << rate->dump();
      EXPECT_GT((*cpu)["samples"][0].get<double>(), 0) << cpu->dump();
    }
    // Each round's knee from the two rates that round measured (round_medians keep the rounds in
    // order): the fewest workers within 90% of the best rate.
    const auto* knee = metric(e, "knee_workers", decoder);
    ASSERT_TRUE(knee) << e["metrics"].dump();
    ASSERT_EQ((*knee)["round_medians"].size(), 2u) << knee->dump();
    for (std::size_t round = 0; round < 2; ++round) {
      const double one = metric(e, "samples_per_s", decoder, "1")->at("round_medians")[round].get<double>();
      const double two = metric(e, "samples_per_s", decoder, "2")->at("round_medians")[round].get<double>();
      const double expected_knee = one >= 0.9 * std::max(one, two) ? 1 : 2;
      EXPECT_EQ((*knee)["round_medians"][round].get<double>(), expected_knee)
          << "round " << round + 1 << ": 1 worker " << one << ", 2 workers " << two;
    }
  }
  EXPECT_EQ(e["info"]["decoders_measured"], nlohmann::json::array({"pil", "torchvision"}));
  EXPECT_EQ(e["info"]["samples"]["kind"], "jpeg");
  EXPECT_TRUE(e["info"]["loader"]["torch"].is_string()) << e["info"].dump();
  EXPECT_EQ(dir.entries(), 0u) << "the generated samples are removed";
}

// An LLM profile's samples are token files (the storage.dataset layout, the profile's sample size),
// loaded raw as tensors: one "raw" decoder, no JPEG decoders.
TEST(DataLoaderCli, AnLlmWorkloadSweepsItsRawTokenFiles) {
  TORCH_OR_SKIP();
  TempDir dir;
  const CliResult r = run_cli("probe host.dataloader --format json --workload llm-finetune-7b --python " + torch_python() +
                              " --workers 1,2 --batch 4 --files 32 --data-dir " + dir.path);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const nlohmann::json e = probe_entry(r);
  ASSERT_EQ(e["status"], "ok") << e.dump(1);
  EXPECT_EQ(e["info"]["profile"], "llm-finetune-7b");
  EXPECT_EQ(e["info"]["samples"]["kind"], "raw");
  EXPECT_EQ(e["info"]["decoders_measured"], nlohmann::json::array({"raw"}));
  for (const std::string workers : {"1", "2"}) {
    const auto* rate = metric(e, "samples_per_s", "raw", workers);
    ASSERT_TRUE(rate) << e["metrics"].dump();
    EXPECT_GT((*rate)["samples"][0].get<double>(), 0);
  }
  EXPECT_FALSE(metric(e, "samples_per_s", "pil", "1"));
  EXPECT_EQ(dir.entries(), 0u);
}

TEST(DataLoaderCli, APythonWithoutTorchIsSkippedNamingTheInterpreter) {
  TempDir dir;
  const std::string venv = dir.path + "/bare";
  ASSERT_EQ(std::system(("python3 -m venv --without-pip " + venv).c_str()), 0);
  TempDir data;
  const CliResult r = run_cli("probe host.dataloader --format json --workers 1 --batch 4 --files 16 --python " + venv +
                              "/bin/python --data-dir " + data.path);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const nlohmann::json e = probe_entry(r);
  EXPECT_EQ(e["status"], "skipped") << e.dump(1);
  const std::string reason = e.value("reason", "");
  EXPECT_NE(reason.find(venv + "/bin/python cannot import the framework (torch: ModuleNotFoundError"), std::string::npos) << reason;
  EXPECT_EQ(data.entries(), 0u);
}

// A stand-in for the loader script, run by the real probe with a real Python.
std::string write_script(const TempDir& dir, const std::string& name, const std::string& body) {
  const std::string path = dir.path + "/" + name;
  // The preflight (--check) gets a good loader line; the sweep gets `body`.
  std::ofstream(path) << "import sys\nout = open(sys.argv[sys.argv.index('--out') + 1], 'w')\n"
                      << "if '--check' in sys.argv:\n"
                      << "    out.write('{\"kind\": \"loader\", \"python\": \"3\", \"torch\": \"x\"}\\n')\n"
                      << "    sys.exit(0)\n"
                      << body;
  return path;
}

TEST(DataLoaderCli, AGarbageReportOrADyingLoaderFailsWithTheReasonKeepingEarlierPoints) {
  TempDir dir, data;
  const std::string loader = R"(out.write('{"kind": "loader", "python": "3", "torch": "x"}\n'))" "\n";
  const std::string point =
      R"(out.write('{"kind": "point", "decoder": "pil", "workers": 1, "batch": 4, "batches": 2, "samples": 8, "seconds": 0.5, "cpu_seconds": 0.4}\n'))" "\n";
  const std::string garbage = write_script(dir, "garbage.py", loader + point + "out.write('hello from a print\\n')\n");
  const std::string dies = write_script(dir, "dies.py", loader + point + "out.flush()\nsys.stderr.write('worker crashed: boom\\n')\nsys.exit(3)\n");
  const std::string args = " probe host.dataloader --format json --python python3 --workers 1 --batch 4 --files 16 --data-dir " + data.path;

  const CliResult g = run_cli(args, {.environment = {{"NODEAUDIT_LOADER_SCRIPT", garbage}}});
  EXPECT_EQ(g.exit_code, 1) << g.out;
  const nlohmann::json ge = probe_entry(g);
  EXPECT_EQ(ge["status"], "failed") << ge.dump(1);
  EXPECT_NE(ge.value("reason", "").find("line 3 of the loader's report"), std::string::npos) << ge.dump(1);
  EXPECT_NE(ge.value("reason", "").find("hello from a print"), std::string::npos) << ge.dump(1);
  EXPECT_TRUE(metric(ge, "samples_per_s", "pil", "1")) << "the point before the bad line is kept";

  const CliResult d = run_cli(args, {.environment = {{"NODEAUDIT_LOADER_SCRIPT", dies}}});
  EXPECT_EQ(d.exit_code, 1) << d.out;
  const nlohmann::json de = probe_entry(d);
  EXPECT_EQ(de["status"], "failed") << de.dump(1);
  EXPECT_NE(de.value("reason", "").find("exited with code 3 after 1 point(s), kept: worker crashed: boom"), std::string::npos)
      << de.dump(1);
  EXPECT_TRUE(metric(de, "samples_per_s", "pil", "1"));

  // A script that says nothing, not even to the preflight: failed, naming the command.
  const std::string silent = dir.path + "/silent.py";
  std::ofstream(silent) << "import sys\nsys.exit(0)\n";
  const CliResult s = run_cli(args, {.environment = {{"NODEAUDIT_LOADER_SCRIPT", silent}}});
  EXPECT_EQ(s.exit_code, 1) << s.out;
  EXPECT_NE(probe_entry(s).value("reason", "").find("silent.py --check) reported nothing"), std::string::npos) << s.out;
  EXPECT_EQ(data.entries(), 0u);
}

TEST(DataLoaderCli, BadPythonOrWorkersIsOneLineExitTwoAndLeavesNothing) {
  TempDir data, dir;
  const std::string plain = dir.path + "/not-executable";
  std::ofstream(plain) << "#!/bin/sh\n";
  chmod(plain.c_str(), 0644);
  const std::string base = "probe host.dataloader --format json --data-dir " + data.path;
  expect_one_line_exit_two(run_cli(base + " --python /nonexistent/python3"), "--python /nonexistent/python3: no such file");
  expect_one_line_exit_two(run_cli(base + " --python " + plain), "not an executable file");
  expect_one_line_exit_two(run_cli(base + " --python no-such-python-anywhere"), "not found on PATH");
  expect_one_line_exit_two(run_cli(base + " --workers 0"), "--workers '0' is not a worker count: expected whole numbers 1..1024");
  expect_one_line_exit_two(run_cli(base + " --workers 1,1025"), "'1025' is not a worker count");
  expect_one_line_exit_two(run_cli(base + " --workload no-such-profile"), "--workload no-such-profile: no such shipped profile");
  EXPECT_EQ(data.entries(), 0u);
}

}  // namespace
}  // namespace nodeaudit::io
