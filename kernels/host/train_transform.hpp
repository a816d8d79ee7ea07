// The standard ImageNet training transform on decoded pixels, as torchvision composes it:
// RandomResizedCrop(224, scale=(0.08, 1), ratio=(3/4, 4/3)) -> RandomHorizontalFlip(0.5) ->
// ToTensor + Normalize(mean, std), giving float CHW. The resize is bilinear with half-pixel centres
// and no antialiasing (the tensor path); PIL's antialiased resize costs more when shrinking a lot.
#pragma once

#include <array>
#include <cstdint>
#include <random>
#include <vector>

#include "kernels/host/jpeg_codec.hpp"

namespace nodeaudit::host {

struct CropBox {
  int x = 0, y = 0, width = 0, height = 0;
};

struct CropRange {
  double scale_min = 0.08, scale_max = 1.0;        // share of the image area
  double ratio_min = 3.0 / 4.0, ratio_max = 4.0 / 3.0;  // width / height
};

// torchvision's RandomResizedCrop.get_params: ten tries at a random area and log-uniform aspect
// ratio, then a centre crop with the ratio clamped into range.
CropBox random_resized_crop_box(int width, int height, std::mt19937_64& rng, const CropRange& range = {});
CropBox centre_crop_fallback(int width, int height, const CropRange& range = {});

// Bilinear resize of `box` of `src` to out_size x out_size packed RGB (`out` holds out_size^2*3).
void resize_bilinear(const RgbImage& src, CropBox box, int out_size, std::uint8_t* out);
void flip_horizontal(std::uint8_t* rgb, int width, int height);

struct Normalization {
  std::array<float, 3> mean{0.485f, 0.456f, 0.406f};
  std::array<float, 3> stdev{0.229f, 0.224f, 0.225f};
};
// out[c][y][x] = (rgb[y][x][c] / 255 - mean[c]) / stdev[c]
void normalize_to_chw(const std::uint8_t* rgb, int width, int height, const Normalization& norm, float* chw);

// One worker's transform: its random stream and its buffers, reused image after image.
class TrainTransform {
 public:
  TrainTransform(int crop_size, std::uint64_t seed);
  // Runs crop + flip + normalize on `decoded`; the result stays valid until the next call.
  const std::vector<float>& apply(const RgbImage& decoded);
  int crop_size() const { return crop_size_; }

 private:
  int crop_size_;
  std::mt19937_64 rng_;
  std::bernoulli_distribution flip_{0.5};
  Normalization norm_;
  std::vector<std::uint8_t> resized_;
  std::vector<float> tensor_;
};

}  // namespace nodeaudit::host
