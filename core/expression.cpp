#include "core/expression.hpp"

#include <algorithm>
#include <limits>

#include <fmt/format.h>

namespace blaster {

namespace {

// Deep nesting only comes from hostile input; refuse it before it exhausts the stack.
constexpr int max_nesting = 200;

bool is_identifier_start(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
}
bool is_identifier_char(char c) { return is_identifier_start(c) || (c >= '0' && c <= '9'); }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

std::string describe_char(char c) {
  const auto byte = static_cast<unsigned char>(c);
  if (byte >= 0x20 && byte < 0x7f) return fmt::format("'{}'", c);
  return fmt::format("byte 0x{:02x}", byte);
}

enum class token_kind {
  number,
  identifier,
  plus,
  minus,
  star,
  slash,
  percent,
  lparen,
  rparen,
  comma,
  end
};

struct token {
  token_kind kind = token_kind::end;
  std::size_t begin = 0;
  std::size_t end = 0;
  std::int64_t value = 0;  // number only
};

std::vector<token> tokenize(std::string_view text) {
  std::vector<token> tokens;
  std::size_t i = 0;
  while (true) {
    while (i < text.size() && is_space(text[i])) ++i;
    if (i == text.size()) break;
    const std::size_t begin = i;
    const char c = text[i];
    if (is_digit(c)) {
      while (i < text.size() && is_digit(text[i])) ++i;
      if (i < text.size() && is_identifier_char(text[i])) {
        while (i < text.size() && is_identifier_char(text[i])) ++i;
        throw expression_error(fmt::format("malformed number '{}'; numbers are decimal digits only",
                                           text.substr(begin, i - begin)),
                               begin);
      }
      std::int64_t value = 0;
      for (std::size_t k = begin; k < i; ++k) {
        if (__builtin_mul_overflow(value, 10, &value) ||
            __builtin_add_overflow(value, text[k] - '0', &value)) {
          throw expression_error(fmt::format("integer literal '{}' does not fit in 64 bits",
                                             text.substr(begin, i - begin)),
                                 begin);
        }
      }
      tokens.push_back({token_kind::number, begin, i, value});
      continue;
    }
    if (is_identifier_start(c)) {
      while (i < text.size() && is_identifier_char(text[i])) ++i;
      tokens.push_back({token_kind::identifier, begin, i, 0});
      continue;
    }
    token_kind kind{};
    switch (c) {
      case '+':
        kind = token_kind::plus;
        break;
      case '-':
        kind = token_kind::minus;
        break;
      case '*':
        kind = token_kind::star;
        break;
      case '/':
        kind = token_kind::slash;
        break;
      case '%':
        kind = token_kind::percent;
        break;
      case '(':
        kind = token_kind::lparen;
        break;
      case ')':
        kind = token_kind::rparen;
        break;
      case ',':
        kind = token_kind::comma;
        break;
      default:
        throw expression_error(
            fmt::format("unexpected character {}; expressions use decimal numbers, names, "
                        "+ - * / %, parentheses, ceil_div, min and max",
                        describe_char(c)),
            begin);
    }
    ++i;
    tokens.push_back({kind, begin, i, 0});
  }
  tokens.push_back({token_kind::end, text.size(), text.size(), 0});
  return tokens;
}

}  // namespace

expression_error::expression_error(const std::string& message, std::size_t column)
    : input_error(message), column_(column) {}

// Recursive descent over the tokens, emitting nodes in postfix order.
class expression::parser {
 public:
  parser(std::string_view text, std::vector<node>& nodes)
      : text_(text), tokens_(tokenize(text)), nodes_(nodes) {}

  void parse() {
    if (peek().kind == token_kind::end) throw expression_error("empty expression", 0);
    parse_sum();
    const token& t = peek();
    if (t.kind == token_kind::rparen) throw expression_error("unmatched ')'", t.begin);
    if (t.kind != token_kind::end) {
      throw expression_error(
          fmt::format("unexpected {}; expected an operator (+ - * / %) or the end of the "
                      "expression",
                      describe(t)),
          t.begin);
    }
  }

 private:
  struct span {
    std::size_t begin;
    std::size_t end;
  };

  const token& peek() const { return tokens_[next_]; }
  const token& take() { return tokens_[next_++]; }

  std::string describe(const token& t) const {
    if (t.kind == token_kind::end) return "end of expression";
    return fmt::format("'{}'", text_.substr(t.begin, t.end - t.begin));
  }

  void emit(op kind, std::size_t column, span s) {
    node n;
    n.kind = kind;
    n.column = column;
    n.begin = s.begin;
    n.end = s.end;
    nodes_.push_back(std::move(n));
  }

  span parse_sum() {
    span lhs = parse_product();
    while (peek().kind == token_kind::plus || peek().kind == token_kind::minus) {
      const token& o = take();
      const span rhs = parse_product();
      lhs = {lhs.begin, rhs.end};
      emit(o.kind == token_kind::plus ? op::add : op::sub, o.begin, lhs);
    }
    return lhs;
  }

  span parse_product() {
    span lhs = parse_unary();
    while (peek().kind == token_kind::star || peek().kind == token_kind::slash ||
           peek().kind == token_kind::percent) {
      const token& o = take();
      const span rhs = parse_unary();
      lhs = {lhs.begin, rhs.end};
      emit(o.kind == token_kind::star    ? op::mul
           : o.kind == token_kind::slash ? op::div
                                         : op::mod,
           o.begin, lhs);
    }
    return lhs;
  }

  span parse_unary() {
    if (peek().kind != token_kind::minus) return parse_primary();
    const token& minus = take();
    enter(minus.begin);
    const span operand = parse_unary();
    --depth_;
    const span s{minus.begin, operand.end};
    emit(op::negate, minus.begin, s);
    return s;
  }

  span parse_primary() {
    const token& t = take();
    switch (t.kind) {
      case token_kind::number: {
        node n;
        n.kind = op::literal;
        n.value = t.value;
        n.column = n.begin = t.begin;
        n.end = t.end;
        nodes_.push_back(std::move(n));
        return {t.begin, t.end};
      }
      case token_kind::identifier:
        if (peek().kind == token_kind::lparen) return parse_call(t);
        {
          node n;
          n.kind = op::symbol;
          n.name = std::string(text_.substr(t.begin, t.end - t.begin));
          n.column = n.begin = t.begin;
          n.end = t.end;
          nodes_.push_back(std::move(n));
        }
        return {t.begin, t.end};
      case token_kind::lparen: {
        enter(t.begin);
        parse_sum();
        --depth_;
        const token& close = peek();
        if (close.kind != token_kind::rparen) throw unclosed(t, close);
        take();
        return {t.begin, close.end};
      }
      default:
        throw expression_error(
            fmt::format("unexpected {}; expected a number, a name, '-' or '('", describe(t)),
            t.begin);
    }
  }

  span parse_call(const token& name_token) {
    const std::string_view name = text_.substr(name_token.begin, name_token.end - name_token.begin);
    op kind{};
    if (name == "ceil_div") {
      kind = op::ceil_div;
    } else if (name == "min") {
      kind = op::min;
    } else if (name == "max") {
      kind = op::max;
    } else {
      throw expression_error(
          fmt::format("unknown function '{}'; the functions are ceil_div, min and max", name),
          name_token.begin);
    }
    const token& open = take();
    enter(open.begin);
    int count = 0;
    if (peek().kind != token_kind::rparen) {
      while (true) {
        parse_sum();
        ++count;
        const token& t = peek();
        if (t.kind == token_kind::comma) {
          take();
          continue;
        }
        if (t.kind == token_kind::rparen) break;
        if (t.kind == token_kind::end) throw unclosed(open, t);
        throw expression_error(
            fmt::format("unexpected {} in the arguments of {}; expected ',' or ')'", describe(t),
                        name),
            t.begin);
      }
    }
    const token& close = take();
    --depth_;
    if (count != 2) {
      throw expression_error(fmt::format("{} takes 2 arguments, got {}", name, count),
                             name_token.begin);
    }
    const span s{name_token.begin, close.end};
    emit(kind, name_token.begin, s);
    return s;
  }

  expression_error unclosed(const token& open, const token& found) const {
    std::string message = fmt::format("expected ')' to close '(' at column {}", open.begin + 1);
    if (found.kind != token_kind::end) message += fmt::format(", found {}", describe(found));
    return expression_error(message, found.begin);
  }

  void enter(std::size_t column) {
    if (++depth_ > max_nesting) {
      throw expression_error(
          fmt::format("expression nested too deeply (more than {} levels)", max_nesting), column);
    }
  }

  std::string_view text_;
  std::vector<token> tokens_;
  std::size_t next_ = 0;
  int depth_ = 0;
  std::vector<node>& nodes_;
};

expression::expression() : text_("0") { nodes_.push_back(node{op::literal, 0, {}, 0, 0, 1}); }

expression expression::parse(std::string_view text) {
  expression e;
  e.text_ = std::string(text);
  e.nodes_.clear();
  parser(e.text_, e.nodes_).parse();
  return e;
}

std::int64_t expression::evaluate(const symbol_table& symbols) const {
  std::vector<std::int64_t> stack;
  stack.reserve(nodes_.size());
  const std::string_view text = text_;
  for (const node& n : nodes_) {
    const auto where = text.substr(n.begin, n.end - n.begin);
    switch (n.kind) {
      case op::literal:
        stack.push_back(n.value);
        continue;
      case op::symbol: {
        const auto found = symbols.find(n.name);
        if (found == symbols.end()) {
          std::string known;
          for (const auto& [name, value] : symbols) {
            if (!known.empty()) known += ", ";
            known += name;
          }
          throw expression_error(
              known.empty() ? fmt::format("unknown symbol '{}' (no symbols are defined)", n.name)
                            : fmt::format("unknown symbol '{}' (known: {})", n.name, known),
              n.column);
        }
        stack.push_back(found->second);
        continue;
      }
      case op::negate: {
        const std::int64_t x = stack.back();
        if (__builtin_sub_overflow(std::int64_t{0}, x, &stack.back())) {
          throw expression_error(fmt::format("integer overflow in '{}' (-({}))", where, x),
                                 n.column);
        }
        continue;
      }
      default:
        break;
    }
    const std::int64_t b = stack.back();
    stack.pop_back();
    const std::int64_t a = stack.back();
    std::int64_t& r = stack.back();
    const auto overflow = [&](char symbol) {
      return expression_error(
          fmt::format("integer overflow in '{}' ({} {} {})", where, a, symbol, b), n.column);
    };
    switch (n.kind) {
      case op::add:
        if (__builtin_add_overflow(a, b, &r)) throw overflow('+');
        break;
      case op::sub:
        if (__builtin_sub_overflow(a, b, &r)) throw overflow('-');
        break;
      case op::mul:
        if (__builtin_mul_overflow(a, b, &r)) throw overflow('*');
        break;
      case op::div:
      case op::mod:
        if (b == 0) {
          throw expression_error(fmt::format("division by zero in '{}'", where), n.column);
        }
        if (b == -1) {
          // INT64_MIN / -1 does not fit, and C++ leaves both it and INT64_MIN % -1 undefined.
          if (n.kind == op::mod) {
            r = 0;
          } else if (__builtin_sub_overflow(std::int64_t{0}, a, &r)) {
            throw overflow('/');
          }
          break;
        }
        r = n.kind == op::div ? a / b : a % b;
        break;
      case op::ceil_div:
        if (b == 0) {
          throw expression_error(fmt::format("ceil_div by zero in '{}'", where), n.column);
        }
        if (b < 0) {
          throw expression_error(fmt::format("ceil_div with negative divisor {} in '{}'", b, where),
                                 n.column);
        }
        // Without a + b - 1, which could overflow; truncation already rounds up for a < 0.
        r = a / b + (a % b > 0 ? 1 : 0);
        break;
      case op::min:
        r = std::min(a, b);
        break;
      case op::max:
        r = std::max(a, b);
        break;
      default:
        break;
    }
  }
  return stack.back();
}

std::vector<std::string> expression::symbols() const {
  std::vector<std::string> names;
  for (const node& n : nodes_) {
    if (n.kind == op::symbol) names.push_back(n.name);
  }
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

bool expression::is_identifier() const {
  if (nodes_.size() != 1 || nodes_.front().kind != op::symbol) return false;
  // "(B)" is one symbol node too, but not a name a buffer could be looked up by.
  std::string_view trimmed = text_;
  while (!trimmed.empty() && is_space(trimmed.front())) trimmed.remove_prefix(1);
  while (!trimmed.empty() && is_space(trimmed.back())) trimmed.remove_suffix(1);
  return trimmed == nodes_.front().name;
}

std::int64_t evaluate(std::string_view text, const symbol_table& symbols) {
  return expression::parse(text).evaluate(symbols);
}

}  // namespace blaster
