#include "probe_meaning.hpp"

#include <map>

namespace nodeaudit::report {

std::string probe_meaning(const std::string& probe_id) {
  static const std::map<std::string, std::string> meanings = {
      {"gpu.gemm",
       "Matrix-multiply throughput per GPU and dtype (TFLOP/s, higher is better) and its share of the "
       "datasheet peak; spread_pct is how far the slowest GPU trails the fastest."},
      {"gpu.memory-bandwidth",
       "Device-memory (HBM) copy and triad bandwidth per GPU over buffers far larger than L2 "
       "(decimal GB/s, higher is better)."},
      {"gpu.memory-capacity",
       "GPU memory one process can allocate: total in chunks and the largest single "
       "allocation, per GPU (bytes, higher is better)."},
      {"gpu.memory-integrity",
       "Memory test patterns over the allocatable GPU memory: bytes tested and errors found "
       "(any error is a fault)."},
      {"gpu.pcie",
       "Host-to-device and device-to-host copy bandwidth per GPU, pinned and pageable, one GPU at a "
       "time and all at once (decimal GB/s, higher is better)."},
      {"gpu.stress",
       "Sustained verified GEMM with clocks watched: sustained TFLOP/s, the drop from the first "
       "minute and the share of time throttled (lower drop and throttle are better)."},
      {"comm.allreduce",
       "NCCL all-reduce over the node's GPUs: bus bandwidth per message size (the curve), its "
       "peak and the small-message latency (busbw higher, latency lower is better)."},
      {"comm.allgather", "NCCL all-gather: bus bandwidth per message size, peak and latency."},
      {"comm.reducescatter", "NCCL reduce-scatter: bus bandwidth per message size, peak and latency."},
      {"comm.broadcast", "NCCL broadcast from GPU 0: bus bandwidth per message size, peak and latency."},
      {"comm.alltoall", "NCCL all-to-all: bus bandwidth per message size, peak and latency."},
      {"comm.p2p", "GPU-to-GPU copy bandwidth per pair, one direction and both (decimal GB/s, higher is better)."},
      {"comm.host-fabric",
       "MPI ping-pong and all-reduce on host memory between ranks: the network path without "
       "GPUs (bandwidth higher, latency lower is better)."},
      {"storage.read",
       "Block reads through io_uring at one pattern, block size and worker count: bandwidth, IOPS, "
       "latency percentiles (us, lower is better) and CPU seconds per GB read."},
      {"storage.dataset",
       "A training-style loader over many small files: samples/s and bandwidth per worker "
       "count, latency percentiles, and the worker count past which more workers stop helping."},
      {"storage.checkpoint",
       "Checkpoint write (one file and shards, with fsync) and restore: GB/s and the stall a "
       "synchronous save costs the step."},
      {"host.decode",
       "CPU JPEG decode and training augmentation: images/s per worker count, per core and per GPU "
       "(higher is better); what a native loader reaches, a Python loader reaches less."},
      {"host.memory-bandwidth",
       "STREAM copy, scale, add and triad over host memory on all cores (decimal GB/s, "
       "higher is better)."},
      {"pipeline.step",
       "A real overlapped training step: measured accelerator utilization, samples/s, step time "
       "and where each step's time went, beside the scorer's prediction."},
  };
  const auto it = meanings.find(probe_id);
  return it != meanings.end() ? it->second : "Figures as " + probe_id + " recorded them (see results/SCHEMA.md).";
}

}  // namespace nodeaudit::report
