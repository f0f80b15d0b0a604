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

// Rights of later ABIs, which older headers lack; the kernel is asked for them only where its
// ABI has them.
constexpr std::uint64_t access_fs_refer = 1ULL << 13;     // ABI 2
constexpr std::uint64_t access_fs_truncate = 1ULL << 14;  // ABI 3
constexpr std::uint64_t scope_signal = 1ULL << 1;         // ABI 6

// Every file right of Landlock's first ABI, which every kernel with Landlock knows: the rules
// leave out only what they grant.
constexpr std::uint64_t first_abi_rights =
    LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_READ_FILE |
    LANDLOCK_ACCESS_FS_READ_DIR | LANDLOCK_ACCESS_FS_REMOVE_DIR | LANDLOCK_ACCESS_FS_REMOVE_FILE |
    LANDLOCK_ACCESS_FS_MAKE_CHAR | LANDLOCK_ACCESS_FS_MAKE_DIR | LANDLOCK_ACCESS_FS_MAKE_REG |
    LANDLOCK_ACCESS_FS_MAKE_SOCK | LANDLOCK_ACCESS_FS_MAKE_FIFO | LANDLOCK_ACCESS_FS_MAKE_BLOCK |
    LANDLOCK_ACCESS_FS_MAKE_SYM;
constexpr std::uint64_t read_rights = LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR;

// The file rights this ABI handles: unhandled, truncate(2) of any path would stay allowed (ABI
// 3), and a rename across folders would be refused even inside a writable one (ABI 2).
std::uint64_t handled_rights(int abi) {
  std::uint64_t rights = first_abi_rights;
  if (abi >= 2) rights |= access_fs_refer;
  if (abi >= 3) rights |= access_fs_truncate;
  return rights;
}

std::uint64_t rights_of(file_access access, int abi) {
  const std::uint64_t truncate = abi >= 3 ? access_fs_truncate : 0;
  switch (access) {
    case file_access::read:
      return read_rights;
    case file_access::read_execute:
      return read_rights | LANDLOCK_ACCESS_FS_EXECUTE;
    case file_access::read_write:
      return LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_WRITE_FILE | truncate;
    case file_access::everything:
      return handled_rights(abi);
  }
  return 0;
}

// The rights a rule on a file (not a folder) may name: the folder rights are refused there.
constexpr std::uint64_t file_only_rights = LANDLOCK_ACCESS_FS_EXECUTE |
                                           LANDLOCK_ACCESS_FS_WRITE_FILE |
                                           LANDLOCK_ACCESS_FS_READ_FILE | access_fs_truncate;

// The ruleset's attributes as ABI 6 lays them out; older kernels are given the first field only.
struct ruleset_attributes {
  std::uint64_t handled_access_fs = 0;
  std::uint64_t handled_access_net = 0;
  std::uint64_t scoped = 0;
};

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

void allow_beneath(int ruleset, const file_rule& rule, int abi) {
  const descriptor target(::open(rule.path.c_str(), O_PATH | O_CLOEXEC));
  if (target.get() < 0) {
    BLASTER_THROW("confining file access: open({}): {}", rule.path.string(),
                  std::strerror(errno));
  }
  std::uint64_t rights = rights_of(rule.access, abi);
  if (!std::filesystem::is_directory(rule.path)) rights &= file_only_rights;
  landlock_path_beneath_attr attribute{};
  attribute.allowed_access = rights;
  attribute.parent_fd = target.get();
  if (::syscall(SYS_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &attribute, 0) != 0) {
    BLASTER_THROW("confining file access: landlock_add_rule({}): {}", rule.path.string(),
                  std::strerror(errno));
  }
}

}  // namespace

int file_confinement_abi() {
  const long abi =
      ::syscall(SYS_landlock_create_ruleset, nullptr, 0, LANDLOCK_CREATE_RULESET_VERSION);
  return abi > 0 ? static_cast<int>(abi) : 0;
}

int confine_files(const std::vector<file_rule>& rules, bool scope_signals) {
  const int abi = file_confinement_abi();
  if (abi < 1) return 0;
  ruleset_attributes attributes;
  attributes.handled_access_fs = handled_rights(abi);
  std::size_t size = sizeof attributes.handled_access_fs;
  if (scope_signals && abi >= 6) {
    attributes.scoped = scope_signal;
    size = sizeof attributes;
  }
  const descriptor ruleset(
      static_cast<int>(::syscall(SYS_landlock_create_ruleset, &attributes, size, 0)));
  if (ruleset.get() < 0) {
    BLASTER_THROW("confining file access: landlock_create_ruleset: {}", std::strerror(errno));
  }
  for (const file_rule& rule : rules) allow_beneath(ruleset.get(), rule, abi);
  // Landlock asks that the process can gain no privileges, so that the rules cannot be shed.
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
      ::syscall(SYS_landlock_restrict_self, ruleset.get(), 0) != 0) {
    BLASTER_THROW("confining file access: landlock_restrict_self: {}", std::strerror(errno));
  }
  return abi;
}

#else

int file_confinement_abi() { return 0; }

int confine_files(const std::vector<file_rule>&, bool) { return 0; }

#endif

bool file_confinement_available() { return file_confinement_abi() >= 1; }

bool confine_file_access(const std::vector<std::filesystem::path>& readable,
                         const std::filesystem::path& writable) {
  std::vector<file_rule> rules;
  for (const auto& folder : readable) rules.push_back({folder, file_access::read});
  rules.push_back({writable, file_access::everything});
  return confine_files(rules) > 0;
}

}  // namespace blaster
