// User-facing errors. Thrown only inside the CLI/harness for bad input and caught in main, which
// prints one line `nodeaudit: <what>: <why>` and exits 2. Probes return Outcome values instead.
#pragma once

#include <stdexcept>
#include <string>

namespace nodeaudit {

class UsageError : public std::runtime_error {
 public:
  // what: the offending value or option ("--block-size 0"); why: the rule and what is accepted.
  UsageError(const std::string& what, const std::string& why) : std::runtime_error(what + ": " + why) {}
};

}  // namespace nodeaudit
