#include "comm/rank_report.hpp"

namespace nodeaudit::comm {
namespace {

Severity parse_severity(const std::string& text) {
  if (text == "fail") return Severity::fail;
  if (text == "warn") return Severity::warn;
  return Severity::info;
}

}  // namespace

nlohmann::json report_to_json(const RankReport& report) {
  nlohmann::json j;
  j["status"] = to_string(report.outcome.status);
  j["reason"] = report.outcome.reason;
  j["metrics"] = nlohmann::json::array();
  for (const Metric& m : report.metrics)
    j["metrics"].push_back({{"name", m.name}, {"unit", m.unit}, {"better", m.better == Better::higher ? "higher" : "lower"},
                            {"labels", m.labels}, {"samples", m.samples}});
  j["findings"] = nlohmann::json::array();
  for (const Finding& f : report.findings)
    j["findings"].push_back({{"severity", to_string(f.severity)}, {"code", f.code}, {"message", f.message}});
  j["info"] = report.info;
  return j;
}

std::optional<RankReport> report_from_json(const std::string& text) {
  try {
    const nlohmann::json j = nlohmann::json::parse(text);
    RankReport r;
    r.outcome = Outcome{parse_status(j.at("status").get<std::string>()), j.at("reason").get<std::string>()};
    for (const auto& m : j.at("metrics"))
      r.metrics.push_back(Metric{m.at("name"), m.at("unit"), m.at("better") == "higher" ? Better::higher : Better::lower,
                                 m.at("labels").get<Labels>(), m.at("samples").get<std::vector<double>>()});
    for (const auto& f : j.at("findings"))
      r.findings.push_back(Finding{parse_severity(f.at("severity")), f.at("code"), f.at("message")});
    r.info = j.at("info");
    return r;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

}  // namespace nodeaudit::comm
