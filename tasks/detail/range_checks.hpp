#pragma once

#include "core/json_reader.hpp"
#include "tasks/task_spec.hpp"

namespace blaster::detail {

// Checks the symbol ranges of a task just read, once its cases are: "drawn" comes with ranges,
// every integer symbol without a default has one, bounds read integer symbols and not each other
// in a ring, every case lies within them, and the smallest allowed case can be drawn and fits
// drawn.max_bytes. A failure is r's input_error, naming the task file and the JSON path.
void check_ranges(const task_spec& task, const json_reader& r);

}  // namespace blaster::detail
