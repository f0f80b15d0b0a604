#include "cli/error_report.hpp"

#include <cmath>
#include <regex>

#include <fmt/format.h>

namespace blaster::cli {

nlohmann::json error_json(std::string_view code, std::string_view text) {
  const std::string message(text);
  nlohmann::json file = nullptr;
  nlohmann::json line = nullptr;
  // "path:12:5: ..." or "path:12: ..." names a place; "path: ..." names only the file, where the
  // first word looks like a path (flags such as "--root DIR:" are not files).
  static const std::regex place(R"(^([^\s:]+):(\d+)(?::\d+)?: )");
  static const std::regex named_file(R"(^([^\s:-][^\s:]*[/.][^\s:]*): )");
  std::smatch m;
  if (std::regex_search(message, m, place)) {
    file = m[1].str();
    line = std::stoll(m[2].str());
  } else if (std::regex_search(message, m, named_file)) {
    file = m[1].str();
  }
  // The fix follows the last "; " of a message, as in "...: no such run; see blaster runs".
  nlohmann::json hint = nullptr;
  if (const std::size_t at = message.rfind("; "); at != std::string::npos) {
    hint = message.substr(at + 2);
  }
  return {{"error",
           {{"code", std::string(code)},
            {"message", message},
            {"file", file},
            {"line", line},
            {"hint", hint}}}};
}

CLI::Validator finite_range(double low, double high) {
  return CLI::Validator(
      [low, high](std::string& input) -> std::string {
        double value = 0;
        if (!CLI::detail::lexical_cast(input, value)) {
          return fmt::format("{} is not a number", input);
        }
        // Written so that NaN, for which every comparison is false, fails it.
        if (!(value >= low && value <= high)) {
          return fmt::format("{} is not in [{:g}, {:g}]", input, low, high);
        }
        return {};
      },
      fmt::format("NUMBER in [{:g} - {:g}]", low, high));
}

CLI::Validator whole_number_at_least(std::uint64_t low) {
  return CLI::Validator(
      [low](std::string& input) -> std::string {
        std::uint64_t value = 0;
        // A minus sign is refused here: lexical_cast would wrap "-1" around to 2^64 - 1.
        if (input.find('-') != std::string::npos || !CLI::detail::lexical_cast(input, value) ||
            value < low) {
          return fmt::format("{} is not a whole number of at least {}", input, low);
        }
        return {};
      },
      fmt::format("WHOLE NUMBER >= {}", low));
}

void refuse_empty_values(CLI::App& app) {
  const CLI::Validator non_empty(
      [](std::string& input) -> std::string {
        return input.empty() ? "an empty value; give one, or leave the flag out" : std::string();
      },
      "");
  for (CLI::Option* option : app.get_options()) {
    if (option->get_items_expected_min() > 0) option->check(non_empty);
  }
  for (CLI::App* sub : app.get_subcommands({})) refuse_empty_values(*sub);
}

}  // namespace blaster::cli
