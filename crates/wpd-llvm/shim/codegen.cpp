// Code generation as lld's LTO backends do it (LLVM 19 LTOBackend.cpp), for
// what the C API lacks: the code generation flags LLVM registers only in its
// tools (codegen::RegisterCodeGenFlags), mapped onto TargetOptions; the
// ThinLTO pipeline with profile-guided optimization (PGOOptions); and object
// emission with a second stream for split DWARF (.dwo).

#include "common.h"
#include "llvm/CodeGen/CommandFlags.h"
#include "llvm/MC/MCTargetOptionsCommandFlags.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/SubtargetFeature.h"
#include "llvm/TargetParser/Triple.h"
#include "llvm/IR/DiagnosticHandler.h"
#include "llvm/IR/DiagnosticInfo.h"
#include "llvm/IR/DiagnosticPrinter.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/PassManager.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Passes/StandardInstrumentations.h"
#include "llvm/Support/CodeGen.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/PGOOptions.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/VirtualFileSystem.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm-c/Core.h"
#include "llvm-c/TargetMachine.h"

#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

using namespace llvm;

void wpd_shim::register_codegen_flags() {
  // Function-local statics: constructed once, by whichever thread comes
  // first, the others waiting (C++11). Their constructors declare the
  // options as their own function-local statics, so a second construction
  // would not register anything twice either.
  static codegen::RegisterCodeGenFlags codegen_flags;
  static mc::RegisterMCTargetOptionsFlags mc_flags;
}

TargetOptions wpd_shim::link_target_options(bool function_sections, bool data_sections) {
  register_codegen_flags();
  // lld passes an empty triple too: the triple only gives the defaults of
  // -emulated-tls and -enable-tlsdesc, which are off for x86-64 Linux and
  // which the link sets itself.
  TargetOptions t = codegen::InitTargetOptionsFromCodeGenFlags(Triple());
  // A section per function and datum (so --gc-sections and --icf work at
  // function granularity) and address-significance tables, as lld sets
  // them whatever the flags say.
  t.FunctionSections = function_sections;
  t.DataSections = data_sections;
  t.EmitAddrsig = true;
  return t;
}

std::optional<Reloc::Model> wpd_shim::reloc_model(std::optional<Reloc::Model> link) {
  register_codegen_flags();
  if (std::optional<Reloc::Model> explicit_model = codegen::getExplicitRelocModel()) return explicit_model;
  return link;
}

std::string wpd_shim::target_cpu(const std::string &cpu, std::vector<std::string> &features) {
  register_codegen_flags();
  SubtargetFeatures added;
  std::string name = cpu;
  if (name == "native") {
    name = sys::getHostCPUName().str();
    // Not every machine of a CPU family has every feature the family's
    // name implies (AVX on some Sandy Bridges): add what this one has.
    for (const auto &feature : sys::getHostCPUFeatures()) added.AddFeature(feature.getKey(), feature.getValue());
  }
  for (const std::string &attr : codegen::getMAttrs()) added.AddFeature(attr);
  features = added.getFeatures();
  return name;
}

static TargetMachine *unwrap_tm(LLVMTargetMachineRef tm) { return reinterpret_cast<TargetMachine *>(tm); }


namespace {
// Keeps the first error LLVM diagnoses (an unreadable profile, an assembler
// error in code generation): LLVM's default handler would print it and exit
// the process from a backend thread. Everything else (warnings, remarks)
// gets LLVM's default treatment.
struct CollectErrors : DiagnosticHandler {
  std::string first;
  bool handleDiagnostics(const DiagnosticInfo &di) override {
    if (di.getSeverity() != DS_Error) return false;
    if (first.empty()) {
      raw_string_ostream os(first);
      DiagnosticPrinterRawOStream printer(os);
      di.print(printer);
    }
    return true;
  }
};

// Installs CollectErrors on a context for its lifetime, then puts the
// context's own handler back.
class ErrorScope {
 public:
  explicit ErrorScope(LLVMContext &ctx) : ctx_(ctx), previous_(ctx.getDiagnosticHandler()) {
    auto collect = std::make_unique<CollectErrors>();
    errors_ = collect.get();
    ctx_.setDiagnosticHandler(std::move(collect));
  }
  ~ErrorScope() { ctx_.setDiagnosticHandler(std::move(previous_)); }
  // The first error so far (empty: none).
  const std::string &first() const { return errors_->first; }

 private:
  LLVMContext &ctx_;
  std::unique_ptr<DiagnosticHandler> previous_;
  CollectErrors *errors_;
};
}  // namespace

extern "C" {

// -debugger-tune=: 1 gdb, 2 lldb, 3 sce, 4 dbx; 0 leaves the target's default.
void wpd_tm_set_debugger_tuning(LLVMTargetMachineRef tm, int tuning) {
  DebuggerKind kind = tuning == 1   ? DebuggerKind::GDB
                      : tuning == 2 ? DebuggerKind::LLDB
                      : tuning == 3 ? DebuggerKind::SCE
                      : tuning == 4 ? DebuggerKind::DBX
                                    : DebuggerKind::Default;
  unwrap_tm(tm)->Options.DebuggerTuning = kind;
}

// -emulated-tls: TLS through __emutls_get_address.
void wpd_tm_set_emulated_tls(LLVMTargetMachineRef tm, int on) { unwrap_tm(tm)->Options.EmulatedTLS = on != 0; }

// -enable-tlsdesc (-mtls-dialect=gnu2): TLS descriptors.
void wpd_tm_set_tls_descriptors(LLVMTargetMachineRef tm, int on) { unwrap_tm(tm)->Options.EnableTLSDESC = on != 0; }

// -stack-size-section: a .stack_sizes section.
void wpd_tm_set_stack_size_section(LLVMTargetMachineRef tm, int on) {
  unwrap_tm(tm)->Options.EmitStackSizeSection = on != 0;
}

// -split-machine-functions: cold blocks (by profile) move to .text.split.
void wpd_tm_set_split_machine_functions(LLVMTargetMachineRef tm, int on) {
  unwrap_tm(tm)->Options.EnableMachineFunctionSplitter = on != 0;
}

// -enable-jmc-instrument (-fjmc): Just My Code debugging checks.
void wpd_tm_set_jmc_instrument(LLVMTargetMachineRef tm, int on) { unwrap_tm(tm)->Options.JMCInstrument = on != 0; }

// Runs a new-pass-manager pipeline as LLVMRunPasses does, but with a
// PassBuilder that knows the link's profile, set up as LLVM 19's
// LTOBackend.cpp runNewPMPasses sets it up: a sample profile, else
// context-sensitive instrumentation (cs_generate, writing to cs_profile),
// else a context-sensitive profile to use (cs_profile). Empty strings mean
// absent. Returns WPD_OK, else WPD_FAILED with *err set (malloc'd).
WpdStatus wpd_run_passes_with_profile(LLVMModuleRef mod, const char *pipeline, LLVMTargetMachineRef tm, int vectorize,
                                      const char *sample_profile, const char *cs_profile, int cs_generate, char **err) {
  *err = nullptr;
  Module *m = unwrap(mod);
  TargetMachine *machine = unwrap_tm(tm);
  auto fs = vfs::getRealFileSystem();
  std::optional<PGOOptions> pgo;
  if (*sample_profile)
    pgo = PGOOptions(sample_profile, "", "", /*MemoryProfile=*/"", fs, PGOOptions::SampleUse,
                     PGOOptions::NoCSAction, PGOOptions::ColdFuncOpt::Default, /*DebugInfoForProfiling=*/true);
  else if (cs_generate)
    pgo = PGOOptions("", cs_profile, "", /*MemoryProfile=*/"", fs, PGOOptions::IRUse, PGOOptions::CSIRInstr,
                     PGOOptions::ColdFuncOpt::Default, /*DebugInfoForProfiling=*/false);
  else if (*cs_profile)
    pgo = PGOOptions(cs_profile, "", "", /*MemoryProfile=*/"", fs, PGOOptions::IRUse, PGOOptions::CSIRUse,
                     PGOOptions::ColdFuncOpt::Default, /*DebugInfoForProfiling=*/false);
  machine->setPGOOption(pgo);

  PipelineTuningOptions pto;
  pto.LoopVectorization = vectorize != 0;
  pto.SLPVectorization = vectorize != 0;
  pto.LoopUnrolling = true;
  PassInstrumentationCallbacks pic;
  PassBuilder pb(machine, pto, pgo, &pic);
  LoopAnalysisManager lam;
  FunctionAnalysisManager fam;
  CGSCCAnalysisManager cgam;
  ModuleAnalysisManager mam;
  pb.registerLoopAnalyses(lam);
  pb.registerFunctionAnalyses(fam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerModuleAnalyses(mam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  StandardInstrumentations si(m->getContext(), /*DebugLogging=*/false, /*VerifyEach=*/false);
  si.registerCallbacks(pic, &mam);

  ModulePassManager mpm;
  if (Error e = pb.parsePassPipeline(mpm, pipeline)) {
    *err = wpd_shim::dup_string(toString(std::move(e)));
    return WPD_FAILED;
  }
  ErrorScope errors(m->getContext());
  mpm.run(*m, mam);
  if (!errors.first().empty()) {
    *err = wpd_shim::dup_string(errors.first());
    return WPD_FAILED;
  }
  return WPD_OK;
}

// Emits `mod` as an ELF object into a malloc'd buffer (*out, *len), as
// LLVMTargetMachineEmitToMemoryBuffer does. With a non-empty dwo_path the
// DWARF goes split, as LTOBackend.cpp codegen does it for -plugin-opt=dwo_dir:
// the skeleton in the object names dwo_path, the rest is written there.
// Returns WPD_OK, else WPD_FAILED with *err set (malloc'd).
WpdStatus wpd_emit_object(LLVMTargetMachineRef tm, LLVMModuleRef mod, const char *dwo_path, char **out, size_t *len,
                          char **err) {
  *err = nullptr;
  *out = nullptr;
  *len = 0;
  TargetMachine *machine = unwrap_tm(tm);
  Module *m = unwrap(mod);
  m->setDataLayout(machine->createDataLayout());
  std::unique_ptr<ToolOutputFile> dwo;
  machine->Options.MCOptions.SplitDwarfFile = dwo_path;
  if (*dwo_path) {
    std::error_code ec;
    dwo = std::make_unique<ToolOutputFile>(dwo_path, ec, sys::fs::OF_None);
    if (ec) {
      *err = wpd_shim::dup_string("cannot write " + std::string(dwo_path) + ": " + ec.message());
      return WPD_FAILED;
    }
  }
  SmallString<0> code;
  raw_svector_ostream os(code);
  legacy::PassManager passes;
  if (machine->addPassesToEmitFile(passes, os, dwo ? &dwo->os() : nullptr, CodeGenFileType::ObjectFile)) {
    *err = wpd_shim::dup_string("the target machine cannot emit an object file");
    return WPD_FAILED;
  }
  {
    ErrorScope errors(m->getContext());
    passes.run(*m);
    if (!errors.first().empty()) {
      *err = wpd_shim::dup_string(errors.first());
      return WPD_FAILED;
    }
  }
  if (dwo) {
    dwo->os().close();
    if (dwo->os().has_error()) {
      *err = wpd_shim::dup_string("cannot write " + std::string(dwo_path) + ": " + dwo->os().error().message());
      dwo->os().clear_error();
      return WPD_FAILED;
    }
    dwo->keep();
  }
  *out = static_cast<char *>(std::malloc(code.size() ? code.size() : 1));
  if (!*out) {
    *err = wpd_shim::dup_string("out of memory");
    return WPD_FAILED;
  }
  std::memcpy(*out, code.data(), code.size());
  *len = code.size();
  return WPD_OK;
}

}  // extern "C"
