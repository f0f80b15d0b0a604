// --gpus: what it accepts, which GPUs it names and what each GPU's workers are shown, and the
// choices it refuses with the GPUs that are there.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "benchmarking/runner/gpu_choice.hpp"
#include "benchmarking/worker/worker_result.hpp"
#include "core/device_lock.hpp"
#include "core/error.hpp"

namespace blaster {
namespace {

cuda::device_properties gpu(const std::string& name, const std::string& uuid, int major = 9) {
  cuda::device_properties d;
  d.name = name;
  d.uuid = uuid;
  d.compute_major = major;
  return d;
}

const std::vector<cuda::device_properties> two_h200 = {gpu("NVIDIA H200", "GPU-aa"),
                                                       gpu("NVIDIA H200", "GPU-bb")};

std::string refusal(const gpu_choice& choice, const std::vector<cuda::device_properties>& devices) {
  try {
    static_cast<void>(resolve_gpu_choice(choice, devices, {}));
  } catch (const input_error& e) {
    return e.what();
  }
  return "accepted";
}

TEST(GpuChoice, AllOrNumbersSeparatedByCommas) {
  EXPECT_TRUE(parse_gpu_choice("all").all);
  EXPECT_EQ(parse_gpu_choice("0").ordinals, std::vector<int>{0});
  EXPECT_EQ(parse_gpu_choice("1,0,3").ordinals, (std::vector<int>{1, 0, 3}));
  EXPECT_EQ(to_string(parse_gpu_choice("1,0")), "1,0");
  EXPECT_FALSE(gpu_choice{}.given());
  for (const std::string bad : {"", "x", "0,", ",1", "1,,2", "-1", "0.5", "1 ", "ALL", "0x1"}) {
    try {
      static_cast<void>(parse_gpu_choice(bad));
      ADD_FAILURE() << "'" << bad << "' was accepted";
    } catch (const input_error& e) {
      EXPECT_NE(std::string(e.what()).find("give 'all' or GPU numbers"), std::string::npos)
          << e.what();
    }
  }
}

TEST(GpuChoice, EachGpuIsShownAloneAsThisProcessNumbersIt) {
  const auto lanes = resolve_gpu_choice(parse_gpu_choice("1,0"), two_h200, {});
  ASSERT_EQ(lanes.size(), 2U);
  EXPECT_EQ(lanes[0].ordinal, 1);
  EXPECT_EQ(lanes[0].visible, "1");
  EXPECT_EQ(lanes[0].device.uuid, "GPU-bb");
  EXPECT_EQ(lanes[1].visible, "0");
  // Under CUDA_VISIBLE_DEVICES this process's GPU k is the list's entry k, whatever it names.
  ::setenv("CUDA_VISIBLE_DEVICES", "GPU-bb, 3,7", 1);
  const auto pinned = resolve_gpu_choice(parse_gpu_choice("all"), two_h200, visible_devices());
  ::unsetenv("CUDA_VISIBLE_DEVICES");
  ASSERT_EQ(pinned.size(), 2U);
  EXPECT_EQ(pinned[0].visible, "GPU-bb");
  EXPECT_EQ(pinned[1].visible, "3");
}

TEST(GpuChoice, AGpuThatIsNotThereIsRefusedWithTheOnesThatAre) {
  const std::string one = refusal(parse_gpu_choice("0,1"), {gpu("NVIDIA H200", "GPU-aa")});
  EXPECT_NE(one.find("--gpus 0,1: there is no GPU 1; this machine shows 1 GPU (0: NVIDIA H200)"),
            std::string::npos)
      << one;
  EXPECT_NE(refusal(parse_gpu_choice("all"), {}).find("this machine shows no GPU"),
            std::string::npos);
  EXPECT_NE(refusal(parse_gpu_choice("0,1,0"), two_h200).find("GPU 0 is named twice"),
            std::string::npos);
}

TEST(GpuChoice, GpusOfTwoModelsAreRefused) {
  const std::string mixed = refusal(
      parse_gpu_choice("all"), {gpu("NVIDIA H200", "GPU-aa"), gpu("NVIDIA A100", "GPU-cc", 8)});
  EXPECT_NE(mixed.find("GPU 0 (NVIDIA H200) and GPU 1 (NVIDIA A100) are of two models"),
            std::string::npos)
      << mixed;
  // One of them alone is a choice of one model.
  EXPECT_EQ(refusal(parse_gpu_choice("1"),
                    {gpu("NVIDIA H200", "GPU-aa"), gpu("NVIDIA A100", "GPU-cc", 8)}),
            "accepted");
}

TEST(GpuChoice, TheWorkersListTravelsInItsResult) {
  worker_result listed;
  listed.devices = two_h200;
  const worker_result back = worker_result_from_json(to_json(listed));
  ASSERT_TRUE(back.devices.has_value());
  ASSERT_EQ(back.devices->size(), 2U);
  EXPECT_EQ((*back.devices)[1].uuid, "GPU-bb");
  EXPECT_FALSE(worker_result_from_json(to_json(worker_result{})).devices.has_value());
}

}  // namespace
}  // namespace blaster
