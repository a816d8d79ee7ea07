// Removing what identifies a machine before a result is shared with a vendor: hostnames, serial
// numbers, UUIDs, PCI bus ids and the command line (which can name hosts and paths). Fields are
// removed by name, and every string left in the document is scrubbed of the removed values and of
// anything shaped like a UUID, so a hostname quoted in a finding message goes too.
#pragma once

#include <nlohmann/json.hpp>

namespace nodeaudit::report {

inline constexpr const char* redacted_text = "[redacted]";

nlohmann::json redact_result(const nlohmann::json& result_doc);

}  // namespace nodeaudit::report
