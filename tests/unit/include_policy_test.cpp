// The include policy: every spelling of an include the preprocessor accepts is refused unless it
// names a toolkit header by name or a shared header as "common/NAME", with file:line:col and
// what is allowed; allowed includes resolve, shared headers to their bytes.
#include "core/include_policy.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/nvrtc_compiler.hpp"

namespace blaster {
namespace {

namespace fs = std::filesystem;

const fs::path source_root = BLASTER_SOURCE_DIR;

// Shared headers held in memory, as the compile sandbox's child holds them.
include_roots roots_with(std::map<std::string, std::string> headers) {
  return {.toolkit = cuda_include_dirs(),
          .common = [headers =
                         std::move(headers)](std::string_view name) -> std::optional<std::string> {
            const auto it = headers.find(std::string(name));
            if (it == headers.end()) return std::nullopt;
            return it->second;
          }};
}

// The policy's message for the source, or "accepted".
std::string verdict(const std::string& source, const include_roots& roots = roots_with({})) {
  try {
    static_cast<void>(resolve_includes(source, "cand.cu", roots));
  } catch (const input_error& e) {
    return e.what();
  }
  return "accepted";
}

// Refused at file:line:col, with a message that says what is allowed (unless it is about the
// syntax of the header name itself).
void expect_refused_at(const std::string& source, const std::string& where,
                       const std::string& why = "", bool names_what_is_allowed = true) {
  const std::string message = verdict(source);
  EXPECT_EQ(message.rfind("cand.cu:" + where + ": ", 0), 0U) << message;
  if (names_what_is_allowed) {
    EXPECT_NE(message.find("common/NAME"), std::string::npos) << message;
  }
  if (!why.empty()) {
    EXPECT_NE(message.find(why), std::string::npos) << message;
  }
}

TEST(IncludePolicy, ToolkitHeadersByNameAreAllowed) {
  EXPECT_EQ(verdict("#include <cuda_fp16.h>\n"), "accepted");
  EXPECT_EQ(verdict("#include <cuda/std/cstdint>\n"), "accepted");  // under include/cccl/
  EXPECT_EQ(verdict("  #  include <cooperative_groups.h>  // grid sync\n"), "accepted");
  EXPECT_EQ(verdict("#if __has_include(<cuda_bf16.h>)\n#include <cuda_bf16.h>\n#endif\n"),
            "accepted");
  // Text that only looks like an include: a line comment, a string, a #define's body.
  EXPECT_EQ(verdict("// #include \"/etc/passwd\"\n"
                    "const char* s = \"#include </etc/passwd>\";\n"
                    "#define X #include \"/etc/passwd\"\n"),
            "accepted");
}

TEST(IncludePolicy, AbsolutePathsAreRefused) {
  expect_refused_at("#include \"/etc/passwd\"\n", "1:11", "an absolute path");
  expect_refused_at("int x;\n#include </etc/passwd>\n", "2:11", "an absolute path");
}

TEST(IncludePolicy, DotDotComponentsAreRefused) {
  expect_refused_at("#include <../../../../etc/passwd>\n", "1:11", "'..'");
  expect_refused_at("#include \"common/../../../etc/passwd\"\n", "1:18", "'..'");
  expect_refused_at("#include <cuda/./std/cstdint>\n", "1:16", "'.' component");
}

TEST(IncludePolicy, QuotedIncludesNameOnlySharedHeaders) {
  // NVRTC would look for it in its working folder.
  expect_refused_at("#include \"secret.h\"\n", "1:11", "working folder");
  // A toolkit header in quotes is searched in the working folder first: refused, with the fix.
  expect_refused_at("#include \"cuda_fp16.h\"\n", "1:11", "write <cuda_fp16.h>");
  expect_refused_at("#include \"common/no_such.cuh\"\n", "1:11", "no such header");
  expect_refused_at("#include \"common/\"\n", "1:18", "an empty path component");
}

TEST(IncludePolicy, NamesTheToolkitLacksAreRefused) {
  expect_refused_at("#include <stdio.h>\n", "1:11", "not a header of the CUDA toolkit");
  expect_refused_at("#include <common/block_reduce.cuh>\n", "1:11",
                    "a shared header is included as \"common/block_reduce.cuh\"");
}

TEST(IncludePolicy, ToolkitHeadersThatReachMacroFormIncludesAreAllowedAsTheToolkitNamesThem) {
  // thrust names headers by macros ("#include __THRUST_DEVICE_SYSTEM_TAG_HEADER"), and CUB's
  // block, warp and thread primitives reach them; left alone, those names are the toolkit's.
  EXPECT_EQ(
      verdict("#include <cub/block/block_reduce.cuh>\n#include <cub/block/block_scan.cuh>\n"
              "#include <cub/warp/warp_reduce.cuh>\n#include <cub/thread/thread_reduce.cuh>\n"),
      "accepted");
  EXPECT_EQ(verdict("#include <thrust/iterator/detail/device_system_tag.h>\n"), "accepted");
  // Headers whose every include names its file stay allowed.
  EXPECT_EQ(verdict("#include <cooperative_groups.h>\n#include <cuda/barrier>\n"), "accepted");
}

// The message for a candidate that defines what thrust builds an include's name from: where, the
// toolkit header that reaches the include, the macro, and the fix.
void expect_pinned(const std::string& source, const std::string& where, const std::string& macro,
                   const include_roots& roots = roots_with({})) {
  const std::string message = verdict(source, roots);
  EXPECT_EQ(message.rfind(where, 0), 0U) << message;
  EXPECT_NE(message.find("reaches thrust/iterator/detail/"), std::string::npos) << message;
  EXPECT_NE(message.find("built from the macro " + macro + ";"), std::string::npos) << message;
  EXPECT_NE(message.find("rename the"), std::string::npos) << message;
}

TEST(IncludePolicy, ACandidateThatRedefinesWhatAMacroFormIncludeIsBuiltFromIsRefused) {
  const std::string cub = "#include <cub/block/block_reduce.cuh>\n";
  // Before the include, after it, function-like, undefined, and through every spelling of a
  // directive the preprocessor accepts.
  expect_pinned("#define detail /etc\n" + cub, "cand.cu:1:9: #define detail", "detail");
  expect_pinned(cub + "#undef system\n", "cand.cu:2:8: #undef system", "system");
  expect_pinned("#define thrust(x) x\n" + cub, "cand.cu:1:9: #define thrust", "thrust");
  expect_pinned(cub + "  /* a */ %:  define __THRUST_DEVICE_SYSTEM_NAMESPACE passwd\n",
                "cand.cu:2:22: #define __THRUST_DEVICE_SYSTEM_NAMESPACE",
                "__THRUST_DEVICE_SYSTEM_NAMESPACE");
  expect_pinned("#def\\\nine exe\\\ncution_policy passwd\n" + cub,
                "cand.cu:2:5: #define execution_policy", "execution_policy");
  // A universal character name could spell a pinned macro where a plain scan sees another.
  EXPECT_NE(verdict("#define \\u0068 x\n" + cub).find("universal character name"),
            std::string::npos);
  // In a shared header the candidate includes.
  expect_pinned("#include \"common/evil.cuh\"\n" + cub, "common/evil.cuh:1:9: #define cuda", "cuda",
                roots_with({{"common/evil.cuh", "#define cuda x\n"}}));
  // Through NVRTC's -D of a param.
  const std::vector<std::string> defines = {"VEC=4", "h=txt"};
  try {
    static_cast<void>(resolve_includes(cub, "cand.cu", roots_with({}), defines));
    ADD_FAILURE() << "a param named after a pinned macro was accepted";
  } catch (const input_error& e) {
    const std::string message = e.what();
    EXPECT_EQ(message.rfind("the define h (a param of the plan): <cub/block/block_reduce.cuh>", 0),
              0U)
        << message;
    EXPECT_NE(message.find("rename the param"), std::string::npos) << message;
  }
}

TEST(IncludePolicy, MacrosThatOnlyLookLikeThePinnedOnesAreAllowed) {
  const std::string cub = "#include <cub/block/block_reduce.cuh>\n";
  // Other case, longer names, names used but never defined, and any macro without such a header.
  EXPECT_EQ(verdict("#define DETAIL 1\n#define H 128\n#define detail_level 2\n" + cub +
                    "namespace detail { constexpr int thrust = 1; }\n"),
            "accepted");
  EXPECT_EQ(verdict("#define detail 1\n#include <cuda_fp16.h>\n"), "accepted");
  const std::vector<std::string> defines = {"VEC=4", "THREADS=256", "H"};
  EXPECT_NO_THROW(static_cast<void>(resolve_includes(cub, "cand.cu", roots_with({}), defines)));
}

TEST(IncludePolicy, MacroFormIncludesAreRefused) {
  expect_refused_at("#define F \"/etc/passwd\"\n#include F\n", "2:10", "through a macro");
  expect_refused_at("#include __FILE__\n", "1:10", "through a macro");
  expect_refused_at("#define Q(x) #x\n#include Q(/etc/passwd)\n", "2:10", "through a macro");
  expect_refused_at("#include\n", "1:1", "through a macro");
}

TEST(IncludePolicy, OtherDirectivesThatReadFilesAreRefused) {
  expect_refused_at("#include_next <cuda_fp16.h>\n", "1:1", "#include_next");
  expect_refused_at("#import \"/etc/passwd\"\n", "1:1", "#import");
  expect_refused_at("const char d[] = {\n#embed \"/etc/passwd\"\n};\n", "2:1", "#embed");
}

TEST(IncludePolicy, HasIncludeOfAnythingElseIsRefused) {
  expect_refused_at("#if __has_include(\"/root/.ssh/id_rsa\")\n#endif\n", "1:20",
                    "an absolute path");
  expect_refused_at("#if defined(X) && __has_include(<../../etc/shadow>)\n#endif\n", "1:34",
                    "'..'");
  expect_refused_at("#if __has_include(<stdio.h>)\n#endif\n", "1:20", "not a header");
  // Whatever builds a name, the policy cannot follow it.
  expect_refused_at("#define P \"/etc/passwd\"\n#if __has_include(P)\n#endif\n", "2:19",
                    "not through a macro");
  EXPECT_NE(verdict("#define H __has_include\n#if H(\"/etc/passwd\")\n#endif\n")
                .find("cand.cu:1:11: __has_include must be followed by"),
            std::string::npos);
  EXPECT_NE(verdict("#if __has_include_next(<cuda_fp16.h>)\n#endif\n")
                .find("cand.cu:1:5: '__has_include_next' could probe files"),
            std::string::npos);
  EXPECT_NE(verdict("#define CAT(a, b) a##b\n#if CAT(__, has_include)(\"/etc/passwd\")\n#endif\n")
                .find("cand.cu:2:13: 'has_include' could probe files"),
            std::string::npos);
  EXPECT_NE(verdict("#if __has_embed(\"/etc/passwd\")\n#endif\n").find("cand.cu:1:5:"),
            std::string::npos);
  // The toolkit's own wrapper of it, in any case.
  EXPECT_NE(verdict("#include <cuda/std/cstdint>\n#if _CCCL_HAS_INCLUDE(\"/etc/passwd\")\n#endif\n")
                .find("cand.cu:2:5: '_CCCL_HAS_INCLUDE' could probe files"),
            std::string::npos);
}

TEST(IncludePolicy, EverySpellingOfTheDirectiveIsSeen) {
  // Leading blanks of every kind, and blanks inside.
  expect_refused_at("   \t#  include \"/etc/passwd\"\n", "1:17");
  expect_refused_at("\f\v#\tinclude \"/etc/passwd\"\n", "1:14");
  // Line splices: between '#' and the name, inside the name, before the operand.
  expect_refused_at("#\\\ninclude \"/etc/passwd\"\n", "2:10");
  expect_refused_at("#inc\\\nlude \"/etc/passwd\"\n", "2:7");
  expect_refused_at("#include \\\n\"/etc/passwd\"\n", "2:2");
  // A splice with blanks after the backslash, and one with a carriage return.
  expect_refused_at("#inc\\  \nlude \"/etc/passwd\"\n", "2:7");
  expect_refused_at("#inc\\\r\nlude \"/etc/passwd\"\r\n", "2:7");
  // Comments: between '#' and the name, before the '#', and spanning lines.
  expect_refused_at("#/**/include \"/etc/passwd\"\n", "1:15");
  expect_refused_at("/* a */ # /* b */ include /* c */ \"/etc/passwd\"\n", "1:36");
  expect_refused_at("#/*\n*/include \"/etc/passwd\"\n", "2:12");
  expect_refused_at("/* one\n   two */ #include \"/etc/passwd\"\n", "2:21");
  // The %: digraph, also cut by a splice, and the ??= trigraph.
  expect_refused_at("%:include \"/etc/passwd\"\n", "1:12");
  expect_refused_at("%\\\n:include \"/etc/passwd\"\n", "2:11");
  expect_refused_at("%:/**/inc\\\nlude \"/etc/passwd\"\n", "2:7");
  expect_refused_at("?\?=include \"/etc/passwd\"\n", "1:13");
  // A carriage return alone: NVRTC does not end a line there, the policy looks anyway.
  expect_refused_at("int x;\r#include \"/etc/passwd\"\r", "1:18");
  // A byte order mark and other bytes outside ASCII before the '#'.
  expect_refused_at("\xEF\xBB\xBF#include \"/etc/passwd\"\n", "1:14");
  // Inside a block comment or a raw string: refused too, the policy does not guess what NVRTC
  // skips.
  expect_refused_at("/*\n#include \"/etc/passwd\"\n*/\n", "2:11");
  expect_refused_at("const char* s = R\"(\n#include \"/etc/passwd\"\n)\";\n", "2:11");
  // A directive name spelled with a universal character name.
  EXPECT_NE(verdict("#\\u0069nclude \"/etc/passwd\"\n").find("cand.cu:1:2: the directive name"),
            std::string::npos);
}

TEST(IncludePolicy, MalformedHeaderNamesAreRefused) {
  expect_refused_at("#include <cuda_fp16.h\n", "1:10", "unterminated header name", false);
  expect_refused_at("#include <cuda\\fp16.h>\n", "1:15", "'\\' in a header name");
  expect_refused_at("#include <cuda_fp16.h\x01>\n", "1:22", "byte 0x01 in a header name");
  expect_refused_at("#include <cuda_fp16.h> junk\n", "1:24", "unexpected text", false);
  expect_refused_at("#include <>\n", "1:11", "an empty header name");
  expect_refused_at("#include <cuda//std/cstdint>\n", "1:16", "an empty path component");
}

TEST(IncludePolicy, SharedHeadersResolveToTheirBytesAndIncludeEachOther) {
  const include_roots roots = roots_with({
      {"common/a.cuh", "#pragma once\n#include \"common/b.cuh\"\nint a;\n"},
      {"common/b.cuh", "#pragma once\n#include <cuda_fp16.h>\n#include \"common/a.cuh\"\n"},
  });
  const auto headers = resolve_includes("#include \"common/a.cuh\"\n", "cand.cu", roots);
  ASSERT_EQ(headers.size(), 2U);  // each once, though they include each other
  EXPECT_EQ(headers[0].name, "common/a.cuh");
  EXPECT_EQ(headers[1].name, "common/b.cuh");
  EXPECT_NE(headers[1].content.find("<cuda_fp16.h>"), std::string::npos);
  EXPECT_TRUE(resolve_includes("#include <cuda_fp16.h>\n", "cand.cu", roots).empty());
}

TEST(IncludePolicy, SharedHeadersAreHeldToThePolicyToo) {
  const include_roots roots = roots_with({
      {"common/ok.cuh", "#include \"common/evil.cuh\"\n"},
      {"common/evil.cuh", "// looks harmless\n  %:include </etc/passwd>\n"},
  });
  try {
    static_cast<void>(resolve_includes("#include \"common/ok.cuh\"\n", "cand.cu", roots));
    ADD_FAILURE() << "a shared header that includes a host file was accepted";
  } catch (const input_error& e) {
    const std::string message = e.what();
    EXPECT_EQ(message.rfind("common/evil.cuh:2:14: </etc/passwd>", 0), 0U) << message;
    // And how the candidate got there.
    EXPECT_TRUE(message.ends_with("(included at common/ok.cuh:1:10) (included at cand.cu:1:10)"))
        << message;
  }
}

TEST(IncludePolicy, TheProjectsSharedHeadersAreReadFromKernelsCommon) {
  const include_roots roots{.toolkit = cuda_include_dirs(),
                            .common = common_headers_in(source_root / "kernels" / "common")};
  const auto headers = resolve_includes("#include \"common/block_reduce.cuh\"\n", "cand.cu", roots);
  ASSERT_EQ(headers.size(), 2U);  // block_reduce.cuh includes warp_reduce.cuh
  EXPECT_EQ(headers[0].name, "common/block_reduce.cuh");
  EXPECT_EQ(headers[1].name, "common/warp_reduce.cuh");
  EXPECT_NE(headers[0].content.find("block_sum"), std::string::npos);
}

TEST(IncludePolicy, ASymbolicLinkOutOfTheSharedFolderIsNoHeader) {
  static std::atomic<int> counter{0};
  const fs::path folder =
      fs::temp_directory_path() /
      ("blaster-include-policy-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
  fs::create_directories(folder);
  std::ofstream(folder / "real.cuh") << "int real;\n";
  fs::create_symlink("/etc/passwd", folder / "link.cuh");
  const auto lookup = common_headers_in(folder);
  EXPECT_EQ(lookup("common/real.cuh"), std::optional<std::string>("int real;\n"));
  EXPECT_EQ(lookup("common/link.cuh"), std::nullopt);
  EXPECT_EQ(lookup("real.cuh"), std::nullopt);  // the name carries the common/ prefix
  EXPECT_EQ(common_headers_in({})("common/real.cuh"), std::nullopt);
  const include_roots roots{.toolkit = cuda_include_dirs(), .common = lookup};
  EXPECT_NE(verdict("#include \"common/link.cuh\"\n", roots).find("no such header"),
            std::string::npos);
  fs::remove_all(folder);
}

TEST(IncludePolicy, NameExpressionsAndDefinesMustBePlainLines) {
  compile_request request;
  request.file_name = "cand.cu";
  request.defines = {"VEC=4"};
  request.name_expressions = {"rows<4, 128>"};
  EXPECT_EQ(check_preprocessor_inputs(request), "");

  compile_request newline = request;
  newline.name_expressions = {"k<1>\n#include \"/etc/passwd\"\n"};
  EXPECT_NE(check_preprocessor_inputs(newline).find("control character (byte 0x0A)"),
            std::string::npos);
  compile_request define = request;
  define.defines = {"X=1\r#include \"/etc/passwd\""};
  EXPECT_NE(check_preprocessor_inputs(define).find("control character"), std::string::npos);
  compile_request probe = request;
  probe.defines = {"P=__has_include(\"/etc/passwd\")"};
  EXPECT_NE(check_preprocessor_inputs(probe).find("__has_include"), std::string::npos);
}

}  // namespace
}  // namespace blaster
