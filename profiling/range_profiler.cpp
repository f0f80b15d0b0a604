#include "profiling/range_profiler.hpp"

#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_target.h>

#include <cstdlib>
#include <set>

#include <fmt/format.h>

namespace blaster {
namespace {

std::string describe(CUptiResult result) {
  const char* text = nullptr;
  cuptiGetResultString(result, &text);
  return text != nullptr ? text : fmt::format("CUPTI error {}", static_cast<int>(result));
}

// Errors that say the machine cannot give counters are a normal state, not a failure.
void check(CUptiResult result, const char* what) {
  if (result == CUPTI_SUCCESS) return;
  switch (result) {
    case CUPTI_ERROR_INSUFFICIENT_PRIVILEGES:
      throw counters_unavailable(
          fmt::format("the driver does not permit GPU performance counters to this user "
                      "(ERR_NVGPUCTRPERM; see https://developer.nvidia.com/ERR_NVGPUCTRPERM), {}",
                      what));
    case CUPTI_ERROR_NOT_SUPPORTED:
    case CUPTI_ERROR_NOT_COMPATIBLE:
    case CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED:
    case CUPTI_ERROR_CMP_DEVICE_NOT_SUPPORTED:
    case CUPTI_ERROR_VIRTUALIZED_DEVICE_NOT_SUPPORTED:
      throw counters_unavailable(fmt::format("CUPTI cannot profile here: {} ({})",
                                             describe(result), what));
    default:
      throw std::runtime_error(fmt::format("{}: {}", what, describe(result)));
  }
}

// The metric's name before its rollup and submetric: dram__bytes_read.sum -> dram__bytes_read.
std::string base_name(const std::string& metric) { return metric.substr(0, metric.find('.')); }

std::set<std::string> chip_metrics(CUpti_Profiler_Host_Object* host) {
  std::set<std::string> names;
  for (CUpti_MetricType type :
       {CUPTI_METRIC_TYPE_COUNTER, CUPTI_METRIC_TYPE_RATIO, CUPTI_METRIC_TYPE_THROUGHPUT}) {
    CUpti_Profiler_Host_GetBaseMetrics_Params p{};
    p.structSize = CUpti_Profiler_Host_GetBaseMetrics_Params_STRUCT_SIZE;
    p.pHostObject = host;
    p.metricType = type;
    check(cuptiProfilerHostGetBaseMetrics(&p), "listing the chip's metrics");
    for (std::size_t i = 0; i < p.numMetrics; ++i) names.insert(p.ppMetricNames[i]);
  }
  return names;
}

}  // namespace

counter_configuration::counter_configuration(const std::string& chip,
                                             const std::vector<std::uint8_t>& availability,
                                             const std::vector<std::string>& metrics) {
  CUpti_Profiler_Host_Initialize_Params init{};
  init.structSize = CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE;
  init.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
  init.pChipName = chip.c_str();
  init.pCounterAvailabilityImage = availability.empty() ? nullptr : availability.data();
  check(cuptiProfilerHostInitialize(&init), "initializing the profiler host");
  host_ = init.pHostObject;
  try {
    const std::set<std::string> known = chip_metrics(host_);
    for (const auto& m : metrics) {
      (known.contains(base_name(m)) ? metrics_ : missing_).push_back(m);
    }
    if (metrics_.empty()) throw counters_unavailable("the chip has none of the counters asked for");
    std::vector<const char*> names;
    for (const auto& m : metrics_) names.push_back(m.c_str());

    CUpti_Profiler_Host_ConfigAddMetrics_Params add{};
    add.structSize = CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE;
    add.pHostObject = host_;
    add.ppMetricNames = names.data();
    add.numMetrics = names.size();
    check(cuptiProfilerHostConfigAddMetrics(&add), "adding the counters to the configuration");
    CUpti_Profiler_Host_GetConfigImageSize_Params size{};
    size.structSize = CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE;
    size.pHostObject = host_;
    check(cuptiProfilerHostGetConfigImageSize(&size), "sizing the configuration");
    image_.resize(size.configImageSize);
    CUpti_Profiler_Host_GetConfigImage_Params image{};
    image.structSize = CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE;
    image.pHostObject = host_;
    image.configImageSize = image_.size();
    image.pConfigImage = image_.data();
    check(cuptiProfilerHostGetConfigImage(&image), "building the configuration");
    CUpti_Profiler_Host_GetNumOfPasses_Params passes{};
    passes.structSize = CUpti_Profiler_Host_GetNumOfPasses_Params_STRUCT_SIZE;
    passes.configImageSize = image_.size();
    passes.pConfigImage = image_.data();
    check(cuptiProfilerHostGetNumOfPasses(&passes), "counting the passes");
    passes_ = static_cast<int>(passes.numOfPasses);
  } catch (...) {
    release();
    throw;
  }
}

counter_configuration::~counter_configuration() { release(); }

void counter_configuration::release() noexcept {
  if (host_ == nullptr) return;
  CUpti_Profiler_Host_Deinitialize_Params p{};
  p.structSize = CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE;
  p.pHostObject = host_;
  cuptiProfilerHostDeinitialize(&p);
  host_ = nullptr;
}

range_profiler::range_profiler(CUcontext context, int device,
                               const std::vector<std::string>& metrics, std::size_t max_ranges) {
  CUpti_Profiler_Initialize_Params init{};
  init.structSize = CUpti_Profiler_Initialize_Params_STRUCT_SIZE;
  check(cuptiProfilerInitialize(&init), "initializing the profiler");
  initialized_ = true;
  try {
    CUpti_Device_GetChipName_Params name{};
    name.structSize = CUpti_Device_GetChipName_Params_STRUCT_SIZE;
    name.deviceIndex = static_cast<std::size_t>(device);
    check(cuptiDeviceGetChipName(&name), "asking the chip's name");
    chip_ = name.pChipName;

    CUpti_Profiler_GetCounterAvailability_Params available{};
    available.structSize = CUpti_Profiler_GetCounterAvailability_Params_STRUCT_SIZE;
    available.ctx = context;
    check(cuptiProfilerGetCounterAvailability(&available), "asking which counters are available");
    std::vector<std::uint8_t> availability(available.counterAvailabilityImageSize);
    available.pCounterAvailabilityImage = availability.data();
    check(cuptiProfilerGetCounterAvailability(&available), "asking which counters are available");

    config_.emplace(chip_, availability, metrics);
    for (const auto& m : config_->metrics()) names_.push_back(m.c_str());

    CUpti_RangeProfiler_Enable_Params enable{};
    enable.structSize = CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE;
    enable.ctx = context;
    check(cuptiRangeProfilerEnable(&enable), "enabling the range profiler");
    profiler_ = enable.pRangeProfilerObject;

    CUpti_RangeProfiler_GetCounterDataSize_Params data_size{};
    data_size.structSize = CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE;
    data_size.pRangeProfilerObject = profiler_;
    data_size.pMetricNames = names_.data();
    data_size.numMetrics = names_.size();
    data_size.maxNumOfRanges = max_ranges;
    data_size.maxNumRangeTreeNodes = static_cast<std::uint32_t>(max_ranges);
    check(cuptiRangeProfilerGetCounterDataSize(&data_size), "sizing the counter data");
    counter_data_.resize(data_size.counterDataSize);
    CUpti_RangeProfiler_CounterDataImage_Initialize_Params data{};
    data.structSize = CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE;
    data.pRangeProfilerObject = profiler_;
    data.counterDataSize = counter_data_.size();
    data.pCounterData = counter_data_.data();
    check(cuptiRangeProfilerCounterDataImageInitialize(&data), "preparing the counter data");

    CUpti_RangeProfiler_SetConfig_Params set{};
    set.structSize = CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE;
    set.pRangeProfilerObject = profiler_;
    set.configSize = config_->image().size();
    set.pConfig = config_->image().data();
    set.counterDataImageSize = counter_data_.size();
    set.pCounterDataImage = counter_data_.data();
    set.range = CUPTI_AutoRange;
    set.replayMode = CUPTI_UserReplay;
    set.maxRangesPerPass = max_ranges;
    set.numNestingLevels = 1;
    set.minNestingLevel = 1;
    set.passIndex = 0;
    set.targetNestingLevel = 0;
    check(cuptiRangeProfilerSetConfig(&set), "configuring the range profiler");
  } catch (...) {
    release();
    throw;
  }
}

range_profiler::~range_profiler() { release(); }

void range_profiler::release() noexcept {
  if (profiler_ != nullptr) {
    CUpti_RangeProfiler_Disable_Params p{};
    p.structSize = CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE;
    p.pRangeProfilerObject = profiler_;
    cuptiRangeProfilerDisable(&p);
    profiler_ = nullptr;
  }
  config_.reset();
  names_.clear();
  if (initialized_) {
    CUpti_Profiler_DeInitialize_Params p{};
    p.structSize = CUpti_Profiler_DeInitialize_Params_STRUCT_SIZE;
    cuptiProfilerDeInitialize(&p);
    initialized_ = false;
  }
}

void range_profiler::begin_pass() {
  CUpti_RangeProfiler_Start_Params p{};
  p.structSize = CUpti_RangeProfiler_Start_Params_STRUCT_SIZE;
  p.pRangeProfilerObject = profiler_;
  check(cuptiRangeProfilerStart(&p), "starting a pass");
}

bool range_profiler::end_pass() {
  CUpti_RangeProfiler_Stop_Params p{};
  p.structSize = CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE;
  p.pRangeProfilerObject = profiler_;
  check(cuptiRangeProfilerStop(&p), "ending a pass");
  return p.isAllPassSubmitted != 0;
}

std::vector<range_values> range_profiler::results() {
  CUpti_RangeProfiler_DecodeData_Params decode{};
  decode.structSize = CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE;
  decode.pRangeProfilerObject = profiler_;
  check(cuptiRangeProfilerDecodeData(&decode), "decoding the counters");
  if (decode.numOfRangeDropped != 0) {
    throw std::runtime_error(
        fmt::format("the counter data held too few ranges: {} dropped", decode.numOfRangeDropped));
  }
  CUpti_RangeProfiler_GetCounterDataInfo_Params info{};
  info.structSize = CUpti_RangeProfiler_GetCounterDataInfo_Params_STRUCT_SIZE;
  info.pCounterDataImage = counter_data_.data();
  info.counterDataImageSize = counter_data_.size();
  check(cuptiRangeProfilerGetCounterDataInfo(&info), "counting the ranges");
  std::vector<range_values> ranges;
  for (std::size_t i = 0; i < info.numTotalRanges; ++i) {
    CUpti_Profiler_Host_GetRangeName_Params name{};
    name.structSize = CUpti_Profiler_Host_GetRangeName_Params_STRUCT_SIZE;
    name.pCounterDataImage = counter_data_.data();
    name.counterDataImageSize = counter_data_.size();
    name.rangeIndex = i;
    name.delimiter = "/";
    check(cuptiProfilerHostGetRangeName(&name), "naming a range");
    range_values r{.name = name.pRangeName != nullptr ? name.pRangeName : "", .values = {}};
    // CUPTI allocated the name for the caller.
    std::free(const_cast<char*>(name.pRangeName));
    std::vector<double> values(names_.size());
    CUpti_Profiler_Host_EvaluateToGpuValues_Params eval{};
    eval.structSize = CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE;
    eval.pHostObject = config_->host();
    eval.pCounterDataImage = counter_data_.data();
    eval.counterDataImageSize = counter_data_.size();
    eval.rangeIndex = i;
    eval.ppMetricNames = names_.data();
    eval.numMetrics = names_.size();
    eval.pMetricValues = values.data();
    check(cuptiProfilerHostEvaluateToGpuValues(&eval), "evaluating the counters");
    const auto& metrics = config_->metrics();
    for (std::size_t m = 0; m < metrics.size(); ++m) r.values[metrics[m]] = values[m];
    ranges.push_back(std::move(r));
  }
  return ranges;
}

}  // namespace blaster
