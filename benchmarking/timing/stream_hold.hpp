#pragma once

#include <cuda.h>

#include <string>
#include <string_view>

#include "benchmarking/timing/internal_kernel.hpp"

namespace blaster {

class compile_cache;

// A kernel of the harness's own that holds its stream for a while: the launches enqueued behind
// it wait there, and then run back to back, as a timing's launches do, however long the host
// took to enqueue each one.
class stream_hold {
 public:
  stream_hold(const std::string& arch, compile_cache* cache);

  // What the device calls the kernel, so that a record of what ran can leave it out.
  static constexpr std::string_view kernel_name = "blaster_stream_hold";

  void operator()(double us, CUstream stream) const;

 private:
  internal_kernel kernel_;
};

}  // namespace blaster
