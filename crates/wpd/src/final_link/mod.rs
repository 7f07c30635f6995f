//! What the backends' native objects need before the final link: a native
//! object that replaces a bitcode unit must make the linker extract the
//! archive members the unit's references extracted ([`extraction`], which
//! appends the references LLVM's code no longer makes with
//! [`elf_symbols`]). The final link itself is the front end's: wpd-ld runs
//! lld or the real linker on the objects, the plugin hands them back to
//! the linker that loaded it.

mod elf_symbols;
pub mod extraction;

/// Whether `bytes` is an object the final link can take in place of a
/// bitcode unit (an x86-64 ELF relocatable object with a symbol table):
/// an error saying what it is not, for a job's output that is empty,
/// truncated or something else.
pub fn check_native_object(bytes: &[u8]) -> std::result::Result<(), String> {
    elf_symbols::Object::parse(bytes).map(drop)
}
