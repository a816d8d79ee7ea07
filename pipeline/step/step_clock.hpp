// The clock every pipeline stage times itself with, and seconds between two of its readings.
#pragma once

#include <chrono>

namespace nodeaudit::pipeline {

using Clock = std::chrono::steady_clock;

inline double seconds_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

inline double seconds_since(Clock::time_point t) { return seconds_between(t, Clock::now()); }

}  // namespace nodeaudit::pipeline
