#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"

namespace blaster {

// Values of the task's symbols (B, C, H, W, ...) and of derived quantities.
using symbol_table = std::map<std::string, std::int64_t, std::less<>>;

// A parse or evaluation error in one expression. column() is the 0-based byte offset into the
// expression's text, so that a caller that knows where the text sits (a launch plan in a .cu
// file) can point at the exact character. Columns inside the message are 1-based, as people count.
class expression_error : public input_error {
 public:
  expression_error(const std::string& message, std::size_t column);
  std::size_t column() const noexcept { return column_; }

 private:
  std::size_t column_;
};

// The integer expression language of launch plans: int64 literals, identifiers, + - * / % with
// the usual precedence and left associativity, unary minus, parentheses, and ceil_div(a, b),
// min(a, b), max(a, b). `/` and `%` truncate toward zero like C. Every overflow is an error,
// never a wrapped value: a wrong grid size must not launch silently.
class expression {
 public:
  // The literal 0, so that aggregates holding expressions can be default-constructed.
  expression();

  static expression parse(std::string_view text);

  std::int64_t evaluate(const symbol_table& symbols) const;

  const std::string& text() const noexcept { return text_; }
  // The identifiers it reads, sorted and unique.
  std::vector<std::string> symbols() const;
  // The whole text (ignoring surrounding whitespace) is one identifier: a buffer or symbol name.
  bool is_identifier() const;

 private:
  enum class op : std::uint8_t {
    literal,
    symbol,
    negate,
    add,
    sub,
    mul,
    div,
    mod,
    ceil_div,
    min,
    max
  };
  struct node {
    op kind = op::literal;
    std::int64_t value = 0;  // literal only
    std::string name;        // symbol only
    std::size_t column = 0;  // the operator, function or symbol, for error messages
    std::size_t begin = 0;   // [begin, end) of the subexpression's text
    std::size_t end = 0;
  };
  class parser;

  std::string text_;
  std::vector<node> nodes_;  // postfix order: evaluation needs one value stack, no recursion
};

std::int64_t evaluate(std::string_view text, const symbol_table& symbols);

}  // namespace blaster
