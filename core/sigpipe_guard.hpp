#pragma once

#include <signal.h>

#include <cerrno>
#include <ctime>

namespace blaster {

// Blocks SIGPIPE on this thread while it lives, so that a write to a pipe whose reader is gone
// fails with EPIPE instead of ending blaster. A SIGPIPE such a write raised stays pending; it is
// taken before the mask is restored, since restoring would deliver it. One that was pending
// before is someone else's, and is left alone.
class sigpipe_blocked {
 public:
  sigpipe_blocked() {
    ::sigemptyset(&pipe_);
    ::sigaddset(&pipe_, SIGPIPE);
    ::pthread_sigmask(SIG_BLOCK, &pipe_, &old_);
    sigset_t pending;
    ::sigpending(&pending);
    was_pending_ = ::sigismember(&pending, SIGPIPE) == 1;
  }
  ~sigpipe_blocked() {
    sigset_t pending;
    ::sigpending(&pending);
    if (!was_pending_ && ::sigismember(&pending, SIGPIPE) == 1) {
      const timespec now{};
      while (::sigtimedwait(&pipe_, nullptr, &now) < 0 && errno == EINTR) {
      }
    }
    ::pthread_sigmask(SIG_SETMASK, &old_, nullptr);
  }
  sigpipe_blocked(const sigpipe_blocked&) = delete;
  sigpipe_blocked& operator=(const sigpipe_blocked&) = delete;

 private:
  sigset_t pipe_{};
  sigset_t old_{};
  bool was_pending_ = false;
};

}  // namespace blaster
