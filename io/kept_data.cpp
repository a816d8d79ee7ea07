#include "io/kept_data.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <random>
#include <set>

#include <fmt/format.h>

#include "io/generated_data.hpp"

namespace nodeaudit::io {
namespace fs = std::filesystem;
namespace {

constexpr std::size_t max_manifest_bytes = 64 * 1024;
constexpr int max_candidate_names = 16;
constexpr std::size_t token_hex_digits = 32;

bool is_token(const std::string& s) {
  return s.size() == token_hex_digits && s.find_first_not_of("0123456789abcdef") == std::string::npos;
}

// The manifest as nodeaudit writes it, or nullopt (missing, a symlink, too large, not JSON, another
// schema, no token, counts of the wrong type).
std::optional<nlohmann::json> read_own_manifest(const std::string& dir) {
  const std::string path = (fs::path(dir) / manifest_name).string();
  struct stat st {};
  if (lstat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > static_cast<off_t>(max_manifest_bytes))
    return std::nullopt;
  std::ifstream in(path);
  try {
    nlohmann::json m = nlohmann::json::parse(in);
    if (!m.is_object() || m.value("schema", "") != manifest_schema) return std::nullopt;
    if (!m.contains("token") || !m["token"].is_string() || !is_token(m["token"].get<std::string>()))
      return std::nullopt;
    if (!m.contains("file_count") || !m["file_count"].is_number_unsigned()) return std::nullopt;
    if (!m.contains("file_bytes") || !m["file_bytes"].is_number_unsigned()) return std::nullopt;
    return m;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

// True when `dir` holds exactly the manifest and the files it names, each a regular file.
bool holds_only_listed_files(const std::string& dir, std::uint64_t file_count) {
  std::error_code ec;
  std::uint64_t data_files = 0;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (!it->is_regular_file(ec) || it->is_symlink(ec)) return false;
    if (name == manifest_name) continue;
    // f0000000.bin .. f<count-1>.bin, spelled as nodeaudit spells them, and nothing else.
    if (name.size() != 12 || name[0] != 'f' || name.substr(8) != ".bin") return false;
    const std::string digits = name.substr(1, 7);
    if (digits.find_first_not_of("0123456789") != std::string::npos) return false;
    if (std::stoull(digits) >= file_count) return false;
    ++data_files;
  }
  return !ec && data_files <= file_count;
}

}  // namespace

std::string dataset_file_name(std::uint64_t index) {
  return fmt::format("f{:07}.bin", index);
}

nlohmann::json manifest_of(const DatasetSpec& spec, const std::string& token) {
  return {{"schema", manifest_schema},     {"token", token},   {"name", spec.name}, {"file_count", spec.file_count},
          {"file_bytes", spec.file_bytes}, {"seed", spec.seed}};
}

std::string new_dataset_token() {
  std::random_device device;  // /dev/urandom on Linux
  std::string token;
  while (token.size() < token_hex_digits) token += fmt::format("{:08x}", device());
  return token.substr(0, token_hex_digits);
}

KeptInspection inspect_kept_set(const std::string& dir, const DatasetSpec& spec) {
  struct stat st {};
  if (lstat(dir.c_str(), &st) != 0) return {KeptState::absent, {}};
  if (!S_ISDIR(st.st_mode)) return {KeptState::foreign, {}};  // a file or a symlink of that name
  const auto manifest = read_own_manifest(dir);
  if (!manifest) return {KeptState::foreign, {}};
  const auto count = (*manifest)["file_count"].get<std::uint64_t>();
  if (count > (1ull << 24) || !holds_only_listed_files(dir, count)) return {KeptState::foreign, {}};
  KeptInspection found{KeptState::ours_other, (*manifest)["token"].get<std::string>()};
  if (manifest_of(spec, found.token) != *manifest) return found;
  std::error_code ec;
  for (std::uint64_t i = 0; i < spec.file_count; ++i)
    if (fs::file_size(fs::path(dir) / dataset_file_name(i), ec) != spec.file_bytes || ec) return found;
  found.state = KeptState::ours_matching;
  return found;
}

bool remove_kept_set(const std::string& dir) {
  const auto manifest = read_own_manifest(dir);
  if (!manifest) return false;
  const auto count = (*manifest)["file_count"].get<std::uint64_t>();
  std::error_code ec;
  for (std::uint64_t i = 0; i < count; ++i) fs::remove(fs::path(dir) / dataset_file_name(i), ec);
  fs::remove(fs::path(dir) / manifest_name, ec);
  return rmdir(dir.c_str()) == 0;
}

std::vector<std::string> kept_set_candidates(const std::string& parent, const std::string& set_name) {
  std::vector<std::string> names;
  const std::string first = (fs::path(parent) / ("nodeaudit-" + set_name)).string();
  names.push_back(first);
  for (int i = 2; i <= max_candidate_names; ++i) names.push_back(fmt::format("{}-{}", first, i));
  return names;
}

}  // namespace nodeaudit::io
