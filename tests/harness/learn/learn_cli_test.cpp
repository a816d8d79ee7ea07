// `nodeaudit learn` end to end on real PyTorch training jobs (tests/harness/learn/*.py) in the torch venv:
// a CNN over generated JPEGs through a 2-worker DataLoader, and a tiny GPT reading np.memmap slices
// with gradient accumulation. Every learned figure is checked against a value computed here from
// the layer shapes and the files, independently of the code under test.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "harness/score/profile.hpp"
#include "tests/harness/learn/learn_test_util.hpp"

namespace nodeaudit::learn::test {
namespace {

namespace fs = std::filesystem;

// conv 3->8 k3 @32x32, conv 8->16 k3 @16x16, linear 1024->10 (tests/harness/learn/train_cnn.py).
double cnn_parameters() { return (3 * 8 * 9 + 8) + (8 * 16 * 9 + 16) + (1024 * 10 + 10); }
// Training FLOPs of one sample as PyTorch's FLOP counter defines them: 2 x multiply-adds of every
// convolution and matmul; backward = the weight gradients of every layer plus the input gradients
// of every layer but the first (its input, the image, needs no gradient).
double cnn_training_flops() {
  const double conv1 = 2.0 * 8 * 3 * 9 * 32 * 32, conv2 = 2.0 * 16 * 8 * 9 * 16 * 16, fc = 2.0 * 1024 * 10;
  const double forward = conv1 + conv2 + fc;
  return forward + forward + (forward - conv1);
}

// The check every learned profile goes through finds a field whose comment explains nothing (written
// by hand here), so a profile with empty explanations cannot pass it.
TEST(LearnedProfileComments, AFieldWithAnEmptyOrWordlessCommentIsFound) {
  const std::string profile =
      "name = \"job\"\n[model]\nparameters = 1000  # counted: the sum of numel() over the model's parameters\n"
      "dtype = \"fp32\"  # \nmicro_batch = 4\nsample_size = 12  # 12\n# a comment line\n";
  const std::vector<std::string> expected = {"dtype = \"fp32\"  # ", "micro_batch = 4", "sample_size = 12  # 12"};
  EXPECT_EQ(lines_without_explanation(profile), expected);
}

TEST_F(LearnCli, CnnOverJpegFilesWithATwoWorkerDataLoader) {
  TORCH_OR_SKIP();
  const std::string images = dir_ + "/images";
  ASSERT_EQ(run_python({script("make_jpegs.py"), images, "24", "32"}), 0);
  double total = 0, files = 0;
  for (const auto& e : fs::recursive_directory_iterator(images))
    if (e.is_regular_file()) total += static_cast<double>(e.file_size()), ++files;
  const double mean_file_bytes = total / files;

  const auto r = learn({"--warmup", "2", "--steps", "4"}, {script("train_cnn.py"), images});
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  EXPECT_NE(r.out.find("epoch 0 step 1 loss"), std::string::npos) << "the job's own output passes through";
  const score::Profile p = score::load_profile_file(profile_path());
  EXPECT_EQ(p.model.parameters, cnn_parameters());
  EXPECT_EQ(p.model.trainable_parameters, cnn_parameters());
  EXPECT_NEAR(*p.model.flops_per_sample / cnn_training_flops(), 1.0, 0.001) << *p.model.flops_per_sample;
  EXPECT_EQ(p.model.dtype, "fp32");
  EXPECT_EQ(p.model.optimizer, "sgd");
  EXPECT_DOUBLE_EQ(p.model.bytes_per_parameter, 12);  // fp32 weights + gradients + momentum
  EXPECT_DOUBLE_EQ(p.model.gradient_bytes_per_parameter, 4);
  EXPECT_GT(p.model.activation_bytes_per_sample, 0);
  EXPECT_EQ(p.training.micro_batch_per_gpu, 8);
  EXPECT_EQ(p.training.gradient_accumulation, 1);
  EXPECT_EQ(p.data.decode, score::DecodeKind::jpeg);
  EXPECT_EQ(p.data.access, score::AccessPattern::small_files);
  EXPECT_NEAR(p.data.sample_bytes / mean_file_bytes, 1.0, 0.05) << "the files' mean size, from the files the loader opened";
  EXPECT_DOUBLE_EQ(p.data.device_bytes_per_sample, 3 * 32 * 32 * 4 + 8);  // ToTensor's fp32 CHW image and an int64 label
  EXPECT_EQ(p.category, score::Category::data_throughput_intensive);
  expect_every_field_commented();
  EXPECT_NE(profile_text().find("  # default for the category: median of the shipped data-throughput-intensive profiles"), std::string::npos)
      << profile_text();
  EXPECT_NE(profile_text().find("not measurable without a GPU"), std::string::npos);
  EXPECT_NE(profile_text().find("num_workers 2"), std::string::npos);

  const nlohmann::json e = learn_entry();
  EXPECT_EQ(e["status"], "ok");
  EXPECT_EQ(metric(e, "step_time")["n"], 4);
  EXPECT_EQ(e["info"]["timeline"].size(), 7u);
  EXPECT_EQ(e["info"]["world_size"], 1);
  EXPECT_GT(e["info"]["samples_per_s"].get<double>(), 0);
  EXPECT_TRUE(std::isfinite(e["info"]["shares"]["data_wait"].get<double>()));
  EXPECT_EQ(run_cli_exit({"profiles", "show", profile_path()}), 0);
  EXPECT_NE(r.out.find("next: "), std::string::npos) << r.out;
  EXPECT_TRUE(processes_in_folder().empty()) << "the job and its DataLoader workers are gone";
}

TEST_F(LearnCli, GptReadingMemmapSlicesWithGradientAccumulation) {
  TORCH_OR_SKIP();
  const std::string tokens = write_token_file(65536);
  const double V = 256, d = 64, L = 2, T = 32;
  const auto r = learn({"--warmup", "1", "--steps", "3"}, {script("train_gpt.py"), tokens, "--accum", "4"});
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  const score::Profile p = score::load_profile_file(profile_path());
  const double per_layer = 12 * d * d + 13 * d;  // qkv, proj, mlp weights and biases, two LayerNorms
  EXPECT_EQ(p.model.parameters, V * d + T * d + L * per_layer + 2 * d + d * V);
  const double matmul_parameters = L * 12 * d * d + d * V;  // the embeddings are lookups, not matmuls
  const double expected = 6 * matmul_parameters * T + 12 * L * d * T * T;
  EXPECT_NEAR(*p.model.flops_per_sample / expected, 1.0, 0.03) << *p.model.flops_per_sample << " vs " << expected;
  EXPECT_EQ(p.model.tokens_per_sample.value_or(0), T);
  EXPECT_EQ(p.model.optimizer, "adamw");
  // fp32 weights, gradients, exp_avg and exp_avg_sq, plus AdamW's one 4-byte step counter per tensor.
  EXPECT_NEAR(p.model.bytes_per_parameter, 16, 0.01);
  EXPECT_EQ(p.training.micro_batch_per_gpu, 4);
  EXPECT_EQ(p.training.gradient_accumulation, 4);
  EXPECT_EQ(p.data.access, score::AccessPattern::memmap);
  EXPECT_DOUBLE_EQ(p.data.sample_bytes, T * 2);  // uint16 tokens
  EXPECT_DOUBLE_EQ(p.data.dataset_bytes, 65536 * 2);
  EXPECT_EQ(p.data.decode, score::DecodeKind::none);
  EXPECT_EQ(p.category, score::Category::compute_intensive);
  expect_every_field_commented();
  const nlohmann::json e = learn_entry();
  for (const auto& step : e["info"]["timeline"]) EXPECT_EQ(step["backward_calls"], 4) << step.dump();
}

// Two ranks under torchrun on gloo, DistributedDataParallel: the world size, and the gradient bytes
// the all-reduce moves per step = trainable parameters x 4 (fp32 gradients).
TEST_F(LearnCli, TorchrunWithTwoRanksOnGloo) {
  TORCH_OR_SKIP();
  const std::string torchrun = std::filesystem::path(torch_python()).parent_path() / "torchrun";
  const std::string tokens = write_token_file(65536);
  const auto r = learn({"--warmup", "1", "--steps", "3"}, {script("train_gpt.py"), tokens},
                       {torchrun, "--standalone", "--nproc_per_node", "2"});
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  const score::Profile p = score::load_profile_file(profile_path());
  const nlohmann::json info = learn_entry()["info"];
  EXPECT_EQ(info["world_size"], 2);
  EXPECT_EQ(info["distributed"]["backend"], "gloo");
  EXPECT_EQ(info["distributed"]["ddp"], true);
  EXPECT_EQ(info["distributed"]["all_reduce_bytes_per_step"].get<double>(), p.model.trainable_parameters * 4);
  EXPECT_DOUBLE_EQ(p.model.gradient_bytes_per_parameter, 4);
  EXPECT_EQ(p.training.micro_batch_per_gpu, 4) << "per rank";
  EXPECT_DOUBLE_EQ(p.training.comm_overlap, 0.9);
  EXPECT_TRUE(processes_in_folder().empty()) << "both ranks and torchrun are gone";
}

// torch.compile on, with each backend a user meets: `eager` (dynamo's graph capture alone) and
// `inductor` (the default, which generates and compiles code: about a minute on 2 cores). The FLOPs
// per sample are the transformer's count by hand (6 x parameters x tokens + attention), the same as
// without compiling, and the activations are said not measured rather than a wrong figure.
class LearnCompiled : public LearnCli, public ::testing::WithParamInterface<const char*> {};

TEST_P(LearnCompiled, TorchCompileKeepsTheFlopCount) {
  TORCH_OR_SKIP();
  const std::string tokens = write_token_file(65536);
  const auto r = learn({"--warmup", "1", "--steps", "2", "--timeout", "10m"},
                       {script("train_gpt.py"), tokens, "--compile", "--compile-backend", GetParam()});
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  const score::Profile p = score::load_profile_file(profile_path());
  const double d = 64, L = 2, T = 32, V = 256;
  EXPECT_NEAR(*p.model.flops_per_sample / (6 * (L * 12 * d * d + d * V) * T + 12 * L * d * T * T), 1.0, 0.03);
  EXPECT_EQ(learn_entry()["info"]["compiled"], true);
  EXPECT_NE(profile_text().find("activation_bytes_per_sample = 0  # not measured: a torch.compile'd model"), std::string::npos) << profile_text();
}

INSTANTIATE_TEST_SUITE_P(Backends, LearnCompiled, ::testing::Values("eager", "inductor"));

}  // namespace
}  // namespace nodeaudit::learn::test
