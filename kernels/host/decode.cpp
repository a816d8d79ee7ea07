// host.decode — CPU JPEG decode and ImageNet training-transform throughput, per core and across cores.
//
// A corpus of synthetic photographs (gradients, shapes, texture, grain tuned to a target mean
// encoded size; default 500x375, quality 90, 4:2:0, about 110 KiB like ImageNet) is encoded in
// memory with libjpeg-turbo. Three stages are timed at each worker count, one worker pinned per CPU:
//   decode   JPEG -> packed RGB (tjDecompress2, accurate IDCT, fancy upsampling: libjpeg-turbo's defaults)
//   augment  random resized crop to 224x224 (bilinear) + horizontal flip (p = 0.5) + normalize to float CHW,
//            on images decoded beforehand
//   full     decode then augment, image after image
// Formula: one repetition starts all workers at a barrier and ends when the last is done; each worker
// handles --images images (at the quick level, its round's share of them: the rounds split the
// corpus), so images_per_s = images x workers / wall time. images_per_s_per_core is
// that rate at the largest worker count divided by the count; images_per_s_per_gpu is the full rate
// with every CPU busy divided by the node's GPUs.
// Pitfalls: flat or tiny synthetic images decode several times faster than photos, hence the tuned
// grain and the recorded mean size; workers are logical CPUs, so on SMT "per core" is per hardware
// thread; one busy core boosts higher than all cores (compare per-core at 1 and at N workers); the
// augment-only stage reads a pool of 32 decoded images, which is colder in cache than an image just
// decoded in the full stage, so augment + decode can exceed full.
#include <cmath>

#include <fmt/format.h>

#include "harness/core/registry.hpp"
#include "harness/core/units.hpp"
#include "harness/node/nvml.hpp"
#include "kernels/host/decode_scaling.hpp"
#include "kernels/host/jpeg_reference.hpp"
#include "kernels/host/thread_team.hpp"

namespace nodeaudit::host {
namespace {

constexpr int calibration_images = 4;
constexpr int augment_pool_images = 32;
// Two decodes of one JPEG differ only by rounding (about 50 dB even on white noise): 30 dB is far
// below that and far above a wrong decode (swapped channels, a shifted or truncated image).
constexpr double min_reference_psnr_db = 30.0;
// Against the source, whose loss grows as the quality falls (14 dB at quality 1, 28 at 90 with
// ImageNet-sized grain): the decode must be nearer its own source than another image's by this much.
constexpr double min_source_margin_db = 1.0;

CorpusSpec corpus_spec(const ProbeContext& ctx) {
  const ParamValues& p = ctx.params();
  CorpusSpec spec;
  spec.width = static_cast<int>(p.integer("width"));
  spec.height = static_cast<int>(p.integer("height"));
  spec.quality = static_cast<int>(p.integer("quality"));
  const std::string& samp = p.text("subsampling");
  spec.subsampling = samp == "444" ? ChromaSubsampling::s444 : samp == "422" ? ChromaSubsampling::s422 : ChromaSubsampling::s420;
  spec.target_mean_bytes = p.size_bytes("image-size");
  spec.seed = static_cast<std::uint64_t>(p.integer("seed"));
  // At the quick level the rounds split --images: each generates and runs through its own part,
  // so the rounds together decode the same distinct images one round would.
  spec.images = static_cast<int>(ctx.round_share(p.integer("images")));
  spec.first_image = static_cast<int>(ctx.round_share_start(p.integer("images")));
  return spec;
}

void record_corpus_info(ProbeContext& ctx, const CorpusSpec& spec, const Corpus& corpus, const GrainTuning& tuning) {
  auto& info = ctx.info();
  info["images"] = corpus.jpegs.size();
  if (spec.images != ctx.params().integer("images"))
    info["image_indices"] = fmt::format("{}..{} of {}", spec.first_image, spec.first_image + spec.images - 1, ctx.params().integer("images"));
  info["image_width"] = spec.width, info["image_height"] = spec.height;
  info["quality"] = spec.quality, info["subsampling"] = to_string(spec.subsampling);
  info["target_mean_bytes"] = spec.target_mean_bytes;
  info["mean_bytes"] = std::round(corpus.mean_bytes());
  info["min_bytes"] = corpus.min_bytes(), info["max_bytes"] = corpus.max_bytes();
  info["grain_amplitude"] = std::round(tuning.amplitude * 100) / 100;
  info["corpus_fnv1a"] = fmt::format("{:016x}", corpus.fnv1a());
  const double target = static_cast<double>(spec.target_mean_bytes);
  if (std::abs(corpus.mean_bytes() - target) > 0.1 * target)
    ctx.add_finding(Severity::warn, "host_decode.size_target",
                    fmt::format("mean encoded size {} is more than 10% from --image-size {} ({}x{} at quality {} {}); "
                                "decode cost grows with the encoded size, so rates are not comparable to that target",
                                format_bytes(std::round(corpus.mean_bytes())), format_bytes(target), spec.width, spec.height, spec.quality,
                                to_string(spec.subsampling)));
}

// Decodes the corpus's first image as the timed stages do and checks it against a reference decode
// of the same JPEG (jpeg_reference.hpp): both see the same quantized coefficients, so they agree on
// any content, however much the encoder threw away. The PSNR against the source pixels is recorded
// (the encoder's own loss at this quality and grain); only a decode nearer another image fails it.
bool verify_decode(ProbeContext& ctx, const CorpusSpec& spec, const Corpus& corpus, double grain_amplitude) {
  const RgbImage source = render_scene(make_scene(spec.width, spec.height, image_seed(spec, spec.first_image)), grain_amplitude);
  RgbImage decoded, reference;
  JpegDecoder decoder;
  if (!decoder.decode(corpus.jpegs[0], decoded) || decoded.width != source.width || decoded.height != source.height) {
    ctx.add_finding(Severity::fail, "host_decode.verify", fmt::format("image {} did not decode to {}x{}: {}", spec.first_image, spec.width, spec.height, decoder.error()));
    return false;
  }
  std::string error;
  if (!decode_reference(corpus.jpegs[0], reference, error)) {
    ctx.add_finding(Severity::fail, "host_decode.verify", fmt::format("image {}: the reference decode failed: {}", spec.first_image, error));
    return false;
  }
  const double against_reference = psnr_db(reference, decoded), against_source = psnr_db(source, decoded);
  ctx.info()["decode_psnr_db"] = std::round(against_reference * 10) / 10;
  ctx.info()["source_psnr_db"] = std::round(against_source * 10) / 10;
  if (against_reference < min_reference_psnr_db) {
    ctx.add_finding(Severity::fail, "host_decode.verify",
                    fmt::format("image {} decodes at {:.1f} dB PSNR against a reference decode of the same JPEG; expected at "
                                "least {:.0f} dB",
                                spec.first_image, against_reference, min_reference_psnr_db));
    return false;
  }
  // Whatever the quality, the decode is nearer its own source than the next image's.
  const RgbImage other = render_scene(make_scene(spec.width, spec.height, image_seed(spec, spec.first_image + 1)), grain_amplitude);
  const double against_other = psnr_db(other, decoded);
  ctx.info()["other_image_psnr_db"] = std::round(against_other * 10) / 10;
  if (against_source < against_other + min_source_margin_db) {
    ctx.add_finding(Severity::fail, "host_decode.verify",
                    fmt::format("image {} decodes at {:.1f} dB PSNR against the pixels it was encoded from and {:.1f} dB "
                                "against image {}'s: not that image (expected at least {:.0f} dB nearer its own)",
                                spec.first_image, against_source, against_other, spec.first_image + 1, min_source_margin_db));
    return false;
  }
  return true;
}

Outcome measure_decode(ProbeContext& ctx) {
  const CorpusSpec spec = corpus_spec(ctx);
  const int cpus = static_cast<int>(allowed_cpus().size());
  const WorkerPlan plan = plan_worker_counts(ctx.params().int_list("workers"), cpus);
  if (!plan.error.empty()) return Outcome::bad_input(plan.error);
  for (const std::string& note : plan.notes) ctx.add_finding(Severity::info, "host_decode.workers_capped", note);
  ctx.info()["cpus"] = cpus;
  ctx.info()["workers_measured"] = plan.counts;

  std::string error;
  const GrainTuning tuning = tune_grain(spec, calibration_images, error);
  Corpus corpus;
  if (error.empty()) {
    std::unique_ptr<Workers> encoders = make_pinned_workers(plan.counts.back());
    corpus = build_corpus(spec, tuning.amplitude, encoders->size(), [&](const std::function<void(int)>& step) { encoders->run(step); }, error);
  }
  if (!error.empty()) return Outcome::failed("generating the JPEG corpus: " + error);
  record_corpus_info(ctx, spec, corpus, tuning);
  if (!verify_decode(ctx, spec, corpus, tuning.amplitude)) return Outcome::failed("decoded pixels do not match their source (see host_decode.verify)");
  StageInputs inputs{.corpus = &corpus};
  if (!decode_pool(corpus, augment_pool_images, inputs.decoded_pool, error)) return Outcome::failed("decoding the augment pool: " + error);
  if (ctx.should_stop()) return Outcome::interrupted();

  const int crop = static_cast<int>(ctx.params().integer("crop"));
  ScalingResult scaling = measure_scaling(ctx, inputs, plan.counts, crop, spec.images, make_pinned_workers);
  record_per_core(ctx, scaling.at_largest, scaling.largest_workers);
  if (scaling.outcome.status != Status::ok) return scaling.outcome;
  const Nvml nvml;
  record_per_gpu(ctx, scaling.at_largest.at(Stage::full), scaling.largest_workers, cpus, nvml.device_count(), nvml.why_unavailable());
  return Outcome::ok();
}

// Generous but finite: 20 ms per image per repetition is several times slower than any current core.
double decode_deadline_s(const ParamValues& p, Level level) {
  const RepeatPolicy policy = default_policy(level);
  const std::size_t counts = plan_worker_counts(p.int_list("workers"), static_cast<int>(allowed_cpus().size())).counts.size();
  const double repetition_s = 0.02 * static_cast<double>(p.integer("images"));
  const double per_stage_s = (policy.warmup + policy.min_repetitions + 1) * repetition_s + policy.budget_s;
  return 60.0 + 0.05 * static_cast<double>(p.integer("images")) + static_cast<double>(std::max<std::size_t>(counts, 1)) * 3 * per_stage_s;
}

ProbeSpec host_decode_spec() {
  ProbeSpec spec;
  spec.id = "host.decode";
  spec.description = "CPU JPEG decode + training augment throughput per core and across cores (images/s)";
  spec.params = {
      ParamSpec{.name = "image-size", .type = ParamType::size, .default_by_level = same_at_all_levels("110KiB"),
                .help = "Target mean encoded JPEG size; the grain of the synthetic images is tuned to reach it", .min = 1024, .max = 64ull << 20},
      ParamSpec{.name = "width", .type = ParamType::integer, .default_by_level = same_at_all_levels("500"), .help = "Image width in pixels", .min = 16, .max = 16384},
      ParamSpec{.name = "height", .type = ParamType::integer, .default_by_level = same_at_all_levels("375"), .help = "Image height in pixels", .min = 16, .max = 16384},
      ParamSpec{.name = "quality", .type = ParamType::integer, .default_by_level = same_at_all_levels("90"), .help = "JPEG quality", .min = 1, .max = 100},
      ParamSpec{.name = "subsampling", .type = ParamType::choice, .default_by_level = same_at_all_levels("420"), .help = "Chroma subsampling",
                .choices = {"420", "422", "444"}},
      ParamSpec{.name = "images", .type = ParamType::integer, .default_by_level = {"300", "1000", "4000"},
                .help = "Distinct JPEGs generated; every worker runs through this many images per repetition (at the quick level the rounds split them)", .min = 1, .max = 100000},
      ParamSpec{.name = "workers", .type = ParamType::int_list, .default_by_level = same_at_all_levels("0"),
                .help = "Worker counts to measure, one pinned thread per CPU; 0 = 1, 2, 4, ... up to every CPU this process may use",
                .min = 0, .max = 65536},
      ParamSpec{.name = "crop", .type = ParamType::integer, .default_by_level = same_at_all_levels("224"), .help = "Side of the random resized crop in pixels",
                .min = 8, .max = 4096},
      ParamSpec{.name = "seed", .type = ParamType::integer, .default_by_level = same_at_all_levels("1"), .help = "Seed of the synthetic images",
                .min = 0, .max = 4294967295.0},
  };
  spec.body = measure_decode;
  spec.deadline_s = decode_deadline_s;
  spec.left_out_for_demand = [](const StepDemand& demand) -> std::string {
    if (demand.decode != "none") return "";
    return fmt::format("not needed by profile {} (data.decode = none: no CPU decode to judge); --only host.decode measures it",
                       demand.profile);
  };
  return spec;
}

const ProbeRegistrar host_decode_registrar{host_decode_spec()};

}  // namespace
}  // namespace nodeaudit::host
