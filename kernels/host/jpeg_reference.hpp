// A second decode of a JPEG that shares no colour code with the timed one: libjpeg-turbo stops at
// the planar YCbCr samples (tjDecompressToYUV2), and the chroma upsampling (the triangle filter) and
// the JFIF YCbCr -> RGB conversion are done here. host.decode checks its timed decode against it, so
// the check holds on any content: what the encoder's quantization threw away is the same in both.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "kernels/host/jpeg_codec.hpp"

namespace nodeaudit::host {

bool decode_reference(std::span<const std::uint8_t> jpeg, RgbImage& out, std::string& error);

// Peak signal-to-noise ratio of `b` against `a` in dB (99 for identical images); both the same size.
double psnr_db(const RgbImage& a, const RgbImage& b);

}  // namespace nodeaudit::host
