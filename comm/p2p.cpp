// comm.p2p: GPU-to-GPU copy bandwidth for every ordered pair of the selected GPUs, one direction
// (src -> dst) and both at once (src <-> dst, one stream per side), and whether peer access is on.
//
// Formula: bandwidth = bytes copied / CUDA-event time of `iterations` cudaMemcpyPeerAsync calls
// (decimal GB/s); bidirectional counts the bytes of both directions.
//
// Pitfalls: without peer access the copy is staged through host memory (the figure is then the
// PCIe/host path, which is what this pair really gets, and peer_access says so); the first copy
// of a pair maps memory (warm-up); bidirectional is timed from one event pair spanning both
// streams. A pair far below the others (under half the median) is a `warn` finding.
#include <algorithm>

#include <fmt/format.h>

#include "comm/nccl_engine.hpp"
#include "comm/nccl_support.hpp"
#include "comm/p2p_math.hpp"

namespace nodeaudit::comm {
namespace {

constexpr int kMaxPairIterations = 1000;

// A stream with start/stop events on one device.
class DeviceStream {
 public:
  explicit DeviceStream(int device) : device_(device) {
    check_cuda(cudaSetDevice(device), fmt::format("cudaSetDevice({})", device));
    check_cuda(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), fmt::format("cudaStreamCreate(GPU {})", device));
    check_cuda(cudaEventCreate(&start_), fmt::format("cudaEventCreate(GPU {})", device));
    check_cuda(cudaEventCreate(&stop_), fmt::format("cudaEventCreate(GPU {})", device));
  }
  ~DeviceStream() {
    cudaSetDevice(device_);
    cudaEventDestroy(start_), cudaEventDestroy(stop_), cudaStreamDestroy(stream_);
  }
  DeviceStream(const DeviceStream&) = delete;
  DeviceStream& operator=(const DeviceStream&) = delete;
  cudaStream_t stream() const { return stream_; }
  cudaEvent_t start() const { return start_; }
  cudaEvent_t stop() const { return stop_; }
  double elapsed_s() const {
    check_cuda(cudaEventSynchronize(stop_), fmt::format("cudaEventSynchronize(GPU {})", device_));
    float ms = 0;
    check_cuda(cudaEventElapsedTime(&ms, start_, stop_), fmt::format("cudaEventElapsedTime(GPU {})", device_));
    return ms / 1e3;
  }

 private:
  int device_;
  cudaStream_t stream_ = nullptr;
  cudaEvent_t start_ = nullptr, stop_ = nullptr;
};

struct PairBuffers {  // per GPU: a source half and a destination half
  std::vector<DeviceBuffer> source, target;
  std::uint64_t bytes = 0;
};

void copy(const PairBuffers& b, const std::vector<int>& devices, int from, int to, cudaStream_t stream) {
  check_cuda(cudaMemcpyPeerAsync(b.target[to].get(), devices[to], b.source[from].get(), devices[from], b.bytes, stream),
             fmt::format("cudaMemcpyPeerAsync({} B, GPU {} -> GPU {})", b.bytes, devices[from], devices[to]));
}

double time_uni(const PairBuffers& b, const std::vector<int>& devices, int src, int dst, int iterations) {
  DeviceStream s(devices[src]);
  check_cuda(cudaEventRecord(s.start(), s.stream()), "cudaEventRecord(start)");
  for (int i = 0; i < iterations; ++i) copy(b, devices, src, dst, s.stream());
  check_cuda(cudaEventRecord(s.stop(), s.stream()), "cudaEventRecord(stop)");
  return s.elapsed_s();
}

double time_bi(const PairBuffers& b, const std::vector<int>& devices, int src, int dst, int iterations) {
  DeviceStream a(devices[src]), back(devices[dst]);
  check_cuda(cudaSetDevice(devices[src]), "cudaSetDevice");
  check_cuda(cudaEventRecord(a.start(), a.stream()), "cudaEventRecord(start)");
  check_cuda(cudaStreamWaitEvent(back.stream(), a.start(), 0), "cudaStreamWaitEvent(reverse stream)");
  for (int i = 0; i < iterations; ++i) copy(b, devices, src, dst, a.stream()), copy(b, devices, dst, src, back.stream());
  check_cuda(cudaSetDevice(devices[dst]), "cudaSetDevice");
  check_cuda(cudaEventRecord(back.stop(), back.stream()), "cudaEventRecord(reverse done)");
  check_cuda(cudaStreamWaitEvent(a.stream(), back.stop(), 0), "cudaStreamWaitEvent(forward stream)");
  check_cuda(cudaSetDevice(devices[src]), "cudaSetDevice");
  check_cuda(cudaEventRecord(a.stop(), a.stream()), "cudaEventRecord(stop)");
  return a.elapsed_s();
}

// Enables peer access wherever the runtime allows it; returns can_access[src][dst].
std::vector<std::vector<bool>> enable_peer_access(const std::vector<int>& devices) {
  const std::size_t n = devices.size();
  std::vector<std::vector<bool>> access(n, std::vector<bool>(n, false));
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      if (i == j) continue;
      int can = 0;
      check_cuda(cudaDeviceCanAccessPeer(&can, devices[i], devices[j]),
                 fmt::format("cudaDeviceCanAccessPeer(GPU {}, GPU {})", devices[i], devices[j]));
      if (!can) continue;
      check_cuda(cudaSetDevice(devices[i]), fmt::format("cudaSetDevice({})", devices[i]));
      const cudaError_t code = cudaDeviceEnablePeerAccess(devices[j], 0);
      if (code == cudaErrorPeerAccessAlreadyEnabled) cudaGetLastError();  // clear the sticky-free error
      else check_cuda(code, fmt::format("cudaDeviceEnablePeerAccess(GPU {} -> GPU {})", devices[i], devices[j]));
      access[i][j] = true;
    }
  return access;
}

struct PairRate {
  std::string label;
  double median_gbps = 0;
};

PairRate measure_pair(ProbeContext& ctx, const PairBuffers& b, const std::vector<int>& devices, int src, int dst,
                        bool both_ways) {
  const auto timed = [&](int iterations) {
    return both_ways ? time_bi(b, devices, src, dst, iterations) : time_uni(b, devices, src, dst, iterations);
  };
  timed(1);  // warm-up: mappings, first copy
  RepeatPolicy policy = ctx.policy();
  policy.warmup = 0;
  policy.budget_s = ctx.round_share_s(ctx.level() == Level::quick ? 0.3 : ctx.level() == Level::standard ? 1.5 : 10.0);
  const int iterations = iterations_for(timed(1), policy.budget_s / std::max(1, policy.min_repetitions), kMaxPairIterations);
  const double bytes = static_cast<double>(b.bytes) * iterations * (both_ways ? 2 : 1);
  const Measurement m = ctx.repeat(policy, [&] { return Work{.bytes = bytes, .elapsed_s = timed(iterations)}; });
  const Labels labels{{"src", std::to_string(devices[src])}, {"dst", std::to_string(devices[dst])},
                      {"direction", both_ways ? "bi" : "uni"}};
  ctx.add_rate("bandwidth", RateKind::gb_per_s, m, labels);
  return {fmt::format("GPU {} {} GPU {}", devices[src], both_ways ? "<->" : "->", devices[dst]),
          median_of(rate_samples(m, RateKind::gb_per_s))};
}

void warn_slow_pairs(ProbeContext& ctx, const std::vector<PairRate>& pairs, const char* direction) {
  std::vector<double> rates;
  for (const PairRate& p : pairs) rates.push_back(p.median_gbps);
  const double median = median_of(rates);
  for (std::size_t i : slow_pairs(rates, 0.5))
    ctx.add_finding(Severity::warn, "comm.p2p_slow_pair",
                    fmt::format("{} {:.1f} GB/s ({}) is under half the median of the other pairs (all pairs: {:.1f} GB/s)",
                                pairs[i].label, pairs[i].median_gbps, direction, median));
}

std::uint64_t fitting_copy_bytes(ProbeContext& ctx, const std::vector<int>& devices) {
  std::uint64_t free_bytes = UINT64_MAX;
  for (int d : devices) free_bytes = std::min(free_bytes, free_device_bytes(d));
  std::uint64_t bytes = ctx.params().size_bytes("copy-size");
  while (bytes > (1u << 20) && static_cast<double>(2 * bytes) > 0.8 * static_cast<double>(free_bytes)) bytes /= 2;
  if (bytes != ctx.params().size_bytes("copy-size"))
    ctx.add_finding(Severity::info, "comm.p2p_copy_size",
                    fmt::format("copy size lowered to {} B to fit {} B free on the fullest GPU", bytes, free_bytes));
  return bytes;
}

Outcome run_matrix(ProbeContext& ctx, const std::vector<int>& devices) {
  const int n = static_cast<int>(devices.size());
  const std::vector<std::vector<bool>> access = enable_peer_access(devices);
  PairBuffers buffers;
  buffers.bytes = fitting_copy_bytes(ctx, devices);
  for (int d : devices) buffers.source.emplace_back(d, buffers.bytes), buffers.target.emplace_back(d, buffers.bytes);
  ctx.info()["copy_bytes"] = buffers.bytes;
  std::vector<PairRate> uni, bi;
  for (int src = 0; src < n; ++src)
    for (int dst = 0; dst < n; ++dst) {
      if (src == dst) continue;
      if (ctx.should_stop()) return ctx.cancelled() ? Outcome::interrupted() : Outcome::failed("probe deadline reached mid-matrix");
      ctx.info()["peer_access"][fmt::format("{}->{}", devices[src], devices[dst])] = static_cast<bool>(access[src][dst]);
      uni.push_back(measure_pair(ctx, buffers, devices, src, dst, false));
      bi.push_back(measure_pair(ctx, buffers, devices, src, dst, true));
    }
  warn_slow_pairs(ctx, uni, "unidirectional");
  warn_slow_pairs(ctx, bi, "bidirectional");
  return Outcome::ok();
}

}  // namespace

Outcome measure_p2p(ProbeContext& ctx) {
  GpuChoice choice = choose_gpus(ctx);
  if (choice.stop) return *choice.stop;
  if (choice.devices.size() < 2) return Outcome::skipped(fmt::format("needs 2 GPUs; this node has {}", choice.devices.size()));
  try {
    return run_matrix(ctx, choice.devices);
  } catch (const CommFailure& error) {
    return Outcome::failed(error.what());
  }
}

}  // namespace nodeaudit::comm
