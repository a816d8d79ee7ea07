#include "harness/core/input_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include <fmt/format.h>

#include "harness/core/errors.hpp"
#include "harness/core/units.hpp"

namespace nodeaudit {
namespace {

// Deeper than any document nodeaudit writes (a result nests about 6 levels): a file nested
// thousands deep is not one, and later recursive walks need not meet it.
constexpr int max_json_depth = 64;

std::string kind_of(const struct stat& st) {
  if (S_ISDIR(st.st_mode)) return "a directory";
  if (S_ISCHR(st.st_mode)) return "a character device";
  if (S_ISBLK(st.st_mode)) return "a block device";
  if (S_ISFIFO(st.st_mode)) return "a FIFO";
  if (S_ISSOCK(st.st_mode)) return "a socket";
  return "not a regular file";
}

std::string too_large(std::uint64_t max_bytes) {
  return fmt::format("nodeaudit reads at most {} here (larger is not a nodeaudit file)",
                     format_bytes(static_cast<double>(max_bytes)));
}

struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) close(fd);
  }
};

std::string read_all(int fd, const std::string& what, std::uint64_t max_bytes) {
  std::string text;
  std::vector<char> buf(1 << 16);
  while (true) {
    const ssize_t n = read(fd, buf.data(), buf.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw UsageError(what, fmt::format("cannot be read: {}", std::strerror(errno)));
    if (n == 0) return text;
    text.append(buf.data(), static_cast<std::size_t>(n));
    if (text.size() > max_bytes)
      throw UsageError(what,
                       "holds more than " + format_bytes(static_cast<double>(max_bytes)) + "; " + too_large(max_bytes));
  }
}

class JsonDepthError : public std::exception {};

}  // namespace

std::string read_input_file(const std::string& path, const std::string& what, std::uint64_t max_bytes) {
  Fd file;
  if (path == "-") {
    file.fd = dup(STDIN_FILENO);
    if (file.fd < 0) throw UsageError(what, fmt::format("standard input cannot be read: {}", std::strerror(errno)));
    return read_all(file.fd, what, max_bytes);
  }
  // O_NONBLOCK: opening a FIFO must not wait for a writer before it can be refused.
  file.fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (file.fd < 0) {
    if (errno == ENOENT || errno == EACCES) throw UsageError(what, "cannot be read (no such file or no permission)");
    throw UsageError(what, fmt::format("cannot be read: {}", std::strerror(errno)));
  }
  struct stat st {};
  if (fstat(file.fd, &st) != 0) throw UsageError(what, fmt::format("cannot be read: {}", std::strerror(errno)));
  if (!S_ISREG(st.st_mode))
    throw UsageError(
        what, fmt::format("is {}; nodeaudit reads only regular files here (or - for standard input)", kind_of(st)));
  if (static_cast<std::uint64_t>(st.st_size) > max_bytes)
    throw UsageError(what,
                     fmt::format("is {}; {}", format_bytes(static_cast<double>(st.st_size)), too_large(max_bytes)));
  fcntl(file.fd, F_SETFL, fcntl(file.fd, F_GETFL) & ~O_NONBLOCK);
  return read_all(file.fd, what, max_bytes);
}

nlohmann::json parse_json_input(const std::string& text, const std::string& what) {
  // The field being read, for a number out of range: names[d] is the key (or "[]") at depth d.
  std::vector<std::string> names(1);
  std::size_t at_depth = 0;
  const auto track = [&](int depth, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
    const auto d = static_cast<std::size_t>(depth);
    using E = nlohmann::json::parse_event_t;
    if ((event == E::object_start || event == E::array_start) && depth >= max_json_depth) throw JsonDepthError();
    if (event == E::key) {
      names.resize(d + 1);
      names[d] = (d > 1 ? "." : "") + parsed.get<std::string>();
      at_depth = d;
    } else if (event == E::array_start) {
      names.resize(d + 2);
      names[d + 1] = "[]";
      at_depth = d + 1;
    } else if (event == E::object_end || event == E::array_end) {
      at_depth = d;
    }
    return true;
  };
  const auto field = [&] {
    std::string path;
    for (std::size_t d = 1; d <= at_depth && d < names.size(); ++d) path += names[d];
    return path.empty() ? std::string("the top level") : path;
  };
  try {
    return nlohmann::json::parse(text, track);
  } catch (const JsonDepthError&) {
    throw UsageError(
        what, fmt::format("nests deeper than {} levels at {}; not a nodeaudit document", max_json_depth, field()));
  } catch (const nlohmann::json::out_of_range&) {
    throw UsageError(
        what, fmt::format("field {} holds a number out of range; accepted: finite numbers within ±1.7e308", field()));
  } catch (const nlohmann::json::parse_error& e) {
    throw UsageError(what, fmt::format("is not valid JSON (truncated or corrupt?) at byte {}", e.byte));
  } catch (const nlohmann::json::exception& e) {
    throw UsageError(what, fmt::format("cannot be read as JSON at {}: {}", field(), e.what()));
  }
}

}  // namespace nodeaudit
