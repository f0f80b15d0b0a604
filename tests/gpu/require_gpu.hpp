#pragma once

#include <gtest/gtest.h>

#include <cstdlib>

#include "core/cuda_driver.hpp"

// GPU tests skip with the reason where there is no GPU, so CI stays green; under
// `scripts/test.sh --gpu-only` (BLASTER_REQUIRE_GPU=1) a missing GPU is a failure instead.
#define BLASTER_REQUIRE_GPU()                                                      \
  do {                                                                             \
    const std::string reason = ::blaster::cuda::driver_unavailable_reason();       \
    if (!reason.empty()) {                                                         \
      const char* required = std::getenv("BLASTER_REQUIRE_GPU");                   \
      if (required != nullptr && std::string(required) == "1") {                   \
        FAIL() << "BLASTER_REQUIRE_GPU=1 but there is no usable GPU: " << reason;  \
      }                                                                            \
      GTEST_SKIP() << "needs a GPU: " << reason;                                   \
    }                                                                              \
  } while (false)
