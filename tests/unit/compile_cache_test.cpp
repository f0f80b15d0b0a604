#include "core/compile_cache.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "core/cas_store.hpp"
#include "core/nvrtc_compiler.hpp"
#include "core/sha256.hpp"
#include "evidence/store.hpp"

namespace blaster {
namespace {

namespace fs = std::filesystem;

compile_request small_request() {
  compile_request r;
  r.file_name = "scale.cu";
  r.source =
      "template <int N>\n"
      "__global__ void scale(float* out, const float* in, float s) {\n"
      "  out[threadIdx.x] = in[threadIdx.x] * s * N;\n"
      "}\n";
  r.name_expressions = {"scale<2>"};
  return r;
}

// A store in a fresh temp folder with the cache where the bench runner keeps it.
class CompileCache : public ::testing::Test {
 protected:
  void SetUp() override {
    static std::atomic<int> counter{0};
    home_ = fs::temp_directory_path() / ("blaster-compile-cache-" + std::to_string(::getpid()) +
                                         "-" + std::to_string(counter++));
    fs::remove_all(home_);
    records_.emplace(home_);
    cache_.emplace(home_ / "cache", records_->cas());
  }
  void TearDown() override {
    cache_.reset();
    records_.reset();
    fs::remove_all(home_);
  }

  [[nodiscard]] fs::path entry_of(const std::string& key) const {
    return home_ / "cache" / key.substr(0, 2) / (key + ".json");
  }

  fs::path home_;
  std::optional<store> records_;
  std::optional<compile_cache> cache_;
};

TEST_F(CompileCache, MissCompilesAndStoresThenHitsWithTheSameBytes) {
  const compile_request request = small_request();
  const compile_output first = compile_cached(request, &*cache_);
  ASSERT_TRUE(first.ok) << first.log;
  EXPECT_FALSE(first.cache_hit);
  EXPECT_FALSE(first.cubin.empty());
  EXPECT_EQ(first.key, compile_key(request));
  EXPECT_TRUE(fs::exists(entry_of(first.key)));
  EXPECT_TRUE(records_->cas().contains(sha256_hex(first.cubin)));
  EXPECT_TRUE(records_->cas().contains(sha256_hex(first.ptx)));

  std::vector<double> hit_ms;
  for (int i = 0; i < 5; ++i) {
    const compile_output again = compile_cached(request, &*cache_);
    ASSERT_TRUE(again.cache_hit);
    EXPECT_TRUE(again.ok);
    EXPECT_EQ(again.key, first.key);
    EXPECT_EQ(again.cubin, first.cubin);  // byte for byte
    EXPECT_EQ(again.ptx, first.ptx);
    EXPECT_EQ(again.log, first.log);
    EXPECT_EQ(again.options, first.options);
    EXPECT_EQ(again.lowered_names, first.lowered_names);
    hit_ms.push_back(again.compile_ms);
  }
  // A hit skips NVRTC, which is what makes re-running a bench fast.
  std::sort(hit_ms.begin(), hit_ms.end());
  EXPECT_LT(hit_ms[2], 10.0);
  EXPECT_GT(first.compile_ms, hit_ms[2]);
}

TEST_F(CompileCache, WithoutACacheItJustCompiles) {
  const compile_output out = compile_cached(small_request(), nullptr);
  ASSERT_TRUE(out.ok) << out.log;
  EXPECT_FALSE(out.cache_hit);
  EXPECT_EQ(out.lowered_names.at("scale<2>"), "_Z5scaleILi2EEvPfPKff");
}

TEST_F(CompileCache, KeyCoversEverythingThatChangesTheOutput) {
  const compile_request base = small_request();
  const std::string key = compile_key(base);
  EXPECT_EQ(key.size(), 64u);
  EXPECT_EQ(compile_key(base), key);  // deterministic

  compile_request source = base;
  source.source += "// a comment is still a different source\n";
  compile_request define = base;
  define.defines = {"TILE=8"};
  compile_request define_value = base;
  define_value.defines = {"TILE=16"};
  compile_request arch = base;
  arch.arch = "sm_80";
  compile_request name = base;
  name.name_expressions = {"scale<4>"};
  const std::vector<std::string> keys = {key,
                                         compile_key(source),
                                         compile_key(define),
                                         compile_key(define_value),
                                         compile_key(arch),
                                         compile_key(name)};
  for (std::size_t i = 0; i < keys.size(); ++i) {
    for (std::size_t j = i + 1; j < keys.size(); ++j) EXPECT_NE(keys[i], keys[j]) << i << " " << j;
  }

  // A different arch is a miss, not a wrong cubin from the cache.
  ASSERT_TRUE(compile_cached(base, &*cache_).ok);
  const compile_output other = compile_cached(arch, &*cache_);
  ASSERT_TRUE(other.ok) << other.log;
  EXPECT_FALSE(other.cache_hit);
  EXPECT_NE(std::find(other.options.begin(), other.options.end(), "--gpu-architecture=sm_80"),
            other.options.end());
}

TEST_F(CompileCache, FileNameIsPartOfTheKey) {
  // Two files with the same text: each one's errors must name that file.
  compile_request first = small_request();
  first.source = "__global__ void scale(float* out) {\n  out[0] = nowhere;\n}\n";
  first.name_expressions = {"scale"};
  first.file_name = "first.cu";
  compile_request copy = first;
  copy.file_name = "copy.cu";
  EXPECT_NE(compile_key(first), compile_key(copy));
  static_cast<void>(compile_cached(first, &*cache_));
  const compile_output out = compile_cached(copy, &*cache_);
  EXPECT_NE(out.log.find("copy.cu(2)"), std::string::npos) << out.log;
}

TEST_F(CompileCache, FailedCompileIsCachedWithItsLog) {
  compile_request bad = small_request();
  bad.source = "__global__ void scale(float* out) {\n  out[0] = nowhere;\n}\n";
  bad.name_expressions = {"scale"};
  const compile_output first = compile_cached(bad, &*cache_);
  EXPECT_FALSE(first.ok);
  EXPECT_FALSE(first.cache_hit);
  EXPECT_NE(first.log.find("scale.cu(2)"), std::string::npos) << first.log;

  const compile_output again = compile_cached(bad, &*cache_);
  EXPECT_TRUE(again.cache_hit);
  EXPECT_FALSE(again.ok);
  EXPECT_EQ(again.log, first.log);
  EXPECT_TRUE(again.cubin.empty());
}

TEST_F(CompileCache, CorruptEntryFallsBackToACompile) {
  const compile_request request = small_request();
  const compile_output first = compile_cached(request, &*cache_);
  ASSERT_TRUE(first.ok);
  for (const std::string damage : {"{not json", "{\"key\": \"00\"}", "[]", "", "null"}) {
    SCOPED_TRACE(damage);
    {
      std::ofstream out(entry_of(first.key), std::ios::binary | std::ios::trunc);
      out << damage;
    }
    compile_output again;
    ASSERT_NO_THROW(again = compile_cached(request, &*cache_));
    EXPECT_FALSE(again.cache_hit);
    ASSERT_TRUE(again.ok) << again.log;
    EXPECT_EQ(again.cubin, first.cubin);
    // The recompile repairs the entry.
    EXPECT_TRUE(compile_cached(request, &*cache_).cache_hit);
  }
}

TEST_F(CompileCache, EntryWhoseKeyIsNotAStringFallsBackToACompile) {
  const compile_request request = small_request();
  const compile_output first = compile_cached(request, &*cache_);
  ASSERT_TRUE(first.ok);
  {
    std::ofstream out(entry_of(first.key), std::ios::binary | std::ios::trunc);
    out << "{\"key\": 5}";
  }
  compile_output again;
  ASSERT_NO_THROW(again = compile_cached(request, &*cache_));
  EXPECT_FALSE(again.cache_hit);
  EXPECT_EQ(again.cubin, first.cubin);
}

TEST_F(CompileCache, EntryWithWrongFieldTypesFallsBackToACompile) {
  const compile_request request = small_request();
  const compile_output first = compile_cached(request, &*cache_);
  ASSERT_TRUE(first.ok);
  {
    std::ofstream out(entry_of(first.key), std::ios::binary | std::ios::trunc);
    out << "{\"key\": \"" << first.key << "\", \"ok\": \"yes\", \"log\": 3}";
  }
  compile_output again;
  ASSERT_NO_THROW(again = compile_cached(request, &*cache_));
  EXPECT_FALSE(again.cache_hit);
  EXPECT_EQ(again.cubin, first.cubin);
}

TEST_F(CompileCache, DeletedObjectFallsBackToACompile) {
  const compile_request request = small_request();
  const compile_output first = compile_cached(request, &*cache_);
  ASSERT_TRUE(first.ok);
  const fs::path cubin = records_->cas().path_of(sha256_hex(first.cubin));
  ASSERT_TRUE(fs::remove(cubin));

  compile_output again;
  ASSERT_NO_THROW(again = compile_cached(request, &*cache_));
  EXPECT_FALSE(again.cache_hit);
  ASSERT_TRUE(again.ok) << again.log;
  EXPECT_EQ(again.cubin, first.cubin);
  // The object is stored again, so the next lookup hits.
  EXPECT_TRUE(fs::exists(cubin));
  EXPECT_TRUE(compile_cached(request, &*cache_).cache_hit);
}

TEST_F(CompileCache, DamagedObjectFallsBackToACompile) {
  // Bytes that no longer hash to their name must never come back as a cubin.
  const compile_request request = small_request();
  const compile_output first = compile_cached(request, &*cache_);
  ASSERT_TRUE(first.ok);
  const fs::path cubin = records_->cas().path_of(sha256_hex(first.cubin));
  fs::permissions(cubin, fs::perms::owner_write, fs::perm_options::add);
  {
    std::ofstream out(cubin, std::ios::binary | std::ios::trunc);
    out << "not a cubin";
  }
  compile_output again;
  ASSERT_NO_THROW(again = compile_cached(request, &*cache_));
  EXPECT_FALSE(again.cache_hit);
  EXPECT_EQ(again.cubin, first.cubin);
}

TEST_F(CompileCache, DamagedObjectIsRepairedByTheRecompile) {
  const compile_request request = small_request();
  const compile_output first = compile_cached(request, &*cache_);
  ASSERT_TRUE(first.ok);
  const fs::path cubin = records_->cas().path_of(sha256_hex(first.cubin));
  fs::permissions(cubin, fs::perms::owner_write, fs::perm_options::add);
  {
    std::ofstream out(cubin, std::ios::binary | std::ios::trunc);
    out << "not a cubin";
  }
  EXPECT_FALSE(compile_cached(request, &*cache_).cache_hit);
  const compile_output repaired = compile_cached(request, &*cache_);
  EXPECT_TRUE(repaired.cache_hit);
  EXPECT_EQ(repaired.cubin, first.cubin);
}

}  // namespace
}  // namespace blaster
