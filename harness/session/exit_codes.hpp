// A nodeaudit process's exit codes, in one place: 0 done, 1 FAIL / failed probe or regression, 2 bad
// usage or input, 130 interrupted.
#pragma once

namespace nodeaudit::session {

inline constexpr int exit_ok = 0;
inline constexpr int exit_fail = 1;
inline constexpr int exit_usage = 2;
inline constexpr int exit_interrupted = 130;

}  // namespace nodeaudit::session
