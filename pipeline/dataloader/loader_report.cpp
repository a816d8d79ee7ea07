#include "pipeline/dataloader/loader_report.hpp"

#include <algorithm>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "harness/core/stats.hpp"

namespace nodeaudit::dataloader {
namespace {

using nlohmann::json;

// A field of `line` that must be there with this JSON type; throws naming it.
const json& field(const json& line, const char* name, json::value_t type) {
  if (!line.contains(name)) throw std::runtime_error(fmt::format("no \"{}\"", name));
  const json& value = line[name];
  const bool number_ok = type == json::value_t::number_float && value.is_number();
  const bool whole_ok = type == json::value_t::number_unsigned && value.is_number_unsigned();
  if (value.type() != type && !number_ok && !whole_ok)
    throw std::runtime_error(fmt::format("\"{}\" is {}, not the expected type", name, value.type_name()));
  return value;
}

LoaderPoint point_from(const json& line) {
  LoaderPoint p;
  p.decoder = field(line, "decoder", json::value_t::string).get<std::string>();
  p.workers = field(line, "workers", json::value_t::number_unsigned).get<int>();
  p.batch = field(line, "batch", json::value_t::number_unsigned).get<int>();
  p.batches = field(line, "batches", json::value_t::number_unsigned).get<int>();
  p.samples = field(line, "samples", json::value_t::number_unsigned).get<std::uint64_t>();
  p.seconds = field(line, "seconds", json::value_t::number_float).get<double>();
  p.cpu_seconds = field(line, "cpu_seconds", json::value_t::number_float).get<double>();
  if (p.workers < 0 || p.workers > 1024 || p.batch < 1) throw std::runtime_error("workers or batch out of range");
  if (p.seconds <= 0 || p.cpu_seconds < 0) throw std::runtime_error("seconds must be > 0 and cpu_seconds >= 0");
  if (p.samples != static_cast<std::uint64_t>(p.batch) * static_cast<std::uint64_t>(p.batches))
    throw std::runtime_error("samples is not batch x batches");
  return p;
}

StepRecord step_from(const json& line, std::size_t expected) {
  StepRecord s;
  s.step = field(line, "step", json::value_t::number_unsigned).get<int>();
  s.samples = field(line, "samples", json::value_t::number_unsigned).get<int>();
  s.data_wait_s = field(line, "data_wait_s", json::value_t::number_float).get<double>();
  s.compute_s = field(line, "compute_s", json::value_t::number_float).get<double>();
  s.comm_s = field(line, "comm_s", json::value_t::number_float).get<double>();
  s.end_s = field(line, "end_s", json::value_t::number_float).get<double>();
  if (static_cast<std::size_t>(s.step) != expected) throw std::runtime_error(fmt::format("step {} where step {} was due", s.step, expected));
  if (s.samples < 1) throw std::runtime_error("a step with no samples");
  if (s.data_wait_s < 0 || s.compute_s < 0 || s.comm_s < 0 || s.end_s < s.data_wait_s + s.compute_s + s.comm_s - 1e-6)
    throw std::runtime_error("stage times must be >= 0 and fit before end_s");
  return s;
}

TrainCpu train_cpu_from(const json& line) {
  TrainCpu c;
  c.steps = field(line, "steps", json::value_t::number_unsigned).get<int>();
  c.samples = field(line, "samples", json::value_t::number_unsigned).get<std::uint64_t>();
  c.seconds = field(line, "seconds", json::value_t::number_float).get<double>();
  c.main_cpu_seconds = field(line, "main_cpu_seconds", json::value_t::number_float).get<double>();
  c.worker_cpu_seconds = field(line, "worker_cpu_seconds", json::value_t::number_float).get<double>();
  c.workers = field(line, "workers", json::value_t::number_unsigned).get<int>();
  c.cpus = field(line, "cpus", json::value_t::number_unsigned).get<int>();
  if (c.seconds <= 0 || c.main_cpu_seconds < 0 || c.worker_cpu_seconds < 0 || c.cpus < 1 || c.workers > 1024)
    throw std::runtime_error("seconds must be > 0, CPU seconds >= 0, cpus >= 1, workers <= 1024");
  return c;
}

void take_line(LoaderReport& report, const json& line) {
  if (!line.is_object()) throw std::runtime_error("not a JSON object");
  const std::string kind = field(line, "kind", json::value_t::string).get<std::string>();
  if (report.done) throw std::runtime_error("a line after \"done\"");
  if (kind == "loader") {
    field(line, "torch", json::value_t::string), field(line, "python", json::value_t::string);
    report.loader = line;
  } else if (kind == "unavailable") {
    report.unavailable = fmt::format("{}: {}", field(line, "module", json::value_t::string).get<std::string>(),
                                     field(line, "why", json::value_t::string).get<std::string>());
  } else if (kind == "point") {
    if (report.loader.empty()) throw std::runtime_error("a point before the \"loader\" line");
    report.points.push_back(point_from(line));
  } else if (kind == "decoder_skipped") {
    report.notes.push_back(fmt::format("{}: {}", field(line, "decoder", json::value_t::string).get<std::string>(),
                                       field(line, "why", json::value_t::string).get<std::string>()));
  } else if (kind == "decoder_note") {
    report.notes.push_back(field(line, "note", json::value_t::string).get<std::string>());
  } else if (kind == "step") {
    if (report.loader.empty()) throw std::runtime_error("a step before the \"loader\" line");
    report.steps.push_back(step_from(line, report.steps.size()));
  } else if (kind == "train_cpu") {
    if (report.steps.empty()) throw std::runtime_error("CPU figures before any step");
    const TrainCpu cpu = train_cpu_from(line);
    // They cover the steps after the first: that many, with their samples.
    std::uint64_t after_first = 0;
    for (std::size_t i = 1; i < report.steps.size(); ++i) after_first += static_cast<std::uint64_t>(report.steps[i].samples);
    if (static_cast<std::size_t>(cpu.steps) + 1 != report.steps.size() || cpu.samples != after_first)
      throw std::runtime_error(fmt::format("CPU figures for {} steps and {} samples; the report has {} steps after the "
                                           "first, with {} samples",
                                           cpu.steps, cpu.samples, report.steps.size() - 1, after_first));
    report.train_cpu = cpu;
  } else if (kind == "done") {
    report.done = true;
  } else {
    throw std::runtime_error(fmt::format("unknown kind \"{}\"", kind));
  }
}

}  // namespace

double TrainCpu::capacity_samples_per_s() const {
  const double all_cpus = (main_cpu_seconds + worker_cpu_seconds) / cpus;
  const double per_worker = workers > 0 ? worker_cpu_seconds / std::min(workers, cpus) : 0;
  const double bound_s = std::max({all_cpus, per_worker, main_cpu_seconds});
  return samples > 0 && bound_s > 0 ? static_cast<double>(samples) / bound_s : 0;
}

ParsedReport parse_loader_report(const std::string& text) {
  ParsedReport parsed;
  std::istringstream in(text);
  int number = 0;
  for (std::string line; std::getline(in, line);) {
    ++number;
    try {
      take_line(parsed.report, json::parse(line));
    } catch (const std::exception& e) {
      const std::string shown = line.size() > 200 ? line.substr(0, 200) + "..." : line;
      parsed.error = fmt::format("line {} of the loader's report: {}: {}", number, e.what(), shown);
      return parsed;
    }
  }
  return parsed;
}

WorkerPlan plan_workers(const std::vector<int>& asked, int cpus) {
  WorkerPlan plan;
  std::vector<int> left_out;
  for (const int w : std::set<int>(asked.begin(), asked.end())) (w <= cpus ? plan.counts : left_out).push_back(w);
  if (plan.counts.empty() && !left_out.empty()) {
    plan.counts.push_back(left_out.front());
    left_out.erase(left_out.begin());
  }
  if (!left_out.empty())
    plan.capped = fmt::format("capped at the {} CPUs this process may use: {} worker(s) not run", cpus, fmt::join(left_out, ", "));
  return plan;
}

std::optional<std::string> parse_worker_list(const std::string& text, std::vector<int>& counts) {
  counts.clear();
  std::istringstream in(text);
  for (std::string item; std::getline(in, item, ',');) {
    std::size_t used = 0;
    long value = -1;
    try {
      value = std::stol(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != item.size() || value < 1 || value > 1024)
      return fmt::format("'{}' is not a worker count: expected whole numbers 1..1024, comma-separated (e.g. 1,2,4,8,16)", item);
    counts.push_back(static_cast<int>(value));
  }
  if (counts.empty()) return std::string("no worker count given: expected whole numbers 1..1024, comma-separated");
  return std::nullopt;
}

int knee_workers(const std::vector<LoaderPoint>& points) {
  std::vector<std::int64_t> workers;
  std::vector<double> rates;
  for (const LoaderPoint& p : points) workers.push_back(p.workers), rates.push_back(p.samples_per_s());
  return nodeaudit::knee_workers(workers, rates);
}

}  // namespace nodeaudit::dataloader
