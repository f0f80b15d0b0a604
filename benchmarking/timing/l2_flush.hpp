#pragma once

#include <cuda.h>

#include <string>
#include <string_view>

#include "benchmarking/timing/internal_kernel.hpp"
#include "core/device_buffer.hpp"

namespace blaster {

class compile_cache;

// Empties the L2 before a cold launch: a buffer twice the L2 is written, which evicts every line
// (the context sets no L2 aside for persisting accesses, so a kernel's evict_last hints keep
// none), and then read, which writes the flush's own dirty lines back before the launch. What stays
// behind is clean, so the timed kernel pays no write-back of the flush's data (Nsight Compute's
// cache control leaves the L2 clean too).
class l2_flush {
 public:
  l2_flush(int l2_bytes, const std::string& arch, compile_cache* cache);

  // What the device calls the read's kernel, so that a record of what ran can leave it out.
  static constexpr std::string_view kernel_name = "blaster_l2_sweep";

  // Enqueued on `stream`, before the timed region.
  void operator()(CUstream stream);
  // The read alone, over the buffer a flush filled: it writes nothing back of its own, so the
  // DRAM writes while it runs are the dirty lines that the work before it left in the L2. Then
  // each thread drops the lines it read, so that the next kernel starts on an empty L2, as under
  // Nsight Compute's cache control, rather than one full of the sweep's clean lines, which it
  // would replace in another order. Every block is resident at once, so the whole buffer is read,
  // twice the L2, before the first line is dropped.
  void evict_and_drop(CUstream stream, int sm_count);

 private:
  // The read alone, with every line it read kept.
  void evict(CUstream stream);
  void launch(CUstream stream, unsigned grid, int drop);

  cuda::device_buffer buffer_;
  cuda::device_buffer sink_;
  internal_kernel sweep_;
  unsigned resident_grid_ = 0;  // blocks that fit on the device at once, found on first use
};

}  // namespace blaster
