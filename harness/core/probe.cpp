#include "harness/core/probe.hpp"

#include <stdexcept>

namespace nodeaudit {

std::string to_string(Need need) {
  switch (need) {
    case Need::gpu: return "gpu";
    case Need::multi_gpu: return "multi-gpu";
    case Need::io_uring: return "io_uring";
    case Need::mpi: return "mpi";
  }
  return "?";
}

std::string to_string(Status status) {
  switch (status) {
    case Status::ok: return "ok";
    case Status::skipped: return "skipped";
    case Status::failed: return "failed";
    case Status::crashed: return "crashed";
    case Status::timeout: return "timeout";
    case Status::interrupted: return "interrupted";
  }
  return "failed";
}

Status parse_status(const std::string& text) {
  for (Status s : {Status::ok, Status::skipped, Status::failed, Status::crashed, Status::timeout, Status::interrupted})
    if (to_string(s) == text) return s;
  throw std::invalid_argument("unknown probe status '" + text + "'");
}

std::string to_string(Severity severity) {
  switch (severity) {
    case Severity::fail: return "fail";
    case Severity::warn: return "warn";
    case Severity::info: return "info";
  }
  return "info";
}

}  // namespace nodeaudit
