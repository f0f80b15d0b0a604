#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

namespace blaster {

// The GPU a process times on, held for as long as the lock lives: another blaster process that
// asks for the same GPU (any home, any user) waits until it is released, so that two runs never
// time their kernels side by side and every request queues per GPU. The operating system
// releases it when its holder exits, however it exits.
class device_lock {
 public:
  // Waits for `device` (see visible_device()); before waiting, tells `waiting` who holds it.
  device_lock(const std::string& device, const std::function<void(const std::string&)>& waiting);
  ~device_lock();
  device_lock(const device_lock&) = delete;
  device_lock& operator=(const device_lock&) = delete;

  [[nodiscard]] bool waited() const { return waited_; }

 private:
  int fd_ = -1;
  bool waited_ = false;
};

// The entries of CUDA_VISIBLE_DEVICES (indices or UUIDs), in order, each without the blanks around
// it: entry k is the GPU that CUDA calls device k in this process. None where it is unset.
std::vector<std::string> visible_devices();

// The GPU that CUDA calls device 0 in this process: the first of visible_devices(), or "0".
std::string visible_device();

// $BLASTER_LOCK_DIR (default /tmp)/blaster-gpu-<device>.lock.
std::filesystem::path device_lock_path(const std::string& device);

}  // namespace blaster
