// Why a loader that fills whole batches reads page-cached samples slower than storage.dataset on
// the same files: a buffered read is the kernel copying the sample from the page cache into the
// destination, and what that copy costs depends on whether the destination is in the CPU caches.
// storage.dataset reads into a small per-worker pool (8 x 128 KiB) that stays cached; pipeline.step
// reads into the batch itself (256 x 112 KiB = 28 MiB per batch, times the batches in flight).
//
// This reads the same page-cached 110 KiB files with pread, one thread, into destinations that
// cycle over 1 MiB .. 256 MiB of huge-page-backed memory (as the batch queue allocates it), and
// reports bytes/s per footprint. Only the footprint changes between the rows.
//   page_cache_copy_bench [--benchmark_repetitions=5] [DIR]   (DIR: where the files go; default /tmp)
#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace {

constexpr std::size_t sample_bytes = 110 << 10;
constexpr std::size_t slot_bytes = 112 << 10;  // the sample rounded up to 4 KiB, as a batch slot
constexpr int file_count = 512;                // 55 MiB of samples: page-cached, larger than L2

std::string g_dir = "/tmp";

// The sample files, written once and read once so every later read is a page-cache hit.
class SampleFiles {
 public:
  SampleFiles() {
    char tmpl[4096];
    std::snprintf(tmpl, sizeof tmpl, "%s/page-cache-copy-XXXXXX", g_dir.c_str());
    if (!mkdtemp(tmpl)) std::abort();
    dir_ = tmpl;
    std::vector<char> data(sample_bytes, 'x');
    std::vector<char> sink(slot_bytes);
    for (int i = 0; i < file_count; ++i) {
      const std::string path = dir_ + "/" + std::to_string(i);
      const int fd = open(path.c_str(), O_CREAT | O_RDWR | O_TRUNC, 0600);
      if (fd < 0 || write(fd, data.data(), data.size()) != static_cast<ssize_t>(data.size())) std::abort();
      if (pread(fd, sink.data(), slot_bytes, 0) != static_cast<ssize_t>(sample_bytes)) std::abort();
      fds_.push_back(fd);
    }
  }
  ~SampleFiles() {
    for (const int fd : fds_) close(fd);
    std::filesystem::remove_all(dir_);
  }
  int fd(std::size_t i) const { return fds_[i % fds_.size()]; }

 private:
  std::string dir_;
  std::vector<int> fds_;
};

SampleFiles& files() {
  static SampleFiles instance;
  return instance;
}

struct FreeDeleter {
  void operator()(std::byte* p) const { std::free(p); }
};

void BM_PageCacheReadInto(benchmark::State& state) {
  const std::size_t footprint = static_cast<std::size_t>(state.range(0)) << 20;
  constexpr std::size_t huge_page = 2 << 20;
  std::unique_ptr<std::byte, FreeDeleter> dest(static_cast<std::byte*>(std::aligned_alloc(huge_page, footprint)));
  madvise(dest.get(), footprint, MADV_HUGEPAGE);
  std::memset(dest.get(), 0, footprint);
  const std::size_t slots = footprint / slot_bytes;
  std::size_t i = 0;
  for (auto _ : state) {
    const ssize_t got = pread(files().fd(i), dest.get() + (i % slots) * slot_bytes, slot_bytes, 0);
    if (got != static_cast<ssize_t>(sample_bytes)) state.SkipWithError("short read");
    ++i;
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * sample_bytes));
  state.counters["footprint_MiB"] = static_cast<double>(state.range(0));
}
BENCHMARK(BM_PageCacheReadInto)->Arg(1)->Arg(4)->Arg(32)->Arg(64)->Arg(256)->MinTime(1.0);

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (argc > 1) g_dir = argv[1];
  files();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
