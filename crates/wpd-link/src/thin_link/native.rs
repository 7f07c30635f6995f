//! Native inputs of a link (ELF objects, archives, shared libraries), read
//! with the `object` crate: what they reference (liveness roots), and which
//! C++ classes they can see, define or derive from (typeinfo `_ZTI*` and
//! vtable `_ZTV*` symbols, and the base typeinfos a relocatable typeinfo
//! object points to), so the policy can tell which hierarchies are open.

use crate::error::{Error, Result};
use crate::file_kind::{FileKind, classify};
use crate::thin_link::dwarf;

use object::{Object, ObjectSection, ObjectSymbol, RelocationTarget, SymbolIndex};
use std::collections::{BTreeMap, BTreeSet};

/// How a native input sees a class.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Sighting {
    /// Defines `_ZTI<X>` or `_ZTV<X>` (symbol and file).
    Defines { symbol: String, file: String },
    /// References `_ZTI<X>` or `_ZTV<X>` without defining it.
    References { symbol: String, file: String },
    /// A typeinfo defined in a relocatable native object names `_ZTI<X>`
    /// as a base class.
    BaseOf { derived: String, file: String },
    /// `_ZTI<X>` or `_ZTV<X>` is referenced and nothing in the link
    /// defines it: the class lives outside the link (the program that
    /// loads a shared output), with subclasses wpd cannot see.
    Unresolved { symbol: String },
}

impl std::fmt::Display for Sighting {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Sighting::Defines { symbol, file } => write!(f, "{symbol} is defined in native {file}"),
            Sighting::References { symbol, file } => write!(f, "{symbol} is referenced by native {file}"),
            Sighting::BaseOf { derived, file } => write!(f, "native class {derived} in {file} derives from it"),
            Sighting::Unresolved { symbol } => write!(f, "{symbol} is referenced and defined nowhere in the link"),
        }
    }
}

/// Everything the native side of a link tells wpd.
#[derive(Clone, Debug, Default)]
pub struct NativeScan {
    /// Global symbols native inputs leave undefined.
    pub refs: BTreeSet<String>,
    /// Per class (mangled name after `_ZTI`/`_ZTV`), the first sightings.
    pub classes: BTreeMap<String, Vec<Sighting>>,
    /// Native vtables whose class has no typeinfo anywhere native
    /// (`-fno-rtti` code): what they derive from cannot be checked.
    pub vtables: BTreeMap<String, String>,
    pub typeinfos: BTreeSet<String>,
    /// The first native input, not part of the C++ runtime, that defines
    /// C++ (`_Z`) symbols: code that may call virtual functions of the
    /// program's classes through their vtables, which no summary sees.
    pub cxx_code: Option<String>,
    /// The first native object (not of the runtime, not a shared library)
    /// that calls a function loading code at run time ([`CODE_LOADERS`]):
    /// a library it loads may be handed the program's objects.
    pub loads_code: Option<String>,
}

/// Functions that load a library at run time, as the dynamic loader's
/// interface names them. A library wrapping them (libltdl, GModule) is C
/// the native scan cannot tell from any other.
pub const CODE_LOADERS: &[&str] = &["dlopen", "dlmopen"];

/// The C and C++ runtime libraries of a link, by the stem of their file
/// name (`libstdc++` for `libstdc++.so.6`, `libm` for glibc's
/// `libm-2.36.a`): their C++ code knows only its own classes, which are
/// open whenever a program class derives from them (their vtables and
/// typeinfos are native). Only a file named exactly so is the runtime: a
/// project's `libatomic_queue.a` or `libgcc_utils.a` may hold C++ code
/// that calls the program's virtual functions. The startup objects
/// (`crt1.o`, `crtbegin.o`, ...) are listed apart ([`STARTUP`]).
const RUNTIME: &[&str] = &[
    "libstdc++",
    "libstdc++fs",
    "libstdc++exp",
    "libc++",
    "libc++abi",
    "libc++experimental",
    "libsupc++",
    "libgcc",
    "libgcc_s",
    "libgcc_eh",
    "libunwind",
    "libc",
    "libc_nonshared",
    "libm",
    "libmvec",
    "ld-linux-x86-64",
    "libpthread",
    "libdl",
    "librt",
    "libatomic",
];

/// Whether the C++ symbol `name` belongs to the C++ runtime: the
/// standard library (`std::`, its abbreviations `Sa Sb Ss Si So Sd`), the
/// ABI library (`__cxxabiv1`, `__gnu_cxx`) and the global operators new
/// and delete. The plugin, which sees symbols but not files, tells native
/// C++ code of the program by the other names it shares with the bitcode.
pub fn runtime_symbol(name: &str) -> bool {
    let Some(rest) = name.strip_prefix("_Z") else { return false };
    // The typeinfo (and its name) of a fundamental type, or of a pointer
    // to one: the ABI library defines them all (`__fundamental_type_info`).
    if let Some(t) = rest.strip_prefix("TI").or_else(|| rest.strip_prefix("TS")) {
        let t = t.trim_start_matches(['P', 'K']);
        let builtin = matches!(t.len(), 1 if "vwbcahstijlmxynofdegz".contains(t))
            || matches!(t, "Dd" | "De" | "Df" | "Dh" | "Di" | "Ds" | "Du" | "Dn");
        if builtin {
            return true;
        }
    }
    // Special names: typeinfo, vtable, VTT, construction vtable (named by
    // its complete class first), typeinfo name, guard variables, TLS
    // wrappers; thunks (`Th` with one call offset, `Tv` with two, each
    // `[n]<number>_`) are named by the function they reach.
    let rest =
        ["TI", "TV", "TT", "TC", "TS", "GV", "TH", "TW"].iter().find_map(|p| rest.strip_prefix(p)).unwrap_or(rest);
    let call_offset = |r: &str| -> Option<usize> {
        let digits = r.strip_prefix('n').unwrap_or(r);
        let end = digits.find('_')?;
        (end > 0 && digits[..end].bytes().all(|b| b.is_ascii_digit())).then(|| r.len() - digits.len() + end + 1)
    };
    let rest = if let Some(r) = rest.strip_prefix("Th") {
        call_offset(r).map_or(rest, |n| &r[n..])
    } else if let Some(r) = rest.strip_prefix("Tv") {
        call_offset(r).and_then(|n| call_offset(&r[n..]).map(|m| &r[n + m..])).unwrap_or(rest)
    } else {
        rest
    };
    let rest = rest.strip_prefix('N').map(|r| r.trim_start_matches(['K', 'V', 'r'])).unwrap_or(rest);
    ["St", "Sa", "Sb", "Ss", "Si", "So", "Sd", "9__gnu_cxx", "10__cxxabiv1", "nw", "na", "dl", "da"]
        .iter()
        .any(|p| rest.starts_with(p))
}

/// Whether `name` is AddressSanitizer's descriptor of an instrumented
/// global (`__asan_global_<name>`), which the runtime's dynamic list
/// exports (`__asan_*`) so that the runtime can poison the global's
/// redzone: data that holds a global's (a vtable's) address, never called
/// through. Exporting it exports none of the program's code.
pub fn sanitizer_metadata(name: &str) -> bool {
    name.starts_with("__asan_global_")
}

/// The startup objects the compiler driver adds to every link (glibc's
/// `crt1.o` family, GCC's `crtbegin.o` family, compiler-rt's), by exact
/// file name: they hold no C++ code.
const STARTUP: &[&str] = &[
    "crt1.o",
    "Scrt1.o",
    "rcrt1.o",
    "gcrt1.o",
    "grcrt1.o",
    "Mcrt1.o",
    "crti.o",
    "crtn.o",
    "crtbegin.o",
    "crtbeginS.o",
    "crtbeginT.o",
    "crtend.o",
    "crtendS.o",
    "crtfastmath.o",
    "crtprec32.o",
    "crtprec64.o",
    "crtprec80.o",
    "clang_rt.crtbegin.o",
    "clang_rt.crtend.o",
    "clang_rt.crtbegin-x86_64.o",
    "clang_rt.crtend-x86_64.o",
];

/// Whether the native input `name` (`path` or `archive(member)`) is part
/// of the C or C++ runtime, or a startup object.
fn is_runtime(name: &str) -> bool {
    let base = file_name(name);
    base.starts_with("libclang_rt.")
        || library_stems(base)
            .is_some_and(|(stem, unversioned)| RUNTIME.contains(&stem) || RUNTIME.contains(&unversioned))
        || (!name.contains('(') && STARTUP.contains(&base))
}

/// The stem of a library's file name, `<stem>.a`, `<stem>.so` or
/// `<stem>.so.<version>` (`libc.so.6`, `ld-linux-x86-64.so.2`), and that
/// stem without a trailing `-<version>`: glibc's versioned names
/// (`libm-2.36.a`: Debian's `libm.a` is a linker script naming it, so a
/// `-static` link loads its members from that file).
fn library_stems(base: &str) -> Option<(&str, &str)> {
    let numeric =
        |v: &str| !v.is_empty() && v.split('.').all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()));
    let stem = match base.find(".so") {
        Some(at) => {
            let version = &base[at + 3..];
            (version.is_empty() || version.strip_prefix('.').is_some_and(numeric)).then_some(&base[..at])?
        }
        None => base.strip_suffix(".a")?,
    };
    let unversioned = match stem.rsplit_once('-') {
        Some((glibc, version)) if numeric(version) => glibc,
        _ => stem,
    };
    Some((stem, unversioned))
}

/// Whether the native input `name` is one of the compiler's own runtime
/// libraries (compiler-rt's `libclang_rt.*`: the sanitizers, profiling,
/// XRay, libFuzzer), which every `-fsanitize=` link has. They are built
/// with `-fno-rtti`, so their vtables have no typeinfo, but from
/// compiler-rt's sources alone, without the program's headers and without
/// the C++ standard library's classes (the sanitizers use none; libFuzzer
/// its own private copy): their classes derive only from their own, and no
/// call of the program can reach them. Their vtables do not leave the
/// link's hierarchies unchecked as a program's `-fno-rtti` object does.
fn is_compiler_runtime(name: &str) -> bool {
    file_name(name).starts_with("libclang_rt.")
}

/// The file name of a native input (`path` or `archive(member)`: the
/// archive's).
fn file_name(name: &str) -> &str {
    let file = name.split('(').next().unwrap_or(name);
    file.rsplit('/').next().unwrap_or(file)
}

/// Why a native input (not of the runtime) may hold C++ code that calls
/// the program's virtual functions through vtables no summary sees, or
/// `None` when it cannot:
/// - it defines or references C++ names (`_Z…`), or the C++ ABI's
///   (`__cxa_…`, `__gxx_personality_v0`);
/// - a shared library: it needs the C++ standard library, its `.symtab`
///   (if not stripped) has C++ names or names a C++ source file, or it has
///   C++ exception tables (`-static-libstdc++` code has them, stripped or
///   not);
/// - a relocatable object: its debug information does not say that every
///   unit is C or assembly. C++ code with only `extern "C"` functions
///   (`extern "C" void show(const Shape *s) { s->draw(); }`) has no C++
///   name at all, so an object without debug information may be C++.
fn may_be_cxx(file: &object::File<'_>, bytes: &[u8], symbols: &[object::Symbol<'_, '_>]) -> Option<String> {
    for sym in symbols {
        let Ok(n) = sym.name_bytes() else { continue };
        if cxx_name(n) {
            let how = if sym.is_undefined() { "references" } else { "defines" };
            return Some(format!("it {how} C++ symbol {}", wpd_summary::name::from_bytes(n)));
        }
    }
    match file.kind() {
        object::ObjectKind::Dynamic => {
            let needs_cxx =
                crate::resolve::needed(bytes).iter().any(|lib| CXX_RUNTIME.iter().any(|r| lib.starts_with(r)));
            if needs_cxx {
                return Some("it needs the C++ standard library".to_string());
            }
            // C++ linked without a shared C++ library (`-static-libstdc++`,
            // `clang -shared` over C++ objects) that exports only `extern
            // "C"` functions: its local symbols, its units' file names, or
            // the C++ exception tables its code carries say what it is.
            if let Some(why) = file.symbols().find_map(|sym| cxx_local_symbol(&sym)) {
                return Some(why);
            }
            file.section_by_name(".gcc_except_table")
                .map(|_| "it has C++ exception tables (.gcc_except_table)".to_string())
        }
        object::ObjectKind::Relocatable => {
            let section = |n: &str| file.section_by_name(n).and_then(|s| s.data().ok());
            match (section(".debug_info"), section(".debug_abbrev")) {
                (Some(info), Some(abbrev)) => match dwarf::language(info, abbrev) {
                    Some(dwarf::Language::NotCxx) => None,
                    Some(dwarf::Language::Other) => Some("its debug information names a language other than C".into()),
                    None => Some("its debug information's language could not be read".into()),
                },
                _ => Some("it names no C++ symbol, but without debug information its language is not known".into()),
            }
        }
        _ => None,
    }
}

/// A shared library's `.symtab` entry (kept unless the library was
/// stripped) that shows C++ code: a C++ name (a hidden or local function,
/// `_ZL…`), the C++ ABI's, or a source file named as C++ sources are.
fn cxx_local_symbol(sym: &object::Symbol<'_, '_>) -> Option<String> {
    let n = sym.name_bytes().ok()?;
    if sym.kind() == object::SymbolKind::File {
        let ext = n.rsplit(|&b| b == b'.').next().filter(|e| e.len() < n.len())?;
        let cxx = [&b"cpp"[..], b"cc", b"cxx", b"c++", b"cp", b"C", b"CPP", b"ii", b"mm"].contains(&ext);
        return cxx.then(|| format!("its symbol table names the C++ source file {}", String::from_utf8_lossy(n)));
    }
    cxx_name(n).then(|| format!("its symbol table has C++ symbol {}", wpd_summary::name::from_bytes(n)))
}

/// A C++ name (`_Z…`) or one of the C++ ABI's (`__cxa_…`,
/// `__gxx_personality_v0`). Every shared library GCC's `crtbeginS.o`
/// starts references `__cxa_finalize`, C or not.
fn cxx_name(n: &[u8]) -> bool {
    // A `.symtab` names a versioned reference with its version
    // (`__cxa_finalize@GLIBC_2.2.5`).
    let n = n.split(|&b| b == b'@').next().unwrap_or(n);
    n.starts_with(b"_Z") || (n.starts_with(b"__cxa_") && n != b"__cxa_finalize") || n.starts_with(b"__gxx_personality")
}

/// The C++ standard libraries, as a shared library's `DT_NEEDED` names them.
const CXX_RUNTIME: &[&[u8]] = &[b"libstdc++.so", b"libc++.so"];

/// The symbols that say what a native input links with: a shared
/// library's dynamic symbols, an object's symbol table.
fn symbols_of<'d, 'f>(file: &'f object::File<'d>) -> Vec<object::Symbol<'d, 'f>> {
    match file.kind() {
        object::ObjectKind::Dynamic => file.dynamic_symbols().collect(),
        _ => file.symbols().collect(),
    }
}

impl NativeScan {
    /// Records that native code sees `class` (the mangled name after
    /// `_ZTI`/`_ZTV`); the first few distinct sightings are kept.
    pub fn see(&mut self, class: &str, s: Sighting) {
        let list = self.classes.entry(class.to_string()).or_default();
        // A few sightings are enough for a reason.
        if list.len() < 3 && !list.contains(&s) {
            list.push(s);
        }
    }

    /// Records the classes whose typeinfo or vtable the link references
    /// and does not define (`unresolved`: the link model's names).
    pub fn see_unresolved<'a>(&mut self, unresolved: impl IntoIterator<Item = &'a String>) {
        for name in unresolved {
            if let Some(class) = name.strip_prefix("_ZTI").or_else(|| name.strip_prefix("_ZTV")) {
                self.see(class, Sighting::Unresolved { symbol: name.clone() });
            }
        }
    }

    /// Native vtables with no native typeinfo: LLVM's
    /// `--lto-validate-all-vtables-have-type-infos` gives up on these.
    pub fn vtables_without_typeinfo(&self) -> Vec<(&str, &str)> {
        self.vtables
            .iter()
            .filter(|(class, _)| !self.typeinfos.contains(*class))
            .map(|(c, f)| (c.as_str(), f.as_str()))
            .collect()
    }

    /// Scans one native input (ELF object, shared library, or archive of
    /// objects). `name` is for errors and reasons.
    pub fn scan(&mut self, bytes: &[u8], name: &str) -> Result<()> {
        match classify(bytes) {
            FileKind::Archive => {
                let archive = object::read::archive::ArchiveFile::parse(bytes)
                    .map_err(|e| Error::at(name, format!("malformed archive: {e}")))?;
                for member in archive.members() {
                    let member = member.map_err(|e| Error::at(name, format!("malformed archive: {e}")))?;
                    let data = member.data(bytes).map_err(|e| Error::at(name, format!("malformed archive: {e}")))?;
                    if classify(data) == FileKind::Elf {
                        let member_name = format!("{name}({})", String::from_utf8_lossy(member.name()));
                        self.elf(data, &member_name)?;
                    }
                }
                Ok(())
            }
            FileKind::Elf => self.elf(bytes, name),
            _ => Err(Error::at(name, "not a native ELF file or archive")),
        }
    }

    fn elf(&mut self, bytes: &[u8], name: &str) -> Result<()> {
        let file = object::File::parse(bytes).map_err(|e| Error::at(name, format!("malformed ELF file: {e}")))?;
        let dynamic = file.kind() == object::ObjectKind::Dynamic;
        let symbols = symbols_of(&file);
        for sym in &symbols {
            let Ok(bytes) = sym.name_bytes() else { continue };
            // Names as the bitcode side spells them (lossless, see
            // `wpd_summary::name`): a reference must match its definition.
            let raw = wpd_summary::name::from_bytes(bytes);
            // Versioned dynamic names ("f@GLIBC_2.2.5") denote the bare name.
            let n = raw.split('@').next().unwrap_or(&raw);
            if n.is_empty() {
                continue;
            }
            let undefined = sym.is_undefined();
            if undefined && sym.is_global() {
                self.refs.insert(n.to_string());
                if !dynamic && self.loads_code.is_none() && CODE_LOADERS.contains(&n) && !is_runtime(name) {
                    self.loads_code = Some(format!("{name} calls {n}"));
                }
            }
            let (class, is_vtable) = match (n.strip_prefix("_ZTI"), n.strip_prefix("_ZTV")) {
                (Some(c), _) => (c, false),
                (_, Some(c)) => (c, true),
                _ => continue,
            };
            let s = if undefined {
                Sighting::References { symbol: n.to_string(), file: name.to_string() }
            } else {
                Sighting::Defines { symbol: n.to_string(), file: name.to_string() }
            };
            self.see(class, s);
            if is_vtable {
                if !undefined && !is_compiler_runtime(name) {
                    self.vtables.entry(class.to_string()).or_insert_with(|| name.to_string());
                }
            } else {
                self.typeinfos.insert(class.to_string());
            }
        }
        if self.cxx_code.is_none() && !is_runtime(name) {
            self.cxx_code = may_be_cxx(&file, bytes, &symbols).map(|why| format!("{name} ({why})"));
        }
        if !dynamic {
            self.typeinfo_bases(&file, name);
        }
        Ok(())
    }

    /// In a relocatable object, the typeinfos each defined typeinfo points
    /// to through relocations are its bases (`__si_class_type_info` and
    /// `__vmi_class_type_info` layouts hold base typeinfo pointers).
    fn typeinfo_bases(&mut self, file: &object::File<'_>, name: &str) {
        let mut by_index: std::collections::HashMap<SymbolIndex, String> = std::collections::HashMap::new();
        let mut defined: Vec<(object::SectionIndex, u64, u64, String)> = Vec::new();
        for sym in file.symbols() {
            let Ok(bytes) = sym.name_bytes() else { continue };
            let n = wpd_summary::name::from_bytes(bytes);
            if let Some(class) = n.strip_prefix("_ZTI") {
                by_index.insert(sym.index(), class.to_string());
                if let Some(sec) = sym.section_index() {
                    defined.push((sec, sym.address(), sym.size(), class.to_string()));
                }
            }
        }
        if defined.is_empty() {
            return;
        }
        for section in file.sections() {
            let here: Vec<&(object::SectionIndex, u64, u64, String)> =
                defined.iter().filter(|d| d.0 == section.index()).collect();
            if here.is_empty() {
                continue;
            }
            for (offset, reloc) in section.relocations() {
                let RelocationTarget::Symbol(target) = reloc.target() else { continue };
                let Some(base) = by_index.get(&target) else { continue };
                let Some(derived) = here.iter().find(|d| offset >= d.1 && offset < d.1 + d.2.max(1)) else { continue };
                if derived.3 != *base {
                    self.see(base, Sighting::BaseOf { derived: format!("_ZTI{}", derived.3), file: name.to_string() });
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{is_runtime, runtime_symbol};

    #[test]
    fn runtime_names_and_files() {
        for n in [
            "_ZNSo5flushEv",
            "_ZSt4cout",
            "_ZNKSt5ctypeIcE13_M_widen_initEv",
            "_Znwm",
            "_ZdlPvm",
            "_ZTISt9exception",
            // <sstream>'s VTT and construction vtable, which inline code
            // of the program references (libstdc++.so defines them).
            "_ZTTNSt7__cxx1118basic_stringstreamIcSt11char_traitsIcESaIcEEE",
            "_ZTCNSt7__cxx1118basic_stringstreamIcSt11char_traitsIcESaIcEEE0_Si",
            "_ZThn16_NSt7__cxx1118basic_stringstreamIcSt11char_traitsIcESaIcEED1Ev",
            "_ZTv0_n24_NSt7__cxx1118basic_stringstreamIcSt11char_traitsIcESaIcEED0Ev",
            // Fundamental types' typeinfo (an exception of type int).
            "_ZTIi",
            "_ZTIPKc",
            "_ZTSDn",
        ] {
            assert!(runtime_symbol(n), "{n}");
        }
        for n in [
            "_Z9introduceRK6Animal",
            "_ZN4Base1fEv",
            "_ZTV6Animal",
            "main",
            "_ZNK3Fox4nameEv",
            "_ZTT6Stream",
            "_ZThn8_N3Fox4nameEv",
            "_ZTv0_n24_N3FoxD1Ev",
            "_ZTI3Fox",
            "_ZTIP3Fox",
            "_ZTIii",
        ] {
            assert!(!runtime_symbol(n), "{n}");
        }
        assert!(is_runtime("/usr/lib/gcc/x86_64-linux-gnu/12/libstdc++.so"));
        assert!(is_runtime("/usr/lib/x86_64-linux-gnu/libc_nonshared.a(elf-init.oS)"));
        // -static: Debian's libm.a is a script naming the versioned archive.
        assert!(is_runtime("/usr/lib/x86_64-linux-gnu/libm-2.36.a(s_nextafter.o)"));
        assert!(!is_runtime("/tmp/x/libm-shapes.a(shape.o)"));
        for runtime in [
            "/lib/x86_64-linux-gnu/libc.so.6",
            "/usr/lib/x86_64-linux-gnu/libstdc++.so.6.0.30",
            "/lib64/ld-linux-x86-64.so.2",
            "/usr/lib/gcc/x86_64-linux-gnu/12/libgcc_s.so.1",
            "/usr/lib/gcc/x86_64-linux-gnu/12/libgcc.a(_muldi3.o)",
            "/usr/lib/x86_64-linux-gnu/libatomic.so.1",
            "/usr/lib/llvm-19/lib/clang/19/lib/linux/libclang_rt.asan-x86_64.a(asan_rtl.cpp.o)",
        ] {
            assert!(is_runtime(runtime), "{runtime}");
        }
        // A project's library whose name only starts like the runtime's.
        for project in [
            "/tmp/x/libatomic_queue.a(queue.o)",
            "/tmp/x/libgcc_utils.a(u.o)",
            "/tmp/x/libmvec_shapes.so",
            "/tmp/x/librtx.so.1",
            "/tmp/x/libc.so.6x",
            "/tmp/x/libm.shapes.a(s.o)",
        ] {
            assert!(!is_runtime(project), "{project}");
        }
        assert!(!is_runtime("/tmp/x/intro.o"));
        // A program's own C++ object whose name starts like a startup file.
        assert!(!is_runtime("/tmp/x/crtp_shapes.o"));
        assert!(!is_runtime("/tmp/x/libcrtp.a(shape.o)"));
        // An archive is judged by its own name, not its members'.
        assert!(!is_runtime("libzoo.a(crt.o)"));
    }
}
