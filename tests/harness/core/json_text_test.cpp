// Strings that are not valid UTF-8 reach the JSON text with each stray byte written \xHH, and
// valid UTF-8 (any length of sequence) is kept as it is.
#include <gtest/gtest.h>

#include "harness/core/json_text.hpp"

namespace nodeaudit {
namespace {

TEST(JsonText, Latin1BytesAreWrittenAsHexEscapes) {
  EXPECT_EQ(escape_invalid_utf8("M\xfcller"), "M\\xFCller");
  EXPECT_EQ(escape_invalid_utf8("\xff\xfe"), "\\xFF\\xFE");
}

TEST(JsonText, ValidUtf8IsKept) {
  const std::string text = "M\xc3\xbcller \xe2\x82\xac \xf0\x9f\x99\x82";  // ü, €, an emoji
  EXPECT_EQ(escape_invalid_utf8(text), text);
}

TEST(JsonText, OverlongSurrogateAndTruncatedSequencesAreEscaped) {
  EXPECT_EQ(escape_invalid_utf8("\xc0\xaf"), "\\xC0\\xAF");           // overlong '/'
  EXPECT_EQ(escape_invalid_utf8("\xed\xa0\x80"), "\\xED\\xA0\\x80");  // a UTF-16 surrogate
  EXPECT_EQ(escape_invalid_utf8("ab\xe2\x82"), "ab\\xE2\\x82");       // cut short at the end
}

TEST(JsonText, ADocumentWithBadBytesInValuesAndKeysDumps) {
  nlohmann::json doc = {{"line", "step 1 M\xfcller"}, {"list", {"ok", "\xfc"}}};
  doc["k\xfc"] = 1;
  const std::string text = json_text(doc, 1);
  const nlohmann::json back = nlohmann::json::parse(text);
  EXPECT_EQ(back["line"], "step 1 M\\xFCller");
  EXPECT_EQ(back["list"][1], "\\xFC");
  EXPECT_EQ(back["k\\xFC"], 1);
}

TEST(JsonText, AValidDocumentIsTheUsualDump) {
  const nlohmann::json doc = {{"a", "b\xc3\xbc"}, {"n", 1.5}};
  EXPECT_EQ(json_text(doc, 1), doc.dump(1));
}

}  // namespace
}  // namespace nodeaudit
