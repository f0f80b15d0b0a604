#include <gtest/gtest.h>

#include <string>

#include "core/cuda_module.hpp"
#include "core/nvrtc_compiler.hpp"

namespace blaster {
namespace {

// A kept worker's context serves the next evaluation only when the cubin cannot have left
// anything in the device heap; these are compiled by NVRTC as candidates are.
std::string cubin_of(const std::string& body) {
  compile_request request;
  request.source = "extern \"C\" __global__ void k(int* out) {" + body + "}\n";
  request.file_name = "heap.cu";
  const compile_output out = compile(request);
  EXPECT_TRUE(out.ok) << out.log;
  return out.cubin;
}

TEST(DeviceHeap, EveryWayToTheHeapIsFound) {
  EXPECT_TRUE(cuda::uses_device_heap(
      cubin_of("int* p = (int*)malloc(64); p[0] = 1; out[0] = p[0]; free(p);")));
  EXPECT_TRUE(cuda::uses_device_heap(cubin_of("int* p = new int[4]; p[0] = 1; out[0] = p[0];")));
  EXPECT_TRUE(cuda::uses_device_heap(
      cubin_of("int* p = (int*)__nv_aligned_device_malloc(64, 16); p[0] = 2; out[0] = p[0];")));
  // Only freeing, of a pointer handed in: the heap is reached all the same.
  EXPECT_TRUE(cuda::uses_device_heap(cubin_of("free(reinterpret_cast<void*>(out[1]));")));
}

TEST(DeviceHeap, KernelsWithoutItAreNot) {
  EXPECT_FALSE(cuda::uses_device_heap(cubin_of("out[threadIdx.x] = threadIdx.x;")));
  EXPECT_FALSE(cuda::uses_device_heap(cubin_of("printf(\"%d\\n\", out[0]);")));
  EXPECT_FALSE(cuda::uses_device_heap(
      cubin_of("__shared__ int s[32]; s[threadIdx.x % 32] = 1; __syncthreads(); out[0] = s[0];")));
}

}  // namespace
}  // namespace blaster
