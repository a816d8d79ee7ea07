// The field table is the one declaration of a profile's fields: profiles/README.md's field tables are
// its text, and every shipped profile goes through its JSON and back unchanged.
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>

#include "harness/score/profile_fields.hpp"
#include "harness/score/score.hpp"

namespace ns = nodeaudit::score;

namespace {

const std::string end_marker = "<!-- end profile fields -->";

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The README with every marked region replaced by the table's text for that section.
std::string generated_readme(const std::string& readme) {
  std::string out;
  std::size_t at = 0;
  const std::string begin_marker = "<!-- profile fields: ";
  while (true) {
    const std::size_t begin = readme.find(begin_marker, at);
    if (begin == std::string::npos) break;
    const std::size_t line_end = readme.find('\n', begin);
    const std::size_t end = readme.find(end_marker, line_end);
    if (line_end == std::string::npos || end == std::string::npos) break;
    const std::size_t name_at = begin + begin_marker.size();
    const std::string section = readme.substr(name_at, readme.find_first_of(" -", name_at) - name_at);
    out += readme.substr(at, line_end + 1 - at) + ns::profile_fields_markdown(section);
    at = end;
  }
  return out + readme.substr(at);
}

}  // namespace

TEST(ProfileFields, ReadmeFieldTablesAreTheTables) {
  const std::string path = std::string(NODEAUDIT_PROFILES) + "/README.md";
  const std::string readme = read_text(path);
  ASSERT_FALSE(readme.empty()) << path;
  for (const std::string_view section : ns::profile_field_sections()) {
    const std::string name = section.empty() ? "top" : std::string(section);
    EXPECT_NE(readme.find("<!-- profile fields: " + name), std::string::npos) << "no region for " << name;
  }
  const std::string expected = generated_readme(readme);
  if (expected != readme) {
    const std::string written = "profiles-README.expected.md";
    std::ofstream(written) << expected;
    ADD_FAILURE() << path
                  << " differs from the field table (harness/score/profile_field_table.cpp); the generated text is in "
                  << written << " (in the test's working directory): copy it over the README";
  }
}

TEST(ProfileFields, EveryShippedProfileGoesThroughJsonUnchanged) {
  for (const std::string& name : ns::shipped_profile_names()) {
    SCOPED_TRACE(name);
    const ns::Profile profile = ns::load_profile(name);
    const nlohmann::json fields = ns::profile_fields_json(profile);
    EXPECT_EQ(ns::profile_fields_json(ns::profile_from_fields_json(nlohmann::json::parse(fields.dump()))), fields);
  }
}

TEST(ProfileFields, EachKeyIsDeclaredOncePerSection) {
  std::set<std::pair<std::string_view, std::string_view>> seen;
  for (const ns::ProfileField& field : ns::profile_fields()) {
    EXPECT_TRUE(seen.insert({field.section, field.key}).second) << field.key;
    EXPECT_FALSE(field.meaning.empty()) << field.key;
    EXPECT_FALSE(field.default_text.empty()) << field.key;
    EXPECT_NE(field.access.get, nullptr) << field.key;
    EXPECT_NE(field.access.set, nullptr) << field.key;
    if (field.kind == ns::FieldKind::choice) {
      EXPECT_FALSE(field.accepted.empty()) << field.key;
    }
  }
}
