#include "kernels/host/thread_team.hpp"

#include <pthread.h>
#include <sched.h>

#include <cstring>

#include <fmt/format.h>

namespace nodeaudit::host {

std::vector<int> allowed_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cpus;
  if (sched_getaffinity(0, sizeof set, &set) != 0) return {0};
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
    if (CPU_ISSET(cpu, &set)) cpus.push_back(cpu);
  return cpus.empty() ? std::vector<int>{0} : cpus;
}

ThreadTeam::ThreadTeam(int threads) : start_(threads + 1), done_(threads + 1) {
  const std::vector<int> cpus = allowed_cpus();
  pin_errors_.resize(static_cast<std::size_t>(threads));
  for (int i = 0; i < threads; ++i) workers_.emplace_back([this, i, cpu = cpus[static_cast<std::size_t>(i) % cpus.size()]] { worker_loop(i, cpu); });
  // Collect pin results: each worker has pinned itself before its first barrier.
  run([](int) {});
  std::vector<std::string> errors;
  for (auto& e : pin_errors_)
    if (!e.empty()) errors.push_back(e);
  pin_errors_ = errors;
}

ThreadTeam::~ThreadTeam() {
  stopping_ = true;
  start_.arrive_and_wait();
  for (auto& t : workers_) t.join();
}

void ThreadTeam::run(const std::function<void(int)>& step) {
  step_ = &step;
  start_.arrive_and_wait();
  done_.arrive_and_wait();
  step_ = nullptr;
}

void ThreadTeam::worker_loop(int index, int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  const int rc = pthread_setaffinity_np(pthread_self(), sizeof set, &set);
  if (rc != 0) pin_errors_[static_cast<std::size_t>(index)] = fmt::format("worker {} could not be pinned to CPU {}: {}", index, cpu, std::strerror(rc));
  while (true) {
    start_.arrive_and_wait();
    if (stopping_) return;
    (*step_)(index);
    done_.arrive_and_wait();
  }
}

}  // namespace nodeaudit::host
