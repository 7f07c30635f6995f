// ThinLTO through LLVM's own library (llvm/LTO/LTO.h), driven by wpd:
//
//  * wpd_write_thinlto_bitcode: a module wpd has rewritten, written back as
//    ThinLTO bitcode with a fresh module summary (so the call edges that
//    devirtualization created are in the summary, where LLVM's importer
//    sees them), a module hash (promoted locals get distinct names) and an
//    irsymtab;
//  * wpd_lto_*: lto::LTO with the symbol resolutions wpd computed from its
//    link model, an in-process ThinLTO backend, and the native objects
//    handed back per task. The thin link (prevailing copies, dead
//    stripping, internalization and promotion, attribute propagation,
//    cross-module import) and the backends are LLVM's, configured as lld
//    configures them (lld/ELF/LTO.cpp createConfig).
//
// Declared in src/ffi.rs, wrapped safely in src/lto.rs.

#include "common.h"
#include "llvm/Analysis/ModuleSummaryAnalysis.h"
#include "llvm/CodeGen/CommandFlags.h"
#include "llvm/Analysis/ProfileSummaryInfo.h"
#include "llvm/Bitcode/BitcodeWriter.h"
#include "llvm/IR/DiagnosticInfo.h"
#include "llvm/IR/DiagnosticPrinter.h"
#include "llvm/IR/DebugInfo.h"
#include "llvm/IR/Metadata.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/ModuleSummaryIndex.h"
#include "llvm/LTO/Config.h"
#include "llvm/LTO/LTO.h"
#include "llvm/LTO/LTOBackend.h"
#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/Object/IRSymtab.h"
#include "llvm/Transforms/IPO/FunctionImport.h"
#include "llvm/IR/ProfileSummary.h"
#include "llvm/Linker/Linker.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/SHA1.h"
#include "llvm/TargetParser/Triple.h"
#include "llvm/Transforms/Utils/FunctionImportUtils.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/CachePruning.h"
#include "llvm/Support/Caching.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Threading.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/Transforms/Utils/ModuleUtils.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/ThreadPool.h"
#include "llvm-c/Core.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

using namespace llvm;

// The interface between lto::LTO and a ThinLTO backend driver. LLVM 19
// declares it in LTO.h but defines it in LTO.cpp only, so a driver of our
// own (WpdThinBackend below) needs the definition. This is an ABI contract,
// not an API: the base class layout (the four references and flag its
// constructor keeps, then nothing else) and the order of its virtual
// functions (destructor, start, wait, thread count) are LLVM 19's, read off
// libLLVMLTO.a (the vtable of its in-process backend, and the mangled
// signature of `start`); the inline constructor and destructor below are the
// ones LLVM's objects carry as weak definitions. LLVM 20 changed the class
// (a thread pool moved into it, `start` gained a parameter): hence the
// version check, which keeps another LLVM from compiling this at all.
static_assert(LLVM_VERSION_MAJOR == 19, "lto::ThinBackendProc below is LLVM 19's; check LTO.cpp of this LLVM");
namespace llvm::lto {
class ThinBackendProc {
protected:
  const Config &Conf;
  ModuleSummaryIndex &CombinedIndex;
  const DenseMap<StringRef, GVSummaryMapTy> &ModuleToDefinedGVSummaries;
  IndexWriteCallback OnWrite;
  bool ShouldEmitImportsFiles;

public:
  ThinBackendProc(const Config &conf, ModuleSummaryIndex &index,
                  const DenseMap<StringRef, GVSummaryMapTy> &defined, IndexWriteCallback on_write,
                  bool imports_files)
      : Conf(conf), CombinedIndex(index), ModuleToDefinedGVSummaries(defined), OnWrite(std::move(on_write)),
        ShouldEmitImportsFiles(imports_files) {}
  virtual ~ThinBackendProc() = default;
  virtual Error start(unsigned Task, BitcodeModule BM, const FunctionImporter::ImportMapTy &ImportList,
                      const FunctionImporter::ExportSetTy &ExportList,
                      const std::map<GlobalValue::GUID, GlobalValue::LinkageTypes> &ResolvedODR,
                      MapVector<StringRef, BitcodeModule> &ModuleMap) = 0;
  virtual Error wait() = 0;
  virtual unsigned getThreadCount() = 0;
};
}  // namespace llvm::lto

namespace {

using wpd_shim::dup_bytes;

// Options of the link's LTO, as wpd's Rust side passes them (src/lto.rs
// LtoOptions has the same layout).
struct WpdLtoOptions {
  unsigned opt_level;
  unsigned cg_opt_level;  // code generation: 0 None, 1 Less, 2 Default, 3 Aggressive
  const char *cpu;        // "" : the modules' own target-cpu
  int reloc;              // 0 static, 1 PIC, 2 the modules' own (relocatable output)
  int function_sections;
  int data_sections;
  int debugger_tuning;    // -1 target default, else llvm::DebuggerKind
  int emulated_tls;
  int tls_descriptors;
  int stack_size_section;
  int split_machine_functions;
  int jmc_instrument;
  const char *sample_profile;  // "" : none
  const char *cs_profile;      // "" : none
  int cs_generate;
  const char *dwo_dir;         // "" : none
  unsigned threads;            // 0 : one per physical core, as lld
  int verify;                  // verify input modules (lld's default)
  int regular_parts;           // regular LTO modules (split units' vtables) will be added
};

// One ThinLTO backend as WpdThinBackend ran it: its task, its estimated
// work (backend_work), and when it started (after the first started) and
// how long it took, in milliseconds.
struct BackendRun {
  unsigned task;
  uint64_t work;
  double start_ms;
  double ms;
};

// The LTO driver with its outputs and the first error a backend diagnosed.
struct WpdLto {
  std::unique_ptr<lto::LTO> lto;
  std::vector<SmallVector<char, 0>> outputs;
  // Module names of the inputs added: LLVM keys its maps by them.
  std::vector<std::unique_ptr<std::string>> names;
  std::mutex mutex;
  std::string first_error;
  std::vector<std::string> warnings;
  // The thin backends, in the order they started.
  std::vector<BackendRun> runs;
  // Verify each module before its optimization pipeline (make_config).
  bool verify = true;
  // Modules compiled by another module's backend (wpd_lto_join): the
  // joined module's task -> its host's task.
  std::map<unsigned, unsigned> joined;
  // Tasks that import global variables only, no function
  // (wpd_lto_import_variables_only): modules LLVM's own link would compile
  // in its regular LTO partition, which imports nothing from ThinLTO modules.
  std::set<unsigned> variables_only;
  // Per host task, while its backend runs: the joined module, read and
  // readied in the backend's context, for the post-import hook to link in.
  std::vector<std::unique_ptr<Module>> joining;
  // An index-only link (wpd_lto_new_index_only): the list of native
  // objects the final link takes (lld's --thinlto-index-only=FILE), if any.
  std::unique_ptr<raw_fd_ostream> linked_objects;
  // Whether this is an index-only link (LLVM's index-writing backend).
  bool index_only = false;
  // The inputs added (wpd_lto_add), in order: module name and source file
  // name (the index-only link's hook names their locals by them).
  std::vector<std::pair<std::string, std::string>> added;

  // Keeps the first error reported, from any backend thread.
  void fail(std::string text) {
    std::lock_guard<std::mutex> lock(mutex);
    if (first_error.empty()) first_error = std::move(text);
  }
};

// Bits of a resolution byte (src/lto.rs Resolution::bits).
enum : unsigned char {
  RES_PREVAILING = 1u << 0,
  RES_FINAL_DEFINITION = 1u << 1,
  RES_VISIBLE_TO_REGULAR_OBJ = 1u << 2,
  RES_EXPORT_DYNAMIC = 1u << 3,
  RES_LINKER_REDEFINED = 1u << 4,
};

// Bits of a symbol's flags (src/lto.rs LtoSymbol::from_flags).
enum : unsigned {
  SYM_UNDEFINED = 1u << 0,
  SYM_WEAK = 1u << 1,
  SYM_COMMON = 1u << 2,
  SYM_USED = 1u << 3,
  SYM_HIDDEN = 1u << 6,
  SYM_PROTECTED = 1u << 7,
};

std::string error_text(Error e) {
  std::string s;
  handleAllErrors(std::move(e), [&](const ErrorInfoBase &info) {
    if (!s.empty()) s += "; ";
    s += info.message();
  });
  return s;
}

// How much work a ThinLTO backend has, estimated from the combined index
// after the thin link, in instructions (clang's per-function counts): the
// live functions it compiles (dead ones are dropped before its pipeline),
// the definitions it imports (optimized with it and inlined into it), a
// third of its non-prevailing copies of ODR functions (available_externally
// after the thin link: optimized where they are inlined, never compiled),
// and a fixed cost per backend (pipeline and target set up, the object
// written: about as much as two hundred instructions). On the parity
// benchmark's template program a module holding prevailing copies took
// 110 ms where one of the same size holding non-prevailing ones took 60.
constexpr uint64_t per_backend = 200;
uint64_t backend_work(const ModuleSummaryIndex &index, const GVSummaryMapTy &defined,
                      const FunctionImporter::ImportMapTy &imports) {
  auto instructions = [](const GlobalValueSummary *s) -> uint64_t {
    const auto *f = s ? dyn_cast<FunctionSummary>(s->getBaseObject()) : nullptr;
    return f ? f->instCount() : 0;
  };
  uint64_t compiled = 0, copies = 0, imported = 0;
  for (const auto &[guid, summary] : defined) {
    if (!summary->isLive()) continue;
    (summary->linkage() == GlobalValue::AvailableExternallyLinkage ? copies : compiled) += instructions(summary);
  }
  for (const auto &[module, functions] : imports)
    for (const auto &[guid, kind] : functions)
      if (kind == GlobalValueSummary::Definition) imported += instructions(index.findSummaryInModule(guid, module));
  return per_backend + compiled + imported + copies / 3;
}

// `imports` without its functions: the global variables only (and aliases
// of them). The thin link counts on every module that references a
// variable it found read-only or write-only getting a copy of it (the
// variable's home internalizes its own after import), so those imports
// stay; a function import only lets a backend inline what it could call.
// LLVM's own thin link put every function import in the exporting
// module's export list, so leaving one out changes nothing elsewhere.
FunctionImporter::ImportMapTy variables_only(const ModuleSummaryIndex &index,
                                             const FunctionImporter::ImportMapTy &imports) {
  FunctionImporter::ImportMapTy kept;
  for (const auto &[module, values] : imports) {
    FunctionImporter::FunctionsToImportTy variables;
    for (const auto &[guid, kind] : values) {
      const GlobalValueSummary *s = index.findSummaryInModule(guid, module);
      if (s && isa<GlobalVarSummary>(s->getBaseObject())) variables.emplace(guid, kind);
    }
    if (!variables.empty()) kept[module] = std::move(variables);
  }
  return kept;
}

// wpd's in-process ThinLTO backend driver: LLVM's own backend for each
// module (parse, then lto::thinBackend: import, the post-link pipeline,
// code generation; the cache asked first, under LLVM's key) on a pool of
// `threads`, as lld's in-process driver runs it, in another order. LLVM
// starts the backends largest bitcode first. The largest is often not the
// slowest (a small main.cpp that imports and inlines half the program
// takes longest), and when the slowest starts last one core idles while it
// runs: with lld, a quarter of the link of the parity benchmark's generated
// program. Every backend is known before any starts (lto::LTO calls `start`
// for each in one loop, then `wait`), so `wait` starts them by estimated
// work, the most first (backend_work; ties in task order). Each backend
// writes its own task's output, so the order changes no byte of any
// object. Each run is recorded in `runs` (in start order) for the report.
class WpdThinBackend : public lto::ThinBackendProc {
  // What LLVM's driver hands a backend for one module.
  struct Part {
    BitcodeModule module;
    const FunctionImporter::ImportMapTy *imports;
    const FunctionImporter::ExportSetTy *exports;
    const std::map<GlobalValue::GUID, GlobalValue::LinkageTypes> *resolved_odr;
    const GVSummaryMapTy *defined;
  };
  struct Job {
    unsigned task;
    Part part;
    // For a task that imports variables only, the import list it gets
    // (part.imports points at it).
    std::shared_ptr<const FunctionImporter::ImportMapTy> own_imports;
    MapVector<StringRef, BitcodeModule> *module_map;
    uint64_t work;
    // A module joined to this one (wpd_lto_join), compiled by this backend.
    std::optional<Part> joined;
  };
  ThreadPoolStrategy threads;
  AddStreamFn add_stream;
  FileCache cache;
  WpdLto *state;
  std::set<GlobalValue::GUID> cfi_defs, cfi_decls;
  std::vector<Job> jobs;
  std::mutex mutex;
  std::optional<Error> error;

  // Whether lto::thinBackend clears dso_local on a module's declarations:
  // as LLVM 19 decides it from the backend's target machine (ELF, not
  // static, not PIE), whose relocation model is the configuration's, else
  // the module's PIC level, else static.
  bool clears_dso_local(const Module &m) const {
    std::optional<Reloc::Model> model = Conf.RelocModel;
    if (!model && m.getModuleFlag("PIC Level"))
      model = m.getPICLevel() == PICLevel::NotPIC ? Reloc::Static : Reloc::PIC_;
    return Triple(m.getTargetTriple()).isOSBinFormatELF() && model && *model != Reloc::Static &&
           m.getPIELevel() == PIELevel::Default;
  }

  // What lto::thinBackend does to its module before importing, done to a
  // joined module with the thin link's results for it: its locals
  // promoted and renamed as the index says, its dead definitions dropped,
  // its copies made prevailing or not, attributes propagated, then
  // internalized. (LLVM's own dropDeadSymbols is private to LTOBackend.cpp.)
  void ready_joined(Module &m, const Part &part) const {
    renameModuleForThinLTO(m, CombinedIndex, clears_dso_local(m));
    std::vector<GlobalValue *> dead;
    for (GlobalValue &gv : m.global_values()) {
      GlobalValueSummary *summary = part.defined->lookup(gv.getGUID());
      if (summary && !CombinedIndex.isGlobalValueLive(summary)) dead.push_back(&gv);
    }
    for (GlobalValue *gv : dead) convertToDeclaration(*gv);
    for (GlobalValue *gv : dead) {
      gv->removeDeadConstantUsers();
      if (gv->use_empty()) gv->eraseFromParent();
    }
    thinLTOFinalizeInModule(m, *part.defined, /*PropagateAttrs=*/true);
    if (!part.defined->empty()) thinLTOInternalizeModule(m, *part.defined);
  }

  // LLVM's cache key of one part's backend.
  std::optional<std::string> cache_key(const Part &part) const {
    StringRef id = part.module.getModuleIdentifier();
    // As LLVM's driver: a module without a hash is not cached.
    if (!CombinedIndex.modulePaths().count(id) ||
        all_of(CombinedIndex.getModuleHash(id), [](uint32_t v) { return v == 0; }))
      return std::nullopt;
    SmallString<40> key;
    computeLTOCacheKey(key, Conf, CombinedIndex, id, *part.imports, *part.exports, *part.resolved_odr,
                       *part.defined, cfi_defs, cfi_decls);
    return key.str().str();
  }

  Error run(const Job &job) {
    auto compile = [&](AddStreamFn stream) -> Error {
      lto::LTOLLVMContext context(Conf);
      BitcodeModule module = job.part.module;
      Expected<std::unique_ptr<Module>> m = module.parseModule(context);
      if (!m) return m.takeError();
      std::unique_ptr<Module> &joining = state->joining[job.task];
      if (job.joined) {
        BitcodeModule side = job.joined->module;
        Expected<std::unique_ptr<Module>> j = side.parseModule(context);
        if (!j) return j.takeError();
        ready_joined(**j, *job.joined);
        joining = std::move(*j);
      }
      Error e = lto::thinBackend(Conf, job.task, stream, **m, CombinedIndex, *job.part.imports, *job.part.defined,
                                 job.module_map);
      // Gone before its context, should the hook not have taken it.
      joining.reset();
      return e;
    };
    // As LLVM's driver: without a cache, or for a module without a hash,
    // the backend runs. A joined module's key goes into its host's.
    std::optional<std::string> key = cache ? cache_key(job.part) : std::nullopt;
    if (key && job.joined) {
      std::optional<std::string> joined = cache_key(*job.joined);
      if (joined) {
        SHA1 hash;
        hash.update(*key);
        hash.update(*joined);
        key = toHex(hash.result());
      } else {
        key.reset();
      }
    }
    if (!key) return compile(add_stream);
    Expected<AddStreamFn> stream = cache(job.task, *key, job.part.module.getModuleIdentifier());
    if (!stream) return stream.takeError();
    return *stream ? compile(*stream) : Error::success();
  }

  // Moves each joined module's job into its host's (wpd_lto_join, which
  // checked that no module is joined twice, hosts two or is both).
  Error join_jobs() {
    if (state->joined.empty()) return Error::success();
    std::map<unsigned, size_t> by_task;
    for (size_t k = 0; k < jobs.size(); ++k) by_task[jobs[k].task] = k;
    std::set<unsigned> gone;
    for (const auto &[joined, host] : state->joined) {
      auto j = by_task.find(joined);
      auto h = by_task.find(host);
      if (j == by_task.end() || h == by_task.end())
        return createStringError(inconvertibleErrorCode(), "cannot compile ThinLTO task " + std::to_string(joined) +
                                                               " with task " + std::to_string(host));
      Job &into = jobs[h->second];
      into.joined = jobs[j->second].part;
      into.work += jobs[j->second].work > per_backend ? jobs[j->second].work - per_backend : 0;
      gone.insert(joined);
    }
    jobs.erase(std::remove_if(jobs.begin(), jobs.end(), [&](const Job &job) { return gone.count(job.task) != 0; }),
               jobs.end());
    return Error::success();
  }

public:
  WpdThinBackend(const lto::Config &conf, ModuleSummaryIndex &index,
                 const DenseMap<StringRef, GVSummaryMapTy> &defined, ThreadPoolStrategy threads,
                 AddStreamFn add_stream, FileCache cache, WpdLto *state)
      : ThinBackendProc(conf, index, defined, nullptr, false), threads(threads),
        add_stream(std::move(add_stream)), cache(std::move(cache)), state(state) {
    // The cache key covers the index's CFI functions, as LLVM's driver
    // computes them.
    for (const std::string &name : index.cfiFunctionDefs())
      cfi_defs.insert(GlobalValue::getGUID(GlobalValue::dropLLVMManglingEscape(name)));
    for (const std::string &name : index.cfiFunctionDecls())
      cfi_decls.insert(GlobalValue::getGUID(GlobalValue::dropLLVMManglingEscape(name)));
  }

  // Called for every backend before `wait`; the lists it gets are
  // lto::LTO's, alive until `wait` returns.
  Error start(unsigned task, BitcodeModule module, const FunctionImporter::ImportMapTy &imports,
              const FunctionImporter::ExportSetTy &exports,
              const std::map<GlobalValue::GUID, GlobalValue::LinkageTypes> &resolved_odr,
              MapVector<StringRef, BitcodeModule> &module_map) override {
    auto found = ModuleToDefinedGVSummaries.find(module.getModuleIdentifier());
    if (found == ModuleToDefinedGVSummaries.end())
      return createStringError(inconvertibleErrorCode(),
                               "ThinLTO module " + module.getModuleIdentifier() + " is not in the combined index");
    const GVSummaryMapTy &defined = found->second;
    std::shared_ptr<const FunctionImporter::ImportMapTy> own;
    if (state->variables_only.count(task))
      own = std::make_shared<const FunctionImporter::ImportMapTy>(variables_only(CombinedIndex, imports));
    const FunctionImporter::ImportMapTy &used = own ? *own : imports;
    jobs.push_back({task, {module, &used, &exports, &resolved_odr, &defined}, own, &module_map,
                    backend_work(CombinedIndex, defined, used), std::nullopt});
    return Error::success();
  }

  Error wait() override {
    if (Error e = join_jobs()) {
      jobs.clear();
      return e;
    }
    std::sort(jobs.begin(), jobs.end(), [](const Job &a, const Job &b) {
      return a.work != b.work ? a.work > b.work : a.task < b.task;
    });
    std::vector<BackendRun> *runs = &state->runs;
    size_t first = runs->size();
    for (const Job &job : jobs) runs->push_back({job.task, job.work, 0, 0});
    auto began = std::chrono::steady_clock::now();
    auto ms = [](std::chrono::steady_clock::duration d) {
      return std::chrono::duration<double, std::milli>(d).count();
    };
    {
      DefaultThreadPool pool(threads);
      for (size_t k = 0; k < jobs.size(); ++k)
        pool.async([this, runs, k, first, began, ms] {
          auto start = std::chrono::steady_clock::now();
          Error e = run(jobs[k]);
          // Each job writes its own record: no lock.
          (*runs)[first + k].start_ms = ms(start - began);
          (*runs)[first + k].ms = ms(std::chrono::steady_clock::now() - start);
          if (!e) return;
          std::lock_guard<std::mutex> lock(mutex);
          error = error ? joinErrors(std::move(*error), std::move(e)) : std::move(e);
        });
      pool.wait();
    }
    jobs.clear();
    if (!error) return Error::success();
    Error e = std::move(*error);
    error.reset();
    return e;
  }

  unsigned getThreadCount() override { return threads.compute_thread_count(); }
};

// An opened input and the name its buffer is known by (LLVM keeps
// references to the name, so it lives as long as the input, then the LTO).
struct WpdInput {
  std::unique_ptr<std::string> name;
  std::unique_ptr<lto::InputFile> file;
};

}  // namespace

extern "C" {

// How a bitcode file is laid out for LLVM's ThinLTO, read from its module
// list and LTO info only (no module is parsed). WPD_OK: ThinLTO can take it,
// with *split_unit 0 for one ThinLTO module with a summary, 1 for a split
// LTO unit as clang writes it, a ThinLTO module with a summary followed by
// a regular LTO module (the vtables), with no bitcode wrapper. WPD_DECLINED:
// anything else. WPD_FAILED: unreadable (*err set). With WPD_OK,
// *split_flag is the (first) summary's EnableSplitLTOUnit flag, the one
// LLVM's thin link checks across modules.
WpdStatus wpd_thinlto_layout(const char *data, size_t len, const char *name, int *split_unit, int *split_flag,
                             char **err) {
  *err = nullptr;
  *split_unit = 0;
  *split_flag = 0;
  MemoryBufferRef buf(StringRef(data, len), StringRef(name));
  Expected<std::vector<BitcodeModule>> list = getBitcodeModuleList(buf);
  if (!list) {
    *err = wpd_shim::dup_string(error_text(list.takeError()));
    return WPD_FAILED;
  }
  if (list->empty() || list->size() > 2) return WPD_DECLINED;
  std::vector<BitcodeLTOInfo> infos;
  for (BitcodeModule &bm : *list) {
    Expected<BitcodeLTOInfo> info = bm.getLTOInfo();
    if (!info) {
      *err = wpd_shim::dup_string(error_text(info.takeError()));
      return WPD_FAILED;
    }
    infos.push_back(*info);
  }
  if (!infos[0].IsThinLTO || !infos[0].HasSummary) return WPD_DECLINED;
  *split_flag = infos[0].EnableSplitLTOUnit ? 1 : 0;
  if (list->size() == 1) return WPD_OK;
  // The thin part must be the file's first module, right after the magic
  // (LLVM's module buffers leave the magic out): the magic and its bytes
  // are then a prefix of the file (what wpd_split_thin_part cuts).
  bool plain = len >= 4 && std::memcmp(data, "BC\xC0\xDE", 4) == 0;
  if (infos[1].IsThinLTO || !plain || (*list)[0].getBuffer().data() != data + 4) return WPD_DECLINED;
  *split_unit = 1;
  return WPD_OK;
}

// The thin part of a split LTO unit as a bitcode file of its own, without
// parsing it: the file's bytes up to the end of its first module, then
// everything after the second module (the symbol and string tables the two
// modules share), the symbol table told that it describes one module. Its
// symbols are the first module's: an irsymtab lists each module's symbols
// as one range, in module order. The caller has checked, with
// wpd_thinlto_layout (a split unit), that the first module is the thin
// part and the second the regular one; this reads the module list once
// more for the offsets only. Returns WPD_OK (*out malloc'd), WPD_DECLINED
// (not laid out so) or WPD_FAILED (*err set).
WpdStatus wpd_split_thin_part(const char *data, size_t len, const char *name, char **out, size_t *out_len,
                              char **err) {
  *out = nullptr;
  *out_len = 0;
  *err = nullptr;
  bool plain = len >= 4 && std::memcmp(data, "BC\xC0\xDE", 4) == 0;
  if (!plain) return WPD_DECLINED;
  MemoryBufferRef buf(StringRef(data, len), StringRef(name));
  Expected<BitcodeFileContents> contents = getBitcodeFileContents(buf);
  if (!contents) {
    *err = wpd_shim::dup_string(error_text(contents.takeError()));
    return WPD_FAILED;
  }
  if (contents->Mods.size() != 2 || contents->Mods[0].getBuffer().data() != data + 4) return WPD_DECLINED;
  auto end_of = [&](const BitcodeModule &m) {
    return static_cast<size_t>(m.getBuffer().data() - data) + m.getBuffer().size();
  };
  size_t thin_end = end_of(contents->Mods[0]);
  size_t regular_end = end_of(contents->Mods[1]);
  if (static_cast<size_t>(contents->Mods[1].getBuffer().data() - data) != thin_end) return WPD_DECLINED;
  StringRef symtab = contents->Symtab;
  if (thin_end % 4 != 0 || regular_end % 4 != 0 || regular_end < thin_end || regular_end > len) return WPD_DECLINED;
  // A symbol table wpd can adjust: after the second module, four-byte
  // aligned, for two modules. (Without one LLVM rebuilds it from the
  // module, which is still right, only slower.)
  size_t symtab_at = symtab.empty() ? 0 : static_cast<size_t>(symtab.data() - data);
  if (!symtab.empty() &&
      (symtab_at < regular_end || symtab_at % 4 != 0 || symtab.size() < sizeof(irsymtab::storage::Header)))
    return WPD_DECLINED;
  std::string bytes;
  bytes.reserve(len - (regular_end - thin_end));
  bytes.append(data, thin_end);
  bytes.append(data + regular_end, len - regular_end);
  if (!symtab.empty()) {
    irsymtab::storage::Header header;
    size_t at = symtab_at - (regular_end - thin_end);
    std::memcpy(&header, bytes.data() + at, sizeof header);
    if (header.Modules.Size != 2) return WPD_DECLINED;
    header.Modules.Size = 1;
    std::memcpy(bytes.data() + at, &header, sizeof header);
  }
  *out = dup_bytes(bytes.data(), bytes.size());
  if (!*out) {
    *err = wpd_shim::dup_string("out of memory");
    return WPD_FAILED;
  }
  *out_len = bytes.size();
  return WPD_OK;
}

// Writes `mref` as ThinLTO bitcode (summary, module hash, symbol table) into
// a malloc'd buffer. A split unit's regular part carries the module flag
// ThinLTO=0; written as a ThinLTO module (merged into the thin part, or on
// its own) the flag goes, else its summary would be written as a regular
// LTO one. EnableSplitLTOUnit becomes `split_flag`, the one value every
// module of the link carries: importing between modules whose flags differ
// fails, and LLVM refuses a link whose summaries disagree on it ("partially
// split") once any of them records a virtual call.
//
// `kept_names` (`kept_count` of them) name the definitions of a split
// unit's regular part (all of the module, or the part merged into it).
// Their summaries are marked not eligible to import, as they would be in
// LLVM's own link of the split unit, where that part goes into the regular
// LTO module and no ThinLTO backend can import from it: importing a vtable
// costs each importing backend a read of this module, the copy and its
// optimization, for a copy code generation drops.
WpdStatus wpd_write_thinlto_bitcode(LLVMModuleRef mref, int split_flag, const char *const *kept_names,
                                    size_t kept_count, char **out, size_t *len, char **err) {
  *out = nullptr;
  *len = 0;
  *err = nullptr;
  Module &m = *unwrap(mref);
  if (NamedMDNode *flags = m.getModuleFlagsMetadata()) {
    std::vector<MDNode *> keep;
    bool dropped = false;
    for (MDNode *flag : flags->operands()) {
      auto *key = flag->getNumOperands() >= 2 ? dyn_cast_or_null<MDString>(flag->getOperand(1)) : nullptr;
      if (key && (key->getString() == "ThinLTO" || key->getString() == "EnableSplitLTOUnit")) {
        dropped = true;
        continue;
      }
      keep.push_back(flag);
    }
    if (dropped) {
      flags->clearOperands();
      for (MDNode *flag : keep) flags->addOperand(flag);
    }
  }
  if (split_flag) m.addModuleFlag(Module::Error, "EnableSplitLTOUnit", 1);
  // ThinLTO keys globals by name: the vtables wpd rebuilt for constant
  // propagation are unnamed (their names went to aliases), and get names
  // as clang's pre-link pipeline names anonymous globals.
  nameUnamedGlobals(m);
  ProfileSummaryInfo psi(m);
  ModuleSummaryIndex index = buildModuleSummaryIndex(m, nullptr, &psi);
  // The index holds this module's summaries only.
  for (size_t i = 0; i < kept_count; ++i)
    if (GlobalValue *gv = m.getNamedValue(kept_names[i]))
      if (ValueInfo vi = index.getValueInfo(gv->getGUID()))
        for (auto &summary : vi.getSummaryList()) summary->setNotEligibleToImport();
  SmallVector<char, 0> buffer;
  raw_svector_ostream os(buffer);
  WriteBitcodeToFile(m, os, /*ShouldPreserveUseListOrder=*/false, &index, /*GenerateHash=*/true);
  *out = dup_bytes(buffer.data(), buffer.size());
  if (!*out) {
    *err = wpd_shim::dup_string("out of memory");
    return WPD_FAILED;
  }
  *len = buffer.size();
  return WPD_OK;
}

// Readies a module for LLVM's optimization pipeline, in a backend: checks
// its debug info (the reader's own check is off,
// wpd_skip_debug_info_upgrade, so it runs here once, on the module with its
// imports), verifies it unless the link said --disable-verify, refuses real control-flow integrity checks, and drops every
// other type test. False (the error recorded in `state`): stop.
static bool prepare_module(WpdLto *state, Module &m) {
  std::string invalid, warning;
  bool valid = wpd_shim::check_module(m, state->verify, invalid, warning);
  if (!warning.empty()) {
    std::lock_guard<std::mutex> lock(state->mutex);
    state->warnings.push_back(std::move(warning));
  }
  if (!valid) {
    state->fail(m.getModuleIdentifier() + ": " + invalid);
    return false;
  }
  if (size_t checks = wpd_shim::count_type_checks(m)) {
    state->fail(m.getModuleIdentifier() + ": " + std::to_string(checks) +
                " control-flow integrity check(s) (-fsanitize=cfi) found; wpd does not lower CFI checks and "
                "will not drop them");
    return false;
  }
  wpd_shim::rewrite_type_tests(m);
  return true;
}

// The link's LTO configuration, as lld builds it (lld/ELF/LTO.cpp
// createConfig), with wpd's post-import hook; errors and warnings of the
// backends go to `state`. The in-process link and a distributed backend
// (wpd_thin_backend) share it, so both compile a module alike.
static lto::Config make_config(const WpdLtoOptions *o, WpdLto *state, bool post_import_only) {
  lto::Config c;
  // As lld: LLVM's code generation flags first (-mllvm -align-loops=...),
  // then what the link sets.
  c.Options = wpd_shim::link_target_options(o->function_sections != 0, o->data_sections != 0);
  TargetOptions &t = c.Options;
  if (o->debugger_tuning >= 0) t.DebuggerTuning = static_cast<DebuggerKind>(o->debugger_tuning);
  // wpd-ld reads these flags itself (o); the gold plugin leaves them to
  // LLVM's parser (t, from the flags). Off is the x86-64 default of each.
  t.EmulatedTLS = t.EmulatedTLS || o->emulated_tls != 0;
  t.EnableTLSDESC = t.EnableTLSDESC || o->tls_descriptors != 0;
  t.EmitStackSizeSection = t.EmitStackSizeSection || o->stack_size_section != 0;
  t.EnableMachineFunctionSplitter = t.EnableMachineFunctionSplitter || o->split_machine_functions != 0;
  t.JMCInstrument = t.JMCInstrument || o->jmc_instrument != 0;
  c.RelocModel = wpd_shim::reloc_model(o->reloc == 0   ? std::optional(Reloc::Static)
                                        : o->reloc == 1 ? std::optional(Reloc::PIC_)
                                                        : std::nullopt);
  c.CodeModel = codegen::getExplicitCodeModel();
  c.OptLevel = o->opt_level > 3 ? 3 : o->opt_level;
  c.CGOptLevel = CodeGenOpt::getLevel(std::min(o->cg_opt_level, 3u)).value_or(CodeGenOptLevel::Default);
  c.CPU = wpd_shim::target_cpu(o->cpu ? o->cpu : "", c.MAttrs);
  c.PTO.LoopVectorization = c.OptLevel > 1;
  c.PTO.SLPVectorization = c.OptLevel > 1;
  // lld verifies each backend's module twice: before its optimization
  // pipeline and after. wpd verifies it once, before, in prepare_module
  // (the hooks below), where a module wpd or the importer got wrong is
  // caught as the earlier check would catch it. The check after checks
  // only LLVM's own optimizer, which clang's release builds do not verify
  // either (-disable-llvm-verifier). (lld's --time-trace of the parity
  // benchmark's generated program: 45 ms of verifier runs in 2.2 s of
  // backends, half of it after the pipeline.)
  c.DisableVerify = true;
  state->verify = o->verify != 0;
  if (o->sample_profile && *o->sample_profile) c.SampleProfile = o->sample_profile;
  if (o->cs_profile && *o->cs_profile) c.CSIRProfile = o->cs_profile;
  c.RunCSIRInstr = o->cs_generate != 0;
  if (o->dwo_dir && *o->dwo_dir) c.DwoDir = o->dwo_dir;
  // wpd owns devirtualization: LLVM's is never asked to act (no
  // whole-program visibility, so its public type tests become `true`), and
  // the hook below drops every other type test before it could.
  c.HasWholeProgramVisibility = false;

  // Modules wpd rewrote hold no type test any more; modules it passed
  // through unchanged (backend::passthrough: every call in them stays
  // indirect) still do, and so may code imported from them. They go here:
  // after import, before the optimization pipeline, whose first passes are
  // LLVM's WholeProgramDevirt and LowerTypeTests in their importing mode.
  // Those then find nothing, so a call wpd left indirect stays indirect
  // whatever LLVM's own thin link concluded. A real check (-fsanitize=cfi)
  // is not dropped: the link fails, naming the module, as a rewrite would.
  //
  // The hook is typed `const Module &` for observers, but the module is the
  // backend's own mutable one (lto::thinBackend owns it and optimizes it
  // next), so changing it here is sound.
  //
  // A distributed link's backends stop here: the module, with everything
  // LLVM's thin link did to it, is written as its task's output, and its job
  // (wpd_thin_backend) optimizes and compiles it.
  c.PostImportModuleHook = [state, post_import_only](unsigned task, const Module &observed) {
    Module &m = const_cast<Module &>(observed);
    // A module joined to this one (wpd_lto_join), readied as its own
    // backend would have readied it, goes in now: the pipeline and code
    // generation then see one module. (Its definitions were never
    // imported anywhere; it imports nothing of its own.)
    if (task < state->joining.size() && state->joining[task]) {
      std::unique_ptr<Module> joined = std::move(state->joining[task]);
      std::string name = joined->getModuleIdentifier();
      if (Linker::linkModules(m, std::move(joined))) {
        state->fail(m.getModuleIdentifier() + ": cannot compile " + name + " with it (linking the two failed)");
        return false;
      }
    }
    if (!prepare_module(state, m)) return false;
    if (!post_import_only) return true;
    // Each task writes its own slot (sized before the run): no lock.
    if (task < state->outputs.size()) {
      raw_svector_ostream os(state->outputs[task]);
      // With its use-list order, so that the job optimizes exactly this.
      WriteBitcodeToFile(m, os, /*ShouldPreserveUseListOrder=*/true);
    }
    return false;
  };
  // The regular parts of split units the plan leaves alone (their vtables)
  // go to LLVM's regular LTO, as lld's do: linked into one module (task 0),
  // only what the thin link found live, then optimized and compiled once.
  // That module gets the same treatment before its pipeline, whose first
  // passes are LLVM's WholeProgramDevirt and LowerTypeTests in their
  // exporting mode: they find no type test in it, so nothing in it is
  // devirtualized behind wpd's back. (Only set when such modules come: with
  // any of these hooks LLVM runs its regular LTO step, even empty.)
  if (o->regular_parts) {
    c.PreOptModuleHook = [state](unsigned task, const Module &observed) {
      if (task != 0) return true;  // a thin backend's: done after import
      return prepare_module(state, const_cast<Module &>(observed));
    };
  }
  c.DiagHandler = [state](const DiagnosticInfo &di) {
    if (di.getSeverity() != DS_Error && di.getSeverity() != DS_Warning) return;
    std::string text;
    raw_string_ostream os(text);
    DiagnosticPrinterRawOStream printer(os);
    di.print(printer);
    if (di.getSeverity() == DS_Error) return state->fail(std::move(text));
    std::lock_guard<std::mutex> lock(state->mutex);
    state->warnings.push_back(std::move(text));
  };
  return c;
}

// A link's LTO. `post_import_only` 0: in-process backends (wpd_lto_run
// emits each module's object). 1: a distributed link's thin link
// (wpd-ld --wpd-index-only): each backend stops once LLVM's thin link is
// applied to its module (prevailing copies, dead stripping,
// internalization and promotion, imports), and wpd_lto_run emits that
// module as bitcode instead of an object; wpd_thin_backend then optimizes
// and compiles it, anywhere, as this link's backend would have.
void *wpd_lto_new(const WpdLtoOptions *o, int post_import_only) {
  auto *state = new WpdLto();
  lto::Config c = make_config(o, state, post_import_only != 0);
  ThreadPoolStrategy threads =
      o->threads ? hardware_concurrency(o->threads) : heavyweight_hardware_concurrency();
  lto::ThinBackend backend = [threads, state](const lto::Config &conf, ModuleSummaryIndex &index,
                                              DenseMap<StringRef, GVSummaryMapTy> &defined, AddStreamFn add_stream,
                                              FileCache cache) -> std::unique_ptr<lto::ThinBackendProc> {
    return std::make_unique<WpdThinBackend>(conf, index, defined, threads, std::move(add_stream), std::move(cache),
                                            state);
  };
  state->lto = std::make_unique<lto::LTO>(std::move(c), std::move(backend), /*ParallelCodeGenParallelismLevel=*/1,
                                          lto::LTO::LTOK_Default);
  return state;
}

// One devirtualization wpd decided, as LLVM's type-id resolution for a
// (type id, byte offset) slot: a single implementation (`single_impl` set;
// with `local_module` >= 0, a local function of that input, counted from 0
// in the order of wpd_lto_add), or for the slot's calls with constant
// arguments `args`, a uniform return value `value` (`single_impl` null).
struct WpdSlotResolution {
  const char *type_id;
  size_t type_id_len;
  uint64_t offset;
  const char *single_impl;
  size_t single_impl_len;
  int64_t local_module;
  const uint64_t *args;
  size_t arg_count;
  uint64_t value;
};

// What an index-only link writes, as lld's --thinlto-index-only and its
// companions: per module `<path>.thinlto.bc` (and `.imports`), with
// `old_prefix` replaced by `new_prefix` (native objects: `native_prefix`,
// or `new_prefix` when empty), the list of native objects in
// `linked_objects` ("" : none); and what wpd decided, in the index every
// backend imports.
struct WpdIndexOnlyOptions {
  const char *old_prefix;
  const char *new_prefix;
  const char *native_prefix;
  int emit_imports;
  const char *linked_objects;
  int whole_program_visibility;
  const WpdSlotResolution *resolutions;
  size_t resolution_count;
  // Every type id (metadata string) the program's modules name.
  const char *const *type_ids;
  const size_t *type_id_lens;
  size_t type_id_count;
};

// A link that stops after LLVM's thin link and writes, for clang's own
// ThinLTO backends (clang -fthinlto-index=<path>.thinlto.bc), each module's
// index: what LLVM's thin link decided for it (imports, prevailing copies,
// internalization, promotion) and wpd's devirtualizations as the type-id
// resolutions LLVM's backend applies (WholeProgramDevirt in its importing
// mode). The modules are the link's inputs as clang wrote them: the
// backends compile those files. A split unit's regular part goes through
// LLVM's regular LTO, whose object wpd_lto_run emits as task 0.
//
// Before LLVM's thin link reads the index (Config::CombinedIndexHook, run
// first in runThinLTO), the index's resolutions are replaced by wpd's:
// those LLVM's regular LTO step decided for split units are dropped, and
// the vtables LLVM's index-based devirtualization would read are cleared,
// so that a call wpd left indirect stays indirect. Returns null with *err
// set when the list of objects cannot be created.
void *wpd_lto_new_index_only(const WpdLtoOptions *o, const WpdIndexOnlyOptions *x, char **err) {
  *err = nullptr;
  auto state = std::make_unique<WpdLto>();
  lto::Config c = make_config(o, state.get(), false);
  struct Slot {
    std::string type_id;
    uint64_t offset;
    std::string single_impl;
    int64_t local_module;
    std::vector<uint64_t> args;
    uint64_t value;
  };
  std::vector<Slot> slots;
  for (size_t i = 0; i < x->resolution_count; ++i) {
    const WpdSlotResolution &r = x->resolutions[i];
    slots.push_back({std::string(r.type_id, r.type_id_len), r.offset,
                     r.single_impl ? std::string(r.single_impl, r.single_impl_len) : std::string(), r.local_module,
                     std::vector<uint64_t>(r.args, r.args + r.arg_count), r.value});
  }
  WpdLto *st = state.get();
  bool wpv = x->whole_program_visibility != 0;
  // The hook is typed `const ModuleSummaryIndex &` for observers; the index
  // is lto::LTO's own mutable combined index, which the thin link reads
  // next, so changing it here is sound.
  std::vector<std::string> known_ids;
  for (size_t i = 0; i < x->type_id_count; ++i) known_ids.emplace_back(x->type_ids[i], x->type_id_lens[i]);
  c.CombinedIndexHook = [slots = std::move(slots), known_ids = std::move(known_ids), wpv, st](
                            const ModuleSummaryIndex &observed, const DenseSet<GlobalValue::GUID> &) {
    auto &index = const_cast<ModuleSummaryIndex &>(observed);
    // The index offers these maps read-only only; both are the index's
    // own (mutable) members.
    //
    // No vtables for LLVM's index-based devirtualization, which then
    // returns at once.
    const_cast<std::map<std::string, TypeIdCompatibleVtableInfo, std::less<>> &>(index.typeIdCompatibleVtableMap())
        .clear();
    // LLVM's decisions go: those of its regular LTO step (split units) and
    // any other; a type-test resolution (CFI) stays.
    auto &type_ids = const_cast<TypeIdSummaryMapTy &>(index.typeIds());
    for (auto &entry : type_ids) entry.second.second.WPDRes.clear();
    // Every type id the program tests gets a summary: without one, a
    // backend's LowerTypeTests takes the id for one no vtable has (Unsat)
    // and makes its type tests false. WholeProgramDevirt first drops the
    // assumptions such a test feeds directly, but not one clang's
    // optimizer merged with another (two type tests feeding one call
    // through a select or phi): that assumption becomes `assume(false)`,
    // and the code around it is deleted (lld's own ThinLTO program of
    // such a fuzzer seed crashes). With a summary of unknown resolution
    // every type test stays until LLVM's late pass replaces it by true.
    for (const std::string &id : known_ids) index.getOrInsertTypeIdSummary(id);
    for (const Slot &s : slots) {
      WholeProgramDevirtResolution &res = index.getOrInsertTypeIdSummary(s.type_id).WPDRes[s.offset];
      if (!s.single_impl.empty() && s.local_module >= 0) {
        // A local function other modules' backends call: exported, as
        // LLVM's own index-based devirtualization exports its targets.
        // The thin link exports what its export lists hold and the GUIDs
        // it collects after this hook (symbols visible to regular objects,
        // and the CFI function definitions of the index, named by their
        // global identifiers). A local has no symbol to mark visible, so
        // its global identifier (`<source file>;<name>`, the string its
        // GUID hashes) goes into that set: no backend function has such a
        // name, so nothing else reads it. Exported, the local is promoted
        // in its backend under LLVM's name for it, which the calls name.
        if (static_cast<size_t>(s.local_module) >= st->added.size()) {
          st->fail("a resolution names a local of module " + std::to_string(s.local_module) + " of " +
                   std::to_string(st->added.size()));
          return false;
        }
        const auto &[path, source] = st->added[s.local_module];
        auto module = index.modulePaths().find(path);
        if (module == index.modulePaths().end()) {
          st->fail(path + ": not in LLVM's combined index (no ThinLTO module)");
          return false;
        }
        index.cfiFunctionDefs().insert(
            GlobalValue::getGlobalIdentifier(s.single_impl, GlobalValue::InternalLinkage, source));
        res.TheKind = WholeProgramDevirtResolution::SingleImpl;
        res.SingleImplName = ModuleSummaryIndex::getGlobalNameForLocal(s.single_impl, module->second);
      } else if (!s.single_impl.empty()) {
        res.TheKind = WholeProgramDevirtResolution::SingleImpl;
        res.SingleImplName = s.single_impl;
      } else {
        WholeProgramDevirtResolution::ByArg &by_arg = res.ResByArg[s.args];
        by_arg.TheKind = WholeProgramDevirtResolution::ByArg::UniformRetVal;
        by_arg.Info = s.value;
      }
    }
    // The backends turn public type tests into type tests, which the
    // resolutions above then find, only under whole-program visibility.
    if (wpv) index.setWithWholeProgramVisibility();
    return true;
  };
  if (x->linked_objects && *x->linked_objects) {
    std::error_code ec;
    state->linked_objects = std::make_unique<raw_fd_ostream>(x->linked_objects, ec, sys::fs::OpenFlags::OF_None);
    if (ec) {
      *err = wpd_shim::dup_string(std::string(x->linked_objects) + ": " + ec.message());
      return nullptr;
    }
  }
  state->index_only = true;
  lto::ThinBackend backend = lto::createWriteIndexesThinBackend(
      x->old_prefix, x->new_prefix, x->native_prefix, x->emit_imports != 0, state->linked_objects.get(), nullptr);
  state->lto = std::make_unique<lto::LTO>(std::move(c), std::move(backend), /*ParallelCodeGenParallelismLevel=*/1,
                                          lto::LTO::LTOK_Default);
  return state.release();
}

// An index for a bitcode file the link did not load (a lazy object it never
// needed): clang's backend compiles it into an empty object, as lld's
// index-only link arranges. Returns WPD_OK, or WPD_FAILED with *err set.
WpdStatus wpd_write_empty_index(const char *path, char **err) {
  *err = nullptr;
  std::error_code ec;
  raw_fd_ostream os(path, ec, sys::fs::OpenFlags::OF_None);
  if (ec) {
    *err = wpd_shim::dup_string(std::string(path) + ": " + ec.message());
    return WPD_FAILED;
  }
  ModuleSummaryIndex index(/*HaveGVs=*/false);
  index.setSkipModuleByDistributedBackend();
  writeIndexToFile(index, os);
  os.close();
  if (os.has_error()) {
    *err = wpd_shim::dup_string(std::string(path) + ": " + os.error().message());
    os.clear_error();
    return WPD_FAILED;
  }
  return WPD_OK;
}

void wpd_lto_free(void *p) { delete static_cast<WpdLto *>(p); }

// The thin backends of the last wpd_lto_run, in the order they started:
// `each` gets each one's task, estimated work, start (milliseconds after
// the first started) and duration.
void wpd_lto_backend_runs(void *p, void (*each)(void *ctx, unsigned task, uint64_t work, double start_ms, double ms),
                          void *ctx) {
  for (const BackendRun &r : static_cast<WpdLto *>(p)->runs) each(ctx, r.task, r.work, r.start_ms, r.ms);
}

// Opens a bitcode buffer as an LTO input. The buffer is not copied: it must
// outlive the input and the LTO it is added to.
void *wpd_lto_input_open(const char *data, size_t len, const char *name, char **err) {
  *err = nullptr;
  auto input = std::make_unique<WpdInput>();
  input->name = std::make_unique<std::string>(name);
  MemoryBufferRef ref(StringRef(data, len), *input->name);
  Expected<std::unique_ptr<lto::InputFile>> in = lto::InputFile::create(ref);
  if (!in) {
    *err = wpd_shim::dup_string(error_text(in.takeError()));
    return nullptr;
  }
  input->file = std::move(*in);
  return input.release();
}

void wpd_lto_input_free(void *p) { delete static_cast<WpdInput *>(p); }

size_t wpd_lto_input_symbol_count(void *p) { return static_cast<WpdInput *>(p)->file->symbols().size(); }

// The i-th symbol: its name and section name point into the input (valid
// while it lives).
void wpd_lto_input_symbol(void *p, size_t i, const char **name, size_t *name_len, const char **section,
                          size_t *section_len, unsigned *flags) {
  const lto::InputFile::Symbol &s = static_cast<WpdInput *>(p)->file->symbols()[i];
  StringRef n = s.getName();
  StringRef sec = s.getSectionName();
  *name = n.data();
  *name_len = n.size();
  *section = sec.data();
  *section_len = sec.size();
  unsigned f = 0;
  if (s.isUndefined()) f |= SYM_UNDEFINED;
  if (s.isWeak()) f |= SYM_WEAK;
  if (s.isCommon()) f |= SYM_COMMON;
  if (s.isUsed()) f |= SYM_USED;
  if (s.getVisibility() == GlobalValue::HiddenVisibility) f |= SYM_HIDDEN;
  if (s.getVisibility() == GlobalValue::ProtectedVisibility) f |= SYM_PROTECTED;
  *flags = f;
}

// Compiles the `joined`-th module added to the link with the `host`-th
// (both counted from 0, in the order of wpd_lto_add), in the host's
// backend: the thin link treats both as the modules they are, then the
// host's backend reads the joined one, applies to it what the thin link
// decided for it (promotion, dead stripping, prevailing copies,
// internalization), and links it into its own module after import. The
// joined module's task emits no object; its code is in the host's. Only
// for a module whose definitions no other module imports (a split unit's
// regular part, wpd_write_thinlto_bitcode's `kept_names`), and only for
// in-process backends. Returns WPD_OK, or WPD_FAILED with *err set.
WpdStatus wpd_lto_join(void *p, size_t joined, size_t host, char **err) {
  *err = nullptr;
  auto *state = static_cast<WpdLto *>(p);
  // Task 0 is the regular LTO partition; the k-th module added is task k + 1.
  unsigned joined_task = static_cast<unsigned>(joined) + 1, host_task = static_cast<unsigned>(host) + 1;
  bool hosts = std::any_of(state->joined.begin(), state->joined.end(),
                           [&](const auto &pair) { return pair.second == joined_task || pair.second == host_task; });
  if (joined == host || hosts || state->joined.count(joined_task) || state->joined.count(host_task)) {
    *err = wpd_shim::dup_string("a module is joined once, to another module that is not joined itself");
    return WPD_FAILED;
  }
  // A joined module's job goes into its host's, its part pointing at
  // lto::LTO's import list: one with imports of its own cannot be joined.
  if (state->variables_only.count(joined_task)) {
    *err = wpd_shim::dup_string("a module that imports variables only is not joined to another");
    return WPD_FAILED;
  }
  state->joined[joined_task] = host_task;
  return WPD_OK;
}

// Makes the `module`-th module added (counted from 0) import global
// variables only, no function: a module LLVM's own link compiles in its
// regular LTO partition, which imports nothing from ThinLTO modules. For
// the links whose backends WpdThinBackend drives (wpd_lto_new); an
// index-only link takes such a module as it is, into LLVM's regular LTO.
// Returns WPD_OK, or WPD_FAILED with *err set.
WpdStatus wpd_lto_import_variables_only(void *p, size_t module, char **err) {
  *err = nullptr;
  auto *state = static_cast<WpdLto *>(p);
  if (module >= state->added.size() || state->index_only) {
    *err = wpd_shim::dup_string(module >= state->added.size() ? "no such module added"
                                                                : "an index-only link imports as LLVM decides");
    return WPD_FAILED;
  }
  // Task 0 is the regular LTO partition; the k-th module added is task k + 1.
  state->variables_only.insert(static_cast<unsigned>(module) + 1);
  return WPD_OK;
}

// Adds an input (consumed, also on error) with one resolution byte per
// symbol, in symbol order. Returns WPD_OK, or WPD_FAILED with *err set.
WpdStatus wpd_lto_add(void *p, void *input, const unsigned char *res, size_t n, char **err) {
  *err = nullptr;
  auto *state = static_cast<WpdLto *>(p);
  std::unique_ptr<WpdInput> wrapped(static_cast<WpdInput *>(input));
  state->names.push_back(std::move(wrapped->name));
  std::unique_ptr<lto::InputFile> in = std::move(wrapped->file);
  if (n != in->symbols().size()) {
    *err = wpd_shim::dup_string("resolution count does not match the symbol table");
    return WPD_FAILED;
  }
  state->added.emplace_back(*state->names.back(), in->getSourceFileName().str());
  std::vector<lto::SymbolResolution> out(n);
  for (size_t i = 0; i < n; ++i) {
    out[i].Prevailing = (res[i] & RES_PREVAILING) != 0;
    out[i].FinalDefinitionInLinkageUnit = (res[i] & RES_FINAL_DEFINITION) != 0;
    out[i].VisibleToRegularObj = (res[i] & RES_VISIBLE_TO_REGULAR_OBJ) != 0;
    out[i].ExportDynamic = (res[i] & RES_EXPORT_DYNAMIC) != 0;
    out[i].LinkerRedefined = (res[i] & RES_LINKER_REDEFINED) != 0;
  }
  if (Error e = state->lto->add(std::move(in), out)) {
    *err = wpd_shim::dup_string(error_text(std::move(e)));
    return WPD_FAILED;
  }
  return WPD_OK;
}

// Runs the thin link and every backend. `emit` receives each task's object
// (task 0 is the regular LTO partition, empty unless regular modules were
// added; task k is the k-th
// input added) with LLVM's cache key for it (empty when LLVM did not
// compute one), in task order, after all backends finished. With `lookup`,
// each backend first asks it (from the backend's thread) for the object of
// its cache key: on 1 the caller has that object (its task is emitted
// empty) and the backend does not run (a boolean: 1 found, 0 not). Returns
// WPD_OK, or WPD_FAILED with *err set.
WpdStatus wpd_lto_run(void *p, void (*emit)(void *ctx, unsigned task, const char *data, size_t len, const char *key,
                                             size_t key_len),
                      void *ctx, void (*warn)(void *ctx, const char *text, size_t len), void (*progress)(void *pctx),
                      void *pctx, int (*lookup)(void *lctx, unsigned task, const char *key, size_t len), void *lctx,
                      char **err) {
  *err = nullptr;
  auto *state = static_cast<WpdLto *>(p);
  state->outputs.assign(state->lto->getMaxTasks(), {});
  state->joining.clear();
  state->joining.resize(state->lto->getMaxTasks());
  std::vector<std::string> keys(state->lto->getMaxTasks());
  // A backend asks for its output stream once it has optimized its module
  // and starts emitting code: progress, from the backend's thread.
  AddStreamFn add_stream = [state, progress, pctx](unsigned task,
                                                   const Twine &) -> Expected<std::unique_ptr<CachedFileStream>> {
    progress(pctx);
    return std::make_unique<CachedFileStream>(std::make_unique<raw_svector_ostream>(state->outputs[task]));
  };
  FileCache cache = nullptr;
  if (lookup) {
    // Each task writes only its own key: no lock needed.
    cache = [&keys, add_stream, lookup, lctx, progress, pctx](unsigned task, StringRef key,
                                                              const Twine &) -> Expected<AddStreamFn> {
      if (task < keys.size()) keys[task] = key.str();
      if (lookup(lctx, task, key.data(), key.size())) {
        progress(pctx);
        return AddStreamFn();
      }
      return add_stream;
    };
  }
  Error e = state->lto->run(add_stream, cache);
  for (const std::string &w : state->warnings) warn(ctx, w.data(), w.size());
  if (e) {
    *err = wpd_shim::dup_string(error_text(std::move(e)));
    return WPD_FAILED;
  }
  if (!state->first_error.empty()) {
    *err = wpd_shim::dup_string(state->first_error);
    return WPD_FAILED;
  }
  if (state->linked_objects) {
    state->linked_objects->close();
    if (state->linked_objects->has_error()) {
      *err = wpd_shim::dup_string("cannot write the list of objects: " + state->linked_objects->error().message());
      state->linked_objects->clear_error();
      return WPD_FAILED;
    }
  }
  // emit copies each object: its buffer here goes at once, so that the
  // objects are not all held twice.
  for (size_t task = 0; task < state->outputs.size(); ++task) {
    emit(ctx, static_cast<unsigned>(task), state->outputs[task].data(), state->outputs[task].size(),
         keys[task].data(), keys[task].size());
    SmallVector<char, 0>().swap(state->outputs[task]);
  }
  return WPD_OK;
}

// One job of a distributed link: `data` is a module as a link with
// post_import_only wrote it (LLVM's thin link applied, imports done, type
// tests dropped); it is optimized and compiled as lto::thinBackend does
// from there (LLVM's -thinlto-assume-merged: no second import), with the
// link's configuration. `task` is the module's task in the link (k + 1),
// which names its split DWARF file. The object goes to *out (malloc'd).
// Returns WPD_OK, or WPD_FAILED with *err set; LLVM's warnings go to `warn`.
WpdStatus wpd_thin_backend(const WpdLtoOptions *o, const char *data, size_t len, const char *name, unsigned task,
                           char **out, size_t *out_len, void (*warn)(void *ctx, const char *text, size_t len),
                           void *ctx, char **err) {
  *out = nullptr;
  *out_len = 0;
  *err = nullptr;
  std::string module_name = name;
  auto fail = [&](const std::string &text) {
    *err = wpd_shim::dup_string(text);
    return WPD_FAILED;
  };
  // -thinlto-assume-merged is process-wide: it would also stop an
  // in-process link's backends from importing. `wpd backend` runs one job
  // per process and no link, so setting it here is contained.
  auto &options = cl::getRegisteredOptions();
  auto merged = options.find("thinlto-assume-merged");
  if (merged == options.end()) return fail("this LLVM has no -thinlto-assume-merged");
  if (merged->second->addOccurrence(0, "thinlto-assume-merged", "true"))
    return fail("cannot set -thinlto-assume-merged");
  WpdLto state;
  lto::Config c = make_config(o, &state, false);
  lto::LTOLLVMContext context(c);
  Expected<std::unique_ptr<Module>> m = parseBitcodeFile(MemoryBufferRef(StringRef(data, len), module_name), context);
  if (!m) return fail(module_name + ": " + error_text(m.takeError()));
  // thinBackend sets a partial sample profile's ratio from the index's
  // block count, as the link did already: an index with the count that
  // gives the module's ratio back leaves it as it is.
  ModuleSummaryIndex index(/*HaveGVs=*/false);
  if (Metadata *md = (*m)->getProfileSummary(/*IsCS=*/false)) {
    std::unique_ptr<ProfileSummary> summary(ProfileSummary::getFromMD(md));
    if (summary && summary->getKind() == ProfileSummary::PSK_Sample && summary->isPartialProfile())
      index.addBlockCount(static_cast<uint64_t>(summary->getPartialProfileRatio() * summary->getNumCounts() + 0.5));
  }
  SmallVector<char, 0> object;
  AddStreamFn add_stream = [&object](unsigned, const Twine &) -> Expected<std::unique_ptr<CachedFileStream>> {
    return std::make_unique<CachedFileStream>(std::make_unique<raw_svector_ostream>(object));
  };
  FunctionImporter::ImportMapTy no_imports;
  GVSummaryMapTy no_globals;
  Error e = lto::thinBackend(c, task, add_stream, **m, index, no_imports, no_globals, /*ModuleMap=*/nullptr);
  for (const std::string &w : state.warnings) warn(ctx, w.data(), w.size());
  if (e) return fail(module_name + ": " + error_text(std::move(e)));
  if (!state.first_error.empty()) return fail(state.first_error);
  *out = dup_bytes(object.data(), object.size());
  if (!*out) return fail("out of memory");
  *out_len = object.size();
  return WPD_OK;
}

// Checks a cache pruning policy (lld's --thinlto-cache-policy syntax).
// Returns WPD_OK, or WPD_FAILED with *err set.
WpdStatus wpd_cache_policy_check(const char *policy, char **err) {
  *err = nullptr;
  Expected<CachePruningPolicy> parsed = parseCachePruningPolicy(policy);
  if (!parsed) {
    *err = wpd_shim::dup_string(error_text(parsed.takeError()));
    return WPD_FAILED;
  }
  return WPD_OK;
}

// Prunes the cache directory `dir` by `policy` (as lld does after a link).
// Returns WPD_OK, or WPD_FAILED with *err set.
WpdStatus wpd_cache_prune(const char *dir, const char *policy, char **err) {
  *err = nullptr;
  Expected<CachePruningPolicy> parsed = parseCachePruningPolicy(policy);
  if (!parsed) {
    *err = wpd_shim::dup_string(error_text(parsed.takeError()));
    return WPD_FAILED;
  }
  pruneCache(dir, *parsed);
  return WPD_OK;
}

}  // extern "C"
