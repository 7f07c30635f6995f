// glslang driver for benches/thinlto_parity.py: each GLSL or HLSL shader
// named on the command line (its stage from the extension, HLSL when the
// name starts with "hlsl.") is parsed ROUNDS times, with the AST dump on,
// linked, translated to SPIR-V and disassembled: the front end's
// TIntermTraverser visitors, the parse contexts, TType's virtual accessors
// and the SPIR-V builder. The first round's info logs (which hold the AST)
// and disassembly are printed; per shader, the SPIR-V's size and a
// checksum over all rounds.
#include "SPIRV/GlslangToSpv.h"
#include "SPIRV/disassemble.h"
#include "glslang/Public/ResourceLimits.h"
#include "glslang/Public/ShaderLang.h"

#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

static const int ROUNDS = 3;

static bool stage_of(const std::string& path, EShLanguage* stage) {
  static const struct {
    const char* ext;
    EShLanguage stage;
  } kinds[] = {{".vert", EShLangVertex},         {".frag", EShLangFragment}, {".comp", EShLangCompute},
               {".geom", EShLangGeometry},       {".tesc", EShLangTessControl}, {".tese", EShLangTessEvaluation},
               {".mesh", EShLangMesh},           {".task", EShLangTask}};
  for (const auto& k : kinds) {
    size_t n = std::strlen(k.ext);
    if (path.size() > n && path.compare(path.size() - n, n, k.ext) == 0) {
      *stage = k.stage;
      return true;
    }
  }
  return false;
}

static std::string base_name(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// One round for one shader: what it prints (empty unless `print`), and
// the SPIR-V words folded into `sum`.
static size_t compile(const std::string& path, const std::string& text, EShLanguage stage, bool print,
                      uint64_t* sum) {
  bool hlsl = base_name(path).rfind("hlsl.", 0) == 0;
  glslang::TShader shader(stage);
  const char* strings[] = {text.c_str()};
  const char* names[] = {path.c_str()};
  shader.setStringsWithLengthsAndNames(strings, nullptr, names, 1);
  shader.setEntryPoint("main");
  shader.setAutoMapBindings(true);
  shader.setAutoMapLocations(true);
  shader.setEnvInput(hlsl ? glslang::EShSourceHlsl : glslang::EShSourceGlsl, stage, glslang::EShClientVulkan, 100);
  shader.setEnvClient(glslang::EShClientVulkan, glslang::EShTargetVulkan_1_3);
  shader.setEnvTarget(glslang::EShTargetSpv, glslang::EShTargetSpv_1_6);
  EShMessages messages = EShMessages(EShMsgSpvRules | EShMsgVulkanRules | EShMsgAST |
                                     (hlsl ? EShMsgReadHlsl : EShMsgDefault));
  bool parsed = shader.parse(GetDefaultResources(), 100, false, messages);
  if (print) std::cout << "== " << base_name(path) << (parsed ? "" : " (parse failed)") << "\n"
                       << shader.getInfoLog() << shader.getInfoDebugLog();
  if (!parsed) return 0;
  glslang::TProgram program;
  program.addShader(&shader);
  if (!program.link(messages)) {
    if (print) std::cout << "link failed\n" << program.getInfoLog();
    return 0;
  }
  std::vector<unsigned int> spirv;
  spv::SpvBuildLogger logger;
  glslang::SpvOptions options;
  glslang::GlslangToSpv(*program.getIntermediate(stage), spirv, &logger, &options);
  if (print) {
    std::cout << logger.getAllMessages();
    spv::Disassemble(std::cout, spirv);
  } else {
    std::ostringstream sink;
    spv::Disassemble(sink, spirv);
    *sum = *sum * 1099511628211ULL + sink.str().size();
  }
  for (unsigned int w : spirv) *sum = (*sum ^ w) * 1099511628211ULL;
  return spirv.size();
}

int main(int argc, char** argv) {
  glslang::InitializeProcess();
  for (int i = 1; i < argc; ++i) {
    EShLanguage stage;
    if (!stage_of(argv[i], &stage)) {
      std::fprintf(stderr, "glslang_main: %s: no shader stage\n", argv[i]);
      return 1;
    }
    std::ifstream f(argv[i]);
    std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    uint64_t sum = 14695981039346656037ULL;
    size_t words = 0;
    for (int r = 0; r < ROUNDS; ++r) words = compile(argv[i], text, stage, r == 0, &sum);
    std::cout << "-- " << base_name(argv[i]) << ": " << words << " words, checksum " << std::hex << sum << std::dec
              << "\n";
  }
  glslang::FinalizeProcess();
  return 0;
}
