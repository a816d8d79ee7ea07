// The learned figures as a profile TOML (profiles/README.md), every field followed by a comment
// saying how it was obtained; and the check that the text is a profile `profiles show` accepts.
#pragma once

#include <optional>
#include <string>

#include "harness/learn/learned_job.hpp"
#include "harness/score/profile_fields.hpp"

namespace nodeaudit::learn {

// A profile field as learn gives it: its value (counts and bytes as numbers, choices as text) and
// how it was obtained, the TOML comment and the learn document's `how`.
struct LearnedFieldValue {
  score::FieldValue value;
  std::string how;
};

// The field's learned value; none for a field learn leaves to the profile's default (thresholds,
// flops_per_token_per_parameter, ...), for the checkpoint fields when no save was seen, and for
// name and description, which the caller gives.
std::optional<LearnedFieldValue> learned_field(const LearnedJob& job, score::FieldId id);

std::string learned_profile_toml(const LearnedJob& job, const std::string& name, const std::string& command_text);

// Parses the text with the profile reader; throws (an internal error) when it would be refused.
void check_learned_profile(const std::string& toml_text, const std::string& path);

}  // namespace nodeaudit::learn
