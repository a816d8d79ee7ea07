#include "kernels/host/synthetic_jpeg.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

#include <fmt/format.h>

namespace nodeaudit::host {
namespace {

constexpr double max_grain_amplitude = 120.0;
using Rng = std::mt19937_64;

double uniform(Rng& rng, double lo, double hi) { return std::uniform_real_distribution<double>(lo, hi)(rng); }

struct Colour {
  float c[3];
};
Colour random_colour(Rng& rng) {
  return {{static_cast<float>(uniform(rng, 0, 255)), static_cast<float>(uniform(rng, 0, 255)), static_cast<float>(uniform(rng, 0, 255))}};
}

float* pixel(SyntheticScene& s, int x, int y) { return &s.base[(static_cast<std::size_t>(y) * static_cast<std::size_t>(s.width) + static_cast<std::size_t>(x)) * 3]; }

// Sky-to-ground style background: a bilinear blend of four random corner colours.
void paint_background(SyntheticScene& s, Rng& rng) {
  const Colour corner[4] = {random_colour(rng), random_colour(rng), random_colour(rng), random_colour(rng)};
  for (int y = 0; y < s.height; ++y) {
    const float v = static_cast<float>(y) / static_cast<float>(std::max(1, s.height - 1));
    for (int x = 0; x < s.width; ++x) {
      const float u = static_cast<float>(x) / static_cast<float>(std::max(1, s.width - 1));
      float* p = pixel(s, x, y);
      for (int c = 0; c < 3; ++c)
        p[c] = (1 - v) * ((1 - u) * corner[0].c[c] + u * corner[1].c[c]) + v * ((1 - u) * corner[2].c[c] + u * corner[3].c[c]);
    }
  }
}

// Filled ellipses and rectangles, each with its own linear colour ramp and opacity.
void paint_shapes(SyntheticScene& s, Rng& rng) {
  const int shapes = std::uniform_int_distribution<int>(8, 16)(rng);
  for (int i = 0; i < shapes; ++i) {
    const bool ellipse = uniform(rng, 0, 1) < 0.5;
    const double cx = uniform(rng, 0, s.width), cy = uniform(rng, 0, s.height);
    const double rx = uniform(rng, 0.04, 0.3) * s.width, ry = uniform(rng, 0.04, 0.3) * s.height;
    const Colour from = random_colour(rng), to = random_colour(rng);
    const float alpha = static_cast<float>(uniform(rng, 0.5, 1.0));
    const int x0 = std::max(0, static_cast<int>(cx - rx)), x1 = std::min(s.width - 1, static_cast<int>(cx + rx));
    const int y0 = std::max(0, static_cast<int>(cy - ry)), y1 = std::min(s.height - 1, static_cast<int>(cy + ry));
    for (int y = y0; y <= y1; ++y) {
      for (int x = x0; x <= x1; ++x) {
        const double dx = (x - cx) / rx, dy = (y - cy) / ry;
        if (ellipse && dx * dx + dy * dy > 1.0) continue;
        const float t = static_cast<float>((dx + 1) * 0.5);
        float* p = pixel(s, x, y);
        for (int c = 0; c < 3; ++c) p[c] = (1 - alpha) * p[c] + alpha * ((1 - t) * from.c[c] + t * to.c[c]);
      }
    }
  }
}

float smoothstep(float t) { return t * t * (3 - 2 * t); }

// Value noise on a lattice of `cell` pixels (foliage, fabric, gravel at a few scales).
void add_lattice_noise(SyntheticScene& s, Rng& rng, int cell, float amplitude) {
  const int gw = s.width / cell + 2, gh = s.height / cell + 2;
  std::vector<float> lattice(static_cast<std::size_t>(gw) * static_cast<std::size_t>(gh));
  for (float& v : lattice) v = static_cast<float>(uniform(rng, -1, 1));
  const Colour tint = {{static_cast<float>(uniform(rng, 0.6, 1.0)), static_cast<float>(uniform(rng, 0.6, 1.0)), static_cast<float>(uniform(rng, 0.6, 1.0))}};
  auto at = [&](int gx, int gy) { return lattice[static_cast<std::size_t>(gy) * static_cast<std::size_t>(gw) + static_cast<std::size_t>(gx)]; };
  for (int y = 0; y < s.height; ++y) {
    const int gy = y / cell;
    const float fy = smoothstep(static_cast<float>(y % cell) / static_cast<float>(cell));
    for (int x = 0; x < s.width; ++x) {
      const int gx = x / cell;
      const float fx = smoothstep(static_cast<float>(x % cell) / static_cast<float>(cell));
      const float top = at(gx, gy) + fx * (at(gx + 1, gy) - at(gx, gy));
      const float bottom = at(gx, gy + 1) + fx * (at(gx + 1, gy + 1) - at(gx, gy + 1));
      const float n = amplitude * (top + fy * (bottom - top));
      float* p = pixel(s, x, y);
      for (int c = 0; c < 3; ++c) p[c] += n * tint.c[c];
    }
  }
}

// Sensor-like grain: mostly luma (shared by the channels), partly per channel.
void make_grain(SyntheticScene& s, Rng& rng) {
  s.grain.resize(s.base.size());
  std::uniform_int_distribution<int> unit(-127, 127);
  for (std::size_t i = 0; i < s.grain.size(); i += 3) {
    const int luma = unit(rng);
    for (std::size_t c = 0; c < 3; ++c) s.grain[i + c] = static_cast<std::int8_t>((7 * luma + 3 * unit(rng)) / 10);
  }
}

double mean_encoded_bytes(const std::vector<SyntheticScene>& scenes, const CorpusSpec& spec, double amplitude, JpegEncoder& encoder,
                          std::string& error) {
  std::vector<std::uint8_t> jpeg;
  double total = 0;
  for (const SyntheticScene& scene : scenes) {
    if (!encoder.encode(render_scene(scene, amplitude), spec.quality, spec.subsampling, jpeg)) {
      error = encoder.error();
      return 0;
    }
    total += static_cast<double>(jpeg.size());
  }
  return total / static_cast<double>(scenes.size());
}

}  // namespace

SyntheticScene make_scene(int width, int height, std::uint64_t seed) {
  SyntheticScene s;
  s.width = width, s.height = height;
  s.base.assign(static_cast<std::size_t>(width) * static_cast<std::size_t>(height) * 3, 0.0f);
  Rng rng(seed);
  paint_background(s, rng);
  paint_shapes(s, rng);
  add_lattice_noise(s, rng, 64, 30.0f);
  add_lattice_noise(s, rng, 16, 20.0f);
  add_lattice_noise(s, rng, 6, 18.0f);
  add_lattice_noise(s, rng, 2, 14.0f);
  make_grain(s, rng);
  return s;
}

RgbImage render_scene(const SyntheticScene& scene, double grain_amplitude) {
  RgbImage image;
  image.resize(scene.width, scene.height);
  const float scale = static_cast<float>(grain_amplitude / 127.0);
  for (std::size_t i = 0; i < scene.base.size(); ++i) {
    const float v = scene.base[i] + scale * static_cast<float>(scene.grain[i]);
    image.pixels[i] = static_cast<std::uint8_t>(std::clamp(std::lround(v), 0L, 255L));
  }
  return image;
}

std::uint64_t image_seed(const CorpusSpec& spec, int index) {
  // splitmix64 of (seed, index): neighbouring indices give unrelated streams.
  std::uint64_t z = spec.seed * 0x9E3779B97F4A7C15ull + static_cast<std::uint64_t>(index) + 1;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

GrainTuning tune_grain(const CorpusSpec& spec, int calibration_images, std::string& error) {
  std::vector<SyntheticScene> scenes;
  for (int i = 0; i < std::max(1, calibration_images); ++i) scenes.push_back(make_scene(spec.width, spec.height, image_seed(spec, i)));
  JpegEncoder encoder;
  const double target = static_cast<double>(spec.target_mean_bytes);
  double lo = 0, hi = max_grain_amplitude;
  GrainTuning best{.amplitude = lo, .mean_bytes = mean_encoded_bytes(scenes, spec, lo, encoder, error)};
  if (!error.empty()) return best;
  if (best.mean_bytes >= target) return {lo, best.mean_bytes, best.mean_bytes <= target * 1.01};
  const double top = mean_encoded_bytes(scenes, spec, hi, encoder, error);
  if (top <= target) return {hi, top, top >= target * 0.99};
  for (int step = 0; step < 20 && error.empty(); ++step) {
    const double mid = 0.5 * (lo + hi);
    const double bytes = mean_encoded_bytes(scenes, spec, mid, encoder, error);
    if (std::abs(bytes - target) < std::abs(best.mean_bytes - target)) best = {mid, bytes, true};
    if (std::abs(bytes - target) <= 0.01 * target) break;
    (bytes < target ? lo : hi) = mid;
  }
  return best;
}

double Corpus::mean_bytes() const {
  if (jpegs.empty()) return 0;
  const double total = std::accumulate(jpegs.begin(), jpegs.end(), 0.0, [](double sum, const auto& j) { return sum + static_cast<double>(j.size()); });
  return total / static_cast<double>(jpegs.size());
}
std::uint64_t Corpus::min_bytes() const {
  std::uint64_t m = jpegs.empty() ? 0 : UINT64_MAX;
  for (const auto& j : jpegs) m = std::min<std::uint64_t>(m, j.size());
  return m;
}
std::uint64_t Corpus::max_bytes() const {
  std::uint64_t m = 0;
  for (const auto& j : jpegs) m = std::max<std::uint64_t>(m, j.size());
  return m;
}
std::uint64_t Corpus::fnv1a() const {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (const auto& j : jpegs)
    for (std::uint8_t b : j) h = (h ^ b) * 0x100000001b3ull;
  return h;
}

Corpus build_corpus(const CorpusSpec& spec, double grain_amplitude, int workers, const RunOnWorkers& run, std::string& error) {
  Corpus corpus;
  corpus.width = spec.width, corpus.height = spec.height;
  corpus.jpegs.resize(static_cast<std::size_t>(spec.images));
  std::vector<std::string> errors(static_cast<std::size_t>(workers));
  run([&](int w) {
    JpegEncoder encoder;
    for (int i = w; i < spec.images && errors[static_cast<std::size_t>(w)].empty(); i += workers) {
      const RgbImage image = render_scene(make_scene(spec.width, spec.height, image_seed(spec, spec.first_image + i)), grain_amplitude);
      if (!encoder.encode(image, spec.quality, spec.subsampling, corpus.jpegs[static_cast<std::size_t>(i)]))
        errors[static_cast<std::size_t>(w)] = fmt::format("image {}: {}", i, encoder.error());
    }
  });
  for (const std::string& e : errors)
    if (!e.empty() && error.empty()) error = e;
  return corpus;
}

}  // namespace nodeaudit::host
