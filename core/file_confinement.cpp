#include "core/file_confinement.hpp"

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>

#include "core/error.hpp"

#if __has_include(<linux/landlock.h>) && defined(SYS_landlock_create_ruleset)
#include <linux/landlock.h>
#define BLASTER_HAVE_LANDLOCK 1
#endif

namespace blaster {

#ifdef BLASTER_HAVE_LANDLOCK
namespace {

// Every file right of Landlock's first ABI, which every kernel with Landlock knows: the rules
// leave out only what they grant.
constexpr std::uint64_t all_file_rights =
    LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_READ_FILE |
    LANDLOCK_ACCESS_FS_READ_DIR | LANDLOCK_ACCESS_FS_REMOVE_DIR | LANDLOCK_ACCESS_FS_REMOVE_FILE |
    LANDLOCK_ACCESS_FS_MAKE_CHAR | LANDLOCK_ACCESS_FS_MAKE_DIR | LANDLOCK_ACCESS_FS_MAKE_REG |
    LANDLOCK_ACCESS_FS_MAKE_SOCK | LANDLOCK_ACCESS_FS_MAKE_FIFO | LANDLOCK_ACCESS_FS_MAKE_BLOCK |
    LANDLOCK_ACCESS_FS_MAKE_SYM;
constexpr std::uint64_t read_rights = LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR;

class descriptor {
 public:
  explicit descriptor(int fd) : fd_(fd) {}
  ~descriptor() {
    if (fd_ >= 0) ::close(fd_);
  }
  descriptor(const descriptor&) = delete;
  descriptor& operator=(const descriptor&) = delete;
  [[nodiscard]] int get() const { return fd_; }

 private:
  int fd_;
};

void allow_beneath(int ruleset, const std::filesystem::path& folder, std::uint64_t rights) {
  const descriptor dir(::open(folder.c_str(), O_PATH | O_CLOEXEC));
  if (dir.get() < 0) {
    BLASTER_THROW("confining file access: open({}): {}", folder.string(), std::strerror(errno));
  }
  landlock_path_beneath_attr rule{};
  rule.allowed_access = rights;
  rule.parent_fd = dir.get();
  if (::syscall(SYS_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &rule, 0) != 0) {
    BLASTER_THROW("confining file access: landlock_add_rule({}): {}", folder.string(),
                  std::strerror(errno));
  }
}

}  // namespace

bool file_confinement_available() {
  return ::syscall(SYS_landlock_create_ruleset, nullptr, 0, LANDLOCK_CREATE_RULESET_VERSION) >= 1;
}

bool confine_file_access(const std::vector<std::filesystem::path>& readable,
                         const std::filesystem::path& writable) {
  if (!file_confinement_available()) return false;
  landlock_ruleset_attr attributes{};
  attributes.handled_access_fs = all_file_rights;
  const descriptor ruleset(
      static_cast<int>(::syscall(SYS_landlock_create_ruleset, &attributes, sizeof attributes, 0)));
  if (ruleset.get() < 0) {
    BLASTER_THROW("confining file access: landlock_create_ruleset: {}", std::strerror(errno));
  }
  for (const auto& folder : readable) allow_beneath(ruleset.get(), folder, read_rights);
  allow_beneath(ruleset.get(), writable, all_file_rights);
  // Landlock asks that the process can gain no privileges, so that the rules cannot be shed.
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
      ::syscall(SYS_landlock_restrict_self, ruleset.get(), 0) != 0) {
    BLASTER_THROW("confining file access: landlock_restrict_self: {}", std::strerror(errno));
  }
  return true;
}

#else

bool file_confinement_available() { return false; }

bool confine_file_access(const std::vector<std::filesystem::path>&, const std::filesystem::path&) {
  return false;
}

#endif

}  // namespace blaster
