// Crop, resize, flip and normalize arithmetic of the training transform on small known images.
#include <gtest/gtest.h>

#include <cmath>

#include "kernels/host/train_transform.hpp"

namespace nodeaudit::host {
namespace {

// 4x4 image whose pixel (x, y) holds (10y + x, 100 + 10y + x, 200 - (10y + x)).
RgbImage ramp4x4() {
  RgbImage image;
  image.resize(4, 4);
  for (int y = 0; y < 4; ++y)
    for (int x = 0; x < 4; ++x) {
      const int v = 10 * y + x;
      auto* p = &image.pixels[static_cast<std::size_t>((y * 4 + x) * 3)];
      p[0] = static_cast<std::uint8_t>(v), p[1] = static_cast<std::uint8_t>(100 + v), p[2] = static_cast<std::uint8_t>(200 - v);
    }
  return image;
}

TEST(Resize, HalvingAveragesEachTwoByTwoBlock) {
  const RgbImage src = ramp4x4();
  std::uint8_t out[2 * 2 * 3];
  resize_bilinear(src, {0, 0, 4, 4}, 2, out);
  // Output (0,0) samples source (0.5, 0.5): mean of 0, 1, 10, 11 = 5.5 -> 6 after rounding.
  EXPECT_EQ(out[0], 6);
  EXPECT_EQ(out[1], 106);
  EXPECT_EQ(out[2], 195);  // 200 - 5.5 = 194.5 -> 195
  // Output (1,1) samples (2.5, 2.5): mean of 22, 23, 32, 33 = 27.5 -> 28.
  EXPECT_EQ(out[(1 * 2 + 1) * 3], 28);
  EXPECT_EQ(out[(1 * 2 + 0) * 3], 26);  // (0.5, 2.5): 20, 21, 30, 31
}

TEST(Resize, UnscaledCropCopiesTheBox) {
  const RgbImage src = ramp4x4();
  std::uint8_t out[2 * 2 * 3];
  resize_bilinear(src, {1, 2, 2, 2}, 2, out);
  EXPECT_EQ(out[0], 21);
  EXPECT_EQ(out[3], 22);
  EXPECT_EQ(out[6], 31);
  EXPECT_EQ(out[9], 32);
  EXPECT_EQ(out[10], 132);
}

TEST(Resize, UpscalingClampsAtTheEdges) {
  const RgbImage src = ramp4x4();
  std::uint8_t out[8 * 8 * 3];
  resize_bilinear(src, {0, 0, 4, 4}, 8, out);
  EXPECT_EQ(out[0], 0) << "sample (-0.25, -0.25) clamps to pixel (0, 0)";
  EXPECT_EQ(out[(7 * 8 + 7) * 3], 33) << "sample (3.25, 3.25) clamps to pixel (3, 3)";
  EXPECT_EQ(out[1 * 3], 0) << "sample x = 0.25 between 0 and 1 -> 0.25 -> rounds to 0";
  EXPECT_EQ(out[2 * 3], 1) << "sample x = 0.75 -> 0.75 -> rounds to 1";
}

TEST(Flip, MirrorsEveryRow) {
  std::uint8_t rgb[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, /* row 2 */ 10, 11, 12, 13, 14, 15, 16, 17, 18};
  flip_horizontal(rgb, 3, 2);
  const std::uint8_t expected[] = {7, 8, 9, 4, 5, 6, 1, 2, 3, 16, 17, 18, 13, 14, 15, 10, 11, 12};
  for (std::size_t i = 0; i < sizeof rgb; ++i) EXPECT_EQ(rgb[i], expected[i]) << "at " << i;
}

TEST(Normalize, MapsToStandardScoresInChannelPlanes) {
  const std::uint8_t rgb[] = {0, 255, 51, 255, 0, 102};  // two pixels
  float chw[6];
  normalize_to_chw(rgb, 2, 1, Normalization{}, chw);
  EXPECT_NEAR(chw[0], (0.0 - 0.485) / 0.229, 1e-5);   // R of pixel 0
  EXPECT_NEAR(chw[1], (1.0 - 0.485) / 0.229, 1e-5);   // R of pixel 1
  EXPECT_NEAR(chw[2], (1.0 - 0.456) / 0.224, 1e-5);   // G plane starts after the R plane
  EXPECT_NEAR(chw[3], (0.0 - 0.456) / 0.224, 1e-5);
  EXPECT_NEAR(chw[4], (0.2 - 0.406) / 0.225, 1e-5);
  EXPECT_NEAR(chw[5], (0.4 - 0.406) / 0.225, 1e-5);
}

TEST(RandomResizedCrop, BoxesStayInsideAndInRange) {
  std::mt19937_64 rng(7);
  for (int i = 0; i < 2000; ++i) {
    const CropBox b = random_resized_crop_box(500, 375, rng);
    ASSERT_GE(b.x, 0);
    ASSERT_GE(b.y, 0);
    ASSERT_LE(b.x + b.width, 500);
    ASSERT_LE(b.y + b.height, 375);
    const double area_share = static_cast<double>(b.width) * b.height / (500.0 * 375.0);
    const double ratio = static_cast<double>(b.width) / b.height;
    EXPECT_GE(area_share, 0.075) << b.width << "x" << b.height;
    EXPECT_LE(area_share, 1.0);
    EXPECT_GE(ratio, 0.74) << b.width << "x" << b.height;
    EXPECT_LE(ratio, 1.35) << b.width << "x" << b.height;
  }
}

TEST(RandomResizedCrop, ImpossibleShapesFallBackToACentreCrop) {
  std::mt19937_64 rng(1);
  const CropBox wide = random_resized_crop_box(1000, 10, rng);  // no 3/4..4/3 box of >= 8% area fits
  EXPECT_EQ(wide.width, 13);
  EXPECT_EQ(wide.height, 10);
  EXPECT_EQ(wide.x, 493);
  EXPECT_EQ(wide.y, 0);
  const CropBox tall = centre_crop_fallback(10, 1000);
  EXPECT_EQ(tall.width, 10);
  EXPECT_EQ(tall.height, 13);
  EXPECT_EQ(tall.y, 493);
}

TEST(TrainTransform, ProducesANormalizedCropTensor) {
  RgbImage image;
  image.resize(50, 40);
  for (std::size_t i = 0; i < image.pixels.size(); ++i) image.pixels[i] = static_cast<std::uint8_t>(i * 7);
  TrainTransform transform(16, 3);
  const std::vector<float>& tensor = transform.apply(image);
  ASSERT_EQ(tensor.size(), 3u * 16u * 16u);
  for (std::size_t i = 0; i < tensor.size(); ++i) {
    const std::size_t c = i / 256;
    const float lo = -Normalization{}.mean[c] / Normalization{}.stdev[c], hi = (1 - Normalization{}.mean[c]) / Normalization{}.stdev[c];
    ASSERT_GE(tensor[i], lo - 1e-5f);
    ASSERT_LE(tensor[i], hi + 1e-5f);
  }
}

}  // namespace
}  // namespace nodeaudit::host
