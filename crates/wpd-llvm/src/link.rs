//! The last step of a link, in-process (`shim/link.cpp`): lld's ELF driver
//! as a library, and LLVM's archive writer.

use crate::ffi::{self, ShimMessage};
use std::ffi::CString;
use std::os::raw::{c_char, c_int};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use wpd_summary::error::{Error, Result};

/// The folder of the LLVM 19 tools this crate was built against (`llvm-config
/// --bindir`), where the lld binary matching the linked-in driver lives.
pub const LLVM_BINDIR: &str = env!("WPD_LLVM_BINDIR");

/// Whether `linker` is the lld this crate links as a library: the same file
/// as `<LLVM_BINDIR>/lld` once symlinks are followed (`ld.lld-19` →
/// `/usr/lib/llvm-19/bin/ld.lld` → `lld`).
pub fn is_linked_lld(linker: &Path) -> bool {
    let ours = Path::new(LLVM_BINDIR).join("lld");
    match (std::fs::canonicalize(linker), std::fs::canonicalize(&ours)) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

/// Set once lld reported that a crash left its state unusable.
static LLD_POISONED: AtomicBool = AtomicBool::new(false);

/// Runs lld's ELF driver in this process on `args` (without the program
/// name; `program` is used for it, e.g. `ld.lld-19`, and names lld's
/// messages). Returns lld's exit code. lld writes its messages to this
/// process's stdout and stderr.
pub fn lld_link(program: &str, args: &[String]) -> Result<i32> {
    if LLD_POISONED.load(Ordering::SeqCst) {
        return Err(Error::msg("lld cannot run again in this process after a crash"));
    }
    let mut owned = Vec::with_capacity(args.len() + 1);
    for a in std::iter::once(program).chain(args.iter().map(String::as_str)) {
        owned.push(CString::new(a).map_err(|_| Error::msg(format!("linker argument contains a NUL byte: {a:?}")))?);
    }
    let ptrs: Vec<*const c_char> = owned.iter().map(|c| c.as_ptr()).collect();
    let mut again: c_int = 1;
    // SAFETY: `ptrs` holds `ptrs.len()` NUL-terminated strings that outlive
    // the call; `again` is a valid out-pointer. lld's driver keeps no
    // pointer into the arguments after it returns (its context is destroyed
    // by lldMain). The result is lld's exit code, not a status.
    let code = unsafe { ffi::wpd_lld_link(ptrs.as_ptr(), ptrs.len(), &mut again) };
    if again == 0 {
        LLD_POISONED.store(true, Ordering::SeqCst);
    }
    Ok(code)
}

/// Writes a GNU archive at `path` with `members` (name, content) in order
/// and a symbol index, deterministic (zero timestamps and ids), as
/// `llvm-ar qcsD` writes it.
pub fn write_archive(path: &Path, members: &[(String, &[u8])]) -> Result<PathBuf> {
    let shown = || path.display().to_string();
    let cpath = CString::new(path.as_os_str().as_encoded_bytes())
        .map_err(|_| Error::at(shown(), "path contains a NUL byte"))?;
    let mut names = Vec::with_capacity(members.len());
    for (n, _) in members {
        names.push(
            CString::new(n.as_str())
                .map_err(|_| Error::msg(format!("archive member name contains a NUL byte: {n:?}")))?,
        );
    }
    let name_ptrs: Vec<*const c_char> = names.iter().map(|c| c.as_ptr()).collect();
    let data: Vec<*const c_char> = members.iter().map(|(_, d)| d.as_ptr().cast()).collect();
    let lens: Vec<usize> = members.iter().map(|(_, d)| d.len()).collect();
    let mut err = ShimMessage::new();
    // SAFETY: every array holds `members.len()` entries; names are
    // NUL-terminated and the member bytes outlive the call (LLVM reads them
    // while writing and keeps no reference); `err` receives null or a
    // malloc'd message.
    let status = unsafe {
        ffi::wpd_write_archive(
            cpath.as_ptr(),
            name_ptrs.as_ptr(),
            data.as_ptr(),
            lens.as_ptr(),
            members.len(),
            err.out(),
        )
    };
    status.check(err, "cannot write the archive").map_err(|e| Error::at(shown(), e.message))?;
    Ok(path.to_path_buf())
}
