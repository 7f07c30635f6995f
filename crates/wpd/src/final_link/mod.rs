//! What the backends' native objects need before the final link: a native
//! object that replaces a bitcode unit must make the linker extract the
//! archive members the unit's references extracted ([`extraction`], which
//! appends the references LLVM's code no longer makes with
//! [`elf_symbols`]). The final link itself is the front end's: wpd-ld runs
//! lld or the real linker on the objects, the plugin hands them back to
//! the linker that loaded it.

mod elf_symbols;
pub mod extraction;

/// The section a distributed link's backend job adds to its object
/// ([`mark_job_object`]): the content hash of the module it compiled.
/// `SHF_EXCLUDE` keeps it out of the program.
const JOB_MODULE_SECTION: &str = ".wpd.job.module";

/// `object`, compiled from the module whose content hash is `module_hash`,
/// with that hash in a section of its own ([`JOB_MODULE_SECTION`]): the
/// final link takes a job's object only for the module it was compiled
/// from ([`check_job_object`]), whatever a build system's cache hands back.
/// `name` is the object's, for errors.
pub fn mark_job_object(object: &[u8], module_hash: &str, name: &str) -> crate::error::Result<Vec<u8>> {
    elf_symbols::add_excluded_section(object, JOB_MODULE_SECTION, module_hash.as_bytes())
        .map_err(|e| crate::error::Error::at(name, format!("cannot name its module in the object: {e}")))
}

/// Checks that `bytes` (the file `name`, made as `of`: "the backend job of
/// a.o") is an object the final link can take in place of a bitcode unit:
/// an x86-64 ELF relocatable object with a symbol table, compiled from the
/// module whose content hash is `module_hash` ([`mark_job_object`]). A job
/// output that is empty, truncated, something else, or compiled from
/// another version of its module (a stale object from a cache) is an error
/// naming it.
pub fn check_job_object(bytes: &[u8], name: &str, of: &str, module_hash: &str) -> crate::error::Result<()> {
    let error = |what: String| crate::error::Error::at(name, what);
    let object = elf_symbols::Object::parse(bytes).map_err(|e| error(format!("not the object of {of}: {e}")))?;
    match elf_symbols::section_data(&object, bytes, JOB_MODULE_SECTION) {
        Some(hash) if hash == module_hash.as_bytes() => Ok(()),
        Some(hash) => Err(error(format!(
            "not the object of {of}: a stale object, compiled from another version of its module (content hash \
             {}, the index's is {module_hash}); run the job again without a cached result",
            String::from_utf8_lossy(hash)
        ))),
        None => Err(error(format!(
            "not the object of {of}: no {JOB_MODULE_SECTION} section (not written by `wpd backend`)"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;

    /// A real object compiled from the C `source`, with `flags`.
    fn compile(dir: &std::path::Path, source: &str, flags: &[&str]) -> Vec<u8> {
        let src = dir.join("m.c");
        std::fs::write(&src, source).expect("write");
        let obj = dir.join("m.o");
        let st = Command::new("clang-19").args(["-O2", "-c"]).args(flags).arg(&src).arg("-o").arg(&obj).status();
        assert!(st.expect("clang-19 runs").success());
        std::fs::read(&obj).expect("read")
    }

    /// The marked object links with lld (the section left out of the
    /// output) and is taken for its own module only.
    fn check_marked(dir: &std::path::Path, object: &[u8]) {
        let hash = crate::input::content_hash(b"the module");
        let marked = mark_job_object(object, &hash, "m.o").expect("marked");
        check_job_object(&marked, "m.o", "the job of m", &hash).expect("its own module's");
        let other = crate::input::content_hash(b"another version");
        let err = check_job_object(&marked, "m.o", "the job of m", &other).expect_err("another module's");
        assert!(err.to_string().contains("a stale object") && err.to_string().contains("m.o"), "{err}");
        let err = check_job_object(object, "m.o", "the job of m", &hash).expect_err("unmarked");
        assert!(err.to_string().contains("no .wpd.job.module section"), "{err}");
        let (obj, lib) = (dir.join("marked.o"), dir.join("m.so"));
        std::fs::write(&obj, &marked).expect("write");
        let st = Command::new("ld.lld-19").arg("-shared").arg(&obj).arg("-o").arg(&lib).status();
        assert!(st.expect("ld.lld-19 runs").success());
        let linked = std::fs::read(&lib).expect("read");
        let file = object::File::parse(&*linked).expect("a shared library");
        use object::{Object, ObjectSection};
        assert!(file.sections().all(|s| s.name() != Ok(JOB_MODULE_SECTION)), "the section reached the output");
    }

    #[test]
    fn a_job_object_names_its_module() {
        let dir = tempfile::tempdir().expect("temp dir");
        let object = compile(dir.path(), "int f(int x) { return x + 1; }\n", &[]);
        check_marked(dir.path(), &object);
    }

    /// An object with more sections than the header's 16-bit count holds
    /// (extended numbering: -ffunction-sections, 70,000 functions).
    #[test]
    fn a_job_object_with_extended_section_numbering_names_its_module() {
        let dir = tempfile::tempdir().expect("temp dir");
        let source: String = (0..70_000).map(|i| format!("int f{i}(int x) {{ return x + {i}; }}\n")).collect();
        let object = compile(dir.path(), &source, &["-O0", "-ffunction-sections"]);
        assert_eq!(u16::from_le_bytes([object[60], object[61]]), 0, "not extended numbering");
        check_marked(dir.path(), &object);
    }
}
