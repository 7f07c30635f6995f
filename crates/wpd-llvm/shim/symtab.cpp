// Bitcode symbol tables for resolution: LLVM's irsymtab, which every
// bitcode file since LLVM 5 carries (rebuilt from the IR only when the
// producer differs), so reading it costs no IR parse. Declared in
// src/ffi.rs, wrapped safely in src/symtab.rs.

#include "common.h"
#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/Object/IRSymtab.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/TargetParser/Triple.h"

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

using namespace llvm;

namespace {

// Flag bits of wpd_symtab_symbol, wpd's own layout (stable whatever
// irsymtab's storage bits are).
enum : unsigned {
  WPD_SYM_UNDEFINED = 1u << 0,
  WPD_SYM_WEAK = 1u << 1,
  WPD_SYM_COMMON = 1u << 2,
  WPD_SYM_USED = 1u << 3,
  WPD_SYM_TLS = 1u << 4,
  WPD_SYM_MAY_OMIT = 1u << 5,
  WPD_SYM_GLOBAL = 1u << 6,
  WPD_SYM_FORMAT_SPECIFIC = 1u << 7,
  WPD_SYM_EXECUTABLE = 1u << 8,
  WPD_SYM_UNNAMED_ADDR = 1u << 9,
  WPD_SYM_INDIRECT = 1u << 10,
};

struct Sym {
  std::string name;
  unsigned flags;
  unsigned visibility;  // GlobalValue::VisibilityTypes: 0 default, 1 hidden, 2 protected
  int comdat;
  uint64_t common_size;
  unsigned common_align;
  std::string section;  // a definition's section, empty for the default ones
};

struct Table {
  std::vector<Sym> symbols;
  std::vector<std::pair<std::string, int>> comdats;  // name, Comdat::SelectionKind
  size_t modules = 0;
};

using wpd_shim::dup_string;

}  // namespace

extern "C" {

// wpd links x86-64 ELF (LP64) programs; a module for another target is
// refused when its symbol table or its summary is read, as lld refuses an
// incompatible file, before any of LLVM's code for that target reads it.
// Null when the triple `data` (a module's, `len` bytes; empty: none given)
// is one wpd links, else a malloc'd message.
char *wpd_target_error(const char *data, size_t len) {
  StringRef text(data, len);
  Triple triple(text);
  if (text.empty() || (triple.getArch() == Triple::x86_64 && triple.isOSBinFormatELF() && !triple.isX32()))
    return nullptr;
  return dup_string("bitcode for " + text.str() + ", not x86-64 ELF: wpd links x86-64 ELF programs only");
}

// Reads the symbol table of a bitcode file (raw or wrapped; every module of
// a split LTO unit). Everything is copied out, so the table does not point
// into `data`. Returns an owned table (free with wpd_symtab_free) or null
// with a malloc'd message in *err.
void *wpd_symtab_read(const char *data, size_t len, char **err) {
  *err = nullptr;
  MemoryBufferRef buf(StringRef(data, len), "");
  Expected<BitcodeFileContents> bfc = getBitcodeFileContents(buf);
  if (!bfc) {
    *err = dup_string(toString(bfc.takeError()));
    return nullptr;
  }
  Expected<irsymtab::FileContents> fc = irsymtab::readBitcode(*bfc);
  if (!fc) {
    *err = dup_string(toString(fc.takeError()));
    return nullptr;
  }
  const irsymtab::Reader &r = fc->TheReader;
  if ((*err = wpd_target_error(r.getTargetTriple().data(), r.getTargetTriple().size()))) return nullptr;
  auto *t = new Table;
  t->modules = r.getNumModules();
  for (auto &c : r.getComdatTable())
    t->comdats.emplace_back(c.first.str(), static_cast<int>(c.second));
  for (const irsymtab::Reader::SymbolRef &s : r.symbols()) {
    unsigned f = 0;
    if (s.isUndefined()) f |= WPD_SYM_UNDEFINED;
    if (s.isWeak()) f |= WPD_SYM_WEAK;
    if (s.isCommon()) f |= WPD_SYM_COMMON;
    if (s.isUsed()) f |= WPD_SYM_USED;
    if (s.isTLS()) f |= WPD_SYM_TLS;
    if (s.canBeOmittedFromSymbolTable()) f |= WPD_SYM_MAY_OMIT;
    if (s.isGlobal()) f |= WPD_SYM_GLOBAL;
    if (s.isFormatSpecific()) f |= WPD_SYM_FORMAT_SPECIFIC;
    if (s.isExecutable()) f |= WPD_SYM_EXECUTABLE;
    if (s.isUnnamedAddr()) f |= WPD_SYM_UNNAMED_ADDR;
    if (s.isIndirect()) f |= WPD_SYM_INDIRECT;
    Sym out{s.getName().str(), f, static_cast<unsigned>(s.getVisibility()), s.getComdatIndex(), 0, 0, {}};
    if (!s.isUndefined()) out.section = s.getSectionName().str();
    if (s.isCommon()) {
      out.common_size = s.getCommonSize();
      out.common_align = s.getCommonAlignment();
    }
    t->symbols.push_back(std::move(out));
  }
  return t;
}

size_t wpd_symtab_num_symbols(const void *table) { return static_cast<const Table *>(table)->symbols.size(); }
size_t wpd_symtab_num_comdats(const void *table) { return static_cast<const Table *>(table)->comdats.size(); }
size_t wpd_symtab_num_modules(const void *table) { return static_cast<const Table *>(table)->modules; }

// Symbol `i` (< wpd_symtab_num_symbols): name bytes (owned by the table),
// wpd flag bits, visibility, comdat index (-1: none), common size/alignment.
void wpd_symtab_symbol(const void *table, size_t i, const char **name, size_t *name_len, unsigned *flags,
                       unsigned *visibility, int *comdat, uint64_t *common_size, unsigned *common_align) {
  const Sym &s = static_cast<const Table *>(table)->symbols[i];
  *name = s.name.data();
  *name_len = s.name.size();
  *flags = s.flags;
  *visibility = s.visibility;
  *comdat = s.comdat;
  *common_size = s.common_size;
  *common_align = s.common_align;
}

// The section symbol `i` (< wpd_symtab_num_symbols) is defined in: name
// bytes (owned by the table), empty for an undefined symbol or a default
// section.
void wpd_symtab_symbol_section(const void *table, size_t i, const char **name, size_t *name_len) {
  const Sym &s = static_cast<const Table *>(table)->symbols[i];
  *name = s.section.data();
  *name_len = s.section.size();
}

// Comdat `i` (< wpd_symtab_num_comdats): name bytes and selection kind
// (Comdat::SelectionKind: 0 any, 1 exact match, 2 largest, 3 nodeduplicate,
// 4 same size).
void wpd_symtab_comdat(const void *table, size_t i, const char **name, size_t *name_len, int *kind) {
  const auto &c = static_cast<const Table *>(table)->comdats[i];
  *name = c.first.data();
  *name_len = c.first.size();
  *kind = c.second;
}

void wpd_symtab_free(void *table) { delete static_cast<Table *>(table); }

}  // extern "C"

#include "llvm/Demangle/Demangle.h"

extern "C" {

// The demangled form of a symbol name (Itanium, Rust, ...), malloc'd, or
// null when the name is not mangled. For version-script `extern "C++"`
// patterns, which lld matches against llvm::demangle's output.
char *wpd_demangle(const char *name, size_t len) {
  std::string in(name, len);
  std::string out = llvm::demangle(in);
  if (out == in)
    return nullptr;
  return dup_string(out);
}

}  // extern "C"
