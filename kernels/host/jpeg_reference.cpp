#include "kernels/host/jpeg_reference.hpp"

#include <turbojpeg.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include <fmt/format.h>

namespace nodeaudit::host {

namespace {

std::uint8_t clamp_byte(double value) { return static_cast<std::uint8_t>(std::clamp(std::lround(value), 0L, 255L)); }

}  // namespace

bool decode_reference(std::span<const std::uint8_t> jpeg, RgbImage& out, std::string& error) {
  tjhandle handle = tjInitDecompress();
  if (!handle) {
    error = fmt::format("tjInitDecompress: {}", tjGetErrorStr2(nullptr));
    return false;
  }
  int width = 0, height = 0, subsamp = 0, colorspace = 0;
  const auto size = static_cast<unsigned long>(jpeg.size());
  bool ok = tjDecompressHeader3(handle, jpeg.data(), size, &width, &height, &subsamp, &colorspace) == 0;
  std::vector<unsigned char> planes;
  if (ok) {
    planes.resize(tjBufSizeYUV2(width, 1, height, subsamp));
    ok = tjDecompressToYUV2(handle, jpeg.data(), size, planes.data(), width, 1, height, 0) == 0;
  }
  if (!ok) {
    error = fmt::format("tjDecompressToYUV2: {}", tjGetErrorStr2(handle));
    tjDestroy(handle);
    return false;
  }
  tjDestroy(handle);
  if (subsamp == TJSAMP_GRAY) {
    error = "a grayscale JPEG: the reference decode reads colour images only";
    return false;
  }
  const int chroma_w = tjPlaneWidth(1, width, subsamp), chroma_h = tjPlaneHeight(1, height, subsamp);
  const unsigned char* y_plane = planes.data();
  const unsigned char* cb_plane = y_plane + static_cast<std::size_t>(width) * height;
  const unsigned char* cr_plane = cb_plane + static_cast<std::size_t>(chroma_w) * chroma_h;
  out.resize(width, height);
  for (int y = 0; y < height; ++y) {
    const int cy = std::min(chroma_h - 1, y * chroma_h / height);
    for (int x = 0; x < width; ++x) {
      const int cx = std::min(chroma_w - 1, x * chroma_w / width);
      const double luma = y_plane[static_cast<std::size_t>(y) * width + x];
      const double cb = cb_plane[static_cast<std::size_t>(cy) * chroma_w + cx] - 128.0;
      const double cr = cr_plane[static_cast<std::size_t>(cy) * chroma_w + cx] - 128.0;
      std::uint8_t* px = &out.pixels[(static_cast<std::size_t>(y) * width + x) * 3];
      px[0] = clamp_byte(luma + 1.402 * cr);  // JFIF (ITU-R BT.601, full range)
      px[1] = clamp_byte(luma - 0.344136 * cb - 0.714136 * cr);
      px[2] = clamp_byte(luma + 1.772 * cb);
    }
  }
  return true;
}

double psnr_db(const RgbImage& a, const RgbImage& b) {
  double squared = 0;
  for (std::size_t i = 0; i < a.pixels.size(); ++i) {
    const double d = static_cast<double>(a.pixels[i]) - b.pixels[i];
    squared += d * d;
  }
  const double mse = squared / static_cast<double>(std::max<std::size_t>(a.pixels.size(), 1));
  return mse == 0 ? 99.0 : 10 * std::log10(255.0 * 255.0 / mse);
}

}  // namespace nodeaudit::host
