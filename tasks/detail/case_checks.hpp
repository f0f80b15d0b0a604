#pragma once

#include "core/json_reader.hpp"
#include "tasks/task_spec.hpp"

namespace blaster::detail {

// Checks each case of a task just read: every expression evaluates in it, its buffers hold no
// more than max_case_bytes (max_checked_case_bytes unless it is large), and its int_range bounds
// are in order. A failure is r's input_error, naming the task file and the JSON path.
void check_cases(const task_spec& task, const json_reader& r);

// Refuses a task an input of which its storage type cannot hold in most draws
// (input_saturation.hpp), in any case or at the ends of its ranges: r's input_error at the
// distribution's JSON path, naming the buffer, the case and the fix.
void refuse_saturated_inputs(const task_spec& task, const json_reader& r);

}  // namespace blaster::detail
