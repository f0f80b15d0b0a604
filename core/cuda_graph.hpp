#pragma once

#include <cuda.h>

#include <functional>

namespace blaster::cuda {

class stream;

// Work captured once from a stream into an executable graph and replayed with one launch: the
// host's submission cost is paid once per replay, not once per kernel.
class graph {
 public:
  // Captures what `enqueue` puts on the stream (nothing runs during capture).
  graph(const stream& on, const std::function<void(CUstream)>& enqueue);
  ~graph();
  graph(const graph&) = delete;
  graph& operator=(const graph&) = delete;

  void launch(const stream& on) const;

 private:
  CUgraph graph_ = nullptr;
  CUgraphExec exec_ = nullptr;
};

}  // namespace blaster::cuda
