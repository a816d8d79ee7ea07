// A document as JSON text when some of its strings are not valid UTF-8 (a job that printed Latin-1
// text, a script or data path named in another encoding): JSON holds only UTF-8, so each byte that
// is not part of a valid UTF-8 sequence is written as the four characters \xHH (its value in hex),
// and every other character is kept as it is. Nothing is replaced by U+FFFD: the bytes can be read
// back from the text.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace nodeaudit {

// `text` with each byte outside a valid UTF-8 sequence written as \xHH.
std::string escape_invalid_utf8(const std::string& text);
// doc.dump(indent); where a string or key is not valid UTF-8, the dump of a copy escaped as above.
std::string json_text(const nlohmann::json& doc, int indent);

}  // namespace nodeaudit
