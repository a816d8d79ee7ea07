#include "kernels/host/train_transform.hpp"

#include <algorithm>
#include <cmath>

namespace nodeaudit::host {
namespace {

// Source coordinate of output sample i (half-pixel centres), clamped into the crop.
struct Tap {
  int lo, hi;
  float frac;
};
std::vector<Tap> taps(int src_extent, int out_size) {
  std::vector<Tap> t(static_cast<std::size_t>(out_size));
  const float scale = static_cast<float>(src_extent) / static_cast<float>(out_size);
  for (int i = 0; i < out_size; ++i) {
    const float s = std::clamp((static_cast<float>(i) + 0.5f) * scale - 0.5f, 0.0f, static_cast<float>(src_extent - 1));
    const int lo = static_cast<int>(s);
    t[static_cast<std::size_t>(i)] = {lo, std::min(lo + 1, src_extent - 1), s - static_cast<float>(lo)};
  }
  return t;
}

}  // namespace

CropBox centre_crop_fallback(int width, int height, const CropRange& range) {
  const double in_ratio = static_cast<double>(width) / height;
  int w = width, h = height;
  if (in_ratio < range.ratio_min) h = static_cast<int>(std::lround(w / range.ratio_min));
  else if (in_ratio > range.ratio_max) w = static_cast<int>(std::lround(h * range.ratio_max));
  return {(width - w) / 2, (height - h) / 2, w, h};
}

CropBox random_resized_crop_box(int width, int height, std::mt19937_64& rng, const CropRange& range) {
  const double area = static_cast<double>(width) * height;
  std::uniform_real_distribution<double> scale(range.scale_min, range.scale_max);
  std::uniform_real_distribution<double> log_ratio(std::log(range.ratio_min), std::log(range.ratio_max));
  for (int attempt = 0; attempt < 10; ++attempt) {
    const double target_area = area * scale(rng);
    const double ratio = std::exp(log_ratio(rng));
    const int w = static_cast<int>(std::lround(std::sqrt(target_area * ratio)));
    const int h = static_cast<int>(std::lround(std::sqrt(target_area / ratio)));
    if (w > 0 && h > 0 && w <= width && h <= height) {
      const int y = std::uniform_int_distribution<int>(0, height - h)(rng);
      const int x = std::uniform_int_distribution<int>(0, width - w)(rng);
      return {x, y, w, h};
    }
  }
  return centre_crop_fallback(width, height, range);
}

void resize_bilinear(const RgbImage& src, CropBox box, int out_size, std::uint8_t* out) {
  const std::vector<Tap> xs = taps(box.width, out_size), ys = taps(box.height, out_size);
  const auto stride = static_cast<std::size_t>(src.width) * 3;
  for (int oy = 0; oy < out_size; ++oy) {
    const Tap ty = ys[static_cast<std::size_t>(oy)];
    const std::uint8_t* row0 = src.pixels.data() + static_cast<std::size_t>(box.y + ty.lo) * stride + static_cast<std::size_t>(box.x) * 3;
    const std::uint8_t* row1 = src.pixels.data() + static_cast<std::size_t>(box.y + ty.hi) * stride + static_cast<std::size_t>(box.x) * 3;
    std::uint8_t* dst = out + static_cast<std::size_t>(oy) * static_cast<std::size_t>(out_size) * 3;
    for (int ox = 0; ox < out_size; ++ox) {
      const Tap tx = xs[static_cast<std::size_t>(ox)];
      const auto lo = static_cast<std::size_t>(tx.lo) * 3, hi = static_cast<std::size_t>(tx.hi) * 3;
      for (std::size_t c = 0; c < 3; ++c) {
        const float top = row0[lo + c] + tx.frac * (static_cast<float>(row0[hi + c]) - row0[lo + c]);
        const float bottom = row1[lo + c] + tx.frac * (static_cast<float>(row1[hi + c]) - row1[lo + c]);
        dst[static_cast<std::size_t>(ox) * 3 + c] = static_cast<std::uint8_t>(top + ty.frac * (bottom - top) + 0.5f);
      }
    }
  }
}

void flip_horizontal(std::uint8_t* rgb, int width, int height) {
  for (int y = 0; y < height; ++y) {
    std::uint8_t* row = rgb + static_cast<std::size_t>(y) * static_cast<std::size_t>(width) * 3;
    for (int l = 0, r = width - 1; l < r; ++l, --r)
      for (std::size_t c = 0; c < 3; ++c) std::swap(row[static_cast<std::size_t>(l) * 3 + c], row[static_cast<std::size_t>(r) * 3 + c]);
  }
}

void normalize_to_chw(const std::uint8_t* rgb, int width, int height, const Normalization& norm, float* chw) {
  const auto plane = static_cast<std::size_t>(width) * static_cast<std::size_t>(height);
  for (std::size_t c = 0; c < 3; ++c) {
    // (v / 255 - mean) / std as one multiply-add per value.
    const float gain = 1.0f / (255.0f * norm.stdev[c]);
    const float offset = -norm.mean[c] / norm.stdev[c];
    float* out = chw + c * plane;
    for (std::size_t i = 0; i < plane; ++i) out[i] = static_cast<float>(rgb[i * 3 + c]) * gain + offset;
  }
}

TrainTransform::TrainTransform(int crop_size, std::uint64_t seed)
    : crop_size_(crop_size),
      rng_(seed),
      resized_(static_cast<std::size_t>(crop_size) * static_cast<std::size_t>(crop_size) * 3),
      tensor_(resized_.size()) {}

const std::vector<float>& TrainTransform::apply(const RgbImage& decoded) {
  const CropBox box = random_resized_crop_box(decoded.width, decoded.height, rng_);
  resize_bilinear(decoded, box, crop_size_, resized_.data());
  if (flip_(rng_)) flip_horizontal(resized_.data(), crop_size_, crop_size_);
  normalize_to_chw(resized_.data(), crop_size_, crop_size_, norm_, tensor_.data());
  return tensor_;
}

}  // namespace nodeaudit::host
