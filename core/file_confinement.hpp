#pragma once

#include <filesystem>
#include <vector>

namespace blaster {

// The version of Linux Landlock's ABI this kernel offers (1 from Linux 5.13; 3 adds truncation,
// 6 the scoping of signals), or 0 where it has none: no file confinement here.
int file_confinement_abi();

// Whether this kernel can confine a process's file access (Linux Landlock).
bool file_confinement_available();

// What a confined process may do beneath one folder, or with one file.
enum class file_access {
  read,          // read files and list folders
  read_execute,  // read, list, and run programs
  read_write,    // read and write files that are there (a device such as /dev/null), nothing more
  everything,    // also create, remove, rename, link and truncate
};

struct file_rule {
  std::filesystem::path path;
  file_access access;
};

// Confines this process and every process it starts, for the rest of their lives, to the
// accesses the rules grant: any other open, creation, removal, rename or truncation fails with
// EACCES, whatever path names the file. Files already open stay usable; reading metadata
// (stat, readlink) is not confined. With `scope_signals`, where the kernel can (ABI 6), the
// process may then signal only processes confined with it. Returns the ABI the rules were applied
// with, or 0, changing nothing, where the kernel lacks Landlock; throws blaster::error when the
// kernel has it and refuses the rules.
int confine_files(const std::vector<file_rule>& rules, bool scope_signals = false);

// confine_files: read access beneath `readable`, every access beneath `writable`. Returns false,
// changing nothing, where the kernel lacks Landlock.
bool confine_file_access(const std::vector<std::filesystem::path>& readable,
                         const std::filesystem::path& writable);

}  // namespace blaster
