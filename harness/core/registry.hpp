// The probe registry. Probes register themselves from their own translation unit:
//
//   static const nodeaudit::ProbeRegistrar registrar{make_storage_read_spec()};
//
// and are built as OBJECT libraries so the linker keeps the registrar. The registry is the one
// process-wide table in nodeaudit; it is filled before main and read-only afterwards.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "harness/core/probe.hpp"

namespace nodeaudit {

class ProbeRegistry {
 public:
  // Validates the spec (id shape, unique names, defaults parse at every level) and adds it.
  // A malformed spec is a programming error: it aborts with a message at start-up.
  void add(ProbeSpec spec);
  const ProbeSpec* find(const std::string& id) const;
  // Sorted by id.
  std::vector<const ProbeSpec*> all() const;
  // Ids matching a comma-separated list of globs (`gpu.*,storage.read`). Throws UsageError when a
  // pattern matches nothing, naming it and the known ids.
  std::vector<std::string> match(const std::string& patterns) const;

 private:
  std::vector<ProbeSpec> specs_;
};

ProbeRegistry& probe_registry();

// The spec with its meaning and figures from the probe catalogue (the probe folder's figures.cpp),
// where the spec does not declare them itself (a test's probe may).
ProbeSpec with_declared_figures(ProbeSpec spec);

struct ProbeRegistrar {
  explicit ProbeRegistrar(ProbeSpec spec) { probe_registry().add(with_declared_figures(std::move(spec))); }
};

// Things outside harness/ (CUDA runtime, cuBLAS, NCCL, MPI versions) contribute to the env
// fingerprint through this hook, so harness/ includes no CUDA header. Each contributor receives
// the `env` object and adds to `env["software"]` (and may fill `env["gpu_status"]`).
using EnvContributor = void (*)(nlohmann::json& env);
struct EnvContributorRegistrar {
  explicit EnvContributorRegistrar(EnvContributor fn);
};
const std::vector<EnvContributor>& env_contributors();

// Names reserved for run-wide options; a probe parameter may not use them.
const std::vector<std::string>& reserved_option_names();

}  // namespace nodeaudit
