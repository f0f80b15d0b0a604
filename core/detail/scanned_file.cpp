#include "core/detail/scanned_file.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "core/detail/preprocessor_text.hpp"
#include "core/error.hpp"

namespace blaster::detail {

scanned_file::scanned_file(std::string_view source, std::string_view name)
    : source_(source), name_(name) {
  text_.reserve(source.size());
  origin_.reserve(source.size() + 1);
  line_starts_.push_back(0);
  source_lines_.push_back(0);
  for (std::size_t i = 0; i < source.size(); ++i) {
    if (source[i] == '\n') source_lines_.push_back(i + 1);
  }
  std::size_t i = 0;
  while (i < source.size()) {
    if (source[i] == '\\') {
      std::size_t j = i + 1;
      while (j < source.size() && is_blank(source[j])) ++j;
      if (j < source.size() && source[j] == '\n') {
        i = j + 1;
        line_starts_.push_back(text_.size());
        continue;
      }
    }
    text_ += source[i];
    origin_.push_back(i);
    if (source[i] == '\n' || source[i] == '\r') line_starts_.push_back(text_.size());
    ++i;
  }
  origin_.push_back(source.size());
}

std::string scanned_file::where(std::size_t at) const {
  const std::size_t offset = origin_[std::min(at, origin_.size() - 1)];
  const auto next = std::upper_bound(source_lines_.begin(), source_lines_.end(), offset);
  const auto line = static_cast<std::size_t>(next - source_lines_.begin());
  return fmt::format("{}:{}:{}", name_, line, offset - *(next - 1) + 1);
}

void scanned_file::fail(std::size_t at, std::string_view message) const {
  BLASTER_INPUT_ERROR("{}: {}", where(at), message);
}

}  // namespace blaster::detail
