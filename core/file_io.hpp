#pragma once

#include <sys/types.h>

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace blaster {

// The whole file; a missing or unreadable file is an input_error naming the path.
std::string read_file(const std::filesystem::path& path);

// The whole file, or nullopt when it does not exist; any other failure is a blaster::error.
std::optional<std::string> read_file_if_exists(const std::filesystem::path& path);

// Writes through a temporary file in the same folder (`<name>.tmp.<pid>.<random>`), fsyncs it,
// renames it over the target and fsyncs the folder: readers see the old content or the new,
// never a torn file, and the content survives a crash once this returns.
void write_file_atomically(const std::filesystem::path& path, std::string_view bytes,
                           mode_t mode = 0644);

// Removes, anywhere under root, the temporary files of writes whose process is gone. A temporary
// file of a live writer is kept, so that one process's start never breaks another's write.
void remove_abandoned_temp_files(const std::filesystem::path& root);

// Makes a new entry of the folder durable.
void fsync_folder(const std::filesystem::path& folder);

// strerror(code), and what to do where a user can fix it: a full disk, a read-only folder, the
// file size limit (ulimit -f, under which blaster ignores SIGXFSZ: a write fails with EFBIG).
std::string write_failure(int code);

}  // namespace blaster
