// Synthetic JPEGs decode to the requested size with photo-like pixel statistics and encoded size.
#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "kernels/host/synthetic_jpeg.hpp"

namespace nodeaudit::host {
namespace {

struct ChannelStats {
  double mean = 0, stdev = 0;
};
ChannelStats channel_stats(const RgbImage& image, int channel) {
  double sum = 0, squares = 0;
  const std::size_t n = image.pixels.size() / 3;
  for (std::size_t i = 0; i < n; ++i) {
    const double v = image.pixels[i * 3 + static_cast<std::size_t>(channel)];
    sum += v, squares += v * v;
  }
  const double mean = sum / static_cast<double>(n);
  return {mean, std::sqrt(squares / static_cast<double>(n) - mean * mean)};
}

// Stands in for a worker team: runs the workers' steps one after another.
RunOnWorkers serially(int workers) {
  return [workers](const std::function<void(int)>& step) {
    for (int w = 0; w < workers; ++w) step(w);
  };
}

TEST(SyntheticJpeg, DecodesToRequestedSizeWithNonTrivialPixels) {
  CorpusSpec spec;  // 500x375, quality 90, 4:2:0
  JpegEncoder encoder;
  std::vector<std::uint8_t> jpeg;
  ASSERT_TRUE(encoder.encode(render_scene(make_scene(spec.width, spec.height, image_seed(spec, 0)), 40.0), 90, ChromaSubsampling::s420, jpeg))
      << encoder.error();
  RgbImage decoded;
  JpegDecoder decoder;
  ASSERT_TRUE(decoder.decode(jpeg, decoded)) << decoder.error();
  EXPECT_EQ(decoded.width, 500);
  EXPECT_EQ(decoded.height, 375);
  ASSERT_EQ(decoded.pixels.size(), 500u * 375u * 3u);
  std::set<std::uint8_t> distinct(decoded.pixels.begin(), decoded.pixels.end());
  EXPECT_GT(distinct.size(), 200u) << "a photo-like image uses most of the 256 levels";
  for (int c = 0; c < 3; ++c) {
    const ChannelStats s = channel_stats(decoded, c);
    EXPECT_GT(s.stdev, 20.0) << "channel " << c << " is nearly flat";
    EXPECT_GT(s.mean, 20.0);
    EXPECT_LT(s.mean, 235.0);
  }
}

TEST(SyntheticJpeg, GrainTuningReachesTheTargetMeanSize) {
  CorpusSpec spec;
  spec.images = 6;
  std::string error;
  const GrainTuning tuning = tune_grain(spec, 3, error);
  ASSERT_TRUE(error.empty()) << error;
  EXPECT_TRUE(tuning.reachable);
  EXPECT_NEAR(tuning.mean_bytes, 110.0 * 1024, 0.02 * 110 * 1024);
  const Corpus corpus = build_corpus(spec, tuning.amplitude, 2, serially(2), error);
  ASSERT_TRUE(error.empty()) << error;
  ASSERT_EQ(corpus.jpegs.size(), 6u);
  EXPECT_NEAR(corpus.mean_bytes(), 110.0 * 1024, 0.1 * 110 * 1024);
  EXPECT_LE(corpus.min_bytes(), corpus.mean_bytes());
  EXPECT_GE(corpus.max_bytes(), corpus.mean_bytes());
}

TEST(SyntheticJpeg, UnreachableTargetIsReportedAsSuch) {
  CorpusSpec spec;
  spec.width = 32, spec.height = 32, spec.target_mean_bytes = 1 << 20;  // 1 MiB from 1024 pixels: impossible
  std::string error;
  const GrainTuning tuning = tune_grain(spec, 1, error);
  ASSERT_TRUE(error.empty()) << error;
  EXPECT_FALSE(tuning.reachable);
  EXPECT_LT(tuning.mean_bytes, 1 << 20);
}

TEST(SyntheticJpeg, CorpusIsReproducibleFromItsSeed) {
  CorpusSpec spec;
  spec.width = 64, spec.height = 48, spec.images = 4;
  std::string error;
  const std::uint64_t first = build_corpus(spec, 30, 1, serially(1), error).fnv1a();
  EXPECT_EQ(build_corpus(spec, 30, 3, serially(3), error).fnv1a(), first) << "worker count must not change the images";
  spec.seed = 2;
  EXPECT_NE(build_corpus(spec, 30, 1, serially(1), error).fnv1a(), first);
  EXPECT_TRUE(error.empty()) << error;
}

TEST(SyntheticJpeg, CorruptJpegIsAnErrorNotACrash) {
  std::vector<std::uint8_t> garbage(1000, 0x5a);
  RgbImage out;
  JpegDecoder decoder;
  EXPECT_FALSE(decoder.decode(garbage, out));
  EXPECT_NE(decoder.error().find("tjDecompressHeader3"), std::string::npos) << decoder.error();
}

}  // namespace
}  // namespace nodeaudit::host
