// storage.checkpoint — write a checkpoint as one file and as N shards, fsync, then restore it.
//
// One repetition: create the shard files, write `size` bytes of pattern blocks through io_uring
// (buffered, as torch.save does; blocks round-robin over the shards), fsync every shard.
//   stall_s           = wall time from the first open to the last fsync completion (the time a
//                       synchronous checkpoint blocks training)
//   write_bandwidth   = size / stall_s / 1e9
//   restore_bandwidth = size / read time / 1e9, reading the shards back with O_DIRECT after
//                       posix_fadvise(DONTNEED), so the page cache is not what is measured
// After the timed repetitions a sample of every shard is read back and checked byte for byte.
// Pitfalls: without the fsync a buffered write measures memory; a file system without O_DIRECT
// restores through the page cache after DONTNEED (labelled cache=none only when O_DIRECT was used).
#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>

#include <fmt/format.h>

#include "io/storage_checkpoint.hpp"

#include "harness/core/context.hpp"
#include "harness/core/owned_dir.hpp"
#include "harness/core/registry.hpp"
#include "harness/core/units.hpp"
#include "io/checkpoint_sources.hpp"
#include "io/generated_data.hpp"
#include "io/storage_params.hpp"
#include "io/storage_target.hpp"

namespace nodeaudit::io {
namespace {

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

struct ShardFiles {
  std::vector<int> fds;
  ~ShardFiles() { close_all(); }
  void close_all() {
    for (int fd : fds) close(fd);
    fds.clear();
  }
};

std::string shard_path(const std::string& dir, int shard) { return fmt::format("{}/shard-{:05}.bin", dir, shard); }

std::string open_shards(const std::string& dir, int shards, int flags, ShardFiles& files) {
  files.close_all();
  for (int i = 0; i < shards; ++i) {
    const int fd = open(shard_path(dir, i).c_str(), flags | O_CLOEXEC, 0644);
    if (fd < 0) return fmt::format("open {}: {}", shard_path(dir, i), std::strerror(errno));
    files.fds.push_back(fd);
  }
  return {};
}

struct CheckpointRun {
  ProbeContext& ctx;
  std::string dir;
  ShardLayout layout;
  bool direct_restore = true;
  std::vector<double> write_gbps, stall_s, restore_gbps;
  std::optional<ShardOffset> first_mismatch;
};

std::string write_checkpoint(CheckpointRun& run, UringWorker& ring) {
  for (int i = 0; i < run.layout.shards; ++i) unlink(shard_path(run.dir, i).c_str());
  ShardFiles files;
  const auto start = std::chrono::steady_clock::now();
  if (auto e = open_shards(run.dir, run.layout.shards, O_WRONLY | O_CREAT | O_TRUNC, files); !e.empty()) return e;
  ring.use_files(files.fds);
  ShardBlockSource source(run.layout, UnitKind::write, false, UINT64_MAX);
  LatencyHistogram ignored;
  const LoopResult r = ring.run(source, {}, ignored);
  if (!r.error.empty()) return "checkpoint write: " + r.error;
  if (auto e = ring.fsync_all(files.fds); !e.empty()) return e;
  const double stall = seconds_since(start);
  for (int fd : files.fds) posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);  // clean after fsync: dropped
  run.stall_s.push_back(stall);
  run.write_gbps.push_back(static_cast<double>(r.bytes) / 1e9 / stall);
  return {};
}

std::string restore_checkpoint(CheckpointRun& run, UringWorker& ring, bool verify, std::uint64_t& mismatched) {
  ShardFiles files;
  const auto start = std::chrono::steady_clock::now();
  if (auto e = open_shards(run.dir, run.layout.shards, O_RDONLY | (run.direct_restore ? O_DIRECT : 0), files); !e.empty()) return e;
  ring.use_files(files.fds);
  const std::uint64_t verify_blocks = std::max<std::uint64_t>(1, verify_limit_bytes / static_cast<std::uint64_t>(run.layout.shards) / run.layout.block_bytes);
  ShardBlockSource source(run.layout, UnitKind::read, verify, verify ? verify_blocks : UINT64_MAX);
  LatencyHistogram ignored;
  const LoopResult r = ring.run(source, {}, ignored);
  if (!r.error.empty()) return "checkpoint restore: " + r.error;
  if (verify) {
    mismatched = source.mismatched_bytes();
    run.first_mismatch = source.first_mismatch();
  } else run.restore_gbps.push_back(static_cast<double>(r.bytes) / 1e9 / seconds_since(start));
  return {};
}

// This round's share of the checkpoints (the quick level splits them over its rounds; one at least:
// a checkpoint is the costliest repetition of any host probe).
int repetitions_for(const ProbeContext& ctx) {
  const int whole = ctx.settings().repetitions ? *ctx.settings().repetitions : ctx.level() == Level::soak ? 5 : 3;
  return static_cast<int>(ctx.round_share(whole, 1));
}

Outcome measure_shard_count(ProbeContext& ctx, const std::string& dir, int shards, bool direct_restore,
                            const BeforeRestoreCheck& before_restore_check) {
  const auto& p = ctx.params();
  const auto block = static_cast<std::uint32_t>(p.size_bytes("block-size"));
  const std::uint64_t per_shard = round_up((p.size_bytes("size") + static_cast<std::uint64_t>(shards) - 1) / static_cast<std::uint64_t>(shards), block);
  CheckpointRun run{ctx, dir, ShardLayout{shards, per_shard, block, 0xc4e7}, direct_restore, {}, {}, {}, {}};
  std::string error;
  auto ring = UringWorker::create({static_cast<unsigned>(p.integer("queue-depth")), block, false, false, 0}, error);
  if (!ring) return Outcome::skipped(error);
  for (int rep = 0; rep < repetitions_for(ctx) && !ctx.should_stop(); ++rep) {
    std::uint64_t unused = 0;
    if (auto e = write_checkpoint(run, *ring); !e.empty()) return Outcome::failed(e);
    if (auto e = restore_checkpoint(run, *ring, false, unused); !e.empty()) return Outcome::failed(e);
  }
  const Labels labels{{"shards", std::to_string(shards)}, {"cache", direct_restore ? "none" : "page"}};
  ctx.add_metric(Metric{"write_bandwidth", unit::gbps, Better::higher, {{"shards", std::to_string(shards)}}, run.write_gbps});
  ctx.add_metric(Metric{"stall_s", unit::s, Better::lower, {{"shards", std::to_string(shards)}}, run.stall_s});
  ctx.add_metric(Metric{"restore_bandwidth", unit::gbps, Better::higher, labels, run.restore_gbps});
  if (ctx.should_stop()) return Outcome::interrupted();
  std::uint64_t mismatched = 0;
  if (run.stall_s.empty()) return Outcome::ok();
  if (before_restore_check) {
    std::vector<std::string> paths;
    for (int i = 0; i < shards; ++i) paths.push_back(shard_path(dir, i));
    before_restore_check(ctx, paths);
  }
  if (auto e = restore_checkpoint(run, *ring, true, mismatched); !e.empty()) return Outcome::failed(e);
  if (mismatched == 0) return Outcome::ok();
  const ShardOffset first = run.first_mismatch.value_or(ShardOffset{});
  ctx.add_finding(Severity::fail, "storage.verify",
                  fmt::format("{}: {} bytes of the {}-shard checkpoint read back differ from what was written, the first at byte offset {}",
                              shard_path(dir, first.shard), mismatched, shards, first.offset));
  return Outcome::failed("verification failed: checkpoint read back differs from what was written");
}

Outcome measure_storage_checkpoint(ProbeContext& ctx, const BeforeRestoreCheck& before_restore_check) {
  const auto& p = ctx.params();
  TargetOrReason t = resolve_target(p.text("path"), ctx.settings().data_dir, true);
  if (!t.target) return t.skip ? Outcome::skipped(t.reason) : Outcome::bad_input(t.reason);
  const DirectChoice direct = choose_direct(ctx, *t.target);
  if (!direct.error.empty()) return Outcome::bad_input(direct.error);
  if (auto why = check_block_alignment(p, *t.target, direct); !why.empty()) return Outcome::bad_input(why);
  const auto shards = static_cast<int>(p.integer("shards"));
  const std::uint64_t needed = round_up(p.size_bytes("size"), p.size_bytes("block-size")) + static_cast<std::uint64_t>(shards) * p.size_bytes("block-size") + (64u << 20);
  if (auto why = check_free_space(t.target->path, needed); !why.empty()) return Outcome::bad_input("cannot write the checkpoint: " + why);
  std::string error;
  const std::string dir = make_owned_dir(t.target->path, "nodeaudit-checkpoint", error);
  if (dir.empty()) return Outcome::failed(error);
  GeneratedData guard(dir, {}, true);  // removes the shards on every return
  if (ctx.settings().keep_data) guard.keep();
  ctx.info()["dir"] = dir;
  for (int count : shards == 1 ? std::vector<int>{1} : std::vector<int>{1, shards}) {
    for (const auto& entry : std::filesystem::directory_iterator(dir))
      if (entry.path().filename() != owner_marker_name) std::filesystem::remove(entry.path());
    Outcome o = measure_shard_count(ctx, dir, count, direct.use_direct, before_restore_check);
    if (o.status != Status::ok) return o;
  }
  return Outcome::ok();
}

}  // namespace

ProbeSpec storage_checkpoint_spec(BeforeRestoreCheck before_restore_check) {
  ProbeSpec spec;
  spec.id = "storage.checkpoint";
  spec.description = "Checkpoint write (one file and N shards, fsync) and O_DIRECT restore: GB/s and stall";
  spec.needs = {Need::io_uring};
  spec.params = {
      path_param("Directory to write the checkpoint in (on the storage under test); empty = --data-dir"),
      ParamSpec{.name = "size", .type = ParamType::size, .default_by_level = {"256MiB", "8GiB", "32GiB"},
                .help = "Checkpoint bytes", .min = 1 << 20, .max = 1ull << 44},
      ParamSpec{.name = "shards", .type = ParamType::integer, .default_by_level = same_at_all_levels("8"),
                .help = "Shard files of the sharded checkpoint (also measured: 1 file)", .min = 1, .max = 4096},
      block_size_param("1MiB"),
      queue_depth_param("16"),
      direct_param(),
  };
  spec.body = [hook = std::move(before_restore_check)](ProbeContext& ctx) { return measure_storage_checkpoint(ctx, hook); };
  spec.check_places = places_check(true);
  spec.deadline_s = [](const ParamValues& p, Level level) {
    const double reps = level == Level::soak ? 5 : 3;
    // Two shard counts, each rep writes and reads the checkpoint; assume at least 50 MB/s.
    return 60 + 2 * reps * 2 * static_cast<double>(p.size_bytes("size")) / 50e6;
  };
  return spec;
}

namespace {
const ProbeRegistrar storage_checkpoint_registrar{storage_checkpoint_spec()};
}  // namespace

}  // namespace nodeaudit::io
