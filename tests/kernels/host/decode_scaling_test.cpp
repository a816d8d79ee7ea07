// host.decode worker planning, the scaling loop with stand-in workers, and the derived figures.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>

#include "kernels/host/decode_scaling.hpp"

namespace nodeaudit::host {
namespace {

ProbeContext make_context(int repetitions) {
  RunSettings settings;
  settings.repetitions = repetitions;
  return ProbeContext(ParamValues{}, settings, nullptr, std::chrono::steady_clock::now() + std::chrono::hours(1));
}

// Runs the workers one after another on the calling thread and claims one could not be pinned.
class UnpinnableWorkers final : public Workers {
 public:
  explicit UnpinnableWorkers(int count) : count_(count), errors_{"worker 0 could not be pinned to CPU 0: Invalid argument"} {}
  int size() const override { return count_; }
  void run(const std::function<void(int)>& step) override {
    for (int w = 0; w < count_; ++w) step(w);
  }
  const std::vector<std::string>& pin_errors() const override { return errors_; }

 private:
  int count_;
  std::vector<std::string> errors_;
};

Corpus small_corpus(int images) {
  CorpusSpec spec;
  spec.width = 64, spec.height = 48, spec.images = images;
  std::string error;
  Corpus corpus = build_corpus(spec, 20, 1, [](const std::function<void(int)>& step) { step(0); }, error);
  EXPECT_TRUE(error.empty()) << error;
  return corpus;
}

const Metric* find_metric(const ProbeContext& ctx, const std::string& name, const Labels& labels) {
  for (const Metric& m : ctx.metrics())
    if (m.name == name && m.labels == labels) return &m;
  return nullptr;
}

const Finding* find_finding(const ProbeContext& ctx, const std::string& code) {
  for (const Finding& f : ctx.findings())
    if (f.code == code) return &f;
  return nullptr;
}

TEST(WorkerPlan, DefaultDoublesUpToEveryCpu) {
  EXPECT_EQ(plan_worker_counts({0}, 6).counts, (std::vector<int>{1, 2, 4, 6}));
  EXPECT_EQ(plan_worker_counts({0}, 8).counts, (std::vector<int>{1, 2, 4, 8}));
  EXPECT_EQ(plan_worker_counts({0}, 1).counts, (std::vector<int>{1}));
  EXPECT_TRUE(plan_worker_counts({0}, 6).notes.empty());
}

TEST(WorkerPlan, MoreWorkersThanCpusAreCappedWithANote) {
  const WorkerPlan plan = plan_worker_counts({1, 64}, 2);
  EXPECT_EQ(plan.counts, (std::vector<int>{1, 2}));
  ASSERT_EQ(plan.notes.size(), 1u);
  EXPECT_NE(plan.notes[0].find("--workers 64"), std::string::npos) << plan.notes[0];
  EXPECT_NE(plan.notes[0].find("2 CPUs"), std::string::npos) << plan.notes[0];
  EXPECT_TRUE(plan.error.empty());
}

TEST(WorkerPlan, DuplicatesMergeAndZeroOnlyStandsAlone) {
  EXPECT_EQ(plan_worker_counts({3, 1, 3}, 4).counts, (std::vector<int>{1, 3}));
  const WorkerPlan mixed = plan_worker_counts({0, 2}, 4);
  EXPECT_NE(mixed.error.find("--workers 0"), std::string::npos) << mixed.error;
}

TEST(DecodeScaling, AffinityFailureIsReportedAndMeasurementGoesOn) {
  const Corpus corpus = small_corpus(3);
  StageInputs inputs{.corpus = &corpus};
  std::string error;
  ASSERT_TRUE(decode_pool(corpus, 2, inputs.decoded_pool, error)) << error;
  ProbeContext ctx = make_context(2);
  const ScalingResult result = measure_scaling(ctx, inputs, {1, 2}, 16, 3, [](int n) { return std::make_unique<UnpinnableWorkers>(n); });
  EXPECT_EQ(result.outcome.status, Status::ok) << result.outcome.reason;
  const Finding* pin = find_finding(ctx, "host_decode.affinity");
  ASSERT_NE(pin, nullptr);
  EXPECT_EQ(pin->severity, Severity::warn);
  EXPECT_NE(pin->message.find("could not be pinned"), std::string::npos);
  for (const char* workers : {"1", "2"})
    for (const char* stage : {"decode", "augment", "full"}) {
      const Metric* m = find_metric(ctx, "images_per_s", {{"workers", workers}, {"stage", stage}});
      ASSERT_NE(m, nullptr) << workers << " " << stage;
      EXPECT_EQ(m->unit, "images/s");
      EXPECT_EQ(m->samples.size(), 2u);
      EXPECT_GT(*std::min_element(m->samples.begin(), m->samples.end()), 0.0);
    }
  EXPECT_EQ(result.largest_workers, 2);
  EXPECT_EQ(result.at_largest.size(), 3u);
}

TEST(DecodeScaling, CorruptImageFailsTheProbeWithAFinding) {
  Corpus corpus = small_corpus(2);
  corpus.jpegs[1].assign(100, 0);
  StageInputs inputs{.corpus = &corpus};
  std::string error;
  ASSERT_TRUE(decode_pool(corpus, 1, inputs.decoded_pool, error)) << error;
  ProbeContext ctx = make_context(1);
  const ScalingResult result = measure_scaling(ctx, inputs, {1}, 16, 2, [](int n) { return std::make_unique<UnpinnableWorkers>(n); });
  EXPECT_EQ(result.outcome.status, Status::failed);
  const Finding* f = find_finding(ctx, "host_decode.decode_error");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, Severity::fail);
  EXPECT_NE(f->message.find("image 1"), std::string::npos) << f->message;
}

Measurement two_repetitions() {
  Measurement m;
  m.seconds = {0.5, 1.0};
  m.work = {Work{.ops = 100}, Work{.ops = 100}};  // 200 and 100 images/s
  return m;
}

TEST(DecodeFigures, PerCoreDividesEachRepetitionByTheWorkers) {
  ProbeContext ctx = make_context(1);
  record_per_core(ctx, {{Stage::decode, two_repetitions()}, {Stage::full, two_repetitions()}}, 4);
  const Metric* m = find_metric(ctx, "images_per_s_per_core", {{"stage", "decode"}});
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->samples, (std::vector<double>{50, 25}));
  EXPECT_NE(find_metric(ctx, "images_per_s_per_core", {{"stage", "full"}}), nullptr);
  EXPECT_EQ(ctx.info()["per_core_at_workers"], 4);
}

TEST(DecodeFigures, PerGpuSharesEveryCpuAmongTheGpus) {
  ProbeContext ctx = make_context(1);
  record_per_gpu(ctx, two_repetitions(), 16, 16, 8, "");
  const Metric* m = find_metric(ctx, "images_per_s_per_gpu", {{"stage", "full"}});
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->samples, (std::vector<double>{25, 12.5}));
}

TEST(DecodeFigures, PerGpuAbsentWithoutGpusAndSaysWhy) {
  ProbeContext ctx = make_context(1);
  record_per_gpu(ctx, two_repetitions(), 2, 2, 0, "libnvidia-ml.so.1 not found");
  EXPECT_EQ(find_metric(ctx, "images_per_s_per_gpu", {{"stage", "full"}}), nullptr);
  const Finding* f = find_finding(ctx, "host_decode.no_gpu");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, Severity::info);
  EXPECT_NE(f->message.find("libnvidia-ml.so.1 not found"), std::string::npos);
}

TEST(DecodeFigures, PerGpuNeedsEveryCpuMeasured) {
  ProbeContext ctx = make_context(1);
  record_per_gpu(ctx, two_repetitions(), 4, 16, 8, "");
  EXPECT_EQ(find_metric(ctx, "images_per_s_per_gpu", {{"stage", "full"}}), nullptr);
  ASSERT_NE(find_finding(ctx, "host_decode.per_gpu_skipped"), nullptr);
}

}  // namespace
}  // namespace nodeaudit::host
