// The storage probes' figures: what each one records, in which unit, and which way is better.
// Dependency-free (figures.hpp only): compiled into the probe catalogue that the scorer and the
// reporters link.
#include "harness/core/figures.hpp"

namespace nodeaudit {

std::vector<ProbeFigures> storage_probe_figures() {
  const Better higher = Better::higher, lower = Better::lower;
  const std::vector<std::string> read_labels{"pattern", "block_size", "workers", "cache"};
  const std::vector<std::string> dataset_labels{"workers", "cache", "read"};
  return {
      {"storage.read",
       "Block reads through io_uring at one pattern, block size and worker count: bandwidth, IOPS, "
       "latency percentiles (us, lower is better) and CPU seconds per GB read.",
       ProbeRole::measurement,
       {{"bandwidth", unit::gbps, higher, read_labels, "bytes read per second in one steady window"},
        {"iops", unit::iops, higher, read_labels, "reads completed per second in one steady window"},
        {"latency_p50", unit::us, lower, read_labels, "median time from submission to completion of one read"},
        {"latency_p99", unit::us, lower, read_labels, "99th percentile of the time from submission to completion of one read"},
        {"latency_max", unit::us, lower, read_labels, "the slowest read of the window"},
        {"cpu_per_gb", unit::s_per_gb, lower, read_labels, "this process's user + system CPU seconds per GB read"}},
       "`pattern`: seq or rand; `block_size`: bytes per read; `workers`: the count of reading threads; `cache`: page or none."},
      {"storage.dataset",
       "A training-style loader over many small files: samples/s and bandwidth per worker "
       "count, latency percentiles, and the worker count past which more workers stop helping.",
       ProbeRole::measurement,
       {{"samples_per_s", unit::samples_per_s, higher, dataset_labels, "files opened, read whole and closed per second"},
        {"bandwidth", unit::gbps, higher, dataset_labels, "bytes read per second over the epoch"},
        {"latency_p50", unit::us, lower, dataset_labels, "median time from the open's submission to the close's completion"},
        {"latency_p99", unit::us, lower, dataset_labels, "99th percentile of the time from the open's submission to the close's completion"},
        {"knee_workers", unit::count, lower, {"cache", "read"}, "the fewest workers within 10% of the best samples/s"},
        {"cache_fill_per_sample", unit::bytes, lower, {"workers", "cache", "read"},
         "read=mmap from a cold start: bytes the page cache gained per window read (the window and the kernel's read-around)"}},
       "`cache`: page or none; `read`: mmap with `--read mmap` (windows of one memory-mapped file), absent otherwise."},
      {"storage.checkpoint",
       "Checkpoint write (one file and shards, with fsync) and restore: GB/s and the stall a "
       "synchronous save costs the step.",
       ProbeRole::measurement,
       {{"write_bandwidth", unit::gbps, higher, {"shards"}, "checkpoint bytes / the stall"},
        {"stall_s", unit::s, lower, {"shards"}, "wall time from the first open to the last fsync: what a synchronous save blocks"},
        {"restore_bandwidth", unit::gbps, higher, {"shards", "cache"}, "checkpoint bytes read back per second, O_DIRECT where the file system allows"}},
       "`shards`: the files the checkpoint is split into; `cache` (restore): none when read with O_DIRECT, else page."},
  };
}

}  // namespace nodeaudit
