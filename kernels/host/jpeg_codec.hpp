// Thin owners of libjpeg-turbo (TurboJPEG 2.x API) handles for encoding and decoding packed RGB.
// Errors come back as values (false + error()) so worker threads never throw.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace nodeaudit::host {

// Packed 8-bit RGB, row-major, no row padding: pixel (x, y) channel c is at (y * width + x) * 3 + c.
struct RgbImage {
  int width = 0, height = 0;
  std::vector<std::uint8_t> pixels;

  std::size_t byte_count() const { return static_cast<std::size_t>(width) * static_cast<std::size_t>(height) * 3; }
  void resize(int w, int h) {
    width = w, height = h;
    pixels.resize(byte_count());
  }
};

enum class ChromaSubsampling { s444, s422, s420 };
const char* to_string(ChromaSubsampling subsampling);

class JpegEncoder {
 public:
  JpegEncoder();
  ~JpegEncoder();
  JpegEncoder(const JpegEncoder&) = delete;
  JpegEncoder& operator=(const JpegEncoder&) = delete;

  // Baseline JPEG with optimised-by-default Huffman tables as libjpeg-turbo writes them.
  bool encode(const RgbImage& image, int quality, ChromaSubsampling subsampling, std::vector<std::uint8_t>& jpeg);
  const std::string& error() const { return error_; }

 private:
  void* handle_ = nullptr;
  std::string error_;
};

class JpegDecoder {
 public:
  JpegDecoder();
  ~JpegDecoder();
  JpegDecoder(const JpegDecoder&) = delete;
  JpegDecoder& operator=(const JpegDecoder&) = delete;

  // Reads the header and decodes to packed RGB in `out` (resized to the image; no allocation when
  // the size is unchanged). Default libjpeg-turbo settings: accurate integer IDCT, fancy upsampling.
  bool decode(std::span<const std::uint8_t> jpeg, RgbImage& out);
  const std::string& error() const { return error_; }

 private:
  void* handle_ = nullptr;
  std::string error_;
};

}  // namespace nodeaudit::host
