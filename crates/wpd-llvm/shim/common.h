// Helpers every shim file shares: strings and byte buffers handed to Rust
// are malloc'd copies (Rust frees them with wpd_free / take_c_string).

#ifndef WPD_SHIM_COMMON_H
#define WPD_SHIM_COMMON_H

#include "llvm/Support/CodeGen.h"
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <cstring>
#include <string>
#include <vector>

// What every shim function that can fail, or decline, returns (Rust:
// `ffi::Status`), as rustc's LLVMRustResult. A function with a `char **err`
// out-parameter sets it to null first, and to a malloc'd message (free with
// wpd_free) when it returns WPD_FAILED. Functions whose result is a genuine
// boolean (a query), a count or an exit code return those instead, and say
// so. Rust reads any value it does not know as WPD_FAILED.
enum WpdStatus : int32_t {
  // Done.
  WPD_OK = 0,
  // An error: nothing usable was produced (*err says why, where the
  // function has it).
  WPD_FAILED = 1,
  // Not applicable, and no error: nothing was changed or produced (a
  // rewrite that does not fit the call, a file not laid out as asked, a
  // module without a summary). Only the functions that say so return it.
  WPD_DECLINED = 2,
};

namespace llvm {
class Module;
class TargetOptions;
}

namespace wpd_shim {

// Type tests and checked loads of `m` whose result is used as a real check
// (control-flow integrity), which wpd must not silently drop (shim.cpp).
size_t count_type_checks(llvm::Module &m);

// Removes every type test and checked load of `m`: assumes they feed are
// erased, other uses become `true`, a checked load becomes a plain load
// paired with `true`. Returns how many intrinsic calls went (shim.cpp).
size_t rewrite_type_tests(llvm::Module &m);

// What LLVM's reader checks when it reads a whole module (AutoUpgrade's
// UpgradeDebugInfo), for a module read with that check off
// (wpd_skip_debug_info_upgrade): a module whose debug info has the current
// version is verified; invalid IR returns false with the verifier's first
// message in `err`; invalid debug info, or debug info of another version,
// is stripped, with a warning in `warning` (as LLVM does). With `verify`
// set, a module without debug info to check is verified as well, so that
// every module is verified once. Returns true when the module can be
// compiled.
bool check_module(llvm::Module &m, bool verify, std::string &err, std::string &warning);

// LLVM's code generation and MC flags (-align-loops, -mattr, -mcpu,
// -relocation-model, -dwarf64, ...), which LLVM's tools register (llc, lld,
// LLVMgold) and its libraries do not: registered once per process, so that
// -mllvm and -plugin-opt=- accept what lld accepts (codegen.cpp). Every
// function below registers them first.
void register_codegen_flags();

// The target options of the link's code generation, as lld's LTO makes
// them: those the flags give (initTargetOptionsFromCodeGenFlags: unique
// section names, .init_array unless -use-ctors, ...), then a section per
// function and per datum as the link asks, and address-significance
// tables. The caller adds what else the link decides.
llvm::TargetOptions link_target_options(bool function_sections, bool data_sections);

// The relocation model: -mllvm -relocation-model= when given (lld lets it
// override), else the link's (`link`; none: each module's own).
std::optional<llvm::Reloc::Model> reloc_model(std::optional<llvm::Reloc::Model> link);

// The CPU to compile for, given the link's (`cpu`: -plugin-opt=mcpu=, or
// -mllvm -mcpu=, the last of them; empty: each module's own), and the
// target features to add (-mattr=): "native" becomes this machine's CPU,
// with its features, as LLVM's tools resolve it (codegen::getCPUStr).
std::string target_cpu(const std::string &cpu, std::vector<std::string> &features);

// A malloc'd, NUL-terminated copy of `len` bytes (null if out of memory).
inline char *dup_bytes(const char *data, size_t len) {
  char *p = static_cast<char *>(std::malloc(len + 1));
  if (p) {
    if (len) std::memcpy(p, data, len);
    p[len] = 0;
  }
  return p;
}

inline char *dup_string(const std::string &s) { return dup_bytes(s.data(), s.size()); }

// A malloc'd copy of `v` (free with wpd_free; at least one element is
// allocated), or null when it cannot allocate.
template <typename T>
T *malloc_copy(const std::vector<T> &v) {
  T *p = static_cast<T *>(std::malloc(sizeof(T) * (v.empty() ? 1 : v.size())));
  if (p && !v.empty()) std::memcpy(p, v.data(), sizeof(T) * v.size());
  return p;
}

// Two results of one scan: `a` and `b` (as long) as malloc'd arrays
// (free with wpd_free); returns their length, 0 (nothing allocated) when
// empty, SIZE_MAX (nothing allocated) when it cannot allocate, which the
// callers take as "anything may be read".
template <typename A, typename B>
inline size_t two_arrays(const std::vector<A> &a, A **out_a, const std::vector<B> &b, B **out_b) {
  *out_a = nullptr;
  *out_b = nullptr;
  if (a.empty()) return 0;
  *out_a = malloc_copy(a);
  *out_b = malloc_copy(b);
  if (*out_a && *out_b) return a.size();
  std::free(*out_a);
  std::free(*out_b);
  *out_a = nullptr;
  *out_b = nullptr;
  return SIZE_MAX;
}

}  // namespace wpd_shim

#endif
