#pragma once

namespace blaster {

// Denies this process and every process it starts, for the rest of their lives, any new socket
// (socket(2) fails with EACCES, and io_uring, which could open one, is unavailable): code that
// runs at compile time cannot reach the network or a local service. Pipes and socketpair(2)
// stay, as do descriptors already open. Returns false, changing nothing, where the kernel has no
// seccomp filters; throws blaster::error when it has them and refuses this one.
bool deny_new_sockets();

}  // namespace blaster
