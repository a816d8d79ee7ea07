// host.decode against libjpeg-turbo's own tjbench, decode only, one core, on the same images.
//
// 1. Builds the corpus host.decode would build (same spec, seed and grain tuning) and writes each
//    JPEG to a temporary directory.
// 2. Runs `tjbench FILE -rgb -nowrite -benchtime T -warmup W` on every file (decompression only: the
//    input is a JPEG and no transform is asked for) and reads its frame rate.
// 3. Runs `nodeaudit probe host.decode --workers 1` with the same corpus parameters and reads the
//    images_per_s_per_core [stage=decode] median; the corpus hash in its info must match ours.
// 4. Prints both rates, side by side, and exits 1 when host.decode is more than 10% away.
// tjbench decodes one image over and over; host.decode walks the whole set, so it is the rate for the
// set. The tjbench figure for the set is images / sum over images of (1 / frame rate).
#include <unistd.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "synthetic_jpeg.hpp"

namespace {

using nodeaudit::host::Corpus;
using nodeaudit::host::CorpusSpec;

struct Options {
  int images = 20;
  std::uint64_t seed = 1;
  double benchtime_s = 2.0, warmup_s = 0.5;
  std::string nodeaudit = NODEAUDIT_BINARY;
  std::string level = "standard";
};

Options parse_options(int argc, char** argv) {
  Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string name = argv[i], value = argv[i + 1];
    if (name == "--images") o.images = std::stoi(value);
    else if (name == "--seed") o.seed = std::stoull(value);
    else if (name == "--benchtime") o.benchtime_s = std::stod(value);
    else if (name == "--warmup") o.warmup_s = std::stod(value);
    else if (name == "--nodeaudit") o.nodeaudit = value;
    else if (name == "--level") o.level = value;
    else throw std::runtime_error("unknown option " + name + " (accepted: --images --seed --benchtime --warmup --nodeaudit --level)");
  }
  return o;
}

std::string capture(const std::string& command) {
  std::string out;
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) throw std::runtime_error("cannot run: " + command);
  std::array<char, 4096> buffer{};
  std::size_t n = 0;
  while ((n = fread(buffer.data(), 1, buffer.size(), pipe)) > 0) out.append(buffer.data(), n);
  pclose(pipe);
  return out;
}

Corpus build(const CorpusSpec& spec) {
  std::string error;
  const auto tuning = nodeaudit::host::tune_grain(spec, 4, error);
  Corpus corpus = nodeaudit::host::build_corpus(spec, tuning.amplitude, 1, [](const std::function<void(int)>& step) { step(0); }, error);
  if (!error.empty()) throw std::runtime_error("building the corpus: " + error);
  return corpus;
}

// tjbench's decompression frame rate (images/s) for one file.
double tjbench_fps(const std::string& file, const Options& o) {
  const std::string out = capture(fmt::format("tjbench '{}' -rgb -nowrite -benchtime {} -warmup {} 2>&1", file, o.benchtime_s, o.warmup_s));
  const auto at = out.find("Frame rate:");
  if (at == std::string::npos) throw std::runtime_error("no 'Frame rate:' in tjbench output:\n" + out);
  return std::stod(out.substr(at + 11));
}

double tjbench_set_rate(const Corpus& corpus, const Options& o) {
  char dir_template[] = "/tmp/nodeaudit-tjbench-XXXXXX";
  if (!mkdtemp(dir_template)) throw std::runtime_error("mkdtemp failed");
  const std::filesystem::path dir = dir_template;
  double seconds_per_set = 0;
  for (std::size_t i = 0; i < corpus.jpegs.size(); ++i) {
    const std::string file = (dir / fmt::format("image{:04}.jpg", i)).string();
    std::ofstream(file, std::ios::binary).write(reinterpret_cast<const char*>(corpus.jpegs[i].data()), static_cast<std::streamsize>(corpus.jpegs[i].size()));
    seconds_per_set += 1.0 / tjbench_fps(file, o);
  }
  std::filesystem::remove_all(dir);
  return static_cast<double>(corpus.jpegs.size()) / seconds_per_set;
}

struct ProbeFigure {
  double median = 0, cv = 0;
  std::string corpus_hash, command;
};

ProbeFigure host_decode_rate(const Options& o) {
  ProbeFigure f;
  f.command = fmt::format("{} probe host.decode --workers 1 --images {} --seed {} --level {} --format json", o.nodeaudit, o.images, o.seed, o.level);
  const nlohmann::json probe = nlohmann::json::parse(capture(f.command + " 2>/dev/null"))["probes"][0];
  if (probe["status"] != "ok") throw std::runtime_error("host.decode did not finish: " + probe.dump());
  f.corpus_hash = probe["info"]["corpus_fnv1a"];
  for (const auto& m : probe["metrics"])
    if (m["name"] == "images_per_s_per_core" && m["labels"]["stage"] == "decode") f.median = m["median"], f.cv = m["cv"];
  return f;
}

}  // namespace

int main(int argc, char** argv) try {
  const Options o = parse_options(argc, argv);
  CorpusSpec spec;  // host.decode's defaults: 500x375, quality 90, 4:2:0, 110 KiB
  spec.images = o.images, spec.seed = o.seed;
  const Corpus corpus = build(spec);
  const std::string hash = fmt::format("{:016x}", corpus.fnv1a());
  std::cout << fmt::format("corpus: {} images {}x{}, mean {:.0f} B, fnv1a {}\n", corpus.jpegs.size(), spec.width, spec.height, corpus.mean_bytes(), hash);
  const double tj = tjbench_set_rate(corpus, o);
  const ProbeFigure ours = host_decode_rate(o);
  if (ours.corpus_hash != hash) throw std::runtime_error("host.decode built different images (fnv1a " + ours.corpus_hash + ")");
  const double diff_pct = 100.0 * (ours.median - tj) / tj;
  std::cout << fmt::format("tjbench -rgb -nowrite -benchtime {} -warmup {} (per image, set rate): {:8.1f} images/s per core\n", o.benchtime_s, o.warmup_s, tj);
  std::cout << fmt::format("host.decode decode-only images_per_s_per_core (median, cv {:.3f}):       {:8.1f} images/s per core\n", ours.cv, ours.median);
  std::cout << fmt::format("difference: {:+.1f}% ({})\ncommand: {}\n", diff_pct, std::abs(diff_pct) <= 10 ? "within 10%" : "NOT within 10%", ours.command);
  return std::abs(diff_pct) <= 10 ? 0 : 1;
} catch (const std::exception& e) {
  std::cerr << "decode_vs_tjbench: " << e.what() << "\n";
  return 2;
}
