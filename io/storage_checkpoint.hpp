// The storage.checkpoint probe's declaration, so a test-only probe can run the same body with a
// pause between the last write and the restore check.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "harness/core/probe.hpp"

namespace nodeaudit::io {

// Called with the shard paths once the last checkpoint of a shard count is written and synced, just
// before it is read back and checked byte for byte.
using BeforeRestoreCheck = std::function<void(ProbeContext&, const std::vector<std::string>& shard_paths)>;

ProbeSpec storage_checkpoint_spec(BeforeRestoreCheck before_restore_check = {});

}  // namespace nodeaudit::io
