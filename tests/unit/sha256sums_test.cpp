#include "evidence/sha256sums.hpp"

#include <gtest/gtest.h>

#include "core/error.hpp"
#include "core/sha256.hpp"

namespace blaster {
namespace {

const std::string digest_a = sha256_hex(std::string_view("a"));
const std::string digest_b = sha256_hex(std::string_view("b"));

std::string error_of(std::string_view text) {
  try {
    parse_sha256sums(text);
  } catch (const input_error& e) {
    return e.what();
  }
  ADD_FAILURE() << "accepted:\n" << text;
  return {};
}

TEST(Sha256sums, ReadsWhatSha256sumWrites) {
  const auto entries =
      parse_sha256sums(digest_a + "  report.md\n" + digest_b + " *objects/with space\n");
  ASSERT_EQ(entries.size(), 2U);
  EXPECT_EQ(entries[0].sha256, digest_a);
  EXPECT_EQ(entries[0].path, "report.md");
  EXPECT_EQ(entries[1].path, "objects/with space");  // ' *' is binary mode, not the name
  // The last line may lack its newline; upper-case digits are read as lower-case.
  std::string upper = digest_a;
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  const auto loose = parse_sha256sums(upper + "  x");
  ASSERT_EQ(loose.size(), 1U);
  EXPECT_EQ(loose[0].sha256, digest_a);
}

TEST(Sha256sums, FormatRoundTrips) {
  const std::vector<sha256sums_entry> entries = {{digest_a, "objects/" + digest_a},
                                                 {digest_b, "report.md"}};
  const std::string text = format_sha256sums(entries);
  EXPECT_EQ(text, digest_a + "  objects/" + digest_a + "\n" + digest_b + "  report.md\n");
  const auto back = parse_sha256sums(text);
  ASSERT_EQ(back.size(), 2U);
  EXPECT_EQ(back[1].path, "report.md");
  EXPECT_THROW(format_sha256sums({{digest_a, "../x"}}), error);
  EXPECT_THROW(format_sha256sums({{"abc", "x"}}), error);
}

TEST(Sha256sums, EveryBadLineIsNamedByNumber) {
  const std::string good = digest_a + "  report.md\n";
  const struct {
    std::string text;
    std::string message;
  } cases[] = {
      {good + digest_b + "  /etc/passwd\n", "SHA256SUMS:2: '/etc/passwd': the path is absolute"},
      {good + digest_b + "  ../up\n", "SHA256SUMS:2: '../up': the path has a '..' component"},
      {good + digest_b + "  a/../../up\n", "'..' component"},
      {good + digest_b + "  a//b\n", "empty component"},
      {good + digest_b + "  a/\n", "empty component"},
      {good + digest_b + "  ./a\n", "'.' component"},
      {good + digest_b + "  a\tb\n", "control character"},
      {good + "\\" + digest_b + "  a\\nb\n", "SHA256SUMS:2: escaped file names"},
      {good + digest_b + "  report.md\n", "SHA256SUMS:2: 'report.md' is listed twice"},
      {good + digest_b + "\n", "SHA256SUMS:2: the line is too short"},
      {good + digest_b + "\treport.md\n", "two spaces"},
      {good + "g" + digest_b.substr(1) + "  x\n", "SHA256SUMS:2: character 1 of the digest"},
      {digest_a + "  report.md\r\n", "SHA256SUMS:1: the line ends with CR"},
      {good + "\n", "SHA256SUMS:2: blank line"},
      {"", "SHA256SUMS:1: the manifest is empty"},
      {std::string("\0", 1), "SHA256SUMS:1:"},
  };
  for (const auto& c : cases) {
    const std::string message = error_of(c.text);
    EXPECT_NE(message.find(c.message), std::string::npos) << message;
    // Every message says what a good line looks like.
    EXPECT_NE(message.find("sha256sum"), std::string::npos) << message;
  }
  EXPECT_EQ(unsafe_path_reason("objects/ab"), "");
  // Line by line, every bad line is named and the good ones are kept.
  const auto lines =
      read_sha256sums_lines(good + "junk\n" + digest_b + "  ../x\n" + digest_b + "  b\n");
  ASSERT_EQ(lines.entries.size(), 2U);
  EXPECT_EQ(lines.entries[1].path, "b");
  ASSERT_EQ(lines.bad_lines.size(), 2U);
  EXPECT_EQ(lines.bad_lines[0].line, 2);
  EXPECT_EQ(lines.bad_lines[1].line, 3);
  EXPECT_NE(unsafe_path_reason(std::string(5000, 'a')), "");
}

}  // namespace
}  // namespace blaster
