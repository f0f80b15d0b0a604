#pragma once

#include <cuda.h>

namespace blaster::cuda {

// A non-blocking stream: the harness's only stream; candidates never see another.
class stream {
 public:
  stream();
  ~stream();
  stream(const stream&) = delete;
  stream& operator=(const stream&) = delete;

  [[nodiscard]] CUstream get() const noexcept { return handle_; }
  void synchronize() const;

 private:
  CUstream handle_ = nullptr;
};

// A timing event.
class event {
 public:
  event();
  ~event();
  event(const event&) = delete;
  event& operator=(const event&) = delete;

  [[nodiscard]] CUevent get() const noexcept { return handle_; }
  void record(const stream& on);
  void synchronize() const;

 private:
  CUevent handle_ = nullptr;
};

// Milliseconds between two recorded events, after waiting for the later one.
float elapsed_ms(const event& start, const event& stop);

}  // namespace blaster::cuda
