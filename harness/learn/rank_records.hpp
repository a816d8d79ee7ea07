// The records the injected module writes into the job's records folder, read back: one per rank
// (a process that took optimizer steps), one per loading process (DataLoader workers), one per
// Python that had no torch to import. A record being rewritten is read as the last whole version
// (the module replaces it atomically); a file that does not parse is skipped.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace nodeaudit::learn {

struct JobRecords {
  std::vector<nlohmann::json> ranks;    // ordered by rank (torch.distributed's, else RANK, else pid)
  std::vector<nlohmann::json> loaders;  // DataLoader workers and other loading processes
  std::vector<std::string> pythons_without_torch;
  std::vector<std::string> problems;    // hooks that failed inside the job (the job went on)

  int steps_done() const;             // the least over the ranks (0 without a rank)
  int ranks_done() const;             // ranks that finished their window and ended themselves
  int world_size() const;             // from torch.distributed when it was initialized, else the ranks seen
};

JobRecords read_job_records(const std::string& records_dir);

}  // namespace nodeaudit::learn
