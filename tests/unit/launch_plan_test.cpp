#include "core/launch_plan.hpp"

#include <string>
#include <string_view>

#include <gtest/gtest.h>

namespace blaster {
namespace {

// The plan of DESIGN.md; the line numbers below are counted from this text.
constexpr std::string_view example = R"cu(/* blaster
{
  "launch": [
    {"kernel": "rmsnorm_rows<VEC>", "grid": "ceil_div(B*H*W, 256)", "block": 256,
     "shared_bytes": 0, "args": ["out", "x", "B", "C", "H*W", "eps"]}
  ],
  "scratch": {"partial": "B*C*4"},
  "params": {"VEC": [2, 4, 8]}
}
*/
template <int VEC>
__global__ void rmsnorm_rows(float* out, const float* x, int B, int C, int HW, float eps) {}
)cu";

std::string plan_error(std::string_view source) {
  try {
    parse_launch_plan(source, "k.cu");
  } catch (const input_error& e) {
    return e.what();
  }
  ADD_FAILURE() << "parsed without error:\n" << source;
  return {};
}

// A plan of one step whose members are `step`, e.g. "\"kernel\": \"k\", \"grid\": 1".
std::string one_step(std::string_view step, std::string_view rest = "") {
  return "/* blaster\n{\"launch\": [{" + std::string(step) + "}]" + std::string(rest) + "}\n*/\n";
}

void expect_at(const plan_expression& e, std::string_view text, int line, int column) {
  EXPECT_EQ(e.expr.text(), text);
  EXPECT_EQ(e.where.line, line) << text;
  EXPECT_EQ(e.where.column, column) << text;
}

void expect_prefix(const std::string& message, std::string_view prefix) {
  EXPECT_EQ(message.substr(0, prefix.size()), prefix) << message;
}

TEST(LaunchPlan, ParsesTheDesignExample) {
  const launch_plan plan = parse_launch_plan(example, "rmsnorm.cu");
  EXPECT_EQ(plan.file, "rmsnorm.cu");
  ASSERT_EQ(plan.launch.size(), 1u);
  const launch_step& step = plan.launch[0];
  EXPECT_EQ(step.kernel, "rmsnorm_rows<VEC>");
  EXPECT_EQ(step.where.line, 4);
  EXPECT_EQ(step.where.column, 17);
  expect_at(step.grid[0], "ceil_div(B*H*W, 256)", 4, 46);
  expect_at(step.block[0], "256", 4, 78);
  EXPECT_EQ(step.grid[1].expr.text(), "1");
  EXPECT_EQ(step.grid[2].expr.text(), "1");
  EXPECT_EQ(step.block[1].expr.evaluate({}), 1);
  expect_at(step.shared_bytes, "0", 5, 22);
  ASSERT_EQ(step.args.size(), 6u);
  expect_at(step.args[0], "out", 5, 35);
  expect_at(step.args[1], "x", 5, 42);
  expect_at(step.args[2], "B", 5, 47);
  expect_at(step.args[3], "C", 5, 52);
  expect_at(step.args[4], "H*W", 5, 57);
  expect_at(step.args[5], "eps", 5, 64);
  EXPECT_TRUE(step.args[0].expr.is_identifier());
  EXPECT_FALSE(step.args[4].expr.is_identifier());

  ASSERT_EQ(plan.scratch.size(), 1u);
  EXPECT_EQ(plan.scratch[0].first, "partial");
  expect_at(plan.scratch[0].second, "B*C*4", 7, 27);
  ASSERT_EQ(plan.params.size(), 1u);
  EXPECT_EQ(plan.params[0].first, "VEC");
  EXPECT_EQ(plan.params[0].second, (std::vector<std::string>{"2", "4", "8"}));
  EXPECT_FALSE(plan.cooperative);
  EXPECT_FALSE(plan.cluster.has_value());
  EXPECT_FALSE(plan.max_dynamic_shared_bytes.has_value());

  const symbol_table symbols{{"B", 2}, {"C", 64}, {"H", 16}, {"W", 16}};
  EXPECT_EQ(evaluate_at(step.grid[0], symbols, plan.file), 2);
  EXPECT_EQ(evaluate_at(plan.scratch[0].second, symbols, plan.file), 512);
}

TEST(LaunchPlan, RepeatedExpressionTextsGetTheirOwnPositions) {
  const std::string source =
      "/* blaster\n"
      "{\"launch\": [\n"
      "  {\"kernel\": \"a\", \"grid\": \"N\", \"block\": \"N\", \"args\": [\"N\"]},\n"
      "  {\"kernel\": \"b\", \"grid\": \"N\", \"block\": \"N\", \"args\": [\"N\", \"N\"]}\n"
      "]}\n*/\n";
  const launch_plan plan = parse_launch_plan(source, "k.cu");
  ASSERT_EQ(plan.launch.size(), 2u);
  expect_at(plan.launch[0].grid[0], "N", 3, 28);
  expect_at(plan.launch[0].block[0], "N", 3, 42);
  expect_at(plan.launch[0].args[0], "N", 3, 56);
  expect_at(plan.launch[1].grid[0], "N", 4, 28);
  expect_at(plan.launch[1].args[1], "N", 4, 61);
  EXPECT_EQ(plan.launch[1].kernel, "b");
  EXPECT_EQ(plan.launch[1].where.line, 4);
}

TEST(LaunchPlan, GridAsIntegerStringOrArray) {
  launch_plan plan = parse_launch_plan(one_step(R"("kernel": "k", "grid": 4, "block": 32)"), "");
  EXPECT_EQ(plan.launch[0].grid[0].expr.text(), "4");
  EXPECT_EQ(plan.launch[0].grid[0].where.column, 37);

  plan = parse_launch_plan(one_step(R"("kernel": "k", "grid": "N / 2", "block": 32)"), "");
  EXPECT_EQ(plan.launch[0].grid[0].expr.evaluate({{"N", 10}}), 5);
  EXPECT_EQ(plan.launch[0].grid[1].expr.evaluate({}), 1);

  plan = parse_launch_plan(one_step(R"("kernel": "k", "grid": ["N", 2], "block": [8, 4, 2])"), "");
  const dim3_expr& grid = plan.launch[0].grid;
  EXPECT_EQ(grid[0].expr.text(), "N");
  EXPECT_EQ(grid[1].expr.text(), "2");
  EXPECT_EQ(grid[2].expr.text(), "1");
  EXPECT_EQ(grid[2].where.column, 37);  // a dimension left out points at its array
  EXPECT_EQ(plan.launch[0].block[2].expr.text(), "2");

  plan = parse_launch_plan(one_step(R"("kernel": "k", "grid": -1, "block": 1)"), "");
  EXPECT_EQ(plan.launch[0].grid[0].expr.evaluate({}), -1);
}

TEST(LaunchPlan, Defaults) {
  const launch_plan plan =
      parse_launch_plan(one_step(R"("kernel": "k", "grid": 1, "block": 32)"), "k.cu");
  const launch_step& step = plan.launch[0];
  EXPECT_EQ(step.shared_bytes.expr.evaluate({}), 0);
  EXPECT_TRUE(step.args.empty());
  EXPECT_TRUE(plan.scratch.empty());
  EXPECT_TRUE(plan.params.empty());
  EXPECT_FALSE(plan.cooperative);
  EXPECT_FALSE(plan.cluster.has_value());
  EXPECT_FALSE(plan.max_dynamic_shared_bytes.has_value());
  const auto configurations = expand_params(plan);
  ASSERT_EQ(configurations.size(), 1u);
  EXPECT_TRUE(configurations[0].empty());
}

TEST(LaunchPlan, OptionalKeys) {
  const launch_plan plan = parse_launch_plan(
      one_step(R"("kernel": "k", "grid": 8, "block": 128, "shared_bytes": "S * 4")",
               R"(, "cooperative": true, "cluster": [2], "max_dynamic_shared_bytes": "S * 4")"),
      "k.cu");
  EXPECT_TRUE(plan.cooperative);
  ASSERT_TRUE(plan.cluster.has_value());
  EXPECT_EQ((*plan.cluster)[0].expr.evaluate({}), 2);
  EXPECT_EQ((*plan.cluster)[1].expr.evaluate({}), 1);
  ASSERT_TRUE(plan.max_dynamic_shared_bytes.has_value());
  EXPECT_EQ(plan.max_dynamic_shared_bytes->expr.evaluate({{"S", 1000}}), 4000);
  EXPECT_EQ(plan.launch[0].shared_bytes.expr.evaluate({{"S", 3}}), 12);
}

TEST(LaunchPlan, LeadingWhitespaceIsAllowed) {
  const launch_plan plan = parse_launch_plan(
      "\n\n  /* blaster {\"launch\": [{\"kernel\": \"k\", \"grid\": 1, \"block\": \"T\"}]} */",
      "k.cu");
  expect_at(plan.launch[0].block[0], "T", 3, 63);
}

TEST(LaunchPlan, ParamsExpandInDeclarationOrderLastFastest) {
  const launch_plan plan = parse_launch_plan(
      one_step(R"("kernel": "k<Z, A>", "grid": 1, "block": 1)",
               R"(, "params": {"Z": [1, 2], "A": ["float", -3]})"),
      "k.cu");
  ASSERT_EQ(plan.params.size(), 2u);
  EXPECT_EQ(plan.params[0].first, "Z");
  EXPECT_EQ(plan.params[1].second, (std::vector<std::string>{"float", "-3"}));
  using config = std::map<std::string, std::string>;
  EXPECT_EQ(expand_params(plan), (std::vector<config>{{{"Z", "1"}, {"A", "float"}},
                                                      {{"Z", "1"}, {"A", "-3"}},
                                                      {{"Z", "2"}, {"A", "float"}},
                                                      {{"Z", "2"}, {"A", "-3"}}}));
}

TEST(LaunchPlan, InstantiateKernelNameReplacesWholeIdentifiersOnly) {
  EXPECT_EQ(instantiate_kernel_name("rows<VEC>", {{"VEC", "4"}}), "rows<4>");
  EXPECT_EQ(instantiate_kernel_name("rows<VEC, VECTOR, VEC_2, XVEC, VEC>", {{"VEC", "4"}}),
            "rows<4, VECTOR, VEC_2, XVEC, 4>");
  EXPECT_EQ(instantiate_kernel_name("ns::k<T,BLOCK>", {{"T", "float"}, {"BLOCK", "256"}}),
            "ns::k<float,256>");
  // One pass: a value is not itself substituted again.
  EXPECT_EQ(instantiate_kernel_name("k<A>", {{"A", "B"}, {"B", "1"}}), "k<B>");
  EXPECT_EQ(instantiate_kernel_name("k<2VEC>", {{"VEC", "4"}}), "k<2VEC>");
  EXPECT_EQ(instantiate_kernel_name("plain_kernel", {{"VEC", "4"}}), "plain_kernel");
}

TEST(LaunchPlanError, NoComment) {
  const std::string expected =
      "k.cu:1:1: no launch plan: a candidate begins with a /* blaster {...} */ comment";
  EXPECT_EQ(plan_error("__global__ void k() {}\n"), expected);
  EXPECT_EQ(plan_error(""), expected);
  EXPECT_EQ(plan_error("/* blasted {} */"), expected);
  EXPECT_EQ(plan_error("/* blasterplan {} */"), expected);
}

TEST(LaunchPlanError, TextBeforeTheComment) {
  EXPECT_EQ(plan_error("// kernel\n" + one_step(R"("kernel": "k", "grid": 1, "block": 1)")),
            "k.cu:1:1: text before the launch plan: only whitespace may precede the "
            "'/* blaster' comment");
  expect_prefix(plan_error("\n  #include <x>\n" +
                           one_step(R"("kernel": "k", "grid": 1, "block": 1)")),
                "k.cu:2:3: text before the launch plan");
}

TEST(LaunchPlanError, Unterminated) {
  EXPECT_EQ(plan_error("\n/* blaster {\"launch\": []}\n"),
            "k.cu:2:1: unterminated launch plan: the '/* blaster' comment has no closing '*/'");
}

TEST(LaunchPlanError, BadJsonPointsAtTheFile) {
  const std::string source =
      "/* blaster\n"
      "{\n"
      "  \"launch\": [\n"
      "    {\"kernel\": \"k\", \"grid\": 1, \"block\": 32,}\n"
      "  ]\n"
      "}\n"
      "*/\n";
  EXPECT_EQ(plan_error(source),
            "k.cu:4:44: invalid JSON in the launch plan: syntax error while parsing object key "
            "- unexpected '}'; expected string literal");
  // The comment's offset on its own first line is accounted for.
  expect_prefix(plan_error("\n\n  /* blaster {\"launch\": [}] */"),
                "k.cu:3:26: invalid JSON in the launch plan: ");
  // Running out of text points at the closing "*/".
  expect_prefix(plan_error("/* blaster\n{\"launch\": [\n*/"), "k.cu:3:1: invalid JSON");
  expect_prefix(plan_error("/* blaster */"), "k.cu:1:12: invalid JSON");
}

TEST(LaunchPlanError, UnknownKeysAreNamedWithTheAllowedOnes) {
  EXPECT_EQ(plan_error(one_step(R"("kernel": "k", "grid": 1, "blocks": 32)")),
            "k.cu:2:40: unknown key \"blocks\" in launch step 1; allowed keys: kernel, grid, "
            "block, shared_bytes, args (did you mean \"block\"?)");
  expect_prefix(plan_error(one_step(R"("kernel": "k", "grid": 1, "block": 1)",
                                    R"(, "sratch": {})")),
                "k.cu:2:54: unknown key \"sratch\" in the launch plan; allowed keys: launch, "
                "scratch, params, cooperative, cluster, max_dynamic_shared_bytes (did you mean "
                "\"scratch\"?)");
  expect_prefix(plan_error(one_step(R"("kernel": "k", "grid": 1, "block": 1)", R"(, "zzz": 1)")),
                "k.cu:2:54: unknown key \"zzz\" in the launch plan; allowed keys: launch,");
}

TEST(LaunchPlanError, DuplicateKeys) {
  EXPECT_EQ(plan_error(one_step(R"("kernel": "k", "grid": 1, "block": 1, "grid": 2)")),
            "k.cu:2:52: duplicate key \"grid\"; each key may appear once");
}

TEST(LaunchPlanError, WrongTypes) {
  const std::string grid_message =
      "\"grid\" must be an integer, an expression string, or an array of 1 to 3 of them";
  EXPECT_EQ(plan_error(one_step(R"("kernel": "k", "grid": true, "block": 1)")),
            "k.cu:2:37: " + grid_message);
  EXPECT_EQ(plan_error(one_step(R"("kernel": "k", "grid": 1.5, "block": 1)")),
            "k.cu:2:37: " + grid_message);
  EXPECT_EQ(plan_error(one_step(R"("kernel": "k", "grid": [1, 2, 3, 4], "block": 1)")),
            "k.cu:2:37: " + grid_message + "; this array has 4");
  EXPECT_EQ(plan_error(one_step(R"("kernel": "k", "grid": [], "block": 1)")),
            "k.cu:2:37: " + grid_message + "; this array has 0");
  EXPECT_EQ(plan_error(one_step(R"("kernel": "k", "grid": [1, [2]], "block": 1)")),
            "k.cu:2:41: " + grid_message);
  EXPECT_EQ(plan_error(one_step(R"("kernel": 7, "grid": 1, "block": 1)")),
            "k.cu:2:24: \"kernel\" must be a non-empty string naming the kernel");
  EXPECT_EQ(plan_error(one_step(R"("kernel": "", "grid": 1, "block": 1)")),
            "k.cu:2:24: \"kernel\" must be a non-empty string naming the kernel");
  expect_prefix(plan_error(one_step(R"("kernel": "k", "grid": 1, "block": 1, "args": "x")")),
                "k.cu:2:60: \"args\" must be an array");
  expect_prefix(plan_error(one_step(R"("kernel": "k", "grid": 1, "block": 1, "args": [null])")),
                "k.cu:2:61: \"args\" must be an array");
  EXPECT_EQ(plan_error(one_step(R"("kernel": "k", "grid": 1, "block": 1)",
                                R"(, "cooperative": 1)")),
            "k.cu:2:69: \"cooperative\" must be true or false");
  EXPECT_EQ(plan_error("/* blaster [] */"),
            "k.cu:1:12: the launch plan must be a JSON object such as {\"launch\": [...]}");
  expect_prefix(plan_error(one_step(R"("kernel": "k", "grid": 1, "block": 1)",
                                    R"(, "scratch": {"a-b": 4})")),
                "k.cu:2:66: scratch buffer name \"a-b\" must be an identifier");
  expect_prefix(plan_error(one_step(R"("kernel": "k", "grid": 1, "block": 1)",
                                    R"(, "scratch": {"p": true})")),
                "k.cu:2:71: scratch \"p\" must be a byte count");
}

TEST(LaunchPlanError, MissingAndEmptyLaunch) {
  EXPECT_EQ(plan_error("/* blaster\n{\"launch\": []}\n*/"),
            "k.cu:2:12: \"launch\" must be a non-empty array of launch steps");
  EXPECT_EQ(plan_error("/* blaster\n{}\n*/"),
            "k.cu:2:1: the launch plan has no \"launch\": a non-empty array of launch steps");
  EXPECT_EQ(plan_error(one_step(R"("kernel": "k", "block": 1)")),
            "k.cu:2:13: launch step 1 has no \"grid\"; a step needs kernel, grid and block");
}

TEST(LaunchPlanError, BadParams) {
  const std::string step = R"("kernel": "k", "grid": 1, "block": 1)";
  EXPECT_EQ(plan_error(one_step(step, R"(, "params": {"VEC": []})")),
            "k.cu:2:72: param \"VEC\" must be a non-empty array of values, such as [2, 4, 8]");
  EXPECT_EQ(plan_error(one_step(step, R"(, "params": {"VEC": [2, true]})")),
            "k.cu:2:76: values of param \"VEC\" must be integers or non-empty strings");
  EXPECT_EQ(plan_error(one_step(step, R"(, "params": {"VEC": [2, 4, 2]})")),
            "k.cu:2:79: param \"VEC\" lists the value 2 twice");
  const std::string ten = "[0, 1, 2, 3, 4, 5, 6, 7, 8, 9]";
  expect_prefix(plan_error(one_step(step, ", \"params\": {\"A\": " + ten + ", \"B\": " + ten +
                                              ", \"C\": " + ten + ", \"D\": " + ten +
                                              ", \"E\": " + ten + "}")),
                "k.cu:2:64: \"params\" expand to more than 65536 configurations");
}

TEST(LaunchPlanError, BadExpressionPointsAtTheExactColumn) {
  EXPECT_EQ(plan_error(one_step(R"j("kernel": "k", "grid": "ceil_div(N $ 2, 4)", "block": 1)j")),
            "k.cu:2:49: invalid \"grid\" expression 'ceil_div(N $ 2, 4)': unexpected character "
            "'$'; expressions use decimal numbers, names, + - * / %, parentheses, ceil_div, min "
            "and max");
  EXPECT_EQ(plan_error(one_step(R"("kernel": "k", "grid": 1, "block": 1, "args": ["x", "(N"])")),
            "k.cu:2:69: invalid \"args\" expression '(N': expected ')' to close '(' at column 1");
  expect_prefix(plan_error(one_step(R"("kernel": "k", "grid": 1, "block": 1)",
                                    R"j(, "scratch": {"p": "min(1)"})j")),
                "k.cu:2:72: invalid scratch \"p\" expression 'min(1)': min takes 2 arguments");
  expect_prefix(plan_error(one_step(R"("kernel": "k", "grid": 1, "block": "")")),
                "k.cu:2:50: invalid \"block\" expression '': empty expression");
}

TEST(LaunchPlanError, EvaluateAtNamesTheFilePosition) {
  const launch_plan plan = parse_launch_plan(
      one_step(R"j("kernel": "k", "grid": "N / (K - K)", "block": 1, "args": ["x", "Q + 1"])j"),
      "k.cu");
  const symbol_table symbols{{"N", 8}, {"K", 2}};
  try {
    evaluate_at(plan.launch[0].grid[0], symbols, plan.file);
    ADD_FAILURE() << "no error";
  } catch (const input_error& e) {
    EXPECT_EQ(std::string(e.what()), "k.cu:2:40: division by zero in 'N / (K - K)'");
  }
  try {
    evaluate_at(plan.launch[0].args[1], symbols, plan.file);
    ADD_FAILURE() << "no error";
  } catch (const input_error& e) {
    EXPECT_EQ(std::string(e.what()), "k.cu:2:79: unknown symbol 'Q' (known: K, N)");
  }
}

}  // namespace
}  // namespace blaster
