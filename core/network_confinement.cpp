#include "core/network_confinement.hpp"

#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstring>
#include <vector>

#include "core/error.hpp"

namespace blaster {

#if defined(__x86_64__)
#define BLASTER_AUDIT_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define BLASTER_AUDIT_ARCH AUDIT_ARCH_AARCH64
#endif

bool deny_new_sockets() {
#if defined(BLASTER_AUDIT_ARCH) && defined(SECCOMP_MODE_FILTER)
  constexpr auto arch_offset = static_cast<unsigned>(offsetof(seccomp_data, arch));
  constexpr auto nr_offset = static_cast<unsigned>(offsetof(seccomp_data, nr));
  constexpr unsigned deny = SECCOMP_RET_ERRNO | (EACCES & SECCOMP_RET_DATA);
  std::vector<sock_filter> program = {
      // A system call of another ABI (32-bit x86's socketcall, say) is denied whole.
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, arch_offset),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, BLASTER_AUDIT_ARCH, 1, 0),
      BPF_STMT(BPF_RET | BPF_K, deny),
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, nr_offset),
#if defined(__x86_64__)
      // x32 system calls share the architecture and set this bit.
      BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000U, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, deny),
#endif
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_socket, 2, 0),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_io_uring_setup, 1, 0),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
      BPF_STMT(BPF_RET | BPF_K, deny),
  };
  const sock_fprog filter{.len = static_cast<unsigned short>(program.size()),
                          .filter = program.data()};
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
    BLASTER_THROW("denying sockets: prctl(PR_SET_NO_NEW_PRIVS): {}", std::strerror(errno));
  }
  if (::prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &filter) != 0) {
    if (errno == EINVAL) return false;  // a kernel without seccomp filters
    BLASTER_THROW("denying sockets: prctl(PR_SET_SECCOMP): {}", std::strerror(errno));
  }
  return true;
#else
  return false;
#endif
}

}  // namespace blaster
