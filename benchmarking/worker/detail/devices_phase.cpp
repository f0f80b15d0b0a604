// The devices: every GPU the worker sees, so that the parent, which never touches the driver,
// can choose among them (--gpus).
#include "benchmarking/worker/detail/phase_handler.hpp"
#include "core/cuda_driver.hpp"

namespace blaster::worker {
namespace {

class devices_handler final : public phase_handler {
 public:
  [[nodiscard]] bool needs_variant() const override { return false; }

 private:
  void do_run(worker_context& /*w*/, worker_result& result,
              std::optional<std::size_t>& /*current*/) const override {
    const auto& api = cuda::driver();
    int count = 0;
    cuda::check(api.cuDeviceGetCount(&count), "cuDeviceGetCount");
    result.devices.emplace();
    for (int i = 0; i < count; ++i) result.devices->push_back(cuda::query_device(i));
  }
};

}  // namespace

const phase_handler& devices_phase() {
  static const devices_handler handler;
  return handler;
}

}  // namespace blaster::worker
