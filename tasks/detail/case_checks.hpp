#pragma once

#include <optional>
#include <string>

#include "core/json_reader.hpp"
#include "tasks/task_spec.hpp"

namespace blaster::detail {

// Checks each case of a task just read: every expression evaluates in it, its buffers hold no
// more than max_case_bytes (max_checked_case_bytes unless it is large), and its int_range bounds
// are in order. A failure is r's input_error, naming the task file and the JSON path.
void check_cases(const task_spec& task, const json_reader& r);

// Why buffer b's integer draw `d` cannot be made in case c: its low above its high, or more
// distinct values (of the buffer, or of each row) than its range holds. nullopt where it can.
std::optional<std::string> integer_draw_problem(const task_spec& task, const buffer_spec& b,
                                                const task_case& c, const distribution& d);

// Refuses a task an input of which its storage type cannot hold in most draws
// (input_saturation.hpp), in any case or at the ends of its ranges: r's input_error at the
// distribution's JSON path, naming the buffer, the case and the fix.
void refuse_saturated_inputs(const task_spec& task, const json_reader& r);

}  // namespace blaster::detail
