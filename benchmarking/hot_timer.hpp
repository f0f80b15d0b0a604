#pragma once

#include <functional>
#include <string>
#include <vector>

#include <cuda.h>

namespace blaster {

namespace cuda {
class stream;
}

// Hot mode: each sample is `inner` back-to-back launches between two CUDA events, with the
// inner count calibrated so that a sample lasts about target_sample_ms. Caches stay warm.
struct hot_timing_options {
  double target_sample_ms = 1.0;  // [milliseconds]
  int warmup_launches = 3;
  int samples = 30;
  double budget_ms = 2000.0;  // [milliseconds] stop early past this, with at least min_samples
  int min_samples = 10;
};

struct timing_samples {
  std::string mode = "hot";
  int inner = 1;                  // launches per sample
  std::vector<double> sample_us;  // [microseconds] per launch, one value per sample
  double median_us = 0.0;         // [microseconds]
};

// `enqueue` puts one complete run of the plan on the stream.
timing_samples time_hot(const std::function<void(CUstream)>& enqueue, const cuda::stream& stream,
                        const hot_timing_options& options);

}  // namespace blaster
