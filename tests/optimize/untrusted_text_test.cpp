// Text from outside blaster as it keeps, sends and prints it: valid UTF-8 whatever came, cut
// between characters, free of the home's paths, and free of a terminal's control characters.
#include "optimize/untrusted_text.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace blaster {
namespace {

TEST(UntrustedText, BytesThatAreNotUtf8BecomeReplacementCharacters) {
  EXPECT_EQ(invalid_utf8_at("caf\xC3\xA9"), std::nullopt);
  EXPECT_EQ(invalid_utf8_at("caf\xFF"), 3U);
  EXPECT_EQ(invalid_utf8_at("\xED\xA0\x80"), 0U);  // a surrogate
  EXPECT_EQ(invalid_utf8_at("\xC0\xAF"), 0U);      // an overlong '/'
  EXPECT_EQ(valid_utf8("a\xFF" "b\xC3"), "a\xEF\xBF\xBD" "b\xEF\xBF\xBD");
  EXPECT_NO_THROW(static_cast<void>(nlohmann::json(valid_utf8("\xFF\xFE")).dump()));
}

TEST(UntrustedText, CutsFallBetweenCharacters) {
  const std::string euros = "\xE2\x82\xAC\xE2\x82\xAC\xE2\x82\xAC";
  EXPECT_EQ(first_chars(euros, 2), "\xE2\x82\xAC\xE2\x82\xAC");
  EXPECT_EQ(first_bytes(euros, 5), "\xE2\x82\xAC");
  EXPECT_EQ(first_bytes(euros, 6), "\xE2\x82\xAC\xE2\x82\xAC");
  EXPECT_EQ(first_bytes("abc", 10), "abc");
}

TEST(UntrustedText, ATerminalSeesEscapesAsText) {
  EXPECT_EQ(printable_text("\x1b[31mred\x1b[0m"), "\\x1b[31mred\\x1b[0m");
  EXPECT_EQ(printable_text("bell\x07 del\x7f"), "bell\\x07 del\\x7f");
  EXPECT_EQ(printable_text("c1 \xC2\x9B" "2J"), "c1 \\u009b2J");
  EXPECT_EQ(printable_text("rtl \xE2\x80\xAE" "txt"), "rtl \\u202etxt");
  EXPECT_EQ(printable_text("caf\xC3\xA9 \xE2\x82\xAC"), "caf\xC3\xA9 \xE2\x82\xAC");
}

TEST(UntrustedText, PathsOfTheHomeAreCutToTheirFileNames) {
  const std::filesystem::path home = "/srv/u/.blaster";
  EXPECT_EQ(without_home_paths("/srv/u/.blaster/optimize/run-3/candidate-1f.cu does not compile "
                               "for sm_90a",
                               home),
            "candidate-1f.cu does not compile for sm_90a");
  EXPECT_EQ(without_home_paths("/srv/u/.blaster/serve/run-1/candidate-2e.cu:4:7: bad plan", home),
            "candidate-2e.cu:4:7: bad plan");
  EXPECT_EQ(without_home_paths("in (/srv/u/.blaster/x/a.cu) and '/srv/u/.blaster/b.cu'", home),
            "in (a.cu) and 'b.cu'");
  // Another folder that only ends like the home is not it.
  EXPECT_EQ(without_home_paths("/mnt/srv/u/.blaster/a.cu", home), "/mnt/srv/u/.blaster/a.cu");
  EXPECT_EQ(without_home_paths("nothing here", home), "nothing here");
}

}  // namespace
}  // namespace blaster
