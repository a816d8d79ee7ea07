#include "pipeline/samples/jpeg_samples.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <thread>

#include <fmt/format.h>

#include "harness/core/owned_dir.hpp"
#include "io/storage_target.hpp"
#include "kernels/host/synthetic_jpeg.hpp"

namespace nodeaudit::pipeline {
namespace {

std::string write_file(const std::string& path, const std::vector<std::uint8_t>& bytes) {
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return fmt::format("create {}: {}", path, std::strerror(errno));
  std::string error;
  const ssize_t w = write(fd, bytes.data(), bytes.size());
  if (w != static_cast<ssize_t>(bytes.size()))
    error = fmt::format("write {}: {}", path, w < 0 ? std::strerror(errno) : "short write");
  if (close(fd) != 0 && error.empty()) error = fmt::format("close {}: {}", path, std::strerror(errno));
  return error;
}

host::Corpus encode_corpus(const JpegSetSpec& spec, std::string& error) {
  host::CorpusSpec corpus_spec;
  corpus_spec.target_mean_bytes = spec.target_mean_bytes;
  corpus_spec.images =
      static_cast<int>(std::min<std::uint64_t>(spec.samples, static_cast<std::uint64_t>(spec.distinct_images)));
  corpus_spec.seed = 0x9e65;
  const host::GrainTuning tuning = host::tune_grain(corpus_spec, 4, error);
  if (!error.empty()) return {};
  const int workers = std::max(1, spec.encode_workers);
  return host::build_corpus(
      corpus_spec, tuning.amplitude, workers,
      [&](const std::function<void(int)>& step) {
        std::vector<std::jthread> threads;
        for (int w = 0; w < workers; ++w) threads.emplace_back([&, w] { step(w); });
      },
      error);
}

}  // namespace

JpegSet generate_jpeg_set(const std::string& parent, const JpegSetSpec& spec, bool keep_data,
                          const std::function<bool()>& should_stop) {
  JpegSet set;
  std::string error;
  const host::Corpus corpus = encode_corpus(spec, error);
  if (!error.empty()) {
    set.error = "encoding the JPEG samples: " + error;
    return set;
  }
  set.mean_bytes = corpus.mean_bytes();
  set.max_bytes = corpus.max_bytes();
  set.distinct_images = static_cast<int>(corpus.jpegs.size());
  set.width = corpus.width, set.height = corpus.height;
  const auto needed = static_cast<std::uint64_t>(set.mean_bytes * static_cast<double>(spec.samples) * 1.1);
  if (std::string short_space = io::check_free_space(parent, needed); !short_space.empty()) {
    set.error = short_space;
    return set;
  }
  const std::string tmpl = make_owned_dir(parent, fmt::format("nodeaudit-jpegs-{}x{}", spec.target_mean_bytes, spec.samples), error);
  if (tmpl.empty()) {
    set.error = error;
    return set;
  }
  std::vector<std::string> files;
  for (std::uint64_t i = 0; i < spec.samples; ++i) files.push_back(fmt::format("{}/s{:07}.jpg", tmpl, i));
  auto data = std::make_unique<io::GeneratedData>(tmpl, files, true);
  for (std::uint64_t i = 0; i < spec.samples && error.empty(); ++i) {
    if (should_stop && should_stop()) {
      set.interrupted = true;
      return set;  // `data` removes what was written
    }
    error = write_file(files[i], corpus.jpegs[i % corpus.jpegs.size()]);
  }
  if (!error.empty()) {
    set.error = error;
    return set;
  }
  if (keep_data) data->keep();
  set.data = std::move(data);
  return set;
}

bool SampleDecoder::decode(std::span<const std::uint8_t> jpeg, std::byte* out, std::string& error) {
  if (!decoder_.decode(jpeg, decoded_)) {
    error = "JPEG decode: " + decoder_.error();
    return false;
  }
  const std::vector<float>& tensor = transform_.apply(decoded_);
  std::memcpy(out, tensor.data(), std::min(tensor.size() * sizeof(float), tensor_bytes));
  return true;
}

}  // namespace nodeaudit::pipeline
