#include "kernels/host/jpeg_reference.hpp"

#include <turbojpeg.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include <fmt/format.h>

namespace nodeaudit::host {

namespace {

std::uint8_t clamp_byte(double value) { return static_cast<std::uint8_t>(std::clamp(std::lround(value), 0L, 255L)); }

// Chroma at full resolution by the triangle filter JPEG decoders use by default ("fancy"
// upsampling): an output sample between two chroma samples takes 3/4 of the nearer and 1/4 of the
// other, in each direction that was subsampled.
struct Taps {
  int near = 0, far = 0;
  double near_weight = 1;
};

Taps taps(int position, int full, int sampled) {
  if (sampled >= full) return {position, position, 1};
  const int near = position / 2;
  const int far = std::clamp(position % 2 ? near + 1 : near - 1, 0, sampled - 1);
  return {near, far, 0.75};
}

double upsampled(const unsigned char* plane, int stride, const Taps& rows, const Taps& cols) {
  const auto at = [&](int row, int col) { return static_cast<double>(plane[static_cast<std::size_t>(row) * stride + col]); };
  const double near_row = cols.near_weight * at(rows.near, cols.near) + (1 - cols.near_weight) * at(rows.near, cols.far);
  const double far_row = cols.near_weight * at(rows.far, cols.near) + (1 - cols.near_weight) * at(rows.far, cols.far);
  return rows.near_weight * near_row + (1 - rows.near_weight) * far_row;
}

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
  // The luma plane is padded to whole chroma samples (375 rows of 4:2:0 are stored as 376).
  const int luma_w = tjPlaneWidth(0, width, subsamp), luma_h = tjPlaneHeight(0, height, subsamp);
  const unsigned char* y_plane = planes.data();
  const unsigned char* cb_plane = y_plane + static_cast<std::size_t>(luma_w) * luma_h;
  const unsigned char* cr_plane = cb_plane + static_cast<std::size_t>(chroma_w) * chroma_h;
  out.resize(width, height);
  for (int y = 0; y < height; ++y) {
    const Taps rows = taps(y, height, chroma_h);
    for (int x = 0; x < width; ++x) {
      const Taps cols = taps(x, width, chroma_w);
      const double luma = y_plane[static_cast<std::size_t>(y) * luma_w + x];
      const double cb = upsampled(cb_plane, chroma_w, rows, cols) - 128.0;
      const double cr = upsampled(cr_plane, chroma_w, rows, cols) - 128.0;
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
