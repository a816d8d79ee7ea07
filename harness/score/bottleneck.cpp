// The bottleneck in one sentence with the recommended action, and whether buying faster GPUs would
// pay off ("upgrade is justified") or the node should be fixed first ("optimize before buying").
#include <fmt/format.h>

#include "harness/core/units.hpp"
#include "harness/score/verdict.hpp"

namespace nodeaudit::score {

using nlohmann::json;

namespace {

json sentence(const std::string& resource, const std::string& text) {
  return {{"resource", resource}, {"text", text}};
}

// The rate a loader stage must sustain so the GPUs never wait: its demand over the GPU-side time.
double needed_rate(double demand, const StepModel& step) {
  return demand / (step.gpu_busy_s + step.exposed_comm_s);
}

// Plain numbers (core/units): a rate in GB/s scaled to the value, a count of samples or images with
// k / M / G ("47.7 M", never 47709962).
std::string gbps_text(double gbps) { return format_quantity(gbps, "GB/s"); }
std::string count_text(double count) { return format_quantity(count, ""); }

json storage_sentence(const Profile& profile, const NodeModel& node, const Stage& storage) {
  // What storage itself must deliver a step: GB, or samples (those the page cache does not serve) x their size.
  const double bytes_per_step = storage.capacity_unit == "samples/s" ? storage.demand * profile.data.sample_bytes / 1e9 : storage.demand;
  std::string text = fmt::format("storage: {} of {} needed", gbps_text(storage.capacity_gbps),
                                 gbps_text(needed_rate(bytes_per_step, node.step)));
  if (storage.capacity_unit == "samples/s")
    text += fmt::format(" ({} of {} samples/s)", count_text(storage.capacity), count_text(needed_rate(storage.demand, node.step)));
  text += " — move hot data to local NVMe or raise loader workers";
  if (storage.knee_workers) text += fmt::format(" (knee at {:.0f})", *storage.knee_workers);
  return sentence("storage", text);
}

json loader_sentence(const Profile& profile, const NodeModel& node, const Stage& stage) {
  if (stage.resource == "storage") return storage_sentence(profile, node, stage);
  if (stage.resource == "cpu_decode" && stage.native_capacity && *stage.native_capacity > 1.1 * stage.capacity)
    return sentence("cpu_decode",
                    fmt::format("cpu_decode: PyTorch+PIL reaches {} images/s per GPU of {} needed; the native "
                                "decoder reaches {}: a faster decode path (torchvision.io, DALI, Pillow-SIMD) is worth up "
                                "to {:.1f}x before buying cores ({:.3g} per GPU now)",
                                count_text(stage.capacity), count_text(needed_rate(stage.demand, node.step)), count_text(*stage.native_capacity),
                                *stage.native_capacity / stage.capacity, node.host.cores_per_gpu));
  if (stage.resource == "cpu")
    return sentence("cpu", fmt::format("cpu: the job's loader needs {} per step on the {:.3g} cores it gets here, "
                                       "{} of waiting — give it more cores or workers, or make the loader cheaper "
                                       "(decode on the GPU, pre-decoded samples)",
                                       format_duration(stage.time_s), stage.capacity,
                                       percent(node.step.data_wait_share)));
  if (stage.resource == "cpu_decode")
    return sentence("cpu_decode",
                    fmt::format("cpu_decode: {} images/s per GPU of {} needed — add CPU cores ({:.3g} per GPU "
                                "now), decode on the GPU (nvJPEG / DALI) or store pre-decoded samples",
                                count_text(stage.capacity), count_text(needed_rate(stage.demand, node.step)), node.host.cores_per_gpu));
  return sentence("host_to_device",
                  fmt::format("host_to_device: {} per GPU of {} needed — check each GPU's PCIe link "
                              "(generation and width in env.gpus), use pinned buffers, or copy compressed samples and "
                              "decode on the GPU",
                              gbps_text(stage.capacity), gbps_text(needed_rate(stage.demand, node.step))));
}

json memory_sentence(const MemoryFit& memory) {
  return sentence("memory",
                  fmt::format("memory: peak {} per GPU is {} more than the {} usable — lower the micro-batch, "
                              "enable activation checkpointing, or shard the optimizer state (FSDP / ZeRO)",
                              format_bytes(memory.peak_bytes), format_bytes(memory.peak_bytes - memory.usable_bytes),
                              format_bytes(memory.usable_bytes)));
}

}  // namespace

json bottleneck(const Profile& profile, const NodeModel& node) {
  if (!node.memory.not_judged && node.memory.ratio() > 1.0) return memory_sentence(node.memory);
  const StepModel& step = node.step;
  if (step.not_judged)
    return sentence("not_judged", fmt::format("not judged: {} — run the GPU probes on the node to predict the step",
                                              *step.not_judged));
  if (!step.unmeasured.empty())
    return sentence("not_judged", fmt::format("not judged: {} not measured — the step could be longer than the {} "
                                              "the measured stages give",
                                              step.unmeasured.front(), format_duration(step.step_s)));
  if (step.loader_serial || step.loader_s > step.gpu_busy_s + step.exposed_comm_s)
    return loader_sentence(profile, node, *node.stage(step.loader_resource));
  const Stage& comm = *node.stage("communication");
  if (comm.judged() && step.exposed_comm_share > profile.thresholds.comm_share_max)
    return sentence(
        "communication",
        fmt::format("communication: all-reduce at {:.1f} GB/s bus bandwidth leaves {} of the step exposed — overlap "
                    "more of it with backward (bucketed DDP), accumulate more micro-batches per step, or check "
                    "the NVLink / NCCL topology",
                    comm.capacity, percent(step.exposed_comm_share)));
  const Stage& hbm = *node.stage("gpu_memory_bandwidth");
  if (hbm.judged() && hbm.time_s > node.stage("compute")->time_s)
    return sentence(
        "gpu_memory_bandwidth",
        fmt::format("gpu_memory_bandwidth: reading GPU memory ({:.3g} s per step at {:.0f} GB/s) takes longer than "
                    "the GEMMs — raise the batch so each weight read serves more samples, or quantize the weights",
                    hbm.time_s, hbm.capacity));
  return sentence("compute", fmt::format("compute: GPU-bound at {} predicted utilization — storage, CPUs, PCIe and "
                                         "interconnect keep the GPUs fed; only faster GPUs or a higher model "
                                         "efficiency shorten the step",
                                         percent(step.utilization)));
}

// Faster GPUs pay off only when the GPUs are already busy, memory is near its limit and nothing
// upstream or on the interconnect makes them wait.
json upgrade_advice(const Profile& profile, const NodeModel& node) {
  const Thresholds& t = profile.thresholds;
  const StepModel& step = node.step;
  std::string why;
  if (step.not_judged)
    why = *step.not_judged;
  else if (node.memory.not_judged)
    why = "memory fit: " + *node.memory.not_judged;
  else if (!step.unmeasured.empty())
    why = step.unmeasured.front();
  if (!why.empty()) return {{"verdict", "not judged"}, {"text", "not judged (" + why + ")"}};
  std::vector<std::string> blockers;
  if (step.utilization <= t.upgrade_utilization_min)
    blockers.push_back(
        fmt::format("utilization {} <= {}", percent(step.utilization), percent(t.upgrade_utilization_min)));
  if (node.memory.ratio() < t.upgrade_memory_min)
    blockers.push_back(
        fmt::format("memory {} of usable < {}", percent(node.memory.ratio()), percent(t.upgrade_memory_min)));
  if (step.data_wait_share > t.upgrade_wait_max)
    blockers.push_back(
        fmt::format("data wait {} of the step > {}", percent(step.data_wait_share), percent(t.upgrade_wait_max)));
  if (step.exposed_comm_share > t.upgrade_wait_max)
    blockers.push_back(fmt::format("exposed communication {} of the step > {}", percent(step.exposed_comm_share),
                                   percent(t.upgrade_wait_max)));
  if (blockers.empty())
    return {{"verdict", "upgrade is justified"},
            {"text", fmt::format("upgrade is justified: utilization {}, memory {} of usable, data wait {}, exposed "
                                 "communication {}",
                                 percent(step.utilization), percent(node.memory.ratio()), percent(step.data_wait_share),
                                 percent(step.exposed_comm_share))}};
  std::string text = "optimize before buying: ";
  for (std::size_t i = 0; i < blockers.size(); ++i) text += (i ? "; " : "") + blockers[i];
  return {{"verdict", "optimize before buying"}, {"text", text}};
}

}  // namespace nodeaudit::score
