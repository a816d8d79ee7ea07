// host.decode against libjpeg-turbo's own tjbench, decode only, one core, on the same images.
//
// 1. Builds the corpus host.decode would build (same spec, seed and grain tuning) and writes each
//    JPEG to a temporary directory.
// 2. Runs `tjbench FILE -rgb -nowrite -benchtime T -warmup W` on every file (decompression only: the
//    input is a JPEG and no transform is asked for) and reads its frame rate.
// 3. Runs `nodeaudit probe host.decode --workers 1` with the same corpus parameters and reads the
//    images_per_s_per_core [stage=decode] median; the corpus hash in its info must match ours.
// 4. Repeats 2-3 for --rounds rounds, alternating, so a machine whose load drifts slows both alike;
//    prints each round, the medians and the median of the per-round ratios, and exits 1 when that
//    ratio is more than 10% from 1.
// tjbench decodes one image over and over; host.decode walks the whole set, so it is the rate for the
// set. The tjbench figure for the set is images / sum over images of (1 / frame rate).
// On a shared machine run it pinned, e.g. `taskset -c 1 decode_vs_tjbench`: both tools then use the
// same core (host.decode pins its one worker to the first CPU it may use).
#include <unistd.h>

#include <algorithm>
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

#include "kernels/host/synthetic_jpeg.hpp"

namespace {

using nodeaudit::host::Corpus;
using nodeaudit::host::CorpusSpec;

struct Options {
  int images = 10, rounds = 5, repetitions = 100;
  std::uint64_t seed = 1;
  double benchtime_s = 0.5, warmup_s = 0.2;
  std::string nodeaudit = NODEAUDIT_BINARY;
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
    else if (name == "--rounds") o.rounds = std::stoi(value);
    else if (name == "--repetitions") o.repetitions = std::stoi(value);
    else throw std::runtime_error("unknown option " + name + " (accepted: --images --rounds --repetitions --seed --benchtime --warmup --nodeaudit)");
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

std::vector<std::string> write_jpegs(const Corpus& corpus, const std::filesystem::path& dir) {
  std::vector<std::string> files;
  for (std::size_t i = 0; i < corpus.jpegs.size(); ++i) {
    files.push_back((dir / fmt::format("image{:04}.jpg", i)).string());
    std::ofstream(files.back(), std::ios::binary)
        .write(reinterpret_cast<const char*>(corpus.jpegs[i].data()), static_cast<std::streamsize>(corpus.jpegs[i].size()));
  }
  return files;
}

double tjbench_set_rate(const std::vector<std::string>& files, const Options& o) {
  double seconds_per_set = 0;
  for (const std::string& file : files) seconds_per_set += 1.0 / tjbench_fps(file, o);
  return static_cast<double>(files.size()) / seconds_per_set;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

struct ProbeFigure {
  double median = 0, cv = 0;
  std::string corpus_hash, command;
};

ProbeFigure host_decode_rate(const Options& o) {
  ProbeFigure f;
  f.command = fmt::format("{} probe host.decode --workers 1 --images {} --seed {} --repetitions {} --format json", o.nodeaudit, o.images, o.seed,
                          o.repetitions);
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
  char dir_template[] = "/tmp/nodeaudit-tjbench-XXXXXX";
  if (!mkdtemp(dir_template)) throw std::runtime_error("mkdtemp failed");
  const std::vector<std::string> files = write_jpegs(corpus, dir_template);
  std::vector<double> tj_rates, our_rates, ratios;
  std::string command;
  for (int round = 1; round <= o.rounds; ++round) {
    const double tj = tjbench_set_rate(files, o);
    const ProbeFigure ours = host_decode_rate(o);
    if (ours.corpus_hash != hash) throw std::runtime_error("host.decode built different images (fnv1a " + ours.corpus_hash + ")");
    tj_rates.push_back(tj), our_rates.push_back(ours.median), ratios.push_back(ours.median / tj);
    command = ours.command;
    std::cout << fmt::format("round {}: tjbench {:7.1f}  host.decode {:7.1f} (cv {:.3f})  images/s per core  ratio {:.3f}\n", round, tj,
                             ours.median, ours.cv, ours.median / tj);
  }
  std::filesystem::remove_all(dir_template);
  const double ratio = median(ratios);
  std::cout << fmt::format("tjbench FILE -rgb -nowrite -benchtime {} -warmup {}, per image, set rate: median {:7.1f} images/s per core\n",
                           o.benchtime_s, o.warmup_s, median(tj_rates));
  std::cout << fmt::format("host.decode images_per_s_per_core [stage=decode], median of medians:      {:7.1f} images/s per core\n", median(our_rates));
  std::cout << fmt::format("median ratio host.decode / tjbench: {:.3f} ({:+.1f}%, {})\ncommand: {}\n", ratio, 100 * (ratio - 1),
                           std::abs(ratio - 1) <= 0.10 ? "within 10%" : "NOT within 10%", command);
  return std::abs(ratio - 1) <= 0.10 ? 0 : 1;
} catch (const std::exception& e) {
  std::cerr << "decode_vs_tjbench: " << e.what() << "\n";
  return 2;
}
