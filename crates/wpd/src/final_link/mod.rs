//! What the backends' native objects need before the final link: a native
//! object that replaces a bitcode unit must make the linker extract the
//! archive members the unit's references extracted ([`extraction`], which
//! appends the references LLVM's code no longer makes with
//! [`elf_symbols`]). The final link itself is the front end's: wpd-ld runs
//! lld or the real linker on the objects, the plugin hands them back to
//! the linker that loaded it.

mod elf_symbols;
pub mod extraction;

/// Checks that `bytes` (the file `name`, made as `of`: "the backend job of
/// a.o") is an object the final link can take in place of a bitcode unit
/// (an x86-64 ELF relocatable object with a symbol table): a job's output
/// that is empty, truncated or something else is an error naming it.
pub fn check_native_object(bytes: &[u8], name: &str, of: &str) -> crate::error::Result<()> {
    elf_symbols::Object::parse(bytes)
        .map(drop)
        .map_err(|e| crate::error::Error::at(name, format!("not the object of {of}: {e}")))
}
