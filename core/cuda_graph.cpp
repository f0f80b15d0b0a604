#include "core/cuda_graph.hpp"

#include "core/cuda_driver.hpp"
#include "core/cuda_stream.hpp"

namespace blaster::cuda {

graph::graph(const stream& on, const std::function<void(CUstream)>& enqueue) {
  const driver_api& api = driver();
  // Relaxed: the harness's own calls during capture (none that allocate) are not the
  // candidate's, and a candidate has no host code that could call anything.
  check(api.cuStreamBeginCapture(on.get(), CU_STREAM_CAPTURE_MODE_RELAXED),
        "cuStreamBeginCapture");
  try {
    enqueue(on.get());
  } catch (...) {
    CUgraph discarded = nullptr;
    api.cuStreamEndCapture(on.get(), &discarded);
    if (discarded != nullptr) api.cuGraphDestroy(discarded);
    throw;
  }
  check(api.cuStreamEndCapture(on.get(), &graph_), "cuStreamEndCapture");
  if (CUresult status = api.cuGraphInstantiateWithFlags(&exec_, graph_, 0);
      status != CUDA_SUCCESS) {
    api.cuGraphDestroy(graph_);
    check(status, "cuGraphInstantiateWithFlags");
  }
}

graph::~graph() {
  const driver_api& api = driver();
  if (exec_ != nullptr) api.cuGraphExecDestroy(exec_);
  if (graph_ != nullptr) api.cuGraphDestroy(graph_);
}

void graph::launch(const stream& on) const {
  check(driver().cuGraphLaunch(exec_, on.get()), "cuGraphLaunch");
}

}  // namespace blaster::cuda
