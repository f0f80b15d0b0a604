#pragma once

#include <stdexcept>
#include <string>

#include <fmt/format.h>

namespace blaster {

// Something the user handed us is wrong: a task, a candidate, a flag, a file. The message is
// complete (where, what, how to fix it) and is printed as is; the command exits with code 2.
class input_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The machine or the harness failed: CUDA, NVRTC, I/O, SQLite. The message names the failing
// call and its arguments; the command exits with code 1.
class error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace blaster

#define BLASTER_THROW(...) throw ::blaster::error(::fmt::format(__VA_ARGS__))
#define BLASTER_INPUT_ERROR(...) throw ::blaster::input_error(::fmt::format(__VA_ARGS__))
