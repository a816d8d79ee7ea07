// Parameters the storage probes share (declared once, so every probe spells and bounds them the
// same way) and the checks of them that need the file system: O_DIRECT support and alignment.
#pragma once

#include <cstdint>
#include <string>

#include "harness/core/context.hpp"
#include "io/storage_target.hpp"

namespace nodeaudit::io {

// The most bytes a storage probe reads back to check what it wrote (its pattern), so a check costs
// seconds, not a second pass over a data set of gigabytes.
inline constexpr std::uint64_t verify_limit_bytes = 64ull << 20;

ParamSpec path_param(const std::string& help);
ParamSpec block_size_param(const std::string& default_size);
ParamSpec queue_depth_param(const std::string& default_depth);
ParamSpec direct_param();
ParamSpec sqpoll_param();
ParamSpec iopoll_param();

struct DirectChoice {
  bool use_direct = false;
  std::string error;  // --direct true given explicitly on a file system without O_DIRECT
};
// O_DIRECT when --direct is true and the target supports it; without an explicit --direct true an
// unsupported O_DIRECT falls back to buffered reads with a warning finding.
DirectChoice choose_direct(ProbeContext& ctx, const StorageTarget& target);

// Empty, or the reason --iopoll cannot be used (it needs O_DIRECT).
std::string check_iopoll(const ParamValues& params, const DirectChoice& direct);
// Empty, or the reason --block-size does not fit the target's logical block size under O_DIRECT.
std::string check_block_alignment(const ParamValues& params, const StorageTarget& target, const DirectChoice& direct);

}  // namespace nodeaudit::io
