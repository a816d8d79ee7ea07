#include "pipeline/step/step_device.hpp"

#include <chrono>
#include <thread>

#include "pipeline/step/step_clock.hpp"

namespace nodeaudit::pipeline {
namespace {

// Sleeps to `deadline`, spinning through the last 100 us: a sleep overshoots by the timer slack
// (~50-100 us), which would count as compute time and hide a starved loader at short steps.
void busy_until(Clock::time_point deadline) {
  const auto spin = std::chrono::microseconds(100);
  if (deadline - Clock::now() > spin) std::this_thread::sleep_until(deadline - spin);
  while (Clock::now() < deadline) {
  }
}

Clock::duration as_duration(double seconds) {
  return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}

}  // namespace

DeviceStepTimes EmulatedDevice::run_step(const std::vector<HostBatch>&, const std::function<void()>& release) {
  const auto compute_start = Clock::now();
  // The batch counts as on the GPU when compute starts, so its buffer goes back to the loaders
  // now. Waking a loader may preempt this thread on a busy host; inside the compute window that
  // costs nothing (a GPU keeps computing), after it the delay would count as a stage.
  release();
  busy_until(compute_start + as_duration(compute_s_));
  const auto compute_end = Clock::now();
  if (comm_exposed_s_ > 0) busy_until(compute_end + as_duration(comm_exposed_s_));
  const auto comm_end = Clock::now();
  return {0, seconds_between(compute_start, compute_end), seconds_between(compute_end, comm_end)};
}

}  // namespace nodeaudit::pipeline
