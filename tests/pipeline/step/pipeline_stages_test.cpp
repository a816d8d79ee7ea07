// pipeline.step's stages beyond reading: JPEG samples decoded + augmented by the loader (a stage of
// its own), the exposed share of an emulated all-reduce added to each step, checkpoint modes, and
// the loader-only mode. Real files, real io_uring; figures are checked as relationships.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>

#include "pipeline/samples/jpeg_samples.hpp"
#include "tests/pipeline/step/pipeline_test_support.hpp"

namespace nodeaudit::pipeline {
namespace {

TEST(PipelineJpeg, SamplesAreRealJpegsDecodedIntoNormalisedTensors) {
  Scratch dir;
  JpegSet set =
      generate_jpeg_set(dir.path, {.samples = 6, .target_mean_bytes = 24 * 1024, .distinct_images = 3}, false, {});
  ASSERT_EQ(set.error, "");
  ASSERT_EQ(set.data->files().size(), 6u);
  EXPECT_EQ(set.distinct_images, 3);
  std::ifstream in(set.data->files()[4], std::ios::binary);
  const std::vector<char> bytes((std::istreambuf_iterator<char>(in)), {});
  ASSERT_GT(bytes.size(), 2u);
  EXPECT_EQ(static_cast<unsigned char>(bytes[0]), 0xFF);  // SOI marker
  EXPECT_EQ(static_cast<unsigned char>(bytes[1]), 0xD8);
  SampleDecoder decoder(1);
  std::vector<std::byte> tensor(SampleDecoder::tensor_bytes);
  std::string error;
  ASSERT_TRUE(decoder.decode({reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()}, tensor.data(), error))
      << error;
  const auto* values = reinterpret_cast<const float*>(tensor.data());
  double spread = 0;
  for (std::size_t i = 1; i < SampleDecoder::tensor_bytes / sizeof(float); ++i)
    spread += std::abs(values[i] - values[0]);
  EXPECT_GT(spread, 0);  // a real image, not a constant
  EXPECT_FALSE(decoder.decode({reinterpret_cast<const std::uint8_t*>("not a jpeg"), 10}, tensor.data(), error));
}

TEST(PipelineJpeg, LoaderDecodesEverySampleAndReportsTheDecodeStage) {
  Scratch dir;
  JpegSet set =
      generate_jpeg_set(dir.path, {.samples = 16, .target_mean_bytes = 24 * 1024, .distinct_images = 4}, false, {});
  ASSERT_EQ(set.error, "");
  ProbeContext ctx = make_context({{"decode", "jpeg"},
                                   {"batch-size", "4"},
                                   {"steps", "5"},
                                   {"workers", "2"},
                                   {"compute-time", "5ms"},
                                   {"checkpoint", "off"},
                                   {"gpus-in-node", "1"}});
  PipelinePlan plan;
  ASSERT_EQ(make_plan(ctx, plan), "");
  const SampleFiles samples{&set.data->files(), set.mean_bytes, static_cast<std::uint32_t>(set.max_bytes), false};
  const ProbeRun run = collect(ctx, plan, samples, dir.path);
  SKIP_WITHOUT_URING(run);
  ASSERT_EQ(run.outcome.status, Status::ok) << run.outcome.reason;
  EXPECT_EQ(run.info["steps_completed"], 5);
  EXPECT_GE(run.info["samples_loaded"].get<int>(), 20);
  EXPECT_GT(run.values.at("stage_busy_pct[loader_decode]"), 0.0);
  EXPECT_GT(run.info["timed"]["loader_decode_s"].get<double>(), 0.0);
  EXPECT_EQ(run.info["decode"].get<std::string>().rfind("jpeg", 0), 0u);
}

TEST(PipelineJpeg, PatternFilesCannotPassForJpegs) {
  Scratch dir;
  const ProbeRun run = run_pipeline_probe(
      dir.path, 16,
      {{"decode", "jpeg"}, {"batch-size", "4"}, {"steps", "4"}, {"compute-time", "1ms"}, {"checkpoint", "off"}});
  SKIP_WITHOUT_URING(run);
  ASSERT_EQ(run.outcome.status, Status::failed);
  EXPECT_NE(run.outcome.reason.find("JPEG decode"), std::string::npos) << run.outcome.reason;
  EXPECT_NE(run.outcome.reason.find(dir.path), std::string::npos) << run.outcome.reason;  // names the file
}

TEST(PipelineComm, ExposedAllReduceShareAddsToEveryStep) {
  Scratch dir;
  // ResNet-50: 102.2 MB of fp32 gradients, 8 GPUs: 178.9 MB on the bus; at 1.789 GB/s that is
  // 100 ms, of which the profile's 10% (90% overlapped) = 10 ms is exposed after 20 ms of compute.
  const ProbeRun run = run_pipeline_probe(dir.path, 64,
                                          {{"compute-time", "20ms"},
                                           {"batch-size", "8"},
                                           {"steps", "8"},
                                           {"gpus-in-node", "8"},
                                           {"busbw", "1.789"},
                                           {"checkpoint", "off"}});
  SKIP_WITHOUT_URING(run);
  ASSERT_EQ(run.outcome.status, Status::ok) << run.outcome.reason;
  EXPECT_NEAR(run.info["communication"]["time_s"].get<double>(), 0.100, 0.001);
  EXPECT_NEAR(run.info["communication"]["exposed_s"].get<double>(), 0.010, 0.0001);
  EXPECT_EQ(run.info["communication"]["busbw_source"], "--busbw (given)");
  // compute / (compute + exposed communication) = 2/3, wherever the machine stands.
  EXPECT_GT(run.values.at("stage_busy_pct[communication]"), 25.0);
  EXPECT_LT(run.values.at("stage_busy_pct[communication]"), 40.0);
  EXPECT_LT(run.values.at("au"), 72.0);
  EXPECT_GT(run.values.at("au"), 55.0);
}

TEST(PipelineComm, MeasuredBusbwIsTakenFromAResultFileAtTheNearestSize) {
  Scratch dir;
  const std::string path = dir.path + "/result.json";
  nlohmann::json metrics = nlohmann::json::array();
  for (const auto& [size, busbw] : {std::pair{"1048576", 50.0}, {"134217728", 180.0}, {"1073741824", 200.0}})
    metrics.push_back({{"name", "busbw"},
                       {"unit", "GB/s"},
                       {"labels", {{"size", size}, {"gpus", "8"}}},
                       {"median", busbw},
                       {"samples", {busbw}}});
  std::ofstream(path) << nlohmann::json{
      {"probes", {{{"id", "comm.allreduce"}, {"status", "ok"}, {"metrics", metrics}}}}};
  ProbeContext ctx = make_context({{"comm-result", path}, {"gpus-in-node", "8"}});
  PipelinePlan plan;
  ASSERT_EQ(make_plan(ctx, plan), "");
  EXPECT_EQ(plan.comm.busbw_gbps, 180.0);  // 134 MB is nearest to ResNet-50's 102 MB of gradients
  EXPECT_EQ(plan.comm.busbw_source.rfind("measured: comm.allreduce busbw [size=134217728, gpus=8]", 0), 0u)
      << plan.comm.busbw_source;
  ProbeContext bad = make_context({{"comm-result", dir.path + "/absent.json"}});
  EXPECT_NE(make_plan(bad, plan).find("--comm-result"), std::string::npos);
}

TEST(PipelineCheckpoint, AsyncWritesInTheBackgroundAndOffWritesNone) {
  Scratch dir;
  const std::map<std::string, std::string> given{
      {"compute-time", "2ms"}, {"batch-size", "8"}, {"steps", "20"}, {"gpus-in-node", "1"}};
  auto with = [&](const std::string& mode) {
    auto g = given;
    g["checkpoint"] = mode;
    return run_pipeline_probe(dir.path, 64, g);
  };
  const ProbeRun async = with("async");
  SKIP_WITHOUT_URING(async);
  ASSERT_EQ(async.outcome.status, Status::ok) << async.outcome.reason;
  EXPECT_EQ(async.info["checkpoints"]["written"], 2);
  EXPECT_EQ(async.info["checkpoints"]["mode"], "async");
  EXPECT_GE(async.values.at("au"), async.values.at("au_with_checkpoint"));
  const ProbeRun off = with("off");
  ASSERT_EQ(off.outcome.status, Status::ok) << off.outcome.reason;
  EXPECT_EQ(off.info["checkpoints"]["written"], 0);
  EXPECT_LT(off.values.at("stage_busy_pct[checkpoint]"), 0.5);  // two clock reads a step, nothing written
  EXPECT_NEAR(off.values.at("au"), off.values.at("au_with_checkpoint"), 0.5);
  EXPECT_EQ(dir.entries(), 0u);  // no checkpoint file left behind
}

TEST(PipelineLoaderOnly, NoComputeNoAllReduceNoPrediction) {
  Scratch dir;
  const ProbeRun run = run_pipeline_probe(
      dir.path, 64, {{"emulate-compute", "none"}, {"batch-size", "8"}, {"steps", "10"}, {"checkpoint", "off"}});
  SKIP_WITHOUT_URING(run);
  ASSERT_EQ(run.outcome.status, Status::ok) << run.outcome.reason;
  EXPECT_EQ(run.info["mode"], "loader only");
  EXPECT_EQ(run.info["compute_time_per_step_s"], 0.0);
  EXPECT_GT(run.values.at("samples_per_s"), 0.0);
  // Nothing to predict from (no compute): no inputs for the model, and the reason as a finding.
  EXPECT_FALSE(run.info.contains("prediction_inputs"));
  EXPECT_TRUE(std::any_of(run.findings.begin(), run.findings.end(),
                          [](const Finding& f) { return f.code == "pipeline.no_prediction"; }));
  EXPECT_EQ(run.info["communication"], "none: one GPU");
}

}  // namespace
}  // namespace nodeaudit::pipeline
