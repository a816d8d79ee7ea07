#include "comm/watchdog.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace nodeaudit::comm {

Watchdog::Watchdog(Clock::time_point hard_deadline, Clock::duration idle_limit, std::function<void()> on_expire)
    : hard_deadline_(hard_deadline), idle_limit_(idle_limit), on_expire_(std::move(on_expire)), last_kick_(Clock::now()) {
  thread_ = std::thread([this] { watch(); });
}

Watchdog::~Watchdog() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void Watchdog::kick() {
  std::lock_guard lock(mutex_);
  last_kick_ = Clock::now();
}

std::string Watchdog::reason() const {
  std::lock_guard lock(mutex_);
  return reason_;
}

void Watchdog::watch() {
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    const Clock::time_point idle_deadline = last_kick_ + idle_limit_;
    const Clock::time_point wake_at = std::min(hard_deadline_, idle_deadline);
    if (Clock::now() >= wake_at) {
      reason_ = Clock::now() >= hard_deadline_
                    ? std::string("probe deadline")
                    : fmt::format("no progress for {:g} s", std::chrono::duration<double>(idle_limit_).count());
      fired_.store(true);
      lock.unlock();
      on_expire_();  // outside the lock: aborting may take a while
      return;
    }
    wake_.wait_until(lock, wake_at);
  }
}

}  // namespace nodeaudit::comm
