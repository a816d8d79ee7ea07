#include "harness/session/result_file.hpp"

#include <filesystem>

#include "harness/core/json_text.hpp"
#include "harness/core/result.hpp"

namespace nodeaudit::session {

namespace {
std::string result_text(const nlohmann::json& doc, int indent) {
  return json_text(doc, indent) + "\n";
}
}  // namespace

ResultFile::ResultFile(const OutPath& out, const nlohmann::json& first, int indent,
                       const std::string& sibling_extension)
    : path_(claim_out_file(out, result_text(first, indent), sibling_extension)),
      indent_(indent),
      made_dir_(out.made_dir) {}

void ResultFile::write(const nlohmann::json& doc) const {
  if (!path_.empty()) write_file_atomic(path_, result_text(doc, indent_), false);
}

void ResultFile::discard() const {
  if (path_.empty()) return;
  std::error_code ec;
  std::filesystem::remove(path_, ec);
  if (made_dir_) std::filesystem::remove(std::filesystem::path(path_).parent_path(), ec);  // only when empty
}

}  // namespace nodeaudit::session
