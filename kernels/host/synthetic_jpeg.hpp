// Synthetic photographs for the decode probe: smooth gradients, overlapping shapes, a correlated
// texture and fine grain, so the JPEGs carry photo-like entropy (a flat colour encodes to a few
// KiB and decodes far faster than any real image). The grain amplitude is tuned so the mean
// encoded size approaches a target (ImageNet averages about 110 KiB at about 500x375).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "kernels/host/jpeg_codec.hpp"

namespace nodeaudit::host {

// The deterministic parts of one image: everything but the grain strength.
struct SyntheticScene {
  int width = 0, height = 0;
  std::vector<float> base;         // packed RGB, 0..255, gradients + shapes + texture
  std::vector<std::int8_t> grain;  // one unit grain value per pixel and channel, -127..127
};

SyntheticScene make_scene(int width, int height, std::uint64_t seed);
// base + grain * amplitude / 127, rounded and clamped to 0..255.
RgbImage render_scene(const SyntheticScene& scene, double grain_amplitude);

struct CorpusSpec {
  int width = 500, height = 375, quality = 90;
  ChromaSubsampling subsampling = ChromaSubsampling::s420;
  std::uint64_t target_mean_bytes = 110 * 1024;
  int images = 300;
  std::uint64_t seed = 1;
  int first_image = 0;  // index of the corpus's first image (a round's share starts past the earlier rounds')
};

// Seed of image `index` in a corpus (distinct, reproducible streams per image).
std::uint64_t image_seed(const CorpusSpec& spec, int index);

struct GrainTuning {
  double amplitude = 0;
  double mean_bytes = 0;  // mean encoded size of the calibration images at `amplitude`
  bool reachable = true;  // false when the target lies outside what 0..max amplitude can give
};

// Bisects the grain amplitude on `calibration_images` scenes of the corpus until their mean encoded
// size is within 1% of the target (or the search interval is exhausted).
GrainTuning tune_grain(const CorpusSpec& spec, int calibration_images, std::string& error);

struct Corpus {
  int width = 0, height = 0;
  std::vector<std::vector<std::uint8_t>> jpegs;
  double mean_bytes() const;
  std::uint64_t min_bytes() const;
  std::uint64_t max_bytes() const;
  std::uint64_t fnv1a() const;  // hash of every JPEG in order: identical corpora hash alike
};

// Runs step(worker) on every worker of a group at once; returns when all are done.
using RunOnWorkers = std::function<void(const std::function<void(int)>&)>;

// Encodes spec.images images at `grain_amplitude`, spread over `workers` workers. Empty
// `error` on success; otherwise it names the failing call.
Corpus build_corpus(const CorpusSpec& spec, double grain_amplitude, int workers, const RunOnWorkers& run, std::string& error);

}  // namespace nodeaudit::host
