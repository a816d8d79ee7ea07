// host.memory-bandwidth — STREAM-style copy, scale, add and triad, and a plain memcpy, over host
// memory, all cores.
//
// Bytes counted per element as STREAM does, without write-allocate traffic:
//   copy  c = a          16 B     scale b = s*c        16 B
//   add   c = a + b      24 B     triad a = b + s*c    24 B
//   memcpy c = a         16 B     (std::memcpy of each thread's slice: the copy programs get)
// Stores are non-temporal by default (--stores streaming): an ordinary store reads its line
// before writing it, traffic the count above leaves out, so with ordinary stores (--stores
// cached) the figure is about 2/3 (copy, scale) or 3/4 (add, triad) of the bytes the memory moved.
// The four STREAM kernels load and store in the widest vectors the CPU offers (AVX-512, AVX2 or
// SSE2, info.isa): narrower streaming stores fill a line's write-combining buffer in more pieces
// and reach less. memcpy's instructions and stores are the C library's choice, whatever --stores.
// Arrays are advised as transparent huge pages (--huge-pages; info.huge_pages says how much was
// granted). Each array is at least 4x the total last-level cache (and at least 256 MiB), so the
// caches are not what is measured. Every thread first-touches its own slice, so on a NUMA node
// each slice lives on the memory local to the core that streams it; slices start on cache lines.
// Arrays start non-zero; each kernel writes an array it does not read, so repeating a kernel is
// idempotent and the final values are known exactly (a = 15, b = 3, c = 15 after the five kernels
// with s = 3; add's c = 4 is read by triad): checked after timing.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <memory>
#include <thread>

#include <fmt/format.h>
#include <hwloc.h>
#include <sys/mman.h>

#include "harness/core/context.hpp"
#include "harness/core/registry.hpp"
#include "harness/core/units.hpp"
#include "harness/node/procfs.hpp"
#include "kernels/host/stream_kernels.hpp"
#include "kernels/host/thread_team.hpp"

namespace nodeaudit::host {
namespace {

constexpr double scalar = 3.0;
constexpr std::size_t min_array_bytes = 256ull << 20;

struct FreeDeleter {
  void operator()(double* p) const { std::free(p); }
};
using Array = std::unique_ptr<double[], FreeDeleter>;

constexpr std::size_t huge_page_bytes = 2u << 20;

// Aligned to a 2 MiB huge page and, with `huge`, advised as transparent huge pages (THP is often
// "madvise" only): with 4 KiB pages the hardware prefetchers stop at every page boundary and the
// TLB misses every 4 KiB, which cost about a quarter of the bandwidth on a 2-core EPYC VM
// (bench/kernels/host/memory_bandwidth_vs_stream.sh shows both). likwid-bench and a plain STREAM
// build do not advise, so where THP is madvise-only they run on 4 KiB pages.
Array allocate(std::size_t elements, bool huge) {
  const std::size_t bytes = (elements * sizeof(double) + huge_page_bytes - 1) / huge_page_bytes * huge_page_bytes;
  void* p = std::aligned_alloc(huge_page_bytes, bytes);
  if (p && huge) madvise(p, bytes, MADV_HUGEPAGE);  // advice only: what was granted is read back below
  return Array(static_cast<double*>(p));
}

std::size_t llc_total_bytes() {
  hwloc_topology_t topo = nullptr;
  std::size_t total = 0;
  if (hwloc_topology_init(&topo) == 0 && hwloc_topology_load(topo) == 0) {
    for (hwloc_obj_type_t type : {HWLOC_OBJ_L3CACHE, HWLOC_OBJ_L2CACHE}) {
      const int n = hwloc_get_nbobjs_by_type(topo, type);
      for (int i = 0; i < n; ++i) total += hwloc_get_obj_by_type(topo, type, static_cast<unsigned>(i))->attr->cache.size;
      if (total) break;
    }
  }
  if (topo) hwloc_topology_destroy(topo);
  return total;
}

struct Slice {
  std::size_t begin, end;
};
// Equal slices that start on a cache line (the arrays are page aligned); the last takes the rest.
Slice slice_of(std::size_t n, int workers, int index) {
  const std::size_t per = n / static_cast<std::size_t>(workers) / slice_alignment_elements * slice_alignment_elements;
  const std::size_t begin = per * static_cast<std::size_t>(index);
  return {begin, index == workers - 1 ? n : begin + per};
}

std::size_t count_wrong(const double* v, std::size_t n, double expected) {
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < n; ++i) wrong += v[i] != expected;
  return wrong;
}

Outcome measure_memory_bandwidth(ProbeContext& ctx) {
  const int threads = ctx.params().integer("threads") > 0 ? static_cast<int>(ctx.params().integer("threads"))
                                                          : static_cast<int>(allowed_cpus().size());
  std::size_t array_bytes = ctx.params().size_bytes("array-size");
  const std::size_t llc = llc_total_bytes();
  if (array_bytes == 0) array_bytes = std::max(min_array_bytes, 4 * llc);
  const std::size_t n = array_bytes / sizeof(double);
  const bool huge = ctx.params().boolean("huge-pages");
  Array a = allocate(n, huge), b = allocate(n, huge), c = allocate(n, huge);
  if (!a || !b || !c) return Outcome::failed(fmt::format("cannot allocate 3 x {} of host memory", format_bytes(static_cast<double>(array_bytes))));
  ctx.info()["array_bytes"] = n * sizeof(double);
  ctx.info()["llc_total_bytes"] = llc;
  ctx.info()["threads"] = threads;
  if (llc && n * sizeof(double) < 4 * llc)
    ctx.add_finding(Severity::warn, "host_bw.small_arrays", fmt::format("arrays of {} are under 4x the last-level cache ({}): the cache is partly measured",
                                                                   format_bytes(static_cast<double>(array_bytes)), format_bytes(static_cast<double>(llc))));

  ThreadTeam team(threads);
  for (const auto& e : team.pin_errors()) ctx.add_finding(Severity::info, "host_bw.affinity", e);
  team.run([&](int w) {  // first touch by the thread that will stream the slice
    const Slice s = slice_of(n, threads, w);
    for (std::size_t i = s.begin; i < s.end; ++i) a[i] = 1.0, b[i] = 2.0, c[i] = 0.0;
  });
  // What the kernel granted, after first touch: the figures depend on it.
  ctx.info()["huge_pages"] = {
      {"advised", huge},
      {"anon_huge_page_bytes", procfs::read_meminfo("/proc/self/smaps_rollup")["AnonHugePages"]},  // whole process
      {"thp_enabled", procfs::read_first_line("/sys/kernel/mm/transparent_hugepage/enabled").value_or("unknown")}};
  const StoreKind stores = ctx.params().text("stores") == "cached" ? StoreKind::cached : StoreKind::streaming;
  const VectorIsa isa = widest_vector_isa();
  ctx.info()["isa"] = isa_name(isa);
  ctx.info()["stores"] = stores == StoreKind::cached  ? "cached (ordinary stores: write-allocate reads not counted)"
                         : isa != VectorIsa::portable ? "streaming (non-temporal stores)"
                                                      : "cached: this CPU architecture has no streaming stores here";
  // glibc's memcpy streams only copies above its non-temporal threshold (about the shared cache's
  // size): below it the stores go through the cache, like --stores cached, so the slice size is
  // part of what the memcpy figure means.
  ctx.info()["memcpy"] = {{"what", "std::memcpy of each thread's slice: the C library's instructions and stores"},
                          {"slice_bytes", slice_of(n, threads, 0).end * sizeof(double)}};
  for (std::size_t k = 0; k < std::size(stream_kernels); ++k) {
    const Measurement m = ctx.repeat(ctx.policy(), [&] {
      team.run([&](int w) {
        const Slice s = slice_of(n, threads, w);
        run_stream_kernel(k, stores, isa, a.get(), b.get(), c.get(), s.begin, s.end, scalar);
      });
      return Work{.bytes = stream_kernels[k].bytes_per_element * static_cast<double>(n)};
    });
    ctx.add_rate("bandwidth", RateKind::gb_per_s, m, {{"kernel", stream_kernels[k].name}});
    if (m.cancelled) return Outcome::interrupted();
  }
  const std::size_t wrong = count_wrong(a.get(), n, 15.0) + count_wrong(b.get(), n, 3.0) + count_wrong(c.get(), n, 15.0);
  if (wrong > 0) {
    ctx.add_finding(Severity::fail, "host_bw.verify", fmt::format("{} of {} elements hold wrong values after the kernels", wrong, 3 * n));
    return Outcome::failed("verification failed: memory returned wrong values");
  }
  return Outcome::ok();
}

ProbeSpec host_memory_bandwidth_spec() {
  ProbeSpec spec;
  spec.id = "host.memory-bandwidth";
  spec.description = "STREAM copy/scale/add/triad and memcpy over host memory on all cores (GB/s)";
  spec.params = {
      ParamSpec{.name = "array-size", .type = ParamType::size, .default_by_level = same_at_all_levels("0"),
                .help = "Bytes per array; 0 = 4x the last-level cache, at least 256 MiB", .min = 0, .max = 1ull << 40},
      ParamSpec{.name = "threads", .type = ParamType::integer, .default_by_level = same_at_all_levels("0"),
                .help = "Worker threads, one per CPU; 0 = every CPU this process may use", .min = 0, .max = 4096},
      ParamSpec{.name = "huge-pages", .type = ParamType::boolean, .default_by_level = same_at_all_levels("true"),
                .help = "Advise the arrays as transparent huge pages (madvise); info.huge_pages says what was granted"},
      ParamSpec{.name = "stores", .type = ParamType::choice, .default_by_level = same_at_all_levels("streaming"),
                .help = "streaming = non-temporal stores (no read before a write: the bytes counted are the bytes "
                        "moved, as likwid-bench's *_mem_* kernels); cached = ordinary stores (gcc-built STREAM)",
                .choices = {"streaming", "cached"}},
  };
  spec.body = measure_memory_bandwidth;
  return spec;
}

const ProbeRegistrar host_memory_bandwidth_registrar{host_memory_bandwidth_spec()};

}  // namespace
}  // namespace nodeaudit::host
