#include "io/storage_params.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>

#include <fmt/format.h>

namespace nodeaudit::io {

ParamSpec path_param(const std::string& help) {
  return ParamSpec{.name = "path", .type = ParamType::text, .default_by_level = same_at_all_levels(""), .help = help};
}

ParamSpec block_size_param(const std::string& default_size) {
  return ParamSpec{.name = "block-size", .type = ParamType::size, .default_by_level = same_at_all_levels(default_size),
                   .help = "Bytes per I/O", .min = 512, .max = 64 << 20, .power_of_two = true};
}

ParamSpec queue_depth_param(const std::string& default_depth) {
  return ParamSpec{.name = "queue-depth", .type = ParamType::integer, .default_by_level = same_at_all_levels(default_depth),
                   .help = "I/Os in flight per worker", .min = 1, .max = 4096};
}

ParamSpec direct_param() {
  return ParamSpec{.name = "direct", .type = ParamType::boolean, .default_by_level = same_at_all_levels("true"),
                   .help = "O_DIRECT: bypass the page cache (capacity figures)"};
}

ParamSpec sqpoll_param() {
  return ParamSpec{.name = "sqpoll", .type = ParamType::boolean, .default_by_level = same_at_all_levels("false"),
                   .help = "Kernel thread polls the submission queue (IORING_SETUP_SQPOLL)"};
}

ParamSpec iopoll_param() {
  return ParamSpec{.name = "iopoll", .type = ParamType::boolean, .default_by_level = same_at_all_levels("false"),
                   .help = "Polled completions (IORING_SETUP_IOPOLL; needs O_DIRECT and driver poll queues)"};
}

namespace {

// For a file or block device: try an O_DIRECT open of it; for a directory: of a temporary file.
// std::nullopt when it could not be tried (no temporary file); `why` says why not or why untested.
std::optional<bool> target_supports_direct(const StorageTarget& target, std::string& why) {
  if (target.kind == TargetKind::directory) {
    const std::optional<bool> supported = direct_io_supported(target.path, &why);
    if (supported && !*supported) why = "O_DIRECT open of a file in it failed";
    return supported;
  }
  const int fd = open(target.path.c_str(), O_RDONLY | O_DIRECT | O_CLOEXEC);
  if (fd >= 0) {
    close(fd);
    return true;
  }
  why = std::strerror(errno);
  return false;
}

}  // namespace

DirectChoice choose_direct(ProbeContext& ctx, const StorageTarget& target) {
  DirectChoice choice;
  if (!ctx.params().boolean("direct")) return choice;
  std::string why;
  const std::optional<bool> supported = target_supports_direct(target, why);
  if (supported.value_or(false)) {
    choice.use_direct = true;
    return choice;
  }
  // Only a tried and refused O_DIRECT open is called "not supported".
  const std::string what = supported ? fmt::format("{} does not support O_DIRECT ({})", target.path, why)
                                     : fmt::format("O_DIRECT could not be tried on {} ({})", target.path, why);
  if (ctx.params().given("direct")) {
    choice.error = fmt::format("--direct true: {}; use --direct false for buffered reads", what);
    return choice;
  }
  ctx.add_finding(Severity::warn, "storage.direct_fallback", what + "; buffered I/O was measured instead");
  return choice;
}

std::string check_iopoll(const ParamValues& params, const DirectChoice& direct) {
  if (params.boolean("iopoll") && !direct.use_direct) return "--iopoll true: polled completions need O_DIRECT (--direct true)";
  return {};
}

std::string check_block_alignment(const ParamValues& params, const StorageTarget& target, const DirectChoice& direct) {
  if (!direct.use_direct) return {};
  const std::uint64_t block = params.size_bytes("block-size");
  const std::uint32_t logical = logical_block_size(target.path);
  if (block % logical == 0) return {};
  return fmt::format("--block-size {}: must be a multiple of the logical block size ({} bytes) of the device holding {} under O_DIRECT",
                     block, logical, target.path);
}

}  // namespace nodeaudit::io
