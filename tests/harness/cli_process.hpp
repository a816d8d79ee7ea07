// The process runner lives in tests/support (on every test's include path); this name stays for
// test lists that still include it by this path.
#pragma once

#include "../support/cli_process.hpp"
