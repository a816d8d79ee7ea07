// Real JPEG samples for a workload that decodes JPEGs on the CPU (profile data.decode = "jpeg"):
// a data set of JPEG files made with host.decode's synthetic photographs (kernels/host), and the
// per-worker decode + training augmentation that host.decode measures, applied to each sample
// before its batch is queued.
//
// The data set holds `samples` files; their content cycles through a corpus of at most
// `distinct_images` encoded images (encoding every sample would cost minutes at ImageNet scale),
// so every file is a separate file on the storage under test but the decoder sees repeats. The
// grain is tuned so the mean encoded size approaches the profile's sample size, as host.decode does.
// The output of one sample is the normalised float CHW tensor at crop x crop (torchvision's
// RandomResizedCrop + flip + Normalize), which is what a loader hands to the host-to-device copy.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>

#include "io/generated_data.hpp"
#include "kernels/host/jpeg_codec.hpp"
#include "kernels/host/train_transform.hpp"

namespace nodeaudit::pipeline {

struct JpegSetSpec {
  std::uint64_t samples = 0;
  std::uint64_t target_mean_bytes = 110 * 1024;
  int distinct_images = 64;
  int encode_workers = 1;
};

struct JpegSet {
  std::unique_ptr<io::GeneratedData> data;
  double mean_bytes = 0;
  std::uint64_t max_bytes = 0;
  int distinct_images = 0;
  int width = 0, height = 0;
  std::string error;  // set on failure; nothing is left behind
  bool interrupted = false;
};

// Creates the JPEG files under `parent` in a fresh directory, removed when `data` goes (unless
// keep_data). Refuses when free space is short; `should_stop` is polled between files.
JpegSet generate_jpeg_set(const std::string& parent, const JpegSetSpec& spec, bool keep_data,
                          const std::function<bool()>& should_stop);

// One loader worker's decoder and augmentation, reused sample after sample.
class SampleDecoder {
 public:
  static constexpr int crop_size = 224;
  static constexpr std::size_t tensor_bytes = std::size_t{crop_size} * crop_size * 3 * sizeof(float);
  explicit SampleDecoder(std::uint64_t seed) : transform_(crop_size, seed) {}
  // Decodes `jpeg`, augments it and writes the tensor (tensor_bytes) to `out`; false + `error`.
  bool decode(std::span<const std::uint8_t> jpeg, std::byte* out, std::string& error);

 private:
  host::JpegDecoder decoder_;
  host::RgbImage decoded_;
  host::TrainTransform transform_;
};

}  // namespace nodeaudit::pipeline
