// Lazy reading for the summarizer: the bodies of modules read lazily
// (wpd_parse_bitcode with `lazy`), and what clang's per-module summary
// index (in every -flto=thin object) says about each function, so that the
// summarizer reads only the bodies it must look into.
// Declared in src/ffi.rs, wrapped in src/lazy.rs.

#include "common.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/GlobalValue.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/ModuleSummaryIndex.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm-c/Core.h"

#include <cstdlib>
#include <memory>
#include <vector>

using namespace llvm;
using wpd_shim::dup_string;
using wpd_shim::malloc_copy;

extern "C" {

// Reads the body of function `f` of a lazily read module (nothing when it
// has one already or is a declaration). Returns WPD_OK, or WPD_FAILED and
// a malloc'd message.
WpdStatus wpd_materialize(LLVMValueRef f, char **out_err) {
  *out_err = nullptr;
  auto *fn = dyn_cast<Function>(unwrap(f));
  if (!fn) {
    *out_err = dup_string("not a function");
    return WPD_FAILED;
  }
  if (Error e = fn->materialize()) {
    *out_err = dup_string(toString(std::move(e)));
    return WPD_FAILED;
  }
  return WPD_OK;
}

// What the summary index of module `part` of the bitcode buffer says about
// the function definitions of `m` (that module, read from that buffer):
// for each definition with exactly one function summary whose every edge
// names a global value of `m` (matched by GUID, unambiguously), in module
// order: the function in `out_funcs`; in `out_meta`, three entries: how many
// values follow for it in `out_refs` (its references and direct callees,
// ModuleSummaryAnalysis' RefEdges and CallGraphEdges: the personality,
// prefix and prologue data, constant operands of instructions, direct
// callees; intrinsics excluded) and flags: 1 when the summary records type
// tests or virtual calls for it, 2 when it makes a call whose callee is no
// function (an indirect call, inline asm); then the summary's instruction
// count. A definition left out must be read to be known. Returns WPD_OK (arrays
// malloc'd, free with wpd_free), WPD_FAILED and a malloc'd message, or
// WPD_DECLINED when the module carries no summary (no value of its index has
// one).
WpdStatus wpd_function_summaries(const char *data, size_t len, size_t part, LLVMModuleRef m,
                                 LLVMValueRef **out_funcs, uint32_t **out_meta, LLVMValueRef **out_refs,
                                 size_t *out_nfuncs, size_t *out_nrefs, char **out_err) {
  *out_funcs = nullptr;
  *out_meta = nullptr;
  *out_refs = nullptr;
  *out_nfuncs = 0;
  *out_nrefs = 0;
  *out_err = nullptr;
  MemoryBufferRef buf(StringRef(data, len), StringRef("<summary>"));
  Expected<std::vector<BitcodeModule>> list = getBitcodeModuleList(buf);
  if (!list) {
    *out_err = dup_string(toString(list.takeError()));
    return WPD_FAILED;
  }
  if (part >= list->size()) {
    *out_err = dup_string("no such module in the bitcode file");
    return WPD_FAILED;
  }
  BitcodeModule &bm = (*list)[part];
  // No getLTOInfo() first: it walks the module block once more only to
  // say whether a summary block is there (4% of summarizing a small
  // object). A module without one reads as an index in which no value has
  // a summary.
  Expected<std::unique_ptr<ModuleSummaryIndex>> index = bm.getSummary();
  if (!index) {
    *out_err = dup_string(toString(index.takeError()));
    return WPD_FAILED;
  }
  bool summarized = false;
  for (const auto &entry : **index) {
    if (!entry.second.SummaryList.empty()) {
      summarized = true;
      break;
    }
  }
  if (!summarized) return WPD_DECLINED;

  Module *mod = unwrap(m);
  // GUID -> global value; null where two values share a GUID.
  DenseMap<GlobalValue::GUID, GlobalValue *> by_guid;
  for (GlobalValue &gv : mod->global_values()) {
    auto [it, fresh] = by_guid.try_emplace(gv.getGUID(), &gv);
    if (!fresh) it->second = nullptr;
  }

  std::vector<LLVMValueRef> funcs, refs;
  std::vector<uint32_t> meta;
  std::vector<LLVMValueRef> these;
  for (Function &f : *mod) {
    if (f.isDeclaration()) continue;
    const GlobalValue::GUID guid = f.getGUID();  // an MD5 of the name each time
    auto own = by_guid.find(guid);
    if (own == by_guid.end() || own->second != &f) continue;
    ValueInfo vi = (*index)->getValueInfo(guid);
    if (!vi || vi.getSummaryList().size() != 1) continue;
    auto *fs = dyn_cast<FunctionSummary>(vi.getSummaryList()[0].get());
    if (!fs) continue;
    these.clear();
    bool complete = true;
    auto add = [&](const ValueInfo &edge) {
      auto it = by_guid.find(edge.getGUID());
      if (it == by_guid.end() || !it->second) {
        complete = false;
        return;
      }
      these.push_back(wrap(it->second));
    };
    for (const ValueInfo &r : fs->refs()) add(r);
    for (const FunctionSummary::EdgeTy &c : fs->calls()) add(c.first);
    if (!complete) continue;
    bool tests = !fs->type_tests().empty() || !fs->type_test_assume_vcalls().empty() ||
                 !fs->type_checked_load_vcalls().empty() || !fs->type_test_assume_const_vcalls().empty() ||
                 !fs->type_checked_load_const_vcalls().empty();
    funcs.push_back(wrap(&f));
    meta.push_back(static_cast<uint32_t>(these.size()));
    meta.push_back((tests ? 1u : 0u) | (fs->fflags().HasUnknownCall ? 2u : 0u));
    meta.push_back(fs->instCount());
    refs.insert(refs.end(), these.begin(), these.end());
  }
  *out_funcs = malloc_copy(funcs);
  *out_meta = malloc_copy(meta);
  *out_refs = malloc_copy(refs);
  if (!*out_funcs || !*out_meta || !*out_refs) {
    std::free(*out_funcs);
    std::free(*out_meta);
    std::free(*out_refs);
    *out_funcs = nullptr;
    *out_meta = nullptr;
    *out_refs = nullptr;
    *out_err = dup_string("out of memory");
    return WPD_FAILED;
  }
  *out_nfuncs = funcs.size();
  *out_nrefs = refs.size();
  return WPD_OK;
}

}  // extern "C"
