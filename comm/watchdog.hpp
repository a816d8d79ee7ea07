// A deadline guard for device work that may never finish (a peer GPU that hangs, a collective that
// deadlocks): a thread that calls `on_expire` once, either when the hard deadline passes or when
// no progress was reported (kick) for `idle_limit`. The waiting side polls fired() and gives up.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace nodeaudit::comm {

class Watchdog {
 public:
  using Clock = std::chrono::steady_clock;
  Watchdog(Clock::time_point hard_deadline, Clock::duration idle_limit, std::function<void()> on_expire);
  ~Watchdog();  // stops the thread without firing
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

  // Progress was made: the idle limit starts again from now.
  void kick();
  bool fired() const { return fired_.load(); }
  // Why it fired: "probe deadline" or "no progress for N s"; empty before it fires.
  std::string reason() const;

 private:
  void watch();

  const Clock::time_point hard_deadline_;
  const Clock::duration idle_limit_;
  std::function<void()> on_expire_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  Clock::time_point last_kick_;
  bool stopping_ = false;
  std::string reason_;
  std::atomic<bool> fired_{false};
  std::thread thread_;
};

}  // namespace nodeaudit::comm
