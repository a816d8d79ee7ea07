// Size and duration parsing as users type them, and the errors for what is not accepted.
#include <gtest/gtest.h>

#include "harness/core/errors.hpp"
#include "harness/core/units.hpp"

using namespace nodeaudit;

TEST(Units, SizesIecAndSi) {
  EXPECT_EQ(parse_size_bytes("4096"), 4096u);
  EXPECT_EQ(parse_size_bytes("4KiB"), 4096u);
  EXPECT_EQ(parse_size_bytes("1MiB"), 1048576u);
  EXPECT_EQ(parse_size_bytes("4GiB"), 4294967296u);
  EXPECT_EQ(parse_size_bytes("1GB"), 1000000000u);
  EXPECT_EQ(parse_size_bytes("110KiB"), 112640u);
  EXPECT_EQ(parse_size_bytes("1.5KiB"), 1536u);
  EXPECT_EQ(parse_size_bytes("2kB"), 2000u);
  EXPECT_EQ(parse_size_bytes("512B"), 512u);
}

TEST(Units, BadSizesNameTheValue) {
  for (const char* bad : {"12XB", "", "GiB", "4K", "-1", "1.3B", "4 G"}) {
    try {
      parse_size_bytes(bad);
      ADD_FAILURE() << "accepted " << bad;
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find(std::string("'") + bad + "'"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("KiB"), std::string::npos) << "should list accepted units: " << e.what();
    }
  }
}

TEST(Units, Durations) {
  EXPECT_DOUBLE_EQ(parse_duration_s("500ms"), 0.5);
  EXPECT_DOUBLE_EQ(parse_duration_s("30s"), 30);
  EXPECT_DOUBLE_EQ(parse_duration_s("5m"), 300);
  EXPECT_DOUBLE_EQ(parse_duration_s("2h"), 7200);
  EXPECT_DOUBLE_EQ(parse_duration_s("1.5s"), 1.5);
}

TEST(Units, BadDurations) {
  EXPECT_THROW(parse_duration_s("30"), UsageError);  // no unit: seconds or minutes?
  EXPECT_THROW(parse_duration_s("5d"), UsageError);
  EXPECT_THROW(parse_duration_s("fast"), UsageError);
}

TEST(Units, FormatBytes) {
  EXPECT_EQ(format_bytes(4096), "4 KiB");
  EXPECT_EQ(format_bytes(112640), "110 KiB");
  EXPECT_EQ(format_bytes(512), "512 B");
  EXPECT_EQ(format_bytes(1.5 * 1024 * 1024 * 1024), "1.5 GiB");
}

TEST(Units, FormatDuration) {
  EXPECT_EQ(format_duration(0.0002), "0.2 ms");  // short steps keep their figure
  EXPECT_EQ(format_duration(0.0018009), "1.8 ms");
  EXPECT_EQ(format_duration(0.25), "250 ms");
  EXPECT_EQ(format_duration(2.74), "2.7 s");
  EXPECT_EQ(format_duration(125), "2 m 5 s");
  EXPECT_EQ(format_duration(7300), "2 h 1 m");
}

TEST(Units, FiniteNumberTakesTheWholeTextOrNothing) {
  EXPECT_EQ(nodeaudit::parse_finite_number("12"), 12.0);
  EXPECT_EQ(nodeaudit::parse_finite_number("12.5"), 12.5);
  EXPECT_EQ(nodeaudit::parse_finite_number("-3"), -3.0);
  EXPECT_EQ(nodeaudit::parse_finite_number("1e3"), 1000.0);
  for (const char* bad : {"", "12x", "x12", "nan", "inf", "1e999", "12 "})
    EXPECT_FALSE(nodeaudit::parse_finite_number(bad).has_value()) << bad;
}

// Plain numbers for a person: three significant figures, the unit scaled to the value, thousands
// separators, no exponent (expected texts written by hand from the values).
TEST(Units, QuantityScalesItsUnitToTheValue) {
  EXPECT_EQ(nodeaudit::format_quantity(0.001187, "s"), "1.19 ms");
  EXPECT_EQ(nodeaudit::format_quantity(5.14e-06, "s"), "5.14 us");
  EXPECT_EQ(nodeaudit::format_quantity(2.621e-04, "GB"), "262 kB");
  EXPECT_EQ(nodeaudit::format_quantity(47709962, ""), "47.7 M");
  EXPECT_EQ(nodeaudit::format_quantity(1641, ""), "1,640");
  EXPECT_EQ(nodeaudit::format_quantity(3.2e9, "B/s"), "3.20 GB/s");
  EXPECT_EQ(nodeaudit::format_quantity(0.5, "GB/s"), "500 MB/s");
  EXPECT_EQ(nodeaudit::format_quantity(12345.6, "samples/s"), "12,300 samples/s");
  EXPECT_EQ(nodeaudit::format_quantity(3600, "s"), "3,600 s");
  EXPECT_EQ(nodeaudit::format_quantity(-0.05, "s"), "-50 ms");
  EXPECT_EQ(nodeaudit::format_quantity(-0.0512, "s"), "-51.2 ms");
}

TEST(Units, RoundingThatReachesTheNextScaleMovesToIt) {
  EXPECT_EQ(nodeaudit::format_quantity(999.7e-6, "s"), "1.00 ms");
  EXPECT_EQ(nodeaudit::format_number(99.96), "100");
  EXPECT_EQ(nodeaudit::format_number(0.000123), "0.000123");
  EXPECT_EQ(nodeaudit::format_number(1234567), "1,230,000");
  EXPECT_EQ(nodeaudit::format_number(0), "0");
  EXPECT_EQ(nodeaudit::format_number(16), "16");
  EXPECT_EQ(nodeaudit::format_number(16.5), "16.5");
  EXPECT_EQ(nodeaudit::format_number(4.885e-15), "~0");
}
