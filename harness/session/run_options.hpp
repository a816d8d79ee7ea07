// The run-wide options shared by `run` and `probe` as the user typed them, the checks that turn
// them into RunSettings, and the session's plumbing: the result file's name, the interrupt flag,
// scratch left by a dead run. No CLI parser here: harness/cli declares the options (common.cpp).
#pragma once

#include <atomic>
#include <optional>
#include <string>

#include <vector>

#include <nlohmann/json.hpp>

#include "harness/core/context.hpp"

namespace nodeaudit::session {

struct CommonOptions {
  std::string level = "quick";
  std::string gpus;        // "0,1"; empty = all
  std::string data_dir;
  std::string profile;
  std::string repetitions; // empty = not given
  std::string rounds;      // empty = the level's default
  bool keep_data = false;
  std::string format = "table";
  std::string out;
};

// Validates level, repetitions, GPUs against the node's GPU count (from NVML), data dir.
// Throws UsageError naming the bad value.
RunSettings make_settings(const CommonOptions& options, int gpus_on_node, const std::string& why_no_gpu);

// "12" -> 12; nullopt for anything else ("12x", "", "1e3", out of int range).
std::optional<int> parse_whole_number(const std::string& text);
// `text` as a whole number from lo to hi; otherwise a UsageError naming `option` and the range.
int whole_number_in(const std::string& option, const std::string& text, int lo, int hi);
// --rounds as a number (1..100), else the level's default. Throws UsageError naming the bad value.
int rounds_for(const CommonOptions& options, Level level);

// Where a result goes. With a directory (or no --out) nodeaudit names the file itself and may take
// another name when that one is taken; a FILE the user named is that file or nothing.
struct OutPath {
  std::string path;
  bool name_is_ours = false;
  bool made_dir = false;  // the default directory did not exist and was made for this result
};

// --out FILE|DIR -> the file to create. A directory (existing, or ending in '/') gets the default
// name; the parent directory must exist; an existing file is refused (never overwritten).
OutPath resolve_out_path(const std::string& out, const std::string& default_dir, const std::string& host);

// Writes the first version of the result and returns the path it has. A name nodeaudit chose that
// another run took meanwhile (two runs started in the same second) becomes "<name>-2.json",
// "-3", ...: the first free one, taken atomically, so no run overwrites or loses another's result.
// A name the user gave that exists by now is refused (UsageError). With `sibling_extension`
// (".toml": learn's profile beside its result) a name whose sibling with that extension exists is
// taken too, so both files come from one stem chosen once.
std::string claim_out_file(const OutPath& out, const std::string& content, const std::string& sibling_extension = "");
// " on HOST (rank 0's host)" under an MPI launcher, where the file is written on rank 0's host and
// the launcher's terminal may be elsewhere; empty otherwise.
std::string where_written(const std::optional<int>& mpi_rank);
// Moves the job-wide `multinode` block an MPI probe recorded in its info to the document's top.
void hoist_multinode(nlohmann::json& doc, nlohmann::json& entry);

// Path of the running binary, for re-executing it as a probe child.
std::string self_exe_path();

// SIGINT, SIGTERM and SIGHUP (a dropped ssh session) set this flag; the first signal asks for a
// clean stop.
const std::atomic<bool>& install_interrupt_handler();

// Removes the scratch directories a nodeaudit process that is gone left in --data-dir and the
// temporary directory (killed with kill -9, or at a power loss), saying each on stderr.
void remove_abandoned_scratch(const std::string& data_dir);

bool stdout_is_tty();
bool stderr_is_tty();

// This process's command line (from /proc/self/cmdline), recorded in the result for reproduction.
std::vector<std::string> own_command_line();

}  // namespace nodeaudit::session
