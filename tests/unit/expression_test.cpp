#include "core/expression.hpp"

#include <cstdint>
#include <limits>
#include <string>

#include <gtest/gtest.h>

namespace blaster {
namespace {

struct caught {
  std::string message;
  std::size_t column = 0;
};

caught parse_failure(std::string_view text) {
  try {
    expression::parse(text);
  } catch (const expression_error& e) {
    return {e.what(), e.column()};
  }
  ADD_FAILURE() << "'" << text << "' parsed without error";
  return {};
}

caught evaluate_failure(std::string_view text, const symbol_table& symbols) {
  const expression e = expression::parse(text);
  try {
    e.evaluate(symbols);
  } catch (const expression_error& error) {
    return {error.what(), error.column()};
  }
  ADD_FAILURE() << "'" << text << "' evaluated without error";
  return {};
}

std::int64_t eval(std::string_view text, const symbol_table& symbols = {}) {
  return evaluate(text, symbols);
}

TEST(Expression, MultiplicativeBindsTighterThanAdditive) {
  EXPECT_EQ(eval("2 + 3 * 4"), 14);
  EXPECT_EQ(eval("2 * 3 + 4"), 10);
  EXPECT_EQ(eval("(2 + 3) * 4"), 20);
  EXPECT_EQ(eval("1 + 10 / 3"), 4);
  EXPECT_EQ(eval("1 + 10 % 3"), 2);
}

TEST(Expression, OperatorsOfOneLevelAssociateLeft) {
  EXPECT_EQ(eval("10 - 4 - 3"), 3);
  EXPECT_EQ(eval("64 / 4 / 2"), 8);
  EXPECT_EQ(eval("100 / 10 * 3"), 30);
  EXPECT_EQ(eval("2 * 3 % 4"), 2);
  EXPECT_EQ(eval("17 % 5 * 2"), 4);
}

TEST(Expression, UnaryMinus) {
  EXPECT_EQ(eval("-3 * 2"), -6);
  EXPECT_EQ(eval("2 - -3"), 5);
  EXPECT_EQ(eval("--4"), 4);
  EXPECT_EQ(eval("-(2 + 3)"), -5);
  EXPECT_EQ(eval("- 2 * -3"), 6);
  EXPECT_EQ(eval("-N", {{"N", 7}}), -7);
}

TEST(Expression, DivisionAndRemainderTruncateTowardZeroLikeC) {
  EXPECT_EQ(eval("7 / 2"), 3);
  EXPECT_EQ(eval("-7 / 2"), -3);
  EXPECT_EQ(eval("7 / -2"), -3);
  EXPECT_EQ(eval("-7 / -2"), 3);
  EXPECT_EQ(eval("7 % 2"), 1);
  EXPECT_EQ(eval("-7 % 2"), -1);
  EXPECT_EQ(eval("7 % -2"), 1);
  EXPECT_EQ(eval("-7 % -2"), -1);
}

TEST(Expression, Functions) {
  EXPECT_EQ(eval("ceil_div(10, 3)"), 4);
  EXPECT_EQ(eval("ceil_div(9, 3)"), 3);
  EXPECT_EQ(eval("ceil_div(0, 5)"), 0);
  EXPECT_EQ(eval("ceil_div(1, 256)"), 1);
  EXPECT_EQ(eval("ceil_div(-7, 2)"), -3);  // the mathematical ceiling of -3.5
  EXPECT_EQ(eval("ceil_div(9223372036854775807, 2)"), 4611686018427387904);
  EXPECT_EQ(eval("min(3, -1)"), -1);
  EXPECT_EQ(eval("max(3, -1)"), 3);
  EXPECT_EQ(eval("max(min(8, N), 2) * 2", {{"N", 5}}), 10);
  EXPECT_EQ(eval("ceil_div(B*H*W, 256)", {{"B", 2}, {"H", 3}, {"W", 100}}), 3);
}

TEST(Expression, SymbolsAreLookedUpAtEvaluation) {
  const expression e = expression::parse("B*C + B");
  EXPECT_EQ(e.evaluate({{"B", 2}, {"C", 3}}), 8);
  EXPECT_EQ(e.evaluate({{"B", 10}, {"C", 1}}), 20);
  EXPECT_EQ(e.text(), "B*C + B");
}

TEST(Expression, Int64Limits) {
  EXPECT_EQ(eval("9223372036854775807"), std::numeric_limits<std::int64_t>::max());
  EXPECT_EQ(eval("-9223372036854775807 - 1"), std::numeric_limits<std::int64_t>::min());
  EXPECT_EQ(eval("(-9223372036854775807 - 1) % -1"), 0);
}

TEST(Expression, LongChainsEvaluateWithoutRecursion) {
  std::string text = "1";
  for (int i = 1; i < 100000; ++i) text += "+1";
  EXPECT_EQ(eval(text), 100000);
}

TEST(Expression, SymbolsAreSortedAndUnique) {
  const expression e = expression::parse("W + B*max(H, B) - ceil_div(C, W)");
  EXPECT_EQ(e.symbols(), (std::vector<std::string>{"B", "C", "H", "W"}));
  EXPECT_TRUE(expression::parse("4 * 2").symbols().empty());
}

TEST(Expression, IsIdentifier) {
  EXPECT_TRUE(expression::parse("out").is_identifier());
  EXPECT_TRUE(expression::parse(" _x1 ").is_identifier());
  EXPECT_FALSE(expression::parse("(out)").is_identifier());
  EXPECT_FALSE(expression::parse("B+1").is_identifier());
  EXPECT_FALSE(expression::parse("-B").is_identifier());
  EXPECT_FALSE(expression::parse("4").is_identifier());
  EXPECT_FALSE(expression::parse("min(a, b)").is_identifier());
}

TEST(Expression, DefaultIsZero) {
  const expression e;
  EXPECT_EQ(e.evaluate({}), 0);
  EXPECT_EQ(e.text(), "0");
}

TEST(ExpressionError, IsAnInputError) {
  EXPECT_THROW(expression::parse("1 +"), input_error);
}

TEST(ExpressionError, UnknownSymbolListsTheKnownOnes) {
  const caught e = evaluate_failure("B + Q", {{"W", 1}, {"B", 1}, {"H", 1}, {"C", 1}});
  EXPECT_EQ(e.message, "unknown symbol 'Q' (known: B, C, H, W)");
  EXPECT_EQ(e.column, 4u);
  EXPECT_EQ(evaluate_failure("Q", {}).message, "unknown symbol 'Q' (no symbols are defined)");
}

TEST(ExpressionError, DivisionByZero) {
  const symbol_table symbols{{"N", 8}, {"K", 3}};
  caught e = evaluate_failure("N / (K - K)", symbols);
  EXPECT_EQ(e.message, "division by zero in 'N / (K - K)'");
  EXPECT_EQ(e.column, 2u);
  // The message quotes the failing part, not the whole expression.
  e = evaluate_failure("1 + N % 0", symbols);
  EXPECT_EQ(e.message, "division by zero in 'N % 0'");
  EXPECT_EQ(e.column, 6u);
}

TEST(ExpressionError, UnclosedParenthesis) {
  caught e = parse_failure("min(A, B");
  EXPECT_EQ(e.message, "expected ')' to close '(' at column 4");
  EXPECT_EQ(e.column, 8u);
  e = parse_failure("(A + B C");
  EXPECT_EQ(e.message, "expected ')' to close '(' at column 1, found 'C'");
  EXPECT_EQ(e.column, 7u);
}

TEST(ExpressionError, FunctionsTakeTwoArguments) {
  caught e = parse_failure("ceil_div(1, 2, 3)");
  EXPECT_EQ(e.message, "ceil_div takes 2 arguments, got 3");
  EXPECT_EQ(e.column, 0u);
  e = parse_failure("x + min(1)");
  EXPECT_EQ(e.message, "min takes 2 arguments, got 1");
  EXPECT_EQ(e.column, 4u);
  EXPECT_EQ(parse_failure("max()").message, "max takes 2 arguments, got 0");
  e = parse_failure("min(1 2)");
  EXPECT_EQ(e.message, "unexpected '2' in the arguments of min; expected ',' or ')'");
  EXPECT_EQ(e.column, 6u);
  e = parse_failure("2 * foo(1, 2)");
  EXPECT_EQ(e.message, "unknown function 'foo'; the functions are ceil_div, min and max");
  EXPECT_EQ(e.column, 4u);
}

TEST(ExpressionError, Overflow) {
  const std::int64_t big = std::int64_t{1} << 32;
  const caught e = evaluate_failure("1 + B*C", {{"B", big}, {"C", big}});
  EXPECT_EQ(e.message, "integer overflow in 'B*C' (4294967296 * 4294967296)");
  EXPECT_EQ(e.column, 5u);
  EXPECT_EQ(evaluate_failure("9223372036854775807 + 1", {}).column, 20u);
  EXPECT_EQ(evaluate_failure("0 - 9223372036854775807 - 2", {}).column, 24u);
  const symbol_table minimum{{"X", std::numeric_limits<std::int64_t>::min()}};
  EXPECT_EQ(evaluate_failure("-X", minimum).message,
            "integer overflow in '-X' (-(-9223372036854775808))");
  EXPECT_EQ(evaluate_failure("X / -1", minimum).column, 2u);
}

TEST(ExpressionError, CeilDivNeedsAPositiveDivisor) {
  caught e = evaluate_failure("ceil_div(N, 0)", {{"N", 4}});
  EXPECT_EQ(e.message, "ceil_div by zero in 'ceil_div(N, 0)'");
  EXPECT_EQ(e.column, 0u);
  e = evaluate_failure("1 + ceil_div(N, -2)", {{"N", 4}});
  EXPECT_EQ(e.message, "ceil_div with negative divisor -2 in 'ceil_div(N, -2)'");
  EXPECT_EQ(e.column, 4u);
}

TEST(ExpressionError, Empty) {
  EXPECT_EQ(parse_failure("").message, "empty expression");
  const caught e = parse_failure("   ");
  EXPECT_EQ(e.message, "empty expression");
  EXPECT_EQ(e.column, 0u);
}

TEST(ExpressionError, UnexpectedCharacter) {
  const caught e = parse_failure("B $ C");
  EXPECT_EQ(e.message.substr(0, 26), "unexpected character '$'; ");
  EXPECT_EQ(e.column, 2u);
  EXPECT_EQ(parse_failure("B\x01").message.substr(0, 30), "unexpected character byte 0x01");
}

TEST(ExpressionError, MisplacedTokens) {
  caught e = parse_failure("2 3");
  EXPECT_EQ(e.message, "unexpected '3'; expected an operator (+ - * / %) or the end of the "
                       "expression");
  EXPECT_EQ(e.column, 2u);
  e = parse_failure("N *");
  EXPECT_EQ(e.message, "unexpected end of expression; expected a number, a name, '-' or '('");
  EXPECT_EQ(e.column, 3u);
  e = parse_failure("N * / 2");
  EXPECT_EQ(e.message, "unexpected '/'; expected a number, a name, '-' or '('");
  EXPECT_EQ(e.column, 4u);
  e = parse_failure("(N))");
  EXPECT_EQ(e.message, "unmatched ')'");
  EXPECT_EQ(e.column, 3u);
  EXPECT_EQ(parse_failure("min(1,)").column, 6u);
}

TEST(ExpressionError, BadLiterals) {
  caught e = parse_failure("1 + 4x");
  EXPECT_EQ(e.message, "malformed number '4x'; numbers are decimal digits only");
  EXPECT_EQ(e.column, 4u);
  e = parse_failure("9223372036854775808");
  EXPECT_EQ(e.message, "integer literal '9223372036854775808' does not fit in 64 bits");
  EXPECT_EQ(e.column, 0u);
}

TEST(ExpressionError, DeepNestingIsRefused) {
  const std::string text = std::string(1000, '(') + "1" + std::string(1000, ')');
  EXPECT_EQ(parse_failure(text).message.substr(0, 31), "expression nested too deeply (m");
  const std::string minuses = std::string(1000, '-') + "1";
  EXPECT_EQ(parse_failure(minuses).message.substr(0, 28), "expression nested too deeply");
  EXPECT_EQ(eval(std::string(50, '(') + "7" + std::string(50, ')')), 7);
}

}  // namespace
}  // namespace blaster
