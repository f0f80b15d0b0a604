#pragma once

#include <filesystem>
#include <vector>

namespace blaster {

// Whether this kernel can confine a process's file access (Linux Landlock).
bool file_confinement_available();

// Confines this process, for the rest of its life, to reading files beneath `readable` and to
// anything beneath `writable`: every other open fails with EACCES, whatever path names it.
// Files already open stay usable. Returns false, changing nothing, where the kernel lacks
// Landlock; throws blaster::error when the kernel has it and refuses the rules.
bool confine_file_access(const std::vector<std::filesystem::path>& readable,
                         const std::filesystem::path& writable);

}  // namespace blaster
