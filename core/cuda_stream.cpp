#include "core/cuda_stream.hpp"

#include "core/cuda_driver.hpp"

namespace blaster::cuda {

stream::stream() {
  check(driver().cuStreamCreate(&handle_, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
}

stream::~stream() {
  if (handle_ != nullptr) driver().cuStreamDestroy(handle_);
}

void stream::synchronize() const {
  check(driver().cuStreamSynchronize(handle_), "cuStreamSynchronize");
}

event::event() { check(driver().cuEventCreate(&handle_, CU_EVENT_DEFAULT), "cuEventCreate"); }

event::~event() {
  if (handle_ != nullptr) driver().cuEventDestroy(handle_);
}

void event::record(const stream& on) {
  check(driver().cuEventRecord(handle_, on.get()), "cuEventRecord");
}

void event::synchronize() const {
  check(driver().cuEventSynchronize(handle_), "cuEventSynchronize");
}

float elapsed_ms(const event& start, const event& stop) {
  stop.synchronize();
  float ms = 0.0F;
  check(driver().cuEventElapsedTime(&ms, start.get(), stop.get()), "cuEventElapsedTime");
  return ms;
}

}  // namespace blaster::cuda
