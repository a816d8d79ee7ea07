#include "comm/rank_stream.hpp"

#include <unistd.h>

#include <cstdlib>
#include <cstring>

namespace nodeaudit::comm {

std::string report_line(const nlohmann::json& entry, bool final) {
  // dump() without indentation has no newline: one report is one line.
  return report_line_prefix + nlohmann::json{{"final", final}, {"entry", entry}}.dump() + "\n";
}

bool RankStreamReader::feed(const std::string& bytes) {
  pending_ += bytes;
  bool saw = false;
  for (std::size_t eol; (eol = pending_.find('\n')) != std::string::npos;) {
    std::string line = pending_.substr(0, eol);
    pending_.erase(0, eol + 1);
    if (!line.empty() && line.back() == '\r') line.pop_back();  // Open MPI forwards a pty's output
    take_line(line, saw);
  }
  return saw;
}

void RankStreamReader::take_line(const std::string& line, bool& saw) {
  // Open MPI may tag forwarded lines ("[1,0]<stdout>:"); the stream's markers are searched, not anchored.
  if (const auto at = line.find(progress_line_text); at != std::string::npos) {
    const std::size_t phase_at = at + std::strlen(progress_line_text) + 1;
    if (phase_at < line.size()) last_phase_ = line.substr(phase_at);
    saw = true;
    return;
  }
  const auto at = line.find(report_line_prefix);
  if (at == std::string::npos) {
    if (other_.size() < (1u << 20)) other_ += line + "\n";
    return;
  }
  try {
    const auto j = nlohmann::json::parse(line.substr(at + std::strlen(report_line_prefix)));
    last_entry_ = j.at("entry");
    final_seen_ = final_seen_ || j.at("final").get<bool>();
    saw = true;
  } catch (const std::exception&) {
    other_ += line + "\n";  // a torn or foreign line: not a report
  }
}

void RankCheckpoint::add_keeper(Keeper keeper) {
  std::lock_guard lock(mutex_);
  keepers_.push_back(std::move(keeper));
}

bool RankCheckpoint::active() const {
  std::lock_guard lock(mutex_);
  return !keepers_.empty();
}

void RankCheckpoint::save(nlohmann::json entry) {
  std::lock_guard lock(mutex_);
  if (said_) return;
  entry_ = std::move(entry);
  for (const auto& keep : keepers_) keep(entry_);
}

void RankCheckpoint::last_words(Status status, const std::string& why) {
  std::lock_guard lock(mutex_);
  if (said_ || keepers_.empty()) return;
  said_ = true;
  nlohmann::json entry = entry_.is_object() ? entry_ : nlohmann::json::object();
  entry["status"] = to_string(status);
  entry["reason"] = why;
  for (const auto& keep : keepers_) keep(entry);
}

namespace {

void write_whole(const std::string& text) {
  // One write per line keeps a report whole next to the progress lines of another thread.
  for (std::size_t done = 0; done < text.size();) {
    const ssize_t n = ::write(STDOUT_FILENO, text.data() + done, text.size() - done);
    if (n <= 0) return;
    done += static_cast<std::size_t>(n);
  }
}

}  // namespace

void stream_report(const nlohmann::json& entry, bool final) {
  std::fflush(stdout);
  write_whole(report_line(entry, final));
}

RankCheckpoint::Keeper stdout_stream_keeper() {
  return [](const nlohmann::json& entry) { stream_report(entry, false); };
}

bool streaming_to_stdout() {
  const char* value = std::getenv(rank_report_env);
  return value && std::strcmp(value, "stdout") == 0;
}

void stream_progress(const std::string& phase) {
  static std::chrono::steady_clock::time_point last{};
  static std::string last_phase;
  const auto now = std::chrono::steady_clock::now();
  if (phase == last_phase && now - last < std::chrono::seconds(1)) return;
  last = now;
  last_phase = phase;
  std::fflush(stdout);
  write_whole(std::string(progress_line_text) + " " + phase + "\n");
}

}  // namespace nodeaudit::comm
