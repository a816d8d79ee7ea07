// The one writer of a result document (results/SCHEMA.md): `run`, `probe`, `learn` (with --vary and
// --audit) and `watch` all keep their result through it. The file is claimed first under a name no
// other run holds (claim_out_file), then rewritten whole and atomically each time the document
// changes, so a reader, a crash or a kill never finds half a document. A string that is not valid
// UTF-8 (a job's Latin-1 output, a path in another encoding) is kept as \xHH (core/json_text.hpp).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "harness/session/run_options.hpp"

namespace nodeaudit::session {

class ResultFile {
 public:
  ResultFile() = default;  // no file: the document is kept in memory only
  // Claims the file `out` names with `first` as its content. `indent` is the JSON indent of this
  // command's results; `sibling_extension` as claim_out_file's. Throws UsageError.
  ResultFile(const OutPath& out, const nlohmann::json& first, int indent, const std::string& sibling_extension = "");

  bool has_file() const { return !path_.empty(); }
  const std::string& path() const { return path_; }
  // Rewrites the file with `doc` (nothing without a file).
  void write(const nlohmann::json& doc) const;
  // Removes the claimed file while it holds nothing measured, and the default directory made for it
  // when that is empty.
  void discard() const;

 private:
  std::string path_;
  int indent_ = 2;
  bool made_dir_ = false;
};

}  // namespace nodeaudit::session
