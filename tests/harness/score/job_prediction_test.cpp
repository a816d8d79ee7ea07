// The one prediction model with a learned job's own measurements: each expected step, data wait and
// utilization below is worked out by hand from the job's figures and the node's (the comments show
// the arithmetic), not from the model's code.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "harness/score/model.hpp"
#include "harness/score/predict.hpp"
#include "harness/score/score.hpp"

namespace nodeaudit::score {
namespace {

using nlohmann::json;

json metric(const std::string& name, const json& labels, double median) {
  return {{"name", name}, {"labels", labels}, {"median", median}, {"samples", {median}}};
}

// A node without a GPU: `threads` logical CPUs, an optional CPU quota, storage.dataset at 3,200
// samples/s from the page cache.
json node(double threads, std::optional<double> quota, bool with_storage = true, const std::string& cpu = "Test CPU") {
  json env = {{"host", {{"cpu_model", cpu}, {"cores", threads}, {"threads", threads}, {"ram_total_bytes", 16e9}, {"ram_available_bytes", 12e9}}},
              {"gpus", json::array()},
              {"container", {{"cpus_allowed", threads}, {"cpu_limit", quota ? json(*quota) : json(nullptr)}}}};
  json probes = json::array();
  if (with_storage)
    probes.push_back({{"id", "storage.dataset"}, {"status", "ok"},
                      {"metrics", {metric("samples_per_s", {{"workers", "4"}, {"cache", "page"}}, 3200)}}});
  return {{"schema", "nodeaudit.result/1"}, {"env", env}, {"probes", probes}};
}

Profile image_job_profile() {
  Profile p = load_profile("cv-resnet50-imagenet");
  p.data.access = AccessPattern::small_files;
  p.data.sample_bytes = 140e3;
  p.data.dataset_bytes = 168e6;  // fits the 12 GB free: page cache
  p.training.micro_batch_per_gpu = 32;
  p.training.gradient_accumulation = 1;
  p.data.device_bytes_per_sample = 0;
  return p;
}

// 100 ms steps: 40 ms of compute, 60 ms waiting; 32 samples; 2 workers; the tree spent 150 ms of
// CPU per step, the rank's own process 30 ms of it, so the loader 120 ms.
JobMeasured image_job() {
  JobMeasured m;
  m.step_s = 0.100, m.compute_s = 0.040, m.data_wait_s = 0.060;
  m.samples_per_step = 32, m.world_size = 1, m.loader_workers = 2;
  m.tree_cpu_s = 0.150, m.ranks_cpu_s = 0.030, m.cores_available = 2;
  return m;
}

NodeModel predict(const Profile& profile, const JobMeasured& m, const json& job_node, const json& result) {
  JobDemand demand;
  demand.profile = &profile, demand.measured = &m, demand.job_node = &job_node;
  return build_model(demand, result);
}

TEST(JobPrediction, OnOneAndAHalfCoresTheJobsCpuSetsTheStep) {
  const Profile profile = image_job_profile();
  const NodeModel model = predict(profile, image_job(), node(2, std::nullopt), node(4, 1.5));
  // loader 120 ms over min(2 workers, 1.5 cores) = 80 ms; the tree's 150 ms over 1.5 cores = 100 ms;
  // storage 32 / 3200 = 10 ms. The step: 40 ms of compute + (100 - 40) ms waiting = 100 ms.
  ASSERT_FALSE(model.step.not_judged);
  ASSERT_TRUE(model.step.unmeasured.empty()) << model.step.unmeasured.front();
  EXPECT_NEAR(model.stage("cpu")->time_s, 0.100, 1e-12);
  EXPECT_NEAR(model.stage("storage")->time_s, 0.010, 1e-12);
  EXPECT_NEAR(model.step.step_s, 0.100, 1e-12);
  EXPECT_NEAR(model.step.data_wait_share, 0.6, 1e-12);
  EXPECT_NEAR(model.step.utilization, 0.4, 1e-12);
  EXPECT_NEAR(model.step.samples_per_s, 320, 1e-9);
  EXPECT_EQ(model.step.loader_resource, "cpu");
}

TEST(JobPrediction, OnFourCoresTheWorkersParallelismSetsTheStep) {
  const Profile profile = image_job_profile();
  const NodeModel model = predict(profile, image_job(), node(2, std::nullopt), node(4, std::nullopt));
  // loader 120 ms over min(2 workers, 4 cores) = 60 ms; the tree's 150 ms over 4 cores = 37.5 ms.
  // The step: 40 ms + (60 - 40) ms = 60 ms, a third of it waiting.
  EXPECT_NEAR(model.step.step_s, 0.060, 1e-12);
  EXPECT_NEAR(model.step.data_wait_share, 1.0 / 3, 1e-12);
}

TEST(JobPrediction, ReceivingABatchIsWaitedForEvenWhenTheWorkersAreAhead) {
  const Profile profile = image_job_profile();
  JobMeasured m = image_job();
  m.tree_cpu_s = m.ranks_cpu_s + 0.040;  // a loader of 40 ms CPU over 2 workers: 20 ms, well ahead of 40 ms of compute
  m.fetch_s = 0.005;                     // but the rank spends 5 ms of its own receiving each batch
  const NodeModel model = predict(profile, m, node(2, std::nullopt), node(4, std::nullopt));
  EXPECT_NEAR(model.step.step_s, 0.045, 1e-12);
  EXPECT_NEAR(model.step.data_wait_share, 0.005 / 0.045, 1e-12);
  EXPECT_EQ(model.step.loader_s > model.step.gpu_busy_s, false) << "the loader keeps up; only the fetch is waited for";
}

TEST(JobPrediction, ALoaderWithoutWorkersAddsToTheStep) {
  const Profile profile = image_job_profile();
  JobMeasured m = image_job();
  m.loader_workers = 0, m.data_wait_s = 0.050, m.step_s = 0.090, m.tree_cpu_s = m.ranks_cpu_s = 0.070;
  const NodeModel model = predict(profile, m, node(2, std::nullopt), node(4, std::nullopt));
  // The rank loads its own batches: its 50 ms of waiting is loader time, added to the 40 ms of compute.
  EXPECT_NEAR(model.step.step_s, 0.090, 1e-12);
  EXPECT_NEAR(model.step.data_wait_share, 0.050 / 0.090, 1e-12);
  EXPECT_TRUE(model.step.loader_serial);
}

TEST(JobPrediction, AFigureNotMeasuredIsNeverTakenForUnlimitedCapacity) {
  const Profile profile = image_job_profile();
  const json without_storage = node(4, std::nullopt, false);
  const NodeModel model = predict(profile, image_job(), node(2, std::nullopt), without_storage);
  ASSERT_EQ(model.step.unmeasured.size(), 1u);
  EXPECT_EQ(model.step.unmeasured.front().rfind("storage (storage.dataset", 0), 0u) << model.step.unmeasured.front();

  PredictJob job;
  job.profile = profile, job.name = "image-job", job.measured = image_job(), job.job_node = node(2, std::nullopt);
  const json cell = predict_on_node(job, without_storage, "no-storage", {});
  EXPECT_TRUE(cell["lower_bound"].get<bool>());
  EXPECT_TRUE(cell["data_wait_share"].is_null());
  EXPECT_EQ(cell["limiting"], "not judged");
  ASSERT_EQ(cell["not_judged"].size(), 1u);
  EXPECT_EQ(cell["not_judged"][0]["to_measure"], "nodeaudit run --only storage.dataset");
}

json with_decode(json result, double images_per_s_per_core) {
  result["probes"].push_back({{"id", "host.decode"}, {"status", "ok"},
                              {"metrics", {metric("images_per_s_per_core", {{"stage", "full"}}, images_per_s_per_core)}}});
  return result;
}

TEST(JobPrediction, OnAnotherCpuModelTheJobsCpuIsScaledByTheDecodeRatePerCore) {
  const Profile profile = image_job_profile();
  // The job's node decodes 150 images/s per core, this one 100: its CPU work takes 1.5x as long here.
  // loader 120 ms x 1.5 over 2 workers = 90 ms; the tree's 225 ms over 4 cores = 56 ms. Step 40 + 50 = 90 ms.
  const NodeModel model = predict(profile, image_job(), with_decode(node(2, std::nullopt, true, "CPU A"), 150),
                                  with_decode(node(4, std::nullopt, true, "CPU B"), 100));
  EXPECT_NEAR(model.stage("cpu")->time_s, 0.090, 1e-12);
  EXPECT_NEAR(model.step.step_s, 0.090, 1e-12);
  // Without host.decode on both, another CPU model's speed is not judged, never assumed.
  const NodeModel unjudged = predict(profile, image_job(), node(2, std::nullopt, true, "CPU A"), with_decode(node(4, std::nullopt, true, "CPU B"), 100));
  ASSERT_EQ(unjudged.step.unmeasured.size(), 1u);
  EXPECT_NE(unjudged.step.unmeasured.front().find("host.decode was not measured on both"), std::string::npos) << unjudged.step.unmeasured.front();
}

json gpu_node(const std::string& gpu, double bf16_tflops) {
  json result = node(32, std::nullopt);
  result["env"]["gpus"] = json::array({{{"index", 0}, {"name", gpu}, {"memory_total_bytes", 80e9}}});
  result["probes"].push_back({{"id", "gpu.gemm"}, {"status", "ok"},
                              {"metrics", {metric("tflops", {{"gpu", "0"}, {"dtype", "bf16"}}, bf16_tflops)}}});
  return result;
}

TEST(JobPrediction, ComputeOnAnotherGpuModelIsScaledByTheTwoGemmRates) {
  Profile profile = image_job_profile();
  profile.model.dtype = "bf16";
  JobMeasured m = image_job();
  m.gpu_model = "GPU-A";
  // The job's node runs bf16 GEMMs at 600 TFLOP/s, the other at 300: 40 ms of compute becomes 80 ms.
  const NodeModel other = predict(profile, m, gpu_node("GPU-A", 600), gpu_node("GPU-B", 300));
  EXPECT_NEAR(other.stage("compute")->time_s, 0.080, 1e-12);
  const NodeModel same = predict(profile, m, gpu_node("GPU-A", 600), gpu_node("GPU-A", 550));
  EXPECT_NEAR(same.stage("compute")->time_s, 0.040, 1e-12) << "the same GPU model: the job's own measurement";
  // Without the job's node's GEMM rate the compute cannot be scaled: not judged, with the probe named.
  const NodeModel unscaled = predict(profile, m, node(2, std::nullopt), gpu_node("GPU-B", 300));
  ASSERT_TRUE(unscaled.step.not_judged);
  EXPECT_NE(unscaled.step.not_judged->find("gpu.gemm"), std::string::npos) << *unscaled.step.not_judged;
}

TEST(JobPrediction, CheckpointSavesAddToTheStepScaledByTheWriteRates) {
  const Profile profile = image_job_profile();
  JobMeasured m = image_job();
  m.checkpoint_s = 0.020;
  json here = node(4, std::nullopt), there = node(2, std::nullopt);
  here["probes"].push_back({{"id", "storage.checkpoint"}, {"status", "ok"}, {"metrics", {metric("write_bandwidth", {{"shards", "1"}}, 1.0)}}});
  there["probes"].push_back({{"id", "storage.checkpoint"}, {"status", "ok"}, {"metrics", {metric("write_bandwidth", {{"shards", "1"}}, 2.0)}}});
  // 20 ms of saving at 2 GB/s becomes 40 ms at 1 GB/s; the step of 60 ms (4 cores) becomes 100 ms.
  const NodeModel model = predict(profile, m, there, here);
  EXPECT_NEAR(model.step.checkpoint_s, 0.040, 1e-12);
  EXPECT_NEAR(model.step.step_s, 0.100, 1e-12);
  EXPECT_NEAR(model.step.data_wait_share, 0.020 / 0.100, 1e-12);
}

// A token job reading np.memmap windows: 32 windows of 2 KB a step from a 20 GB file (more than
// the node's 12 GB free: once the run is under way the page cache holds 60% of it, and 60% of the
// random windows are found there), 40 ms of compute, a loader of 20 ms CPU.
Profile memmap_job_profile() {
  Profile p = image_job_profile();
  p.data.access = AccessPattern::memmap;
  p.data.decode = DecodeKind::none;
  p.data.sample_bytes = 2048;
  p.data.dataset_bytes = 20e9;
  return p;
}

JobMeasured memmap_job() {
  JobMeasured m = image_job();
  m.step_s = 0.050, m.compute_s = 0.040, m.data_wait_s = 0.010;
  m.tree_cpu_s = 0.050, m.ranks_cpu_s = 0.030;
  return m;
}

json with_mmap_storage(json result, double windows_per_s, const std::string& cache = "none") {
  for (auto& probe : result["probes"])
    if (probe["id"] == "storage.dataset")
      probe["metrics"].push_back(metric("samples_per_s", {{"workers", "2"}, {"cache", cache}, {"read", "mmap"}}, windows_per_s));
  return result;
}

TEST(JobPrediction, AMemmapJobIsScoredOnlyWithWindowsReadThroughAMapping) {
  const Profile profile = memmap_job_profile();
  // Whole-file reads at 3,200 samples/s say nothing of page faults: storage not judged, and the
  // command to measure it takes the job as its profile (so the run reads windows of a mapped file).
  PredictJob job;
  job.profile = profile, job.name = "tokens", job.source = "tokens-learned.json", job.measured = memmap_job(), job.job_node = node(2, std::nullopt);
  const json unmeasured = predict_on_node(job, node(4, std::nullopt), "files-only", {});
  EXPECT_TRUE(unmeasured["lower_bound"].get<bool>());
  ASSERT_EQ(unmeasured["not_judged"].size(), 1u) << unmeasured.dump();
  EXPECT_EQ(unmeasured["not_judged"][0]["to_measure"], "nodeaudit run --only storage.dataset --profile tokens-learned.json");
  EXPECT_NE(unmeasured["not_judged"][0]["why"].get<std::string>().find("[read=mmap]"), std::string::npos) << unmeasured.dump();
  // 100 cold windows/s through the mapping: 32 / 100 x (1 - 12/20) = 128 ms of storage a step,
  // against 40 ms of compute and a loader of (50 - 30) ms / 2 workers = 10 ms: the step is 128 ms,
  // 88 of it waiting.
  const NodeModel model = predict(profile, memmap_job(), node(2, std::nullopt), with_mmap_storage(node(4, std::nullopt), 100));
  ASSERT_FALSE(model.step.not_judged);
  EXPECT_NEAR(model.stage("storage")->time_s, 0.128, 1e-12);
  EXPECT_NEAR(model.step.step_s, 0.128, 1e-12);
  EXPECT_NEAR(model.step.data_wait_share, 0.088 / 0.128, 1e-12);
  EXPECT_EQ(model.step.loader_resource, "storage");
}

json with_cache_fill(json result, double bytes_per_window) {
  for (auto& probe : result["probes"])
    if (probe["id"] == "storage.dataset")
      probe["metrics"].push_back(metric("cache_fill_per_sample", {{"workers", "2"}, {"cache", "none"}, {"read", "mmap"}}, bytes_per_window));
  return result;
}

NodeModel predict_cold(const Profile& profile, const JobMeasured& m, const json& job_node, const json& result,
                       std::optional<ColdRun> cold_run) {
  JobDemand demand;
  demand.profile = &profile, demand.measured = &m, demand.job_node = &job_node, demand.cold_run = cold_run;
  return build_model(demand, result);
}

TEST(JobPrediction, ARunFromAColdPageCacheIsPredictedAsTheCacheFills) {
  // 20 GB of data, 12 GB of free memory, 32 windows a step at 100 cold windows/s, and each miss adds
  // 100 MB to the cache (the figure, made large so that the cache fills in a few steps):
  //   step 1: nothing cached, 32 misses, cached 32 x 100 MB = 3.2 GB;
  //   step 2: hit 3.2/20 = 0.16, 26.88 misses, each adding 100 MB x 0.84: cached 5.45792 GB;
  //   step 3: hit 0.272896.
  // Steps 2-3 (one warm-up step): mean hit 0.216448; storage 32 / 100 x 0.783552 = 250.73664 ms.
  const json job_node = node(2, std::nullopt);
  const json mapped = with_cache_fill(with_mmap_storage(node(4, std::nullopt), 100), 100e6);
  const NodeModel cold = predict_cold(memmap_job_profile(), memmap_job(), job_node, mapped, ColdRun{1, 2});
  EXPECT_NEAR(cold.stage("storage")->time_s, 0.32 * 0.783552, 1e-12);
  EXPECT_NE(cold.stage("storage")->note.find("steps 2-3 from a cold page cache"), std::string::npos) << cold.stage("storage")->note;
  // Without a run length: the steady state, 60% held (128 ms, as without the figure), and the note
  // says how soon it is reached from a cold cache.
  const NodeModel steady = predict_cold(memmap_job_profile(), memmap_job(), job_node, mapped, std::nullopt);
  EXPECT_NEAR(steady.stage("storage")->time_s, 0.128, 1e-12);
  EXPECT_NE(steady.stage("storage")->note.find("from a cold cache it fills in about"), std::string::npos) << steady.stage("storage")->note;
  // A run length without the fill figure: the steady state, and the cold start is said not judged.
  const NodeModel unmeasured = predict_cold(memmap_job_profile(), memmap_job(), job_node, with_mmap_storage(node(4, std::nullopt), 100), ColdRun{1, 2});
  EXPECT_NEAR(unmeasured.stage("storage")->time_s, 0.128, 1e-12);
  EXPECT_NE(unmeasured.stage("storage")->note.find("the cold start asked for is not judged"), std::string::npos);
}

TEST(JobPrediction, TheWaitTheJobMeasuredIsTheLeastItWaitsWhereItsCpusAreNoFaster) {
  // 50 ms steps: 40 ms compute, 10 ms waiting though the loader keeps up on average (its 20 ms of
  // worker CPU over 2 workers = 10 ms; the tree's 50 ms over 2 cores = 25 ms; storage 32 / 3,200 = 10 ms).
  JobMeasured m = image_job();
  m.step_s = 0.050, m.compute_s = 0.040, m.data_wait_s = 0.010, m.tree_cpu_s = 0.050, m.ranks_cpu_s = 0.030;
  // On the same 2 cores: the 10 ms it waited there stay, step 50 ms, wait 20%.
  const NodeModel same = predict(image_job_profile(), m, node(2, std::nullopt), node(2, std::nullopt));
  EXPECT_NEAR(same.step.step_s, 0.050, 1e-12);
  EXPECT_NEAR(same.step.data_wait_share, 0.2, 1e-12);
  EXPECT_NE(same.stage("cpu")->note.find("at least the 10 ms a step the job waited on its own node"), std::string::npos) << same.stage("cpu")->note;
  // On 4 cores the workers no longer share two cores with the rank: nothing carried, step 40 ms.
  const NodeModel wider = predict(image_job_profile(), m, node(2, std::nullopt), node(4, std::nullopt));
  EXPECT_NEAR(wider.step.step_s, 0.040, 1e-12);
}

TEST(JobPrediction, TheJobsOwnMemoryIsNotThereForThePageCache) {
  // The job's processes held 2 GB: of the 12 GB free, 10 GB cache the 20 GB data set, half of it:
  // storage 32 / 100 x (1 - 0.5) = 160 ms (128 ms with all 12 GB).
  JobMeasured m = memmap_job();
  m.resident_bytes = 2e9;
  const NodeModel model = predict(memmap_job_profile(), m, node(2, std::nullopt), with_mmap_storage(node(4, std::nullopt), 100));
  EXPECT_NEAR(model.stage("storage")->time_s, 0.160, 1e-12);
  EXPECT_NE(model.stage("storage")->note.find("the job's own processes holding 2 GB"), std::string::npos) << model.stage("storage")->note;
}

TEST(JobPrediction, AFileJobIsNeverScoredWithTheMappedWindowsFigure) {
  // The same node holds both figures, both from the page cache; the mapped one is the higher
  // (9,000/s), yet a job opening a file per sample is scored with whole-file reads: 32 / 3,200 = 10 ms.
  const json both = with_mmap_storage(node(4, std::nullopt), 9000, "page");
  const NodeModel model = predict(image_job_profile(), image_job(), node(2, std::nullopt), both);
  EXPECT_NEAR(model.stage("storage")->time_s, 0.010, 1e-12);
}

}  // namespace
}  // namespace nodeaudit::score
