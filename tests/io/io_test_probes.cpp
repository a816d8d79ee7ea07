// Test-only storage probes, linked only into nodeaudit-testbin: storage.checkpoint with a pause
// between the last write and the restore check, so a test can change the bytes on disk there.
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

#include "harness/core/context.hpp"
#include "harness/core/registry.hpp"
#include "io/storage_checkpoint.hpp"

namespace nodeaudit::io {
namespace {

// The shard paths go, one a line, to the file this variable names (written whole, then renamed
// into place); the probe then waits until "<that file>.done" exists.
constexpr const char* kTamperReadyFileEnv = "NODEAUDIT_TEST_TAMPER_READY_FILE";

void hand_over_shards(ProbeContext& ctx, const std::vector<std::string>& shard_paths) {
  const char* ready = std::getenv(kTamperReadyFileEnv);
  if (!ready || !*ready) return;
  const std::string partial = std::string(ready) + ".partial";
  {
    std::ofstream out(partial);
    for (const auto& p : shard_paths) out << p << '\n';
  }
  std::filesystem::rename(partial, ready);
  const std::string done = std::string(ready) + ".done";
  while (!std::filesystem::exists(done) && !ctx.should_stop()) std::this_thread::sleep_for(std::chrono::milliseconds(10));
}

ProbeSpec tampered_checkpoint_spec() {
  ProbeSpec spec = storage_checkpoint_spec(hand_over_shards);
  spec.id = "test.checkpoint-tampered";
  spec.description = "test only: storage.checkpoint that waits for the test before its restore check";
  return spec;
}

const ProbeRegistrar tampered_checkpoint{tampered_checkpoint_spec()};

}  // namespace
}  // namespace nodeaudit::io
