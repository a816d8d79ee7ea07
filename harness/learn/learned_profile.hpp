// The learned figures as a profile TOML (profiles/README.md), every field followed by a comment
// saying how it was obtained; and the check that the text is a profile `profiles show` accepts.
#pragma once

#include <string>

#include "harness/learn/learned_job.hpp"

namespace nodeaudit::learn {

std::string learned_profile_toml(const LearnedJob& job, const std::string& name, const std::string& command_text);

// Parses the text with the profile reader; throws (an internal error) when it would be refused.
void check_learned_profile(const std::string& toml_text, const std::string& path);

}  // namespace nodeaudit::learn
