// Escaping for the report formats, in one place: Markdown table cells, XML/HTML text and attributes.
#pragma once

#include <string>

namespace nodeaudit::report {

std::string markdown_cell(const std::string& text);  // '|' escaped, newlines to spaces
std::string xml_escape(const std::string& text);     // & < > " ' as entities; also right for HTML

}  // namespace nodeaudit::report
