#include <array>
#include <utility>

#include <fmt/ranges.h>

#include "core/error.hpp"
#include "tasks/reference.hpp"

namespace blaster {

// Each task's reference.cpp defines one of these; a new task adds a declaration and a row.
void cross_entropy_reference(const reference_context& io);
void decode_attention_reference(const reference_context& io);
void embedding_gather_reference(const reference_context& io);
void fused_add_rms_norm_reference(const reference_context& io);
void fused_moe_reference(const reference_context& io);
void gelu_reference(const reference_context& io);
void gemv_reference(const reference_context& io);
void kv_append_reference(const reference_context& io);
void layernorm_reference(const reference_context& io);
void logits_topk_reference(const reference_context& io);
void matmul_smallk_reference(const reference_context& io);
void matvec_reference(const reference_context& io);
void moe_route_reference(const reference_context& io);
void newgelu_reference(const reference_context& io);
void per_token_quant_reference(const reference_context& io);
void relu_reference(const reference_context& io);
void rms_norm_reference(const reference_context& io);
void rmsnorm_reference(const reference_context& io);
void rope_reference(const reference_context& io);
void softmax_reference(const reference_context& io);
void sum_dim1_reference(const reference_context& io);
void swiglu_reference(const reference_context& io);
void top_p_sample_reference(const reference_context& io);

namespace {
constexpr std::array<std::pair<std::string_view, reference_fn>, 23> registry = {{
    {"cross_entropy", &cross_entropy_reference},
    {"decode_attention", &decode_attention_reference},
    {"embedding_gather", &embedding_gather_reference},
    {"fused_add_rms_norm", &fused_add_rms_norm_reference},
    {"fused_moe", &fused_moe_reference},
    {"gelu", &gelu_reference},
    {"gemv", &gemv_reference},
    {"kv_append", &kv_append_reference},
    {"layernorm", &layernorm_reference},
    {"logits_topk", &logits_topk_reference},
    {"matmul_smallk", &matmul_smallk_reference},
    {"matvec", &matvec_reference},
    {"moe_route", &moe_route_reference},
    {"newgelu", &newgelu_reference},
    {"per_token_quant", &per_token_quant_reference},
    {"relu", &relu_reference},
    {"rms_norm", &rms_norm_reference},
    {"rmsnorm", &rmsnorm_reference},
    {"rope", &rope_reference},
    {"softmax", &softmax_reference},
    {"sum_dim1", &sum_dim1_reference},
    {"swiglu", &swiglu_reference},
    {"top_p_sample", &top_p_sample_reference},
}};
}  // namespace

reference_fn find_reference(std::string_view name) {
  std::vector<std::string_view> known;
  for (const auto& [registered, fn] : registry) {
    if (registered == name) return fn;
    known.push_back(registered);
  }
  BLASTER_INPUT_ERROR(
      "no reference named \"{}\" is registered (known: {}); add it to "
      "tasks/task_registry.cpp",
      name, fmt::join(known, ", "));
}

std::int64_t reference_context::dim(std::string_view symbol) const {
  return static_cast<std::int64_t>(task.value(which, symbol));
}

double reference_context::value(std::string_view symbol) const { return task.value(which, symbol); }

std::span<const double> reference_context::input(std::string_view buffer) const {
  auto it = inputs.find(buffer);
  if (it == inputs.end()) BLASTER_THROW("reference asked for unknown input {}", buffer);
  return it->second;
}

std::span<double> reference_context::output(std::string_view buffer) const {
  auto it = outputs.find(buffer);
  if (it == outputs.end()) BLASTER_THROW("reference asked for unknown output {}", buffer);
  return it->second;
}

std::span<double> reference_context::alternative(std::string_view buffer) const {
  auto it = alternatives.find(buffer);
  if (it == alternatives.end()) {
    BLASTER_THROW(
        "reference asked for the alternatives of {}, which has none: only integer "
        "outputs have them",
        buffer);
  }
  return it->second;
}

}  // namespace blaster
