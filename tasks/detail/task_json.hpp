#pragma once

#include <filesystem>

#include "tasks/task_spec.hpp"

namespace blaster::detail {

// The task at dir from its task.json at path, read and checked as load_task says.
task_spec read_task_json(const std::filesystem::path& dir, const std::filesystem::path& path);

}  // namespace blaster::detail
