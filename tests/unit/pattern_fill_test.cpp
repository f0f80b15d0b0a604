#include "benchmarking/timing/pattern_fill.hpp"

#include <gtest/gtest.h>

namespace blaster {
namespace {

// The fill kernel writes one 32-bit word over and over: the word a memset of each width repeats.
TEST(PatternFill, TheWordRepeatsThePatternAtItsWidth) {
  EXPECT_EQ(repeated_word(0x12U, 1), 0x12121212U);
  EXPECT_EQ(repeated_word(0xFFFFFF12U, 1), 0x12121212U) << "a byte pattern is its low byte";
  EXPECT_EQ(repeated_word(0xABCDU, 2), 0xABCDABCDU);
  EXPECT_EQ(repeated_word(0x1234ABCDU, 2), 0xABCDABCDU) << "a half pattern is its low half";
  EXPECT_EQ(repeated_word(0xDEADBEEFU, 4), 0xDEADBEEFU);
}

}  // namespace
}  // namespace blaster
