// SPIRV-Cross driver for benches/thinlto_parity.py: each SPIR-V module
// named on the command line is cross-compiled ROUNDS times by every
// backend, all classes derived from spirv_cross::Compiler through
// CompilerGLSL (GLSL, HLSL, MSL, C++, JSON reflection): the first round's
// sources are printed, then per module and backend the output size and a
// checksum over all rounds (or the compiler's error, which is
// deterministic too).
#include "spirv_cpp.hpp"
#include "spirv_glsl.hpp"
#include "spirv_hlsl.hpp"
#include "spirv_msl.hpp"
#include "spirv_reflect.hpp"

#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

static const int ROUNDS = 12;

static std::vector<uint32_t> read_spirv(const char* path) {
  std::ifstream f(path, std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  std::vector<uint32_t> words(bytes.size() / 4);
  for (size_t i = 0; i < words.size(); ++i)
    words[i] = uint32_t(uint8_t(bytes[4 * i])) | uint32_t(uint8_t(bytes[4 * i + 1])) << 8 |
               uint32_t(uint8_t(bytes[4 * i + 2])) << 16 | uint32_t(uint8_t(bytes[4 * i + 3])) << 24;
  return words;
}

static std::unique_ptr<spirv_cross::CompilerGLSL> make(int backend, const std::vector<uint32_t>& words) {
  switch (backend) {
    case 0: {
      auto c = std::make_unique<spirv_cross::CompilerGLSL>(words);
      auto o = c->get_common_options();
      o.version = 450;
      c->set_common_options(o);
      return c;
    }
    case 1: {
      auto c = std::make_unique<spirv_cross::CompilerHLSL>(words);
      auto o = c->get_hlsl_options();
      o.shader_model = 50;
      c->set_hlsl_options(o);
      return c;
    }
    case 2:
      return std::make_unique<spirv_cross::CompilerMSL>(words);
    case 3:
      return std::make_unique<spirv_cross::CompilerCPP>(words);
    default: {
      auto c = std::make_unique<spirv_cross::CompilerReflection>(words);
      c->set_format("json");
      return c;
    }
  }
}

static const char* const BACKENDS[] = {"glsl", "hlsl", "msl", "cpp", "reflect"};

int main(int argc, char** argv) {
  for (int a = 1; a < argc; ++a) {
    const char* name = std::strrchr(argv[a], '/') ? std::strrchr(argv[a], '/') + 1 : argv[a];
    std::vector<uint32_t> words = read_spirv(argv[a]);
    for (int b = 0; b < 5; ++b) {
      uint64_t h = 1469598103934665603ULL;
      size_t bytes = 0;
      std::string error;
      for (int round = 0; round < ROUNDS && error.empty(); ++round) {
        try {
          std::string out = make(b, words)->compile();
          for (unsigned char c : out) h = (h ^ c) * 1099511628211ULL;
          bytes += out.size();
          if (round == 0) std::printf("==== %s %s\n%s", name, BACKENDS[b], out.c_str());
        } catch (const spirv_cross::CompilerError& e) {
          error = e.what();
        }
      }
      if (error.empty())
        std::printf("%s %s: %zu bytes, checksum %016" PRIx64 "\n", name, BACKENDS[b], bytes, h);
      else
        std::printf("%s %s: error: %s\n", name, BACKENDS[b], error.c_str());
    }
  }
  return 0;
}
