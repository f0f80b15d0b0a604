// Randomized tests of the parsers that read untrusted text: SHA256SUMS (from a bundle anyone may
// hand over) and launch plans (from any candidate file). A mutated input must give a value or a
// blaster::input_error, never a crash, a hang or another exception. Fixed seeds, bounded
// iterations: the same inputs every run.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/launch_plan.hpp"
#include "core/sha256.hpp"
#include "evidence/sha256sums.hpp"

namespace blaster::testing {
namespace {

// Bytes that matter to the formats: separators, path syntax, JSON syntax, expression syntax,
// line ends, NUL, high bytes.
constexpr std::string_view interesting =
    " *\\/.\n\r\t\0\x7f\xff"
    "09afAFgz{}[]\":,-+()%<>_eE";

class mutator {
 public:
  explicit mutator(std::uint32_t seed) : rng_(seed) {}

  std::string mutate(std::string text) {
    const int edits = pick(1, 8);
    for (int i = 0; i < edits; ++i) {
      const std::size_t at =
          text.empty() ? 0 : static_cast<std::size_t>(pick(0, static_cast<int>(text.size()) - 1));
      switch (pick(0, 7)) {
        case 0:  // replace a byte
          if (!text.empty()) text[at] = byte();
          break;
        case 1:  // insert a byte
          text.insert(at, 1, byte());
          break;
        case 2:  // delete a run
          if (!text.empty()) text.erase(at, static_cast<std::size_t>(pick(1, 16)));
          break;
        case 3:  // duplicate a slice
          if (!text.empty())
            text.insert(at, text.substr(at, static_cast<std::size_t>(pick(1, 80))));
          break;
        case 4:  // insert a token
          text.insert(at, token());
          break;
        case 5:  // truncate
          text.resize(at);
          break;
        case 6:  // flip a bit
          if (!text.empty()) text[at] = static_cast<char>(text[at] ^ (1 << pick(0, 7)));
          break;
        default:  // swap two slices' order
          if (text.size() > 2) {
            const std::size_t mid =
                static_cast<std::size_t>(pick(1, static_cast<int>(text.size()) - 1));
            text = text.substr(mid) + text.substr(0, mid);
          }
          break;
      }
    }
    return text;
  }

 private:
  int pick(int low, int high) { return std::uniform_int_distribution<int>(low, high)(rng_); }
  char byte() {
    if (pick(0, 3) == 0) return static_cast<char>(pick(0, 255));
    return interesting[static_cast<std::size_t>(pick(0, static_cast<int>(interesting.size()) - 1))];
  }
  std::string token() {
    static const std::vector<std::string> tokens = {"../",
                                                    "/",
                                                    "//",
                                                    "./",
                                                    "  ",
                                                    " *",
                                                    "\\",
                                                    "\r\n",
                                                    "\n\n",
                                                    std::string(1, '\0'),
                                                    "99999999999999999999",
                                                    "-9223372036854775808",
                                                    "ceil_div(",
                                                    "min(1,",
                                                    "max(",
                                                    ")",
                                                    "{",
                                                    "}",
                                                    "[",
                                                    "]",
                                                    "\"",
                                                    "\":",
                                                    ",",
                                                    "null",
                                                    "true",
                                                    "1e400",
                                                    "\"kernel\"",
                                                    "\"launch\"",
                                                    "\"params\"",
                                                    "\"scratch\"",
                                                    "*/",
                                                    "/* blaster",
                                                    "\\u0000",
                                                    std::string(300, '('),
                                                    std::string(200, '[')};
    return tokens[static_cast<std::size_t>(pick(0, static_cast<int>(tokens.size()) - 1))];
  }

  std::mt19937 rng_;
};

TEST(ParserFuzz, Sha256sumsGivesEntriesOrAnInputError) {
  std::string valid;
  for (const char* path : {"report.md", "results.json", "run.json", "objects/ab", "a b/c*d"}) {
    valid += sha256_hex(std::string_view(path)) + "  " + path + "\n";
  }
  ASSERT_EQ(parse_sha256sums(valid).size(), 5U);
  mutator m(5);
  int accepted = 0;
  int rejected = 0;
  for (int i = 0; i < 20000; ++i) {
    const std::string input = m.mutate(valid);
    try {
      const auto entries = parse_sha256sums(input);
      ++accepted;
      // Whatever is accepted is safe to open under the bundle and survives a round trip.
      for (const auto& e : entries) {
        ASSERT_TRUE(is_sha256_hex(e.sha256)) << e.sha256;
        ASSERT_EQ(unsafe_path_reason(e.path), "") << e.path;
        ASSERT_NE(e.path.front(), '/');
      }
      ASSERT_EQ(parse_sha256sums(format_sha256sums(entries)).size(), entries.size());
    } catch (const input_error& e) {
      ++rejected;
      ASSERT_EQ(std::string(e.what()).rfind("SHA256SUMS:", 0), 0U) << e.what();
    } catch (const std::exception& e) {
      FAIL() << "iteration " << i << ": " << typeid(e).name() << ": " << e.what();
    }
  }
  // Both outcomes were exercised, so the test says something about each.
  EXPECT_GT(accepted, 100);
  EXPECT_GT(rejected, 100);
}

TEST(ParserFuzz, LaunchPlanGivesAPlanOrAnInputError) {
  const std::string valid = R"cu(/* blaster
{
  "launch": [
    {"kernel": "rmsnorm_rows<VEC>", "grid": "ceil_div(B*H*W, 256)", "block": [256, 1, 1],
     "shared_bytes": "VEC*4", "args": ["out", "x", "B", "C", "H*W", "eps"]},
    {"kernel": "finish", "grid": 1, "block": "min(B, 1024)", "args": ["out", "partial"]}
  ],
  "scratch": {"partial": "B*C*4"},
  "params": {"VEC": [2, 4, 8]},
  "cooperative": false
}
*/
template <int VEC>
__global__ void rmsnorm_rows(float* out, const float* x, int B, int C, int HW, float eps) {}
)cu";
  ASSERT_EQ(parse_launch_plan(valid, "k.cu").launch.size(), 2U);
  mutator m(7);
  int accepted = 0;
  int rejected = 0;
  for (int i = 0; i < 5000; ++i) {
    const std::string input = m.mutate(valid);
    try {
      const launch_plan plan = parse_launch_plan(input, "k.cu");
      ++accepted;
      static_cast<void>(expand_params(plan));
    } catch (const input_error& e) {
      ++rejected;
      ASSERT_EQ(std::string(e.what()).rfind("k.cu:", 0), 0U) << e.what();
    } catch (const std::exception& e) {
      FAIL() << "iteration " << i << ": " << typeid(e).name() << ": " << e.what() << "\ninput:\n"
             << input;
    }
  }
  EXPECT_GT(accepted, 50);
  EXPECT_GT(rejected, 500);
}

}  // namespace
}  // namespace blaster::testing
