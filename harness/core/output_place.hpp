// The one check of a place nodeaudit is asked to write a new file to (--out FILE, --out-profile,
// --md, --html, --junit, --telemetry-out, --prometheus), made before the first probe or job so a
// bad place costs no measuring: a symbolic link there (dangling or not) is refused, as nodeaudit
// neither writes through a link nor replaces one; an existing file is refused (never overwritten);
// the directory must exist, be a directory, and be writable. Throws UsageError naming the option,
// the path and what is accepted.
#pragma once

#include <string>

namespace nodeaudit {

enum class Existing { refuse, allow };  // allow: a file the caller recognizes as its own (--prometheus)

void check_output_place(const std::string& option, const std::string& path, Existing existing = Existing::refuse);

}  // namespace nodeaudit
