#pragma once

#include <filesystem>
#include <string>
#include <string_view>

namespace blaster {

// The whole file; a missing or unreadable file is an input_error naming the path.
std::string read_file(const std::filesystem::path& path);

// Writes through a temporary file in the same folder, fsyncs it, renames it over the target
// and fsyncs the folder: readers see the old content or the new, never a torn file.
void write_file_atomically(const std::filesystem::path& path, std::string_view bytes);

}  // namespace blaster
