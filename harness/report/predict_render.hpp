// `predict` and `match` as text: the terminal, Markdown, and (match) HTML with an inline chart. The
// input is the document the commands write as JSON: {"jobs": [...], "nodes": [...], "cells":
// [[prediction per node] per job]}, each prediction from score::predict_on_node.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace nodeaudit::report {

std::string render_predict_terminal(const nlohmann::json& document);
std::string render_predict_markdown(const nlohmann::json& document);
std::string render_match_terminal(const nlohmann::json& document);
std::string render_match_markdown(const nlohmann::json& document);
std::string render_match_html(const nlohmann::json& document);

// Per job: the node with the most samples/s among those judged, and what limits the job on the
// others ("node-b: cpu"). Written into the document by the commands, read by every view.
nlohmann::json best_nodes(const nlohmann::json& document);

}  // namespace nodeaudit::report
