#include "kernels/host/jpeg_codec.hpp"

#include <turbojpeg.h>

#include <fmt/format.h>

namespace nodeaudit::host {
namespace {

int tj_subsampling(ChromaSubsampling subsampling) {
  switch (subsampling) {
    case ChromaSubsampling::s444: return TJSAMP_444;
    case ChromaSubsampling::s422: return TJSAMP_422;
    case ChromaSubsampling::s420: return TJSAMP_420;
  }
  return TJSAMP_420;
}

std::string tj_error(void* handle, const char* call) { return fmt::format("{}: {}", call, tjGetErrorStr2(handle)); }

}  // namespace

const char* to_string(ChromaSubsampling subsampling) {
  switch (subsampling) {
    case ChromaSubsampling::s444: return "4:4:4";
    case ChromaSubsampling::s422: return "4:2:2";
    case ChromaSubsampling::s420: return "4:2:0";
  }
  return "?";
}

JpegEncoder::JpegEncoder() : handle_(tjInitCompress()) {
  if (!handle_) error_ = tj_error(nullptr, "tjInitCompress");
}
JpegEncoder::~JpegEncoder() {
  if (handle_) tjDestroy(handle_);
}

bool JpegEncoder::encode(const RgbImage& image, int quality, ChromaSubsampling subsampling, std::vector<std::uint8_t>& jpeg) {
  if (!handle_) return false;
  const int samp = tj_subsampling(subsampling);
  // A buffer of the worst-case size and NOREALLOC: TurboJPEG never allocates behind our back.
  jpeg.resize(tjBufSize(image.width, image.height, samp));
  unsigned char* out = jpeg.data();
  unsigned long out_size = static_cast<unsigned long>(jpeg.size());
  if (tjCompress2(handle_, image.pixels.data(), image.width, 0, image.height, TJPF_RGB, &out, &out_size, samp, quality,
                  TJFLAG_NOREALLOC) != 0) {
    error_ = tj_error(handle_, "tjCompress2");
    return false;
  }
  jpeg.resize(out_size);
  return true;
}

JpegDecoder::JpegDecoder() : handle_(tjInitDecompress()) {
  if (!handle_) error_ = tj_error(nullptr, "tjInitDecompress");
}
JpegDecoder::~JpegDecoder() {
  if (handle_) tjDestroy(handle_);
}

bool JpegDecoder::decode(std::span<const std::uint8_t> jpeg, RgbImage& out) {
  if (!handle_) return false;
  int width = 0, height = 0, subsamp = 0, colorspace = 0;
  const auto size = static_cast<unsigned long>(jpeg.size());
  if (tjDecompressHeader3(handle_, jpeg.data(), size, &width, &height, &subsamp, &colorspace) != 0) {
    error_ = tj_error(handle_, "tjDecompressHeader3");
    return false;
  }
  if (out.width != width || out.height != height) out.resize(width, height);
  if (tjDecompress2(handle_, jpeg.data(), size, out.pixels.data(), width, 0, height, TJPF_RGB, 0) != 0) {
    error_ = tj_error(handle_, "tjDecompress2");
    return false;
  }
  return true;
}

}  // namespace nodeaudit::host
