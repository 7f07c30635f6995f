// wpd's C++ shim: the few things LLVM 19's C API cannot do.
// Every function here is declared in src/ffi.rs and wrapped safely in src/lib.rs.

#include "common.h"
#include "llvm/Analysis/TypeMetadataUtils.h"
#include "llvm/Analysis/ValueTracking.h"
#include "llvm/CodeGen/CommandFlags.h"
#include "llvm/TargetParser/SubtargetFeature.h"
#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/IR/Dominators.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/Operator.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/IR/Intrinsics.h"
#include "llvm/IR/Comdat.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/GlobalAlias.h"
#include "llvm/IR/GlobalIFunc.h"
#include "llvm/IR/GlobalVariable.h"
#include "llvm/IR/GlobalObject.h"
#include "llvm/IR/Instruction.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Metadata.h"
#include "llvm/IR/DebugInfo.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/IR/MDBuilder.h"
#include "llvm/ProfileData/InstrProf.h"
#include "llvm/Support/MD5.h"
#include "llvm/Transforms/Utils/CallPromotionUtils.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm-c/TargetMachine.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm-c/Core.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <unistd.h>

using namespace llvm;
using wpd_shim::malloc_copy;
using wpd_shim::two_arrays;

using wpd_shim::dup_string;

// The x86 target's initializers (LLVM's C API declares them per target in
// llvm-c/Target.h; only x86 is named here).
extern "C" {
void LLVMInitializeX86TargetInfo();
void LLVMInitializeX86Target();
void LLVMInitializeX86TargetMC();
void LLVMInitializeX86AsmPrinter();
void LLVMInitializeX86AsmParser();
}

// Registers the x86 target, the only one wpd emits code for. Calling the
// x86 initializers by name, rather than llvm-sys's "native target" wrappers
// (one object file that also names every other target's initializers),
// keeps the other targets out of the binary: their code, and the static
// constructors that register their command-line options at every start.
extern "C" void wpd_init_x86_target() {
  LLVMInitializeX86TargetInfo();
  LLVMInitializeX86Target();
  LLVMInitializeX86TargetMC();
  LLVMInitializeX86AsmPrinter();
  LLVMInitializeX86AsmParser();
}

bool wpd_shim::check_module(Module &m, bool verify, std::string &err, std::string &warning) {
  auto rejected = [&err](const std::string &report) {
    StringRef first = StringRef(report).split('\n').first;
    err = "invalid module: " + (first.empty() ? std::string("the verifier rejects it") : first.str());
    return false;
  };
  unsigned version = getDebugMetadataVersionFromModule(m);
  if (version == DEBUG_METADATA_VERSION) {
    // Debug info to check: one verifier run checks the whole module too.
    bool broken_debug_info = false;
    std::string msg;
    raw_string_ostream os(msg);
    if (verifyModule(m, &os, &broken_debug_info)) return rejected(os.str());
    if (!broken_debug_info) return true;
    warning = "ignoring invalid debug info in " + m.getModuleIdentifier();
  }
  if (StripDebugInfo(m) && version != DEBUG_METADATA_VERSION)
    warning = "ignoring debug info with an invalid version (" + std::to_string(version) + ") in " +
              m.getModuleIdentifier();
  if (verify) {
    std::string msg;
    raw_string_ostream os(msg);
    if (verifyModule(m, &os)) return rejected(os.str());
  }
  return true;
}

extern "C" {

// Parses the modules of a bitcode buffer (a split LTO unit holds two) into
// `ctx`: every module, or with `only` below SIZE_MAX that module alone (the
// regular part of a split unit without its larger thin part, say). Fully
// materialized, or with `lazy` set, with global values, initializers, their
// metadata attachments and named metadata but no function bodies and no
// other metadata until a body needs it (a function stays materializable,
// neither a declaration nor a body, until wpd_materialize; the modules then
// keep reading `data`, which must outlive them). On success returns WPD_OK
// and a malloc'd array of modules in *out_mods (free with wpd_free). On
// failure returns WPD_FAILED and a malloc'd message in *out_err.
WpdStatus wpd_parse_bitcode(LLVMContextRef ctx, const char *data, size_t len, const char *name, int lazy, size_t only,
                            LLVMModuleRef **out_mods, size_t *out_count, char **out_err) {
  *out_mods = nullptr;
  *out_count = 0;
  *out_err = nullptr;
  MemoryBufferRef buf(StringRef(data, len), StringRef(name));
  Expected<std::vector<BitcodeModule>> list = getBitcodeModuleList(buf);
  if (!list) {
    *out_err = dup_string(toString(list.takeError()));
    return WPD_FAILED;
  }
  if (only != SIZE_MAX && only >= list->size()) {
    *out_err = dup_string("bitcode file holds " + std::to_string(list->size()) + " module(s), not " +
                          std::to_string(only + 1));
    return WPD_FAILED;
  }
  std::vector<std::unique_ptr<Module>> mods;
  for (size_t i = 0; i < list->size(); ++i) {
    if (only != SIZE_MAX && i != only) continue;
    // Lazily, metadata is read as LLVM's importer reads it (IsImporting):
    // an index of the module's metadata, the global attachments (`!type`,
    // `!vcall_visibility`) and named metadata at once, any other node when
    // a materialized body first uses it. Debug info is most of a `-g`
    // module's metadata, and bodies the summarizer never reads are most of
    // its uses.
    Expected<std::unique_ptr<Module>> m = (*list)[i].getLazyModule(
        *unwrap(ctx), /*ShouldLazyLoadMetadata=*/lazy != 0, /*IsImporting=*/lazy != 0);
    if (!m) {
      *out_err = dup_string(toString(m.takeError()));
      return WPD_FAILED;
    }
    // Unless lazy, materialize everything now: the module must not keep
    // reading `buf`.
    if (Error e = lazy ? (*m)->materializeMetadata() : (*m)->materializeAll()) {
      *out_err = dup_string(toString(std::move(e)));
      return WPD_FAILED;
    }
    mods.push_back(std::move(*m));
  }
  if (mods.empty()) {
    *out_err = dup_string("bitcode file holds no module");
    return WPD_FAILED;
  }
  auto *arr = static_cast<LLVMModuleRef *>(std::malloc(sizeof(LLVMModuleRef) * mods.size()));
  if (!arr) {
    *out_err = dup_string("out of memory");
    return WPD_FAILED;
  }
  for (size_t i = 0; i < mods.size(); ++i) arr[i] = wrap(mods[i].release());
  *out_mods = arr;
  *out_count = mods.size();
  return WPD_OK;
}

void wpd_free(void *p) { std::free(p); }

// Name of the comdat of a global object, or null.
const char *wpd_comdat_name(LLVMValueRef gv, size_t *len) {
  *len = 0;
  auto *go = dyn_cast<GlobalObject>(unwrap(gv));
  if (!go) return nullptr;
  const Comdat *c = go->getComdat();
  if (!c) return nullptr;
  StringRef n = c->getName();
  *len = n.size();
  return n.data();
}

// Instruction memory behaviour, as LLVM's own analyses see it. Booleans
// (1 may, 0 may not), not WpdStatus values.
int wpd_inst_may_read_memory(LLVMValueRef inst) {
  auto *i = dyn_cast<Instruction>(unwrap(inst));
  return i ? i->mayReadFromMemory() : 0;
}

int wpd_inst_may_write_memory(LLVMValueRef inst) {
  auto *i = dyn_cast<Instruction>(unwrap(inst));
  return i ? i->mayWriteToMemory() : 0;
}

// Makes function `fn` a declaration: Function::deleteBody drops its blocks
// and metadata attachments and gives it external linkage; its comdat goes
// too. Returns 1, or 0 (nothing done) when `fn` is no function definition
// or an alias or ifunc names it (which must name a definition).
int wpd_delete_body(LLVMValueRef fn) {
  auto *f = dyn_cast<Function>(unwrap(fn));
  if (!f || f->isDeclaration()) return 0;
  for (const User *u : f->users())
    if (isa<GlobalAlias>(u) || isa<GlobalIFunc>(u)) return 0;
  f->deleteBody();
  f->setComdat(nullptr);
  return 1;
}

// Whether a metadata node is `distinct` (the type id of an internal class):
// a boolean, 1 or 0.
int wpd_md_is_distinct(LLVMMetadataRef md) {
  auto *n = dyn_cast<MDNode>(unwrap(md));
  return n ? n->isDistinct() : 0;
}

// A dominator tree for one function, built once and reused for every type
// test in it.
void *wpd_domtree_new(LLVMValueRef fn) {
  auto *f = dyn_cast<Function>(unwrap(fn));
  if (!f || f->isDeclaration()) return nullptr;
  return new DominatorTree(*f);
}

void wpd_domtree_free(void *dt) { delete static_cast<DominatorTree *>(dt); }

// The virtual calls guarded by one llvm.(public.)type.test or
// llvm.type.checked.load call, found exactly as LLVM's WholeProgramDevirt
// finds them (loads at constant offsets from the tested pointer, calls
// dominated by the test). Returns the count; *calls and *offsets are malloc'd
// arrays (free with wpd_free). *flags: bit 0 = the test feeds an assume,
// bit 1 = the checked load has uses other than calls and assumes, bit 2 =
// its check bit has uses other than assumes, bit 3 = the type test has uses
// other than assumes.
size_t wpd_devirt_calls(LLVMValueRef intrinsic_call, void *dt, LLVMValueRef **calls, uint64_t **offsets,
                        int *flags) {
  *calls = nullptr;
  *offsets = nullptr;
  *flags = 0;
  auto *ci = dyn_cast<CallInst>(unwrap(intrinsic_call));
  if (!ci || !dt || !ci->getCalledFunction()) return 0;
  auto &tree = *static_cast<DominatorTree *>(dt);
  SmallVector<DevirtCallSite, 2> found;
  Intrinsic::ID id = ci->getCalledFunction()->getIntrinsicID();
  if (id == Intrinsic::type_test || id == Intrinsic::public_type_test) {
    SmallVector<CallInst *, 2> assumes;
    findDevirtualizableCallsForTypeTest(found, assumes, ci, tree);
    if (!assumes.empty()) *flags |= 1;
    for (const Use &u : ci->uses())
      if (!isa<AssumeInst>(u.getUser())) *flags |= 8;
  } else if (id == Intrinsic::type_checked_load) {
    SmallVector<Instruction *, 2> loaded, preds;
    bool non_call = false;
    findDevirtualizableCallsForTypeCheckedLoad(found, loaded, preds, non_call, ci, tree);
    if (non_call) *flags |= 2;
    // The check bit guards something (a CFI trap): not a pure assumption.
    for (Instruction *p : preds)
      for (User *u : p->users())
        if (!isa<AssumeInst>(u)) *flags |= 4;
  } else {
    return 0;
  }
  // LLVM 19 walks every use of a constant tested pointer (a vtable address
  // point forwarded after inlining) in the whole module, and its dominance
  // check treats blocks of other functions as dominated: keep only calls in
  // the test's own function, as later LLVM versions do.
  Function *own = ci->getFunction();
  std::vector<const DevirtCallSite *> mine;
  for (const DevirtCallSite &s : found)
    if (s.CB.getFunction() == own) mine.push_back(&s);
  if (mine.empty()) return 0;
  *calls = static_cast<LLVMValueRef *>(std::malloc(sizeof(LLVMValueRef) * mine.size()));
  *offsets = static_cast<uint64_t *>(std::malloc(sizeof(uint64_t) * mine.size()));
  if (!*calls || !*offsets) {
    std::free(*calls);
    std::free(*offsets);
    *calls = nullptr;
    *offsets = nullptr;
    return 0;
  }
  for (size_t i = 0; i < mine.size(); ++i) {
    (*calls)[i] = wrap(&mine[i]->CB);
    (*offsets)[i] = mine[i]->Offset;
  }
  return mine.size();
}

// Whether the integer `p2i` (a vtable pointer or slot address) is only
// AddressSanitizer's check of the address before a load: shifted right
// (`lshr` by 3 or more) and offset into the shadow memory, which is loaded
// and compared; masked and compared for a partial granule; passed to the
// runtime's `__asan_report_*` (or, outlined, `__asan_load*`), which prints
// or checks the address and reads nothing through it. No pointer made from
// it reaches anything but a load of shadow memory.
static bool asan_address_check(PtrToIntInst *p2i) {
  std::vector<std::pair<Value *, bool>> work{{p2i, false}};  // value, shifted
  SmallPtrSet<Value *, 16> seen;
  while (!work.empty()) {
    auto [v, shifted] = work.back();
    work.pop_back();
    if (!seen.insert(v).second) continue;
    for (User *u : v->users()) {
      if (isa<ICmpInst>(u)) continue;
      if (auto *call = dyn_cast<CallBase>(u)) {
        Function *callee = call->getCalledFunction();
        if (callee && callee->getName().starts_with("__asan_") && call->getCalledOperand() != v) continue;
        return false;
      }
      if (auto *bin = dyn_cast<BinaryOperator>(u)) {
        auto *amount = dyn_cast<ConstantInt>(bin->getOperand(1));
        bool shift = bin->getOpcode() == Instruction::LShr && bin->getOperand(0) == v && amount &&
                     amount->getZExtValue() >= 3;
        work.push_back({bin, shifted || shift});
        continue;
      }
      if (isa<TruncInst>(u) || isa<ZExtInst>(u) || isa<SExtInst>(u)) {
        work.push_back({u, shifted});
        continue;
      }
      if (auto *i2p = dyn_cast<IntToPtrInst>(u); i2p && shifted) {
        for (User *w : i2p->users()) {
          auto *load = dyn_cast<LoadInst>(w);
          if (!load || load->getPointerOperand() != i2p) return false;
        }
        continue;
      }
      return false;
    }
  }
  return true;
}

// Every way the pointer an llvm.(public.)type.test or llvm.type.checked.load
// tests may read a vtable slot, for dead-slot elimination. Walks the
// pointer's uses through casts and constant-offset GEPs (and phis and
// selects, which merge it with other pointers); each load at a byte offset
// >= 0 gives one entry per user of the loaded value: (offset, the call) when
// the user calls it, (offset, null) otherwise. A use that may read anything
// (a non-constant GEP, a store, a call argument, ...) gives (-1, null). A
// load at a negative offset reads offset-to-top, typeinfo or a virtual base
// offset, never a function slot, and comparisons and stores of the pointer
// read nothing, nor does AddressSanitizer's check of the address
// (asan_address_check). For a checked load, its own loaded pointer is a
// load at its offset argument (an offset that is not constant reads
// anything). Returns the count; *offsets
// and *calls are malloc'd arrays (free with wpd_free).
size_t wpd_test_slot_reads(LLVMValueRef intrinsic_call, int64_t **offsets, LLVMValueRef **calls) {
  *offsets = nullptr;
  *calls = nullptr;
  auto *ci = dyn_cast<CallInst>(unwrap(intrinsic_call));
  if (!ci || !ci->getCalledFunction() || ci->arg_size() < 1) return 0;
  const DataLayout &dl = ci->getModule()->getDataLayout();
  std::vector<std::pair<int64_t, Value *>> out;
  auto loaded_by = [&](Value *loaded, int64_t offset, bool merged) {
    for (User *u : loaded->users()) {
      auto *call = dyn_cast<CallBase>(u);
      if (!merged && call && call->getCalledOperand() == loaded && !call->hasArgument(loaded))
        out.push_back({offset, call});
      else
        out.push_back({offset, nullptr});
    }
  };
  if (ci->getCalledFunction()->getIntrinsicID() == Intrinsic::type_checked_load && ci->arg_size() >= 2) {
    auto *off = dyn_cast<ConstantInt>(ci->getArgOperand(1));
    if (!off) {
      out.push_back({-1, nullptr});
    } else {
      for (User *u : ci->users()) {
        auto *ev = dyn_cast<ExtractValueInst>(u);
        if (!ev || ev->getNumIndices() != 1) {
          out.push_back({off->getSExtValue(), nullptr});
        } else if (ev->getIndices()[0] == 0) {
          loaded_by(ev, off->getSExtValue(), false);
        }
      }
    }
  }
  std::vector<std::tuple<Value *, int64_t, bool>> work{{ci->getArgOperand(0), 0, false}};
  SmallPtrSet<Value *, 16> seen;
  while (!work.empty()) {
    auto [v, base, merged] = work.back();
    work.pop_back();
    if (!seen.insert(v).second) continue;
    for (User *u : v->users()) {
      if (u == ci) continue;
      // A constant tested pointer (a vtable address point the optimizer
      // forwarded) has users all over the module: only the test's own
      // function's code is its reads, and data using it (an initializer)
      // reads nothing.
      if (auto *inst = dyn_cast<Instruction>(u)) {
        if (inst->getFunction() != ci->getFunction()) continue;
      } else if (!isa<GEPOperator>(u) && !isa<BitCastOperator>(u) && !isa<AddrSpaceCastOperator>(u)) {
        continue;
      }
      // Storing the pointer (a constructor setting the vtable pointer)
      // reads no slot: whoever loads it back tests it again.
      if (auto *st = dyn_cast<StoreInst>(u); st && st->getValueOperand() == v && st->getPointerOperand() != v)
        continue;
      if (auto *ii = dyn_cast<IntrinsicInst>(u)) {
        Intrinsic::ID id = ii->getIntrinsicID();
        if (id == Intrinsic::type_test || id == Intrinsic::public_type_test || id == Intrinsic::assume)
          continue;
        if (id == Intrinsic::type_checked_load && ii->getArgOperand(0) == v) continue;
      }
      if (isa<ICmpInst>(u)) continue;
      if (auto *p2i = dyn_cast<PtrToIntInst>(u); p2i && asan_address_check(p2i)) continue;
      if (auto *gep = dyn_cast<GEPOperator>(u)) {
        APInt off(dl.getIndexTypeSizeInBits(gep->getType()), 0);
        if (gep->getPointerOperand() == v && gep->accumulateConstantOffset(dl, off))
          work.push_back({gep, base + off.getSExtValue(), merged});
        else
          out.push_back({-1, nullptr});
        continue;
      }
      if (isa<BitCastOperator>(u) || isa<AddrSpaceCastOperator>(u)) {
        work.push_back({u, base, merged});
        continue;
      }
      if (isa<PHINode>(u) || isa<SelectInst>(u)) {
        work.push_back({u, base, true});
        continue;
      }
      if (auto *load = dyn_cast<LoadInst>(u)) {
        if (load->getPointerOperand() != v) {
          out.push_back({-1, nullptr});
        } else if (base >= 0) {
          loaded_by(load, base, merged);
        }
        continue;
      }
      out.push_back({-1, nullptr});
    }
  }
  std::vector<int64_t> at;
  std::vector<LLVMValueRef> by;
  for (auto &[offset, call] : out) {
    at.push_back(offset);
    by.push_back(wrap(call));
  }
  return two_arrays(at, offsets, by, calls);
}

// The loads of function `fn` straight from a vtable global (one with `!type`
// metadata, or a `_ZTV`/`_ZTC` declaration) at a constant address: after
// constructors are inlined, -O2
// forwards the stored vtable pointer, and a slot of a vtable another module
// defines is loaded from its constant address point, with no call site to
// show it. For each, the global and the byte offset from its start (-1 when
// the offset is not constant). Returns the count; *globals and *offsets are
// malloc'd arrays (free with wpd_free).
size_t wpd_vtable_loads(LLVMValueRef fn, LLVMValueRef **globals, int64_t **offsets) {
  *globals = nullptr;
  *offsets = nullptr;
  auto *f = dyn_cast<Function>(unwrap(fn));
  if (!f || f->isDeclaration()) return 0;
  const DataLayout &dl = f->getParent()->getDataLayout();
  // A vtable: a global with `!type` metadata, or (a declaration of one
  // another module defines) a vtable or construction vtable by its name.
  auto vtable = [](Value *v) -> GlobalVariable * {
    auto *gv = dyn_cast_or_null<GlobalVariable>(v);
    if (!gv) return nullptr;
    StringRef name = gv->getName();
    bool named = name.starts_with("_ZTV") || name.starts_with("_ZTC");
    return gv->hasMetadata(LLVMContext::MD_type) || named ? gv : nullptr;
  };
  std::vector<std::pair<Value *, int64_t>> out;
  for (Instruction &i : instructions(*f)) {
    auto *load = dyn_cast<LoadInst>(&i);
    if (!load) continue;
    Value *p = load->getPointerOperand();
    APInt off(dl.getIndexTypeSizeInBits(p->getType()), 0);
    Value *base = p->stripAndAccumulateConstantOffsets(dl, off, /*AllowNonInbounds=*/true);
    if (GlobalVariable *gv = vtable(base)) {
      out.push_back({gv, off.getSExtValue()});
    } else if (GlobalVariable *under = vtable(const_cast<Value *>(getUnderlyingObject(p)))) {
      out.push_back({under, -1});
    }
  }
  std::vector<LLVMValueRef> which;
  std::vector<int64_t> at;
  for (auto &[global, offset] : out) {
    which.push_back(wrap(global));
    at.push_back(offset);
  }
  return two_arrays(which, globals, at, offsets);
}

// The loads of function `fn` that read a vtable slot without a type test:
// clang marks the load of a virtual member function pointer's target
// `!nosanitize` (ItaniumCXXABI: the load at the offset the pointer holds,
// from the object's vtable pointer, which it loads first): a `!nosanitize`
// pointer load whose address is, through GEPs of any index, a loaded
// pointer. For each, the function types the loaded pointer is called with
// (followed through phis and selects, which merge it with the non-virtual
// case), or null where it is used otherwise. Returns the count; *types is a
// malloc'd array (free with wpd_free).
size_t wpd_untested_slot_loads(LLVMValueRef fn, LLVMTypeRef **types) {
  *types = nullptr;
  auto *f = dyn_cast<Function>(unwrap(fn));
  if (!f || f->isDeclaration()) return 0;
  std::vector<Type *> out;
  for (Instruction &i : instructions(*f)) {
    auto *load = dyn_cast<LoadInst>(&i);
    if (!load || !load->getType()->isPointerTy() || !load->hasMetadata(LLVMContext::MD_nosanitize)) continue;
    Value *p = load->getPointerOperand();
    for (int depth = 0; depth < 8; ++depth) {
      if (auto *gep = dyn_cast<GEPOperator>(p))
        p = gep->getPointerOperand();
      else if (auto *cast = dyn_cast<BitCastOperator>(p))
        p = cast->getOperand(0);
      else
        break;
    }
    if (!isa<LoadInst>(p) && !isa<PHINode>(p) && !isa<SelectInst>(p)) continue;
    // UBSan's dynamic type check (-fsanitize=vptr) loads the object's
    // vtable pointer `!nosanitize` too, only to hash it as an integer (its
    // type cache, `__ubsan_handle_dynamic_type_cache_miss`, which reads the
    // typeinfo before the address point): a load used by `ptrtoint` alone
    // reads no slot. Clang puts `!nosanitize` on its own checks only.
    bool hashed_only = !load->use_empty() && std::all_of(load->user_begin(), load->user_end(), [](User *u) {
      return isa<PtrToIntInst>(u);
    });
    if (hashed_only) continue;
    std::vector<Value *> work{load};
    SmallPtrSet<Value *, 8> seen;
    size_t before = out.size();
    while (!work.empty()) {
      Value *v = work.back();
      work.pop_back();
      if (!seen.insert(v).second) continue;
      for (User *u : v->users()) {
        if (isa<PHINode>(u) || isa<SelectInst>(u)) {
          work.push_back(u);
        } else if (auto *call = dyn_cast<CallBase>(u); call && call->getCalledOperand() == v && !call->hasArgument(v)) {
          out.push_back(call->getFunctionType());
        } else {
          out.push_back(nullptr);
        }
      }
    }
    // A load nothing uses still read the slot: of any type.
    if (out.size() == before) out.push_back(nullptr);
  }
  if (out.empty()) return 0;
  std::vector<LLVMTypeRef> wrapped;
  for (Type *t : out) wrapped.push_back(wrap(t));
  *types = malloc_copy(wrapped);
  return *types ? out.size() : SIZE_MAX;
}

// Strips casts and constant-offset GEPs from a constant pointer under the
// module's data layout; returns the base and stores the byte offset.
LLVMValueRef wpd_strip_const_offset(LLVMModuleRef mod, LLVMValueRef v, int64_t *offset) {
  const DataLayout &dl = unwrap(mod)->getDataLayout();
  APInt off(dl.getIndexTypeSizeInBits(unwrap(v)->getType()), 0);
  Value *base = unwrap(v)->stripAndAccumulateConstantOffsets(dl, off, /*AllowNonInbounds=*/true);
  *offset = off.getSExtValue();
  return wrap(base);
}

// An entry of a relative vtable (clang's -fexperimental-relative-c++-abi-
// vtables): `trunc (sub (ptrtoint T), (ptrtoint B))`, a 32-bit offset from
// B to T, where T may be `dso_local_equivalent F`. Writes T (the global
// value itself, not its dso_local_equivalent), B's base global and B's
// constant offset from it. A boolean, not a WpdStatus: returns 1 when `v`
// is such an entry, 0 (and writes nothing) when `v` is not
// of that form or T or B is not a global value at a constant offset of 0
// (T) or any (B).
int wpd_relative_entry(LLVMModuleRef mod, LLVMValueRef v, LLVMValueRef *target, LLVMValueRef *base,
                       int64_t *base_offset) {
  const DataLayout &dl = unwrap(mod)->getDataLayout();
  auto *trunc = dyn_cast<ConstantExpr>(unwrap(v));
  if (!trunc || trunc->getOpcode() != Instruction::Trunc) return 0;
  auto *sub = dyn_cast<ConstantExpr>(trunc->getOperand(0));
  if (!sub || sub->getOpcode() != Instruction::Sub) return 0;
  auto pointer = [](Value *operand) -> Constant * {
    auto *p = dyn_cast<ConstantExpr>(operand);
    return p && p->getOpcode() == Instruction::PtrToInt ? p->getOperand(0) : nullptr;
  };
  Constant *t = pointer(sub->getOperand(0)), *b = pointer(sub->getOperand(1));
  if (!t || !b) return 0;
  if (auto *equivalent = dyn_cast<DSOLocalEquivalent>(t)) t = equivalent->getGlobalValue();
  APInt toff(dl.getIndexTypeSizeInBits(t->getType()), 0), boff(dl.getIndexTypeSizeInBits(b->getType()), 0);
  auto *tg = dyn_cast<GlobalValue>(t->stripAndAccumulateConstantOffsets(dl, toff, /*AllowNonInbounds=*/true));
  auto *bg = dyn_cast<GlobalValue>(b->stripAndAccumulateConstantOffsets(dl, boff, /*AllowNonInbounds=*/true));
  if (!tg || !bg || !toff.isZero()) return 0;
  *target = wrap(tg);
  *base = wrap(bg);
  *base_offset = boff.getSExtValue();
  return 1;
}

// Sets LLVM command-line options (-mllvm, -plugin-opt=-...). Every option
// must be registered in this LLVM, else nothing is set and *err names it
// (LLVM's own parser would exit the process). Returns WPD_OK, or WPD_FAILED
// with *err set.
WpdStatus wpd_set_llvm_options(int argc, const char **argv, char **err) {
  *err = nullptr;
  wpd_shim::register_codegen_flags();
  StringMap<cl::Option *> &opts = cl::getRegisteredOptions();
  for (int i = 1; i < argc; ++i) {
    StringRef a(argv[i]);
    StringRef name = a.ltrim('-').split('=').first;
    if (name.empty() || !opts.count(name)) {
      *err = dup_string(("unknown LLVM option '" + a + "'").str());
      return WPD_FAILED;
    }
  }
  std::string msg;
  raw_string_ostream os(msg);
  if (!cl::ParseCommandLineOptions(argc, argv, "wpd", &os)) {
    *err = dup_string("invalid LLVM option: " + os.str());
    return WPD_FAILED;
  }
  return WPD_OK;
}

// LLVM's bitcode reader checks a module's debug info each time it reads a
// whole module, and each time the importer reads a module it imports from
// (AutoUpgrade's UpgradeDebugInfo: a full verifier run on a module that
// carries debug info, a walk stripping debug locations from one that does
// not). wpd reads every module twice before ThinLTO reads it (summarize,
// rewrite), and needs the check once: wpd_check_debug_info, run by the
// backends on the module they compile (lto.cpp's post-import hook) and by
// `wpd backend`. This turns the reader's check off, unless the user set
// -mllvm -disable-auto-upgrade-debug-info, whose value then stands. A
// process-wide option: call it before any bitcode is read.
void wpd_skip_debug_info_upgrade(void) {
  StringMap<cl::Option *> &opts = cl::getRegisteredOptions();
  auto it = opts.find("disable-auto-upgrade-debug-info");
  if (it == opts.end() || it->second->getNumOccurrences() > 0) return;
  // AutoUpgrade.cpp declares it as a cl::opt<bool>.
  static_cast<cl::opt<bool> *>(it->second)->setValue(true);
}

// wpd_shim::check_module on a whole module, without the verifier run a
// module without debug info needs: WPD_OK (with a malloc'd *warning when
// debug info was stripped), or WPD_FAILED with a malloc'd *err.
WpdStatus wpd_check_debug_info(LLVMModuleRef mod, char **err, char **warning) {
  *err = nullptr;
  *warning = nullptr;
  std::string e, w;
  bool ok = wpd_shim::check_module(*unwrap(mod), /*verify=*/false, e, w);
  if (!w.empty()) *warning = dup_string(w);
  if (!ok) *err = dup_string(e);
  return ok ? WPD_OK : WPD_FAILED;
}

// LLVM's fatal errors (report_fatal_error: a module the verifier rejects,
// a backend that cannot go on) end the process with one line on stderr,
// "<prefix>: error: LLVM: <reason>", and exit status 1, instead of a crash
// report and an abort. _exit: other threads may be inside LLVM, whose
// static destructors must not run under them. Nothing the link writes is
// left half-written: the output is written last, by the linker.
static char fatal_prefix[64] = "wpd";

static void on_fatal_error(void *, const char *reason, bool) {
  std::string text(reason);
  std::replace(text.begin(), text.end(), '\n', ' ');
  std::string line = std::string(fatal_prefix) + ": error: LLVM: " + text + "\n";
  // LLVM 19's thin link (computeDeadSymbols) stops on a weak definition
  // that a definition outside the bitcode overrides, when another module
  // holds an available_externally copy of it (clang copies weak virtual
  // functions beside their vtables, and thunks into every unit building a
  // vtable that holds them). wpd gives LLVM every such weak copy as the
  // linker-redefined one (wpd_link::lto::LtoSymbols), which LLVM accepts;
  // meeting it means a copy wpd did not foresee.
  if (text.find("Interposable and available_externally") != std::string::npos)
    line += std::string(fatal_prefix) +
            ": note: LLVM's thin link stops on a weak definition in the bitcode that a definition outside it "
            "(a native object, --defsym) overrides, when another module holds an available_externally copy "
            "of it; lld stops the same way. wpd hands LLVM such definitions as the linker's to redefine, so "
            "this one escaped it: please report it with the link line\n";
  size_t at = 0;
  while (at < line.size()) {
    ssize_t n = ::write(2, line.data() + at, line.size() - at);
    if (n <= 0) break;
    at += static_cast<size_t>(n);
  }
  ::_exit(1);
}

void wpd_install_fatal_error_handler(const char *prefix) {
  std::snprintf(fatal_prefix, sizeof fatal_prefix, "%s", prefix);
  install_fatal_error_handler(on_fatal_error, nullptr);
}

// Integer value of a module flag. A boolean, not a WpdStatus: 1 with *out
// set, 0 when absent or not an integer.
int wpd_module_flag_int(LLVMModuleRef mod, const char *key, size_t len, uint64_t *out) {
  Metadata *md = unwrap(mod)->getModuleFlag(StringRef(key, len));
  auto *c = mdconst::dyn_extract_or_null<ConstantInt>(md);
  if (!c || c->getBitWidth() > 64) return 0;
  *out = c->getZExtValue();
  return 1;
}

// The global value named `name` (bytes, any content) of kind `kind`: 0 any,
// 1 function, 2 global variable; null when absent or of another kind.
LLVMValueRef wpd_named_global(LLVMModuleRef mod, const char *name, size_t len, int kind) {
  GlobalValue *gv = unwrap(mod)->getNamedValue(StringRef(name, len));
  if (!gv) return nullptr;
  if (kind == 1 && !isa<Function>(gv)) return nullptr;
  if (kind == 2 && !isa<GlobalVariable>(gv)) return nullptr;
  return wrap(gv);
}

// Gives `f`, a declaration wpd makes for a target the call's module does
// not have, the call's calling convention and the attributes of its
// arguments and result that decide how they are passed: an argument the
// ABI passes in memory (`byval`, `inalloca`, `preallocated`, `byref`,
// with its alignment), a hidden result pointer (`sret`), registers
// (`inreg`, `nest`, the swift ones) and extensions (`zeroext`, `signext`).
// LLVM promotes an indirect call to a direct one only when callee and call
// agree on `byval` and `inalloca` (isLegalToPromote); the other attributes,
// facts about the values (`nonnull`, `noundef`), are left to the real
// definition.
static void declare_abi_like(const CallBase &cb, Function &f) {
  static const Attribute::AttrKind abi[] = {
      Attribute::ByVal,     Attribute::ByRef,    Attribute::InAlloca, Attribute::Preallocated,
      Attribute::StructRet, Attribute::InReg,    Attribute::Nest,     Attribute::ZExt,
      Attribute::SExt,      Attribute::SwiftSelf, Attribute::SwiftAsync, Attribute::SwiftError};
  static const Attribute::AttrKind in_memory[] = {Attribute::ByVal, Attribute::ByRef, Attribute::InAlloca,
                                                  Attribute::Preallocated, Attribute::StructRet};
  f.setCallingConv(cb.getCallingConv());
  const AttributeList &call = cb.getAttributes();
  for (unsigned i = 0; i < f.arg_size(); ++i) {
    AttrBuilder b(f.getContext());
    for (Attribute::AttrKind k : abi)
      if (call.hasParamAttr(i, k)) b.addAttribute(call.getParamAttr(i, k));
    bool memory = llvm::any_of(in_memory, [&](Attribute::AttrKind k) { return b.contains(k); });
    if (MaybeAlign a = call.getParamAlignment(i); memory && a) b.addAlignmentAttr(a);
    if (b.hasAttributes()) f.addParamAttrs(i, b);
  }
  for (Attribute::AttrKind k : {Attribute::ZExt, Attribute::SExt, Attribute::InReg})
    if (call.hasRetAttr(k)) f.addRetAttr(k);
}

// The function or alias named `name` (bytes) in the module of `call`,
// declared with the call's function type when the module has no global of
// that name. Clang's constructor and destructor aliases (D1 = D2) are
// aliases: adding a function of the same name would get a renamed `X.1`
// that nothing defines. Returns null when the name belongs to a variable or
// ifunc, or to an alias of something other than a function.
LLVMValueRef wpd_callee_or_declare(LLVMValueRef call, const char *name, size_t len) {
  auto *cb = dyn_cast<CallBase>(unwrap(call));
  if (!cb) return nullptr;
  Module &m = *cb->getModule();
  StringRef n(name, len);
  GlobalValue *gv = m.getNamedValue(n);
  if (!gv) {
    Function *f = Function::Create(cb->getFunctionType(), GlobalValue::ExternalLinkage, n, &m);
    declare_abi_like(*cb, *f);
    return wrap(f);
  }
  if (isa<Function>(gv)) return wrap(gv);
  if (auto *ga = dyn_cast<GlobalAlias>(gv))
    if (isa_and_nonnull<Function>(ga->getAliaseeObject())) return wrap(gv);
  return nullptr;
}

// Points a call or invoke at `callee` (a function, or an alias of one, of
// the same module). Returns WPD_OK, or WPD_DECLINED (nothing changed) when
// the kinds do not fit.
WpdStatus wpd_rewrite_single_impl(LLVMValueRef call, LLVMValueRef callee) {
  auto *cb = dyn_cast<CallBase>(unwrap(call));
  auto *gv = dyn_cast<GlobalValue>(unwrap(callee));
  if (!cb || !gv || !(isa<Function>(gv) || isa<GlobalAlias>(gv))) return WPD_DECLINED;
  if (gv->getParent() != cb->getModule()) return WPD_DECLINED;
  cb->setCalledOperand(gv);
  return WPD_OK;
}

// Whether every use of the i1 `v` ends in an llvm.assume through value
// flow that only weakens an assumption when `v` becomes `true`: phi
// incoming values, select arms (not the condition), `and`/`or` operands.
// SimplifyCFG produces these when it merges two virtual calls (two type tests
// meet in a select or phi feeding one assume); LLVM's own type-test lowering
// replaces such tests by `true`. Anything else (a branch, a comparison, a
// CFI trap) is a real check.
static bool only_assumed(Value *v, SmallPtrSetImpl<Value *> &seen) {
  if (!seen.insert(v).second) return true;
  for (Use &u : v->uses()) {
    User *user = u.getUser();
    if (isa<AssumeInst>(user)) continue;
    if (isa<PHINode>(user) && only_assumed(user, seen)) continue;
    if (auto *sel = dyn_cast<SelectInst>(user))
      if (u.getOperandNo() != 0 && only_assumed(sel, seen)) continue;
    if (auto *bo = dyn_cast<BinaryOperator>(user))
      if ((bo->getOpcode() == Instruction::And || bo->getOpcode() == Instruction::Or) &&
          bo->getType()->isIntegerTy(1) && only_assumed(bo, seen))
        continue;
    return false;
  }
  return true;
}

static bool is_assumption(Value *v) {
  SmallPtrSet<Value *, 8> seen;
  return only_assumed(v, seen);
}

}  // extern "C"

// Counts type tests and checked loads whose result is used as a real check
// (see only_assumed): control-flow integrity, which wpd must not silently
// drop.
size_t wpd_shim::count_type_checks(Module &m) {
  size_t checks = 0;
  for (Intrinsic::ID id : {Intrinsic::type_test, Intrinsic::public_type_test}) {
    Function *f = m.getFunction(Intrinsic::getName(id));
    if (!f) continue;
    for (User *u : f->users())
      if (auto *ci = dyn_cast<CallInst>(u))
        if (!is_assumption(ci)) ++checks;
  }
  if (Function *f = m.getFunction(Intrinsic::getName(Intrinsic::type_checked_load))) {
    for (User *u : f->users())
      if (auto *ci = dyn_cast<CallInst>(u))
        for (User *cu : ci->users()) {
          auto *ev = dyn_cast<ExtractValueInst>(cu);
          if (!ev || ev->getIndices()[0] != 1) continue;
          if (!is_assumption(ev)) { ++checks; break; }
        }
  }
  return checks;
}

size_t wpd_shim::rewrite_type_tests(Module &m) {
  size_t removed = 0;
  for (Intrinsic::ID id : {Intrinsic::type_test, Intrinsic::public_type_test}) {
    Function *f = m.getFunction(Intrinsic::getName(id));
    if (!f) continue;
    for (Use &u : make_early_inc_range(f->uses())) {
      auto *ci = dyn_cast<CallInst>(u.getUser());
      if (!ci || ci->getCalledOperand() != f) continue;
      for (Use &cu : make_early_inc_range(ci->uses()))
        if (auto *a = dyn_cast<AssumeInst>(cu.getUser())) a->eraseFromParent();
      ci->replaceAllUsesWith(ConstantInt::getTrue(m.getContext()));
      ci->eraseFromParent();
      ++removed;
    }
  }
  if (Function *f = m.getFunction(Intrinsic::getName(Intrinsic::type_checked_load))) {
    for (Use &u : make_early_inc_range(f->uses())) {
      auto *ci = dyn_cast<CallInst>(u.getUser());
      if (!ci || ci->getCalledOperand() != f) continue;
      IRBuilder<> b(ci);
      Value *slot = b.CreateGEP(b.getInt8Ty(), ci->getArgOperand(0), ci->getArgOperand(1));
      Value *fp = b.CreateLoad(b.getPtrTy(), slot);
      Value *pair = b.CreateInsertValue(PoisonValue::get(ci->getType()), fp, 0);
      pair = b.CreateInsertValue(pair, b.getTrue(), 1);
      ci->replaceAllUsesWith(pair);
      ci->eraseFromParent();
      ++removed;
    }
  }
  return removed;
}

extern "C" {

size_t wpd_count_type_checks(LLVMModuleRef mod) { return wpd_shim::count_type_checks(*unwrap(mod)); }

size_t wpd_rewrite_type_tests(LLVMModuleRef mod) { return wpd_shim::rewrite_type_tests(*unwrap(mod)); }

// Replaces a call or invoke by `v` and erases it; an invoke becomes a
// branch to its normal destination.
static void replace_call(CallBase *cb, Value *v) {
  cb->replaceAllUsesWith(v);
  if (auto *ii = dyn_cast<InvokeInst>(cb)) {
    BranchInst::Create(ii->getNormalDest(), cb->getIterator());
    ii->getUnwindDest()->removePredecessor(ii->getParent());
  }
  cb->eraseFromParent();
}

// The vtable pointer a type test or checked load tested (its first
// argument, as scanned), without casts.
static Value *tested_pointer(Value *vptr) {
  return vptr && vptr->getType()->isPointerTy() ? vptr->stripPointerCasts() : nullptr;
}

// Uniform return value: the call becomes the constant `value`. Like the two
// rewrites below, returns WPD_OK, or WPD_DECLINED (the call unchanged) when
// the call does not fit the rewrite.
WpdStatus wpd_rewrite_uniform_ret(LLVMValueRef call, uint64_t value) {
  auto *cb = dyn_cast<CallBase>(unwrap(call));
  if (!cb || !cb->getType()->isIntegerTy()) return WPD_DECLINED;
  replace_call(cb, ConstantInt::get(cb->getType(), value));
  return WPD_OK;
}

// Unique return value: the call becomes `vptr ==/!= member + offset`,
// zero-extended to the call's type.
WpdStatus wpd_rewrite_unique_ret(LLVMValueRef call, LLVMValueRef vptr_arg, const char *member, size_t len, uint64_t offset,
                             int is_one) {
  auto *cb = dyn_cast<CallBase>(unwrap(call));
  Value *vptr = tested_pointer(unwrap(vptr_arg));
  if (!cb || !vptr || !cb->getType()->isIntegerTy()) return WPD_DECLINED;
  Module &m = *cb->getModule();
  StringRef name(member, len);
  Constant *g = m.getNamedValue(name);
  if (!g)
    g = new GlobalVariable(m, Type::getInt8Ty(m.getContext()), /*isConstant=*/true, GlobalValue::ExternalLinkage,
                           nullptr, name);
  IRBuilder<> b(cb);
  Value *addr = b.CreateConstInBoundsGEP1_64(b.getInt8Ty(), g, offset);
  Value *cmp = b.CreateICmp(is_one ? ICmpInst::ICMP_EQ : ICmpInst::ICMP_NE, vptr, addr);
  replace_call(cb, b.CreateZExt(cmp, cb->getType()));
  return WPD_OK;
}

// Virtual constant propagation: the call becomes a load of the value stored
// at `vptr + byte_offset` (a bit of it when bit >= 0).
WpdStatus wpd_rewrite_virtual_const_prop(LLVMValueRef call, LLVMValueRef vptr_arg, int64_t byte_offset, int bit, unsigned width) {
  auto *cb = dyn_cast<CallBase>(unwrap(call));
  Value *vptr = tested_pointer(unwrap(vptr_arg));
  if (!cb || !vptr || !cb->getType()->isIntegerTy(width)) return WPD_DECLINED;
  IRBuilder<> b(cb);
  Value *addr = b.CreateGEP(b.getInt8Ty(), vptr, b.getInt64(byte_offset));
  Value *v;
  if (bit >= 0) {
    Value *byte = b.CreateAlignedLoad(b.getInt8Ty(), addr, Align(1));
    Value *masked = b.CreateAnd(byte, b.getInt8(uint8_t(1u << bit)));
    v = b.CreateICmpNE(masked, b.getInt8(0));
    v = b.CreateZExt(v, cb->getType());
  } else {
    v = b.CreateAlignedLoad(cb->getType(), addr, Align(std::max(1u, width / 8)));
  }
  replace_call(cb, v);
  return WPD_OK;
}

// The entries at the byte offsets `offsets` (sorted) of constant `c`, which
// starts at byte `base`, replaced by `stub`; counts replacements in `n`.
static Constant *with_stub_at(Constant *c, uint64_t base, const DataLayout &dl, ArrayRef<uint64_t> offsets,
                              Constant *stub, size_t &n) {
  Type *t = c->getType();
  uint64_t size = dl.getTypeAllocSize(t);
  auto first = std::lower_bound(offsets.begin(), offsets.end(), base);
  if (first == offsets.end() || *first >= base + size) return c;
  if (t->isPointerTy()) {
    if (*first != base) return c;
    ++n;
    return ConstantExpr::getPointerCast(stub, t);
  }
  SmallVector<Constant *, 16> elems;
  bool changed = false;
  if (auto *st = dyn_cast<StructType>(t)) {
    const StructLayout *sl = dl.getStructLayout(st);
    for (unsigned i = 0; i < st->getNumElements(); ++i) {
      Constant *e = c->getAggregateElement(i);
      if (!e) return c;
      Constant *r = with_stub_at(e, base + sl->getElementOffset(i), dl, offsets, stub, n);
      changed |= r != e;
      elems.push_back(r);
    }
    return changed ? ConstantStruct::get(st, elems) : c;
  }
  if (auto *at = dyn_cast<ArrayType>(t)) {
    uint64_t es = dl.getTypeAllocSize(at->getElementType());
    for (uint64_t i = 0; i < at->getNumElements(); ++i) {
      Constant *e = c->getAggregateElement(static_cast<unsigned>(i));
      if (!e) return c;
      Constant *r = with_stub_at(e, base + i * es, dl, offsets, stub, n);
      changed |= r != e;
      elems.push_back(r);
    }
    return changed ? ConstantArray::get(at, elems) : c;
  }
  return c;
}

// Dead slots: replaces the pointer entries at byte offsets `offsets`
// (sorted) of the initializer of vtable `name` (a definition, or an
// available_externally copy, so every copy stays the same) by the address of
// `__wpd_dead_slot`, an internal function of this module that traps (as
// __cxa_pure_virtual would, without its message). Returns how many entries
// it replaced (0 when the module does not define `name`). `local`: the
// plan means this module's own local vtable (1) or a global one (0); a
// vtable of the other kind that happens to have the name is another
// object, left alone.
size_t wpd_kill_vtable_slots(LLVMModuleRef mod, const char *name, size_t len, const uint64_t *offsets, size_t n,
                             int local) {
  Module &m = *unwrap(mod);
  GlobalVariable *gv = m.getGlobalVariable(StringRef(name, len), /*AllowInternal=*/true);
  if (!gv || !gv->hasInitializer() || n == 0 || gv->hasLocalLinkage() != (local != 0)) return 0;
  LLVMContext &ctx = m.getContext();
  Function *stub = m.getFunction("__wpd_dead_slot");
  if (!stub || stub->isDeclaration()) {
    stub = Function::Create(FunctionType::get(Type::getVoidTy(ctx), false), GlobalValue::InternalLinkage,
                            "__wpd_dead_slot", m);
    stub->addFnAttr(Attribute::NoReturn);
    stub->addFnAttr(Attribute::NoUnwind);
    stub->addFnAttr(Attribute::Cold);
    stub->setUnnamedAddr(GlobalValue::UnnamedAddr::Global);
    IRBuilder<> b(BasicBlock::Create(ctx, "", stub));
    b.CreateIntrinsic(Intrinsic::trap, {}, {});
    b.CreateUnreachable();
  }
  size_t replaced = 0;
  Constant *init = gv->getInitializer();
  Constant *next = with_stub_at(init, 0, m.getDataLayout(), ArrayRef<uint64_t>(offsets, n), stub, replaced);
  if (next != init) gv->setInitializer(next);
  return replaced;
}

// Rebuilds vtable `name` as { [before], original initializer, [after] } with
// the original symbol an alias to the middle (LLVM's rebuildGlobal), so the
// address points and ABI layout stay; `!type` offsets shift by the before
// size. An available_externally copy becomes a declaration instead (an alias
// cannot be available_externally, and its bytes would be stale). Returns
// which of three outcomes (none a failure; not a WpdStatus): 1 when rebuilt,
// 2 when turned into a declaration, 0 when not defined here. `local`: the
// plan lays out this module's own local vtable (1) or a global one (0); a
// vtable of the other kind with that name (a module's internal copy of a
// construction vtable another module defines globally) is another object,
// left alone.
int wpd_rewrite_vtable_layout(LLVMModuleRef mod, const char *name, size_t len, const uint8_t *before, size_t blen,
                       const uint8_t *after, size_t alen, int local) {
  Module &m = *unwrap(mod);
  GlobalVariable *gv = m.getGlobalVariable(StringRef(name, len), /*AllowInternal=*/true);
  if (!gv || gv->isDeclaration() || gv->hasLocalLinkage() != (local != 0)) return 0;
  if (gv->hasAvailableExternallyLinkage()) {
    gv->setInitializer(nullptr);
    gv->setLinkage(GlobalValue::ExternalLinkage);
    gv->setComdat(nullptr);
    return 2;
  }
  LLVMContext &ctx = m.getContext();
  Constant *init = gv->getInitializer();
  Constant *newInit = ConstantStruct::getAnon(
      {ConstantDataArray::get(ctx, ArrayRef<uint8_t>(before, blen)), init,
       ConstantDataArray::get(ctx, ArrayRef<uint8_t>(after, alen))});
  auto *ngv = new GlobalVariable(m, newInit->getType(), gv->isConstant(), GlobalValue::PrivateLinkage, newInit, "",
                                 gv);
  ngv->setSection(gv->getSection());
  ngv->setComdat(gv->getComdat());
  // At least 8, as the thin link assumed (`vcp_alignment`): a relative
  // vtable is aligned to 4, and 64-bit results beside it need 8.
  ngv->setAlignment(std::max(gv->getAlign().valueOrOne(), Align(8)));
  ngv->setUnnamedAddr(gv->getUnnamedAddr());
  ngv->copyMetadata(gv, blen);
  Type *i32 = Type::getInt32Ty(ctx);
  Constant *middle = ConstantExpr::getGetElementPtr(
      newInit->getType(), ngv, ArrayRef<Constant *>{ConstantInt::get(i32, 0), ConstantInt::get(i32, 1)});
  GlobalAlias *alias = GlobalAlias::create(init->getType(), gv->getType()->getAddressSpace(), gv->getLinkage(), "",
                                           middle, &m);
  alias->setVisibility(gv->getVisibility());
  alias->setDLLStorageClass(gv->getDLLStorageClass());
  alias->setUnnamedAddr(gv->getUnnamedAddr());
  alias->takeName(gv);
  gv->replaceAllUsesWith(alias);
  gv->eraseFromParent();
  return 1;
}

// Adds `alias` (external, hidden) for the local global `symbol`, so other
// modules can name it. Returns WPD_OK, or WPD_DECLINED (nothing added) when
// `symbol` is not defined here.
WpdStatus wpd_add_hidden_alias(LLVMModuleRef mod, const char *symbol, size_t slen, const char *alias, size_t alen) {
  Module &m = *unwrap(mod);
  GlobalValue *g = m.getNamedValue(StringRef(symbol, slen));
  if (!g || g->isDeclaration()) return WPD_DECLINED;
  GlobalAlias *a = GlobalAlias::create(g->getValueType(), g->getAddressSpace(), GlobalValue::ExternalLinkage,
                                       StringRef(alias, alen), g, &m);
  a->setVisibility(GlobalValue::HiddenVisibility);
  return WPD_OK;
}

// Gives the local global `symbol` the name of its hidden alias `alias`
// (added by wpd_add_hidden_alias, possibly through a vtable rebuilt since):
// one name for one object. With two names, code that cross-module import
// brings into another module could compare the addresses of two distinct
// declarations, which LLVM folds to "different". Returns WPD_OK, or
// WPD_DECLINED (nothing changed) when `alias` is not an alias of `symbol`.
WpdStatus wpd_merge_hidden_alias(LLVMModuleRef mod, const char *symbol, size_t slen, const char *alias, size_t alen) {
  Module &m = *unwrap(mod);
  GlobalValue *g = m.getNamedValue(StringRef(symbol, slen));
  auto *a = dyn_cast_or_null<GlobalAlias>(m.getNamedValue(StringRef(alias, alen)));
  if (!g || !a || a->getAliasee() != g || !g->hasLocalLinkage()) return WPD_DECLINED;
  a->replaceAllUsesWith(g);
  std::string name = a->getName().str();
  a->eraseFromParent();
  g->setName(name);
  g->setLinkage(GlobalValue::ExternalLinkage);
  g->setVisibility(GlobalValue::HiddenVisibility);
  g->setDSOLocal(true);
  return WPD_OK;
}

// Guarded speculative devirtualization: `if (fp == callee) callee(args)
// else fp(args)`, comparing the loaded function pointer so unknown classes
// still take the indirect path. `callee` is a function or an alias of one
// (the symbol the vtable holds, so the comparison matches its address).
// LLVM's versionCallSite keeps invoke unwind edges and PHIs right. Returns
// WPD_OK, or WPD_DECLINED (the call unchanged) when not legal (a prototype
// other than the call's) or not an indirect call.
WpdStatus wpd_rewrite_speculative(LLVMValueRef call, LLVMValueRef callee) {
  auto *cb = dyn_cast<CallBase>(unwrap(call));
  auto *gv = dyn_cast<GlobalValue>(unwrap(callee));
  if (!cb || !gv || cb->getCalledFunction() || cb->isMustTailCall()) return WPD_DECLINED;
  Function *body = dyn_cast_or_null<Function>(gv->getAliaseeObject());
  if (!body || body->getFunctionType() != cb->getFunctionType()) return WPD_DECLINED;
  const char *why = nullptr;
  if (!isLegalToPromote(*cb, body, &why)) return WPD_DECLINED;
  CallBase &direct = versionCallSite(*cb, gv, nullptr);
  direct.setCalledOperand(gv);
  return WPD_OK;
}

// The names a profile may give function `fn` in an indirect call's value
// profile, as 64-bit MD5 hashes, sorted, without repeats: the
// front end's and the IR instrumentation's PGO names (`file;name` or
// `file:name` for a local function, or its `PGOFuncName`), the plain name
// (sample profiles) and the global identifier. None (0) unless the
// function's module was built with a profile (it carries a profile
// summary): without one no call has a value profile to match. `out` holds
// at least 7 entries.
size_t wpd_function_profile_ids(LLVMValueRef fn, uint64_t *out) {
  auto *f = dyn_cast<Function>(unwrap(fn));
  if (!f || f->isDeclaration() || !f->getParent()->getProfileSummary(/*IsCS=*/false)) return 0;
  // In LTO mode the names come from the `PGOFuncName` metadata a profile
  // use left on a local function that clang's bitcode writer then promoted
  // (renamed `name.<module hash>`); otherwise from the name and linkage.
  uint64_t ids[7] = {IndexedInstrProf::ComputeHash(getPGOFuncName(*f, /*InLTO=*/false)),
                     IndexedInstrProf::ComputeHash(getPGOFuncName(*f, /*InLTO=*/true)),
                     IndexedInstrProf::ComputeHash(getIRPGOFuncName(*f, /*InLTO=*/false)),
                     IndexedInstrProf::ComputeHash(getIRPGOFuncName(*f, /*InLTO=*/true)),
                     MD5Hash(f->getName()),
                     // A sample profile names a promoted function as it
                     // was before (`name`, not `name.<module hash>`).
                     MD5Hash(f->getName().split('.').first),
                     f->getGUID()};
  std::sort(ids, ids + 7);
  size_t n = std::unique(ids, ids + 7) - ids;
  std::copy(ids, ids + n, out);
  return n;
}

// The indirect-call value profile on `call` (`!prof !{!"VP", i32 0, i64
// total, i64 id, i64 count, ...}`, as profile-use builds attach it): the
// total count in `*total` and up to `cap` (id, count) pairs, read by
// LLVM's getValueProfDataFromInst; returns how many it wrote (0 and a total
// of 0 without a profile).
size_t wpd_call_value_profile(LLVMValueRef call, uint64_t *total, uint64_t *ids, uint64_t *counts, size_t cap) {
  *total = 0;
  auto *i = dyn_cast<Instruction>(unwrap(call));
  if (!i) return 0;
  SmallVector<InstrProfValueData, 4> data =
      getValueProfDataFromInst(*i, IPVK_IndirectCallTarget, uint32_t(std::min<size_t>(cap, UINT32_MAX)), *total);
  size_t n = std::min(data.size(), cap);
  for (size_t k = 0; k < n; ++k) {
    ids[k] = data[k].Value;
    counts[k] = data[k].Count;
  }
  return n;
}

// Drops an indirect-call value profile from `i` (a call a dispatch made
// direct, or the fallback whose profiled targets the dispatch now tests).
static void drop_value_profile(Instruction &i) {
  MDNode *md = i.getMetadata(LLVMContext::MD_prof);
  auto *tag = md && md->getNumOperands() > 0 ? dyn_cast<MDString>(md->getOperand(0)) : nullptr;
  if (tag && tag->getString() == "VP") i.setMetadata(LLVMContext::MD_prof, nullptr);
}

// Closed-set dispatch: every class that reaches the call's slot is known,
// and `callees` are its targets. The call becomes comparisons of the tested
// vtable pointer with the address points of the classes of each tested
// target (target k's are points[first[k]] up to points[first[k + 1]];
// `first` has ncases + 1 entries),
// each hit calling its target directly (LLVM's promoteCallWithVTableCmp,
// which keeps invoke unwind edges and PHIs right). Without `fallback`, every
// target but the last is tested and the last is called directly without a
// test: no indirect call is left. With `fallback`, every target is tested
// and the original indirect call stays for the classes no test matched (the
// targets a profile calls cold). `weights`, when given, holds a profiled
// count per target and `rest` the count of what no target matched; each
// comparison gets the branch weights they imply. With `indexed`, the
// classes are told apart by the one-byte case index the plan stored beside
// every vtable at `index_offset` from the address point: the call loads it
// once and compares it with `case_values[k]`, one comparison per target
// (no address points are read). A vtable the module lacks is declared as an
// external i8 global, as for a unique return value. With `noinline` (a call
// inside one of its slot's own targets, always with `fallback`), each direct
// call is marked noinline and the function holding the call gets an inline
// hint, so that the dispatch leaves that function as inlinable as it was.
// WPD_DECLINED (the call unchanged) when the call is not a plain indirect
// call, the tested pointer is not a pointer, or a target does not fit the
// call's prototype; every check comes before the first change.
WpdStatus wpd_rewrite_closed_set(LLVMValueRef call, LLVMValueRef vptr_arg, const LLVMValueRef *callees,
                                 size_t ncases, const size_t *first, const char *const *names,
                                 const size_t *name_lens, const uint64_t *offsets, int fallback,
                                 const uint64_t *weights, uint64_t rest, int indexed, int64_t index_offset,
                                 const uint64_t *case_values, int noinline) {
  auto *cb = dyn_cast<CallBase>(unwrap(call));
  Value *tested_ptr = tested_pointer(unwrap(vptr_arg));
  if (!cb || !tested_ptr || ncases < (fallback ? 1u : 2u) || cb->getCalledFunction() || cb->isMustTailCall())
    return WPD_DECLINED;
  SmallVector<std::pair<GlobalValue *, Function *>, 4> targets;
  for (size_t k = 0; k < ncases; ++k) {
    auto *gv = dyn_cast<GlobalValue>(unwrap(callees[k]));
    Function *body = gv ? dyn_cast_or_null<Function>(gv->getAliaseeObject()) : nullptr;
    if (!body || body->getFunctionType() != cb->getFunctionType() || !isLegalToPromote(*cb, body))
      return WPD_DECLINED;
    targets.push_back({gv, body});
  }
  Module &m = *cb->getModule();
  Type *i8 = Type::getInt8Ty(m.getContext());
  Type *i64 = Type::getInt64Ty(m.getContext());
  // LLVM's comparison wants an instruction: a vtable pointer the optimizer
  // already knows (a constant address point after a placement new, an
  // argument) gets a no-op cast before the call, which folds away again.
  auto *vptr = dyn_cast<Instruction>(tested_ptr);
  if (!vptr) vptr = new BitCastInst(tested_ptr, tested_ptr->getType(), "wpd.vptr", cb->getIterator());
  // What reaches comparison k: the counts of the targets tested from k on,
  // and of the classes no test matches.
  uint64_t reaching = rest;
  if (weights)
    for (size_t k = 0; k < ncases; ++k) reaching += weights[k];
  size_t tested = fallback ? ncases : ncases - 1;
  // What each case compares: the vtable pointer, or the loaded case index.
  Instruction *key = vptr;
  if (indexed) {
    IRBuilder<> b(cb);
    Value *addr = b.CreateGEP(b.getInt8Ty(), vptr, b.getInt64(index_offset));
    LoadInst *index = b.CreateAlignedLoad(b.getInt8Ty(), addr, Align(1));
    // The vtable's bytes never change: loads of them may be moved and merged.
    index->setMetadata(LLVMContext::MD_invariant_load, MDNode::get(m.getContext(), {}));
    key = index;
  }
  for (size_t k = 0; k < tested; ++k) {
    SmallVector<Constant *, 4> points;
    if (indexed) points.push_back(ConstantInt::get(Type::getInt8Ty(m.getContext()), case_values[k]));
    for (size_t i = first[k]; !indexed && i < first[k + 1]; ++i) {
      StringRef name(names[i], name_lens[i]);
      Constant *g = m.getNamedValue(name);
      if (!g) g = new GlobalVariable(m, i8, /*isConstant=*/true, GlobalValue::ExternalLinkage, nullptr, name);
      points.push_back(ConstantExpr::getInBoundsGetElementPtr(i8, g, ConstantInt::get(i64, offsets[i])));
    }
    MDNode *branch = nullptr;
    if (weights) {
      // Branch weights are 32-bit: scale both sides alike.
      uint64_t hit = weights[k], miss = reaching - weights[k];
      uint64_t scale = std::max(hit, miss) / UINT32_MAX + 1;
      branch = MDBuilder(m.getContext()).createBranchWeights(uint32_t(hit / scale), uint32_t(miss / scale));
      reaching = miss;
    }
    CallBase &direct = promoteCallWithVTableCmp(*cb, key, targets[k].second, points, branch);
    direct.setCalledOperand(targets[k].first);
    drop_value_profile(direct);
    if (noinline) direct.addFnAttr(Attribute::NoInline);
  }
  if (fallback) {
    drop_value_profile(*cb);
    // The guarded calls make the function larger by a comparison, a
    // branch and a call per target: the hint keeps LLVM inlining it where
    // it inlined it before (leveldb's InternalKeyComparator::Compare into
    // its skip list's search: without it, 891,293 calls out of line).
    if (noinline) cb->getFunction()->addFnAttr(Attribute::InlineHint);
    return WPD_OK;
  }
  promoteCall(*cb, targets.back().second);
  cb->setCalledOperand(targets.back().first);
  drop_value_profile(*cb);
  return WPD_OK;
}

// A target machine configured as lld configures its LTO code generator:
// a section per function and per datum (so --gc-sections and --icf work at
// function granularity), address-significance tables, and constructors in
// .init_array.
LLVMTargetMachineRef wpd_create_target_machine(const char *triple, const char *cpu, const char *features,
                                               int opt_level, int pic, int function_sections,
                                               int data_sections, char **err) {
  *err = nullptr;
  std::string error;
  const Target *t = TargetRegistry::lookupTarget(triple, error);
  if (!t) {
    *err = dup_string(error);
    return nullptr;
  }
  // LLVM's code generation flags first (-mllvm -align-loops=...), then
  // what the link sets, as lld's LTO does. Constructors go to .init_array,
  // as clang and lld emit them (crt files and lld do not run .ctors): the
  // flags' default unless -use-ctors, which lld honours too.
  TargetOptions opts = wpd_shim::link_target_options(function_sections != 0, data_sections != 0);
  CodeGenOptLevel level = CodeGenOpt::getLevel(std::clamp(opt_level, 0, 3)).value_or(CodeGenOptLevel::Default);
  std::vector<std::string> flag_features;
  std::string machine_cpu = wpd_shim::target_cpu(cpu, flag_features);
  SubtargetFeatures all(features);
  for (const std::string &f : flag_features) all.AddFeature(f);
  TargetMachine *tm = t->createTargetMachine(triple, machine_cpu, all.getString(), opts,
                                             wpd_shim::reloc_model(pic ? Reloc::PIC_ : Reloc::Static),
                                             codegen::getExplicitCodeModel(), level);
  if (!tm) {
    *err = dup_string("cannot create a target machine");
    return nullptr;
  }
  return reinterpret_cast<LLVMTargetMachineRef>(tm);
}

}  // extern "C"
