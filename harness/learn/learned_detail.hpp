// Shared between learned_job.cpp (timing, model) and learned_data.cpp (data, communication, training).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/learn/learned_job.hpp"

namespace nodeaudit::learn::detail {

double median_of(std::vector<double> values);
std::vector<nlohmann::json> steps_in_phase(const nlohmann::json& rank, const std::string& phase);
double step_samples(const nlohmann::json& step, double micro_batch);

void learn_communication(const nlohmann::json& lead, const LearnedProfileFields& f, LearnedJob& job);
void learn_data(const JobRecords& records, LearnedProfileFields& f, std::vector<std::string>& notes);
void learn_training(const JobRecords& records, const LearnInputs& inputs, LearnedJob& job);

}  // namespace nodeaudit::learn::detail
