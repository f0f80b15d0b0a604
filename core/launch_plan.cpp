#include "core/launch_plan.hpp"

#include "core/detail/plan_reader.hpp"

namespace blaster {

using detail::is_identifier_char;
using detail::is_identifier_start;

launch_plan parse_launch_plan(std::string_view source, std::string_view file_name) {
  return detail::read_launch_plan(source, file_name);
}

launch_plan parse_launch_plan_json(std::string_view source, std::string_view file_name,
                                   std::size_t json_begin, std::size_t json_end,
                                   plan_dialect dialect) {
  return detail::read_launch_plan_json(source, file_name, json_begin, json_end, dialect);
}

std::int64_t evaluate_at(const plan_expression& e, const symbol_table& symbols,
                         std::string_view file_name) {
  try {
    return e.expr.evaluate(symbols);
  } catch (const expression_error& error) {
    BLASTER_INPUT_ERROR("{}:{}:{}: {}", file_name, e.where.line,
                        e.where.column + static_cast<int>(error.column()), error.what());
  }
}

std::vector<std::map<std::string, std::string>> expand_params(const launch_plan& plan) {
  std::vector<std::map<std::string, std::string>> out;
  // An odometer over the value indices; the last param turns fastest.
  std::vector<std::size_t> index(plan.params.size(), 0);
  while (true) {
    std::map<std::string, std::string>& config = out.emplace_back();
    for (std::size_t p = 0; p < plan.params.size(); ++p) {
      config[plan.params[p].first] = plan.params[p].second[index[p]];
    }
    std::size_t p = plan.params.size();
    while (p > 0 && ++index[p - 1] == plan.params[p - 1].second.size()) index[--p] = 0;
    if (p == 0) return out;
  }
}

std::string instantiate_kernel_name(std::string_view kernel,
                                    const std::map<std::string, std::string>& params) {
  std::string out;
  std::size_t i = 0;
  while (i < kernel.size()) {
    if (!is_identifier_char(kernel[i])) {
      out += kernel[i++];
      continue;
    }
    // A whole word: an identifier, or a number such as 4u that must not lose its suffix.
    const std::size_t begin = i;
    while (i < kernel.size() && is_identifier_char(kernel[i])) ++i;
    const std::string word(kernel.substr(begin, i - begin));
    const auto found = is_identifier_start(word.front()) ? params.find(word) : params.end();
    out += found == params.end() ? word : found->second;
  }
  return out;
}

}  // namespace blaster
