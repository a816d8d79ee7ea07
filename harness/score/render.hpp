// Plain-text views of an assessment and of a profile, for the terminal.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "harness/score/profile.hpp"

namespace nodeaudit::score {

std::string render_profile(const Profile& profile);

}  // namespace nodeaudit::score
