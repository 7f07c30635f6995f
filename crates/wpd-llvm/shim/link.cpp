// The last step of a wpd-ld link without another process:
//
//  * wpd_lld_link: lld's ELF driver as a library (liblldELF from
//    liblld-19-dev), the same code as the ld.lld-19 binary, run through
//    lld::lldMain so that a fatal error returns here (crash recovery) and
//    the driver can run again;
//  * wpd_write_archive: an archive written by LLVM's archive writer (what
//    llvm-ar uses): GNU format, symbol index, deterministic headers.
//
// Declared in src/ffi.rs, wrapped safely in src/link.rs.

#include "common.h"
#include "lld/Common/Driver.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Object/ArchiveWriter.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <cstring>
#include <vector>

LLD_HAS_DRIVER(elf)


extern "C" {

// Runs lld's ELF driver on argv[0..argc) (argv[0]: the program name, e.g.
// "ld.lld-19"). Returns the driver's exit code (not a WpdStatus); *can_run_again is 0 when a
// crash left lld's state unusable.
int wpd_lld_link(const char *const *argv, size_t argc, int *can_run_again) {
  std::vector<const char *> args(argv, argv + argc);
  lld::Result r = lld::lldMain(args, llvm::outs(), llvm::errs(), {{lld::Gnu, &lld::elf::link}});
  llvm::outs().flush();
  llvm::errs().flush();
  *can_run_again = r.canRunAgain ? 1 : 0;
  return r.retCode;
}

// Writes a GNU archive at `path` holding members (data[i], len[i]) named
// names[i], in order, with a symbol index. WPD_OK, else WPD_FAILED and
// *err (malloc'd).
WpdStatus wpd_write_archive(const char *path, const char *const *names, const char *const *data, const size_t *lens,
                            size_t count, char **err) {
  *err = nullptr;
  std::vector<llvm::NewArchiveMember> members;
  members.reserve(count);
  for (size_t i = 0; i < count; ++i) {
    llvm::NewArchiveMember m;
    m.Buf = llvm::MemoryBuffer::getMemBuffer(llvm::StringRef(data[i], lens[i]), names[i],
                                             /*RequiresNullTerminator=*/false);
    m.MemberName = names[i];
    members.push_back(std::move(m));
  }
  llvm::Error e = llvm::writeArchive(path, members, llvm::SymtabWritingMode::NormalSymtab,
                                     llvm::object::Archive::K_GNU, /*Deterministic=*/true, /*Thin=*/false);
  if (e) {
    *err = wpd_shim::dup_string(llvm::toString(std::move(e)));
    return WPD_FAILED;
  }
  return WPD_OK;
}

}  // extern "C"
