// The reference decode host.decode checks its timed decode against: it agrees with libjpeg-turbo's
// own RGB decode to rounding on every chroma subsampling and on odd sizes, and it disagrees with a
// decode of another image.
#include <gtest/gtest.h>

#include "kernels/host/jpeg_reference.hpp"
#include "kernels/host/synthetic_jpeg.hpp"

namespace nodeaudit::host {
namespace {

std::vector<std::uint8_t> encoded(int width, int height, std::uint64_t seed, ChromaSubsampling subsampling, int quality) {
  JpegEncoder encoder;
  std::vector<std::uint8_t> jpeg;
  EXPECT_TRUE(encoder.encode(render_scene(make_scene(width, height, seed), 60.0), quality, subsampling, jpeg)) << encoder.error();
  return jpeg;
}

TEST(JpegReference, AgreesWithTheTimedDecodeToRoundingOnEverySubsamplingAndOddSizes) {
  for (const auto subsampling : {ChromaSubsampling::s420, ChromaSubsampling::s422, ChromaSubsampling::s444}) {
    for (const auto& [width, height] : {std::pair{500, 375}, std::pair{333, 251}}) {
      const auto jpeg = encoded(width, height, 7, subsampling, 90);
      RgbImage timed, reference;
      JpegDecoder decoder;
      ASSERT_TRUE(decoder.decode(jpeg, timed)) << decoder.error();
      std::string error;
      ASSERT_TRUE(decode_reference(jpeg, reference, error)) << error;
      ASSERT_EQ(reference.width, width);
      ASSERT_EQ(reference.height, height);
      // Rounding of two integer pipelines differs by a level or two: about 50 dB.
      EXPECT_GE(psnr_db(timed, reference), 45.0) << to_string(subsampling) << " " << width << "x" << height;
    }
  }
}

TEST(JpegReference, ADecodeOfAnotherImageIsFarBelowTheCheck) {
  const auto first = encoded(500, 375, 1, ChromaSubsampling::s420, 90), second = encoded(500, 375, 2, ChromaSubsampling::s420, 90);
  RgbImage timed, reference;
  JpegDecoder decoder;
  ASSERT_TRUE(decoder.decode(second, timed));
  std::string error;
  ASSERT_TRUE(decode_reference(first, reference, error)) << error;
  EXPECT_LT(psnr_db(timed, reference), 30.0) << "host.decode's threshold would pass a decode of the wrong image";
}

TEST(JpegReference, PsnrOfIdenticalAndKnownImages) {
  RgbImage a, b;
  a.resize(2, 1), b.resize(2, 1);
  a.pixels = {0, 0, 0, 0, 0, 0};
  b.pixels = {0, 0, 0, 0, 0, 0};
  EXPECT_EQ(psnr_db(a, b), 99.0);
  b.pixels = {255, 255, 255, 255, 255, 255};  // every sample off by 255: MSE = 255^2, 0 dB
  EXPECT_NEAR(psnr_db(a, b), 0.0, 1e-12);
}

}  // namespace
}  // namespace nodeaudit::host
