#include "harness/learn/learned_profile.hpp"

#include <cmath>

#include <fmt/format.h>

#include "harness/score/profile.hpp"

namespace nodeaudit::learn {

namespace {

std::string toml_string(const std::string& text) {
  std::string out = "\"";
  for (const char c : text) {
    if (c == '"' || c == '\\') out += '\\', out += c;
    else if (static_cast<unsigned char>(c) < 0x20) out += fmt::format("\\u{:04x}", static_cast<int>(c));
    else out += c;
  }
  return out + "\"";
}

std::string one_line(std::string text) {
  for (char& c : text)
    if (c == '\n' || c == '\r') c = ' ';
  return text;
}

// Whole numbers as TOML integers (counts, bytes); others with 6 significant digits.
std::string toml_number(double value) {
  if (std::fabs(value) < 9e18 && std::fabs(value - std::round(value)) < 1e-9 * std::max(1.0, std::fabs(value)))
    return fmt::format("{}", static_cast<long long>(std::llround(value)));
  if (std::fabs(value) >= 1e3) return fmt::format("{}", static_cast<long long>(std::llround(value)));
  return fmt::format("{:.6g}", value);
}

class Writer {
 public:
  void line(const std::string& key, const std::string& value, const std::string& how) {
    text_ += fmt::format("{} = {}  # {}\n", key, value, one_line(how));
  }
  void number(const std::string& key, const Learned& figure) { line(key, toml_number(figure.value), figure.how); }
  void integer(const std::string& key, const Learned& figure) {
    line(key, fmt::format("{}", std::max(1LL, std::llround(figure.value))), figure.how);
  }
  void text(const std::string& key, const LearnedText& figure) { line(key, toml_string(figure.value), figure.how); }
  void raw(const std::string& text) { text_ += text; }
  const std::string& str() const { return text_; }

 private:
  std::string text_;
};

}  // namespace

std::string learned_profile_toml(const LearnedJob& job, const std::string& name, const std::string& command_text) {
  const LearnedProfileFields& f = job.fields;
  Writer w;
  w.raw(fmt::format("# Learned by `nodeaudit learn` from the job below: {} warm-up, {} measured and {} counted optimizer step(s)\n"
                    "# on {} rank(s). Each field says how it was obtained; edit the assumptions to your run.\n",
                    job.warmup, job.measured, job.counted, job.world_size));
  w.raw(fmt::format("name = {}\n", toml_string(name)));
  w.raw(fmt::format("description = {}\n", toml_string("learned from: " + command_text)));
  w.line("category", toml_string(f.category), f.category_how);
  w.raw("\n[model]\n");
  w.number("parameters", f.parameters);
  w.number("trainable_parameters", f.trainable_parameters);
  w.text("dtype", f.dtype);
  w.number("flops_per_sample", f.flops_per_sample);
  if (f.tokens_per_sample) w.number("tokens_per_sample", *f.tokens_per_sample);
  w.text("optimizer", f.optimizer);
  w.number("bytes_per_parameter", f.bytes_per_parameter);
  w.number("gradient_bytes_per_parameter", f.gradient_bytes_per_parameter);
  w.number("activation_bytes_per_sample", f.activation_bytes_per_sample);
  w.raw("\n[data]\n");
  w.number("sample_size", f.sample_size);
  w.number("dataset_size", f.dataset_size);
  w.text("access", f.access);
  w.text("decode", f.decode);
  w.text("loader", f.loader);
  w.number("device_bytes_per_sample", f.device_bytes_per_sample);
  w.raw("\n[training]\n");
  w.integer("micro_batch_per_gpu", f.micro_batch);
  w.integer("gradient_accumulation", f.accumulation);
  w.number("model_efficiency", f.model_efficiency);
  w.number("comm_overlap", f.comm_overlap);
  w.line("sharding", "\"none\"", job.distributed ? "assumption: a full replica per rank (FSDP is not detected)" : "one process: a full replica");
  if (f.checkpoint_size && f.checkpoint_interval_s) {
    w.number("checkpoint_size", *f.checkpoint_size);
    w.number("checkpoint_interval", *f.checkpoint_interval_s);
  } else {
    w.raw("# checkpoint_size, checkpoint_interval: no torch.save call in the steps learned\n");
  }
  w.number("target_samples", f.target_samples);
  return w.str();
}

void check_learned_profile(const std::string& toml_text, const std::string& path) {
  (void)score::parse_profile(toml_text, path);
}

}  // namespace nodeaudit::learn
