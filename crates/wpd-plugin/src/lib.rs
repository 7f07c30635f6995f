//! `libwpd_plugin.so`: wpd as a linker plugin, through the interface
//! `LLVMgold.so` implements (GNU ld, gold and mold load it with `-plugin`).
//!
//! - `onload` reads the options (`-plugin-opt=…`, [`options`]) and
//!   registers three hooks.
//! - claim-file: a bitcode object or archive member is claimed, and its
//!   symbols (from the bitcode symbol table) are given to the linker.
//! - all-symbols-read: the linker says how every symbol of every claimed
//!   file resolved; that is the link model ([`model`]). The pipeline is
//!   `wpd-ld`'s: summarize, thin link, rewrite, LLVM's ThinLTO backends.
//!   The native objects go back to the linker (`add_input_file`).
//! - cleanup: the report (with the output's sizes) is written and the
//!   temporary objects are removed.
//!
//! Errors go through the linker's message callback, one line naming the
//! file, and fail the link.
//!
//! Why this crate has `unsafe` (the project keeps LLVM's FFI in
//! `crates/wpd-llvm`): the linker's C interface is implemented here, in the
//! library the linker loads: `onload` and the hooks are `extern "C"`, and
//! they read the linker's transfer vector, file descriptors and symbol
//! records, and call back into it. Every block says what it relies on; LLVM
//! is still reached only through `wpd-llvm`.

pub mod api;
pub mod model;

use std::ffi::{CStr, CString};
use std::os::raw::{c_char, c_int, c_void};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use wpd::error::{Error, Result};
use wpd::input::{BitcodeInput, FileKind};
use wpd_llvm::BitcodeSymbol;

/// How the linker gives back resolutions.
#[derive(Clone, Copy)]
enum GetSymbols {
    V1(api::GetSymbols),
    V2(api::GetSymbols),
    V3(api::GetSymbols),
}

/// The linker's callbacks and facts, from the transfer vector.
struct Linker {
    add_symbols: api::AddSymbols,
    get_symbols: GetSymbols,
    add_input_file: api::AddInputFile,
    message: Option<api::Message>,
    get_wrap_symbols: Option<api::GetWrapSymbols>,
    output: model::Output,
    output_name: Option<String>,
    flavor: wpd_link::Flavor,
}

/// A claimed bitcode file.
struct Claimed {
    input: BitcodeInput,
    /// An archive member (not a file of the command line).
    member: bool,
    handle: *mut c_void,
    /// The symbols given to the linker, and their plugin records (whose
    /// strings `_strings` owns).
    symbols: Vec<BitcodeSymbol>,
    records: Vec<api::Symbol>,
    _strings: Vec<CString>,
}

struct State {
    linker: Linker,
    options: wpd::settings::LinkSettings,
    files: Vec<Claimed>,
    /// Member names of the archives the linker read members from, by the
    /// offset of each member's data (the linker gives offsets, not names).
    members: std::collections::HashMap<String, std::collections::HashMap<u64, String>>,
    /// The native objects' folder (kept with `save-temps`).
    temp: Option<tempfile::TempDir>,
    /// The report, completed at cleanup with the output's sizes.
    report: Option<serde_json::Value>,
    /// The native files the linker offered.
    natives: model::NativeFiles,
}

/// The plugin's state: one link per process.
struct Global(Mutex<Option<State>>);

// SAFETY: the raw pointers inside are the linker's file handles and
// records of strings this state owns; the linker calls the hooks from one
// thread at a time, and the mutex serializes every access.
unsafe impl Sync for Global {}

static STATE: Global = Global(Mutex::new(None));

fn with_state<T>(f: impl FnOnce(&mut State) -> T) -> Option<T> {
    let mut guard = STATE.0.lock().unwrap_or_else(|e| e.into_inner());
    guard.as_mut().map(f)
}

/// Reports `text` through the linker (`level`), or on stderr when the
/// linker gave no message callback.
fn say(message: Option<api::Message>, level: c_int, text: &str) {
    let line = format!("wpd plugin: {}", text.replace('\n', " "));
    let c = CString::new(line.replace('\0', "?")).expect("no NUL");
    match message {
        // SAFETY: a printf-style callback given "%s" and one C string,
        // alive through the call.
        Some(m) => unsafe {
            m(level, c"%s".as_ptr(), c.as_ptr());
        },
        None => eprintln!("{}", c.to_string_lossy()),
    }
}

/// The path of LLVM's gold plugin (`LLVMgold.so`) when this process has
/// loaded it: the linker loads plugins in the order of the command line,
/// and clang's driver puts it first whenever it links with `-flto`.
fn llvm_lto_plugin_loaded() -> Option<String> {
    let maps = std::fs::read_to_string("/proc/self/maps").ok()?;
    maps.lines()
        .filter_map(|l| l.split_whitespace().nth(5))
        .find(|path| path.rsplit('/').next().is_some_and(|f| f.starts_with("LLVMgold") && f.contains(".so")))
        .map(str::to_string)
}

/// The plugin's entry point: reads the transfer vector, registers the
/// hooks and takes the options.
///
/// # Safety
/// `tv` is the linker's transfer vector, ended by `LDPT_NULL`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn onload(tv: *const api::Tv) -> api::Status {
    let mut options = wpd::settings::LinkSettings::default();
    let mut errors = Vec::new();
    let (mut register_claim, mut register_all, mut register_cleanup) = (None, None, None);
    let (mut add_symbols, mut add_input_file, mut message, mut wraps) = (None, None, None, None);
    let (mut get_v1, mut get_v2, mut get_v3) = (None, None, None);
    let mut output = model::Output::Executable;
    let mut output_name = None;
    let mut flavor = wpd_link::Flavor::Bfd;
    let mut p = tv;
    // SAFETY (the loop): `tv` is a vector of entries ended by LDPT_NULL;
    // each entry's value has the type its tag names (plugin-api.h), so a
    // function pointer is read as that function's type.
    unsafe {
        while (*p).tag != api::tag::NULL {
            let e = &*p;
            match e.tag {
                api::tag::OPTION => {
                    let opt = CStr::from_ptr(e.value.string).to_string_lossy().into_owned();
                    if let Err(err) = options.plugin_opt(&opt) {
                        errors.push(err);
                    }
                }
                api::tag::LINKER_OUTPUT => {
                    output = match e.value.int {
                        api::output::REL => model::Output::Relocatable,
                        api::output::DYN => model::Output::Shared,
                        api::output::PIE => model::Output::Pie,
                        _ => model::Output::Executable,
                    }
                }
                api::tag::OUTPUT_NAME => {
                    output_name = Some(CStr::from_ptr(e.value.string).to_string_lossy().into_owned())
                }
                api::tag::GOLD_VERSION => flavor = wpd_link::Flavor::Gold,
                api::tag::REGISTER_CLAIM_FILE_HOOK => {
                    register_claim = Some(std::mem::transmute::<*const c_void, api::RegisterClaimFile>(e.value.ptr))
                }
                api::tag::REGISTER_ALL_SYMBOLS_READ_HOOK => {
                    register_all = Some(std::mem::transmute::<*const c_void, api::RegisterAllSymbolsRead>(e.value.ptr))
                }
                api::tag::REGISTER_CLEANUP_HOOK => {
                    register_cleanup = Some(std::mem::transmute::<*const c_void, api::RegisterCleanup>(e.value.ptr))
                }
                api::tag::ADD_SYMBOLS => {
                    add_symbols = Some(std::mem::transmute::<*const c_void, api::AddSymbols>(e.value.ptr))
                }
                api::tag::GET_SYMBOLS => {
                    get_v1 = Some(std::mem::transmute::<*const c_void, api::GetSymbols>(e.value.ptr))
                }
                api::tag::GET_SYMBOLS_V2 => {
                    get_v2 = Some(std::mem::transmute::<*const c_void, api::GetSymbols>(e.value.ptr))
                }
                api::tag::GET_SYMBOLS_V3 => {
                    get_v3 = Some(std::mem::transmute::<*const c_void, api::GetSymbols>(e.value.ptr))
                }
                api::tag::ADD_INPUT_FILE => {
                    add_input_file = Some(std::mem::transmute::<*const c_void, api::AddInputFile>(e.value.ptr))
                }
                api::tag::MESSAGE => message = Some(std::mem::transmute::<*const c_void, api::Message>(e.value.ptr)),
                api::tag::GET_WRAP_SYMBOLS => {
                    wraps = Some(std::mem::transmute::<*const c_void, api::GetWrapSymbols>(e.value.ptr))
                }
                _ => {}
            }
            p = p.add(1);
        }
    }
    // The plugin has no link cache (wpd-ld has): a cache option would be
    // parsed and ignored.
    if options.cache_dir.is_some() || !options.cache_policy.is_empty() {
        errors.push(wpd::error::Error::msg(
            "plugin options -plugin-opt=cache-dir= and cache-policy= are not supported by the plugin (wpd-ld has a link cache)",
        ));
    }
    // Index files for clang's backends are wpd-ld's (lld's
    // --thinlto-index-only): the plugin hands objects back to the linker.
    if options.index_only != wpd::backends::clang_indexes::ClangIndexes::default() {
        errors.push(wpd::error::Error::msg(
            "plugin options -plugin-opt=thinlto-index-only, thinlto-emit-imports-files, thinlto-prefix-replace=, \
             thinlto-object-suffix-replace= and obj-path= are not supported by the plugin; \
             link through wpd-ld (--ld-path=wpd-ld), which writes the index files for clang's backends",
        ));
    }
    if let Some(e) = errors.first() {
        say(message, api::level::FATAL, &e.to_string());
        return api::LDPS_ERR;
    }
    if let Some(other) = llvm_lto_plugin_loaded() {
        say(
            message,
            api::level::WARNING,
            &format!(
                concat!(
                    "LLVM's own LTO plugin {} is loaded too (clang adds it to a GNU ld or gold link given -flto): ",
                    "the linker offers each file to it first, so it takes every bitcode file and wpd devirtualizes ",
                    "nothing; link without -flto"
                ),
                other
            ),
        );
    }
    let get_symbols = match (get_v3, get_v2, get_v1) {
        (Some(f), _, _) => GetSymbols::V3(f),
        (None, Some(f), _) => GetSymbols::V2(f),
        (None, None, Some(f)) => GetSymbols::V1(f),
        _ => {
            say(message, api::level::FATAL, "the linker offers no way to read symbol resolutions (get_symbols)");
            return api::LDPS_ERR;
        }
    };
    let (Some(register_claim), Some(register_all), Some(add_symbols), Some(add_input_file)) =
        (register_claim, register_all, add_symbols, add_input_file)
    else {
        say(
            message,
            api::level::FATAL,
            "the linker lacks a hook wpd needs (claim-file, all-symbols-read, add-symbols, add-input-file)",
        );
        return api::LDPS_ERR;
    };
    let linker = Linker {
        add_symbols,
        get_symbols,
        add_input_file,
        message,
        get_wrap_symbols: wraps,
        output,
        output_name,
        flavor,
    };
    *STATE.0.lock().unwrap_or_else(|e| e.into_inner()) = Some(State {
        linker,
        options,
        files: Vec::new(),
        members: std::collections::HashMap::new(),
        temp: None,
        report: None,
        natives: model::NativeFiles::default(),
    });
    // SAFETY: the linker's registration functions, given hooks with the
    // signatures plugin-api.h declares.
    unsafe {
        if register_claim(claim_file) != api::LDPS_OK || register_all(all_symbols_read) != api::LDPS_OK {
            return api::LDPS_ERR;
        }
        if let Some(r) = register_cleanup
            && r(cleanup) != api::LDPS_OK
        {
            return api::LDPS_ERR;
        }
    }
    api::LDPS_OK
}

/// Reads `len` bytes at `offset` of the linker's open file `fd` (the file
/// stays open: it is the linker's).
fn read_at(fd: c_int, offset: i64, len: i64) -> std::io::Result<Vec<u8>> {
    use std::os::unix::fs::FileExt;
    use std::os::unix::io::FromRawFd;
    let len = usize::try_from(len).map_err(|_| std::io::Error::other("negative file size"))?;
    let offset = u64::try_from(offset).map_err(|_| std::io::Error::other("negative offset"))?;
    // SAFETY: `fd` is open for the duration of the claim hook; ManuallyDrop
    // keeps it open afterwards (the linker closes it).
    let file = std::mem::ManuallyDrop::new(unsafe { std::fs::File::from_raw_fd(fd) });
    let mut buf = vec![0u8; len];
    file.read_exact_at(&mut buf, offset)?;
    Ok(buf)
}

/// The member names of the archive `path`, by the offset of each member's
/// data; empty when it cannot be read as an archive (members are then
/// named by offset).
fn member_names(path: &str) -> std::collections::HashMap<u64, String> {
    let mut out = std::collections::HashMap::new();
    // Mapped, not read: only the member headers are touched.
    let Ok(bytes) = wpd_summary::container::MappedFile::open(std::path::Path::new(path)) else { return out };
    let Ok(archive) = wpd::object::read::archive::ArchiveFile::parse(&*bytes) else { return out };
    for member in archive.members().flatten() {
        let (offset, _) = member.file_range();
        out.insert(offset, String::from_utf8_lossy(member.name()).into_owned());
    }
    out
}

/// How reports and errors name the file the linker offers at `offset` of
/// `path`: `archive(member)` for a member, as wpd-ld and lld's --trace name
/// members (the archive's member table read once).
fn shown(state: &mut State, path: &str, offset: i64) -> String {
    if offset <= 0 {
        return path.to_string();
    }
    let members = state.members.entry(path.to_string()).or_insert_with(|| member_names(path));
    match members.get(&(offset as u64)) {
        Some(m) => format!("{path}({m})"),
        None => format!("{path}@{offset}"),
    }
}

/// The linker's claim-file hook.
///
/// # Safety
/// Called by the linker only, with a valid input file and out-pointer.
unsafe extern "C" fn claim_file(file: *const api::InputFile, claimed: *mut c_int) -> api::Status {
    // SAFETY: the linker passes a valid input file and out-pointer.
    let (file, claimed) = unsafe { (&*file, &mut *claimed) };
    *claimed = 0;
    // SAFETY: the name is a C string the linker owns.
    let name = unsafe { CStr::from_ptr(file.name) }.to_string_lossy().into_owned();
    let result = with_state(|state| -> Result<bool> {
        let mut bytes = read_at(file.fd, file.offset, file.filesize)
            .map_err(|e| Error::at(format!("{name} (at offset {})", file.offset), e.to_string()))?;
        // Native code the linker loads: C++ there may call the program's
        // virtual functions without any symbol saying so. (Judged by the
        // file's or archive's name and contents; a member is named only
        // when it is the one that says so.)
        // Scanned as wpd-ld scans its native inputs: its classes (a vtable
        // without typeinfo, -fno-rtti, opens what it may derive from, which
        // no resolution shows) and whether it may be C++ code other than
        // the runtime's (`cxx_code`). An ELF file or archive the scan cannot
        // read is native code the plugin cannot check; anything else (a
        // linker script such as glibc's libm.so, whose files the linker
        // offers in turn) holds no code.
        let native = |state: &mut State, bytes: &[u8]| {
            state.natives.count += 1;
            if matches!(wpd::input::classify(bytes), FileKind::Elf | FileKind::Archive) {
                let display = shown(state, &name, file.offset);
                let scan = &mut state.natives.scan;
                if let Err(e) = scan.scan(bytes, &display)
                    && scan.cxx_code.is_none()
                {
                    scan.cxx_code = Some(format!("{display} (unreadable: {})", e.message));
                }
            }
            Ok(false)
        };
        if !wpd::input::is_bitcode(&bytes) {
            // A fat LTO object is claimed as its bitcode when asked
            // (`-plugin-opt=fat-lto-objects`), left to the linker as the
            // native object it also is with `no-fat-lto-objects`, and
            // refused otherwise: clang says neither, so the plugin cannot
            // tell which half the user meant.
            let Some(r) = wpd_link::resolve::fat_lto_bitcode(&bytes) else { return native(state, &bytes) };
            match state.options.fat_lto_objects {
                Some(true) => bytes = bytes[r].to_vec(),
                Some(false) => return native(state, &bytes),
                None => {
                    return Err(Error::msg(format!(
                        "{name}: a fat LTO object (bitcode in .llvm.lto beside native code): pass -plugin-opt=fat-lto-objects to link its bitcode, or -plugin-opt=no-fat-lto-objects to link its native code"
                    )));
                }
            }
        }
        let shown = shown(state, &name, file.offset);
        let table = wpd_llvm::read_bitcode_symtab(&bytes).map_err(|e| e.context(&shown))?;
        let symbols: Vec<BitcodeSymbol> = table.symbols.iter().filter(|s| s.in_link()).cloned().collect();
        let mut strings = Vec::new();
        let mut records = Vec::with_capacity(symbols.len());
        for s in &symbols {
            let cname = CString::new(wpd_summary::name::to_bytes(&s.name).into_owned())
                .map_err(|_| Error::at(&shown, "a symbol name holds a NUL byte"))?;
            let comdat = match s.comdat.and_then(|c| table.comdats.get(c as usize)) {
                Some((key, _)) => {
                    let k = CString::new(wpd_summary::name::to_bytes(key).into_owned())
                        .map_err(|_| Error::at(&shown, "a comdat name holds a NUL byte"))?;
                    let p = k.as_ptr().cast_mut();
                    strings.push(k);
                    p
                }
                None => std::ptr::null_mut(),
            };
            let def = match (s.undefined, s.weak, s.common) {
                (true, true, _) => api::kind::WEAKUNDEF,
                (true, false, _) => api::kind::UNDEF,
                (false, _, true) => api::kind::COMMON,
                (false, true, false) => api::kind::WEAKDEF,
                (false, false, false) => api::kind::DEF,
            };
            let visibility = match s.visibility {
                wpd_summary::Visibility::Hidden => api::visibility::HIDDEN,
                wpd_summary::Visibility::Protected => api::visibility::PROTECTED,
                wpd_summary::Visibility::Default => api::visibility::DEFAULT,
            };
            records.push(api::Symbol {
                name: cname.as_ptr().cast_mut(),
                version: std::ptr::null_mut(),
                def,
                symbol_type: 0,
                section_kind: 0,
                unused: 0,
                visibility,
                size: if s.common { s.common_size } else { 0 },
                comdat_key: comdat,
                resolution: api::resolution::UNKNOWN,
            });
            strings.push(cname);
        }
        let n = c_int::try_from(records.len()).map_err(|_| Error::at(&shown, "too many symbols"))?;
        // SAFETY: the linker's callback, given its handle and records whose
        // strings live in `strings` (kept with the file until the link ends).
        let status = unsafe { (state.linker.add_symbols)(file.handle, n, records.as_ptr()) };
        if status != api::LDPS_OK {
            return Err(Error::msg(format!("{shown}: the linker refused its symbols")));
        }
        // Every native object goes to the linker as a file of its own, loaded
        // whatever the claimed file was: a split unit may become two.
        let input = BitcodeInput {
            name: shown.clone(),
            path: name.clone(),
            member: None,
            bytes: bytes.into(),
            split: wpd::input::SplitPlacement::Joined,
        };
        state.files.push(Claimed {
            input,
            member: file.offset > 0,
            handle: file.handle,
            symbols,
            records,
            _strings: strings,
        });
        Ok(true)
    });
    match result {
        Some(Ok(c)) => {
            *claimed = c as c_int;
            api::LDPS_OK
        }
        Some(Err(e)) => {
            let message = with_state(|s| s.linker.message).flatten();
            say(message, api::level::ERROR, &e.to_string());
            api::LDPS_ERR
        }
        None => api::LDPS_ERR,
    }
}

/// The linker's all-symbols-read hook.
///
/// # Safety
/// Called by the linker only, after `onload` registered it.
unsafe extern "C" fn all_symbols_read() -> api::Status {
    let result = with_state(|state| link(state).map_err(|e| (state.linker.message, e)));
    match result {
        Some(Ok(())) => api::LDPS_OK,
        Some(Err((message, e))) => {
            say(message, api::level::FATAL, &e.to_string());
            api::LDPS_ERR
        }
        None => api::LDPS_ERR,
    }
}

/// The linker's cleanup hook.
///
/// # Safety
/// Called by the linker only, after `onload` registered it.
unsafe extern "C" fn cleanup() -> api::Status {
    let result = with_state(|state| -> Result<()> {
        if let (Some(mut json), Some(path)) = (state.report.take(), state.options.report.clone()) {
            let sizes = state
                .linker
                .output_name
                .as_deref()
                .and_then(|o| wpd::report::sizes::of_file(std::path::Path::new(o)).ok());
            json["size"] = serde_json::json!({ "output": sizes, "baseline": null });
            write_report(&json, &path)?;
        }
        // Dropping the folder removes the objects, unless save-temps.
        if let Some(t) = state.temp.take()
            && state.options.save_temps
        {
            let kept = t.keep();
            say(state.linker.message, api::level::INFO, &format!("temporary files kept in {}", kept.display()));
        }
        Ok(())
    });
    match result {
        Some(Err(e)) => {
            say(with_state(|s| s.linker.message).flatten(), api::level::ERROR, &e.to_string());
            api::LDPS_ERR
        }
        _ => api::LDPS_OK,
    }
}

/// all-symbols-read: the resolutions, the pipeline, the objects back to
/// the linker.
fn link(state: &mut State) -> Result<()> {
    let mut timings = wpd::timing::Timings::default();
    let start = std::time::Instant::now();
    // Resolutions; with v3, a claimed file the linker did not load answers
    // "no symbols" and is not part of the link.
    let mut resolutions: Vec<Option<Vec<i32>>> = Vec::with_capacity(state.files.len());
    for f in &mut state.files {
        let n = c_int::try_from(f.records.len()).map_err(|_| Error::msg("too many symbols"))?;
        let (get, v3) = match state.linker.get_symbols {
            GetSymbols::V1(g) | GetSymbols::V2(g) => (g, false),
            GetSymbols::V3(g) => (g, true),
        };
        // SAFETY: the linker's callback, given the handle of a file it
        // loaded and the records it was given for it (filled in place).
        let status = unsafe { get(f.handle, n, f.records.as_mut_ptr()) };
        if v3 && status == api::LDPS_NO_SYMS {
            resolutions.push(None);
            continue;
        }
        if status != api::LDPS_OK {
            return Err(Error::msg(format!("{}: the linker gave no symbol resolutions", f.input.name)));
        }
        resolutions.push(Some(f.records.iter().map(|r| r.resolution).collect()));
    }
    let executable = matches!(state.linker.output, model::Output::Executable | model::Output::Pie);
    // Names the linker's symbol table holds, by any file's record.
    let bound: std::collections::HashSet<&str> = state
        .files
        .iter()
        .zip(&resolutions)
        .filter_map(|(f, r)| r.as_ref().map(|r| (f, r)))
        .flat_map(|(f, r)| {
            f.symbols.iter().zip(r).filter(|&(_, &res)| model::binds_name(res)).map(|(s, _)| s.name.as_str())
        })
        .collect();
    let loaded: Vec<(&Claimed, Vec<i32>)> = state
        .files
        .iter()
        .zip(resolutions)
        .filter_map(|(f, r)| r.map(|r| (f, r)))
        .filter(|(f, r)| !(executable && f.member && model::probed_only(&f.symbols, r, |n| bound.contains(n))))
        .collect();
    let mut wraps = Vec::new();
    if let Some(get_wraps) = state.linker.get_wrap_symbols {
        let (mut n, mut list): (u64, *mut *const c_char) = (0, std::ptr::null_mut());
        // SAFETY: the linker's callback fills a count and an array of C
        // strings it owns.
        if unsafe { get_wraps(&mut n, &mut list) } == api::LDPS_OK && !list.is_null() {
            for i in 0..n as usize {
                // SAFETY: `list` holds `n` C strings.
                wraps.push(unsafe { CStr::from_ptr(*list.add(i)) }.to_string_lossy().into_owned());
            }
        }
    }
    let files: Vec<model::Resolved<'_>> = loaded
        .iter()
        .map(|(f, r)| model::Resolved { name: &f.input.name, symbols: &f.symbols, resolutions: r })
        .collect();
    let output = state.linker.output;
    // The linker's own command line: symbols it names are roots.
    let argv: Vec<String> = std::fs::read("/proc/self/cmdline")
        .map(|b| {
            b.split(|&c| c == 0).filter(|a| !a.is_empty()).map(|a| String::from_utf8_lossy(a).into_owned()).collect()
        })
        .unwrap_or_default();
    let defined: std::collections::BTreeSet<String> =
        files.iter().flat_map(|f| f.symbols.iter().filter(|s| !s.undefined).map(|s| s.name.clone())).collect();
    let model::NamedByArgs { mut mentioned, redefined } = model::named_by_args(&argv, &defined);
    for w in model::wrapped(&argv) {
        if !wraps.contains(&w) {
            wraps.push(w);
        }
    }
    // A wrapped symbol's references go to `__wrap_X` and `__real_X` to X:
    // the linker binds them after the backends, so all three stay.
    for w in &wraps {
        mentioned.extend([format!("__wrap_{w}"), format!("__real_{w}"), w.clone()]);
    }
    let modules: Vec<BitcodeInput> = loaded.iter().map(|(f, _)| f.input.clone()).collect();
    if modules.is_empty() {
        return Ok(());
    }
    if state.natives.count == 0 {
        // mold offers the plugin bitcode only: the native side comes from
        // its command line, resolved as wpd-ld resolves its own, with the
        // flavor wpd-ld gives that linker (mold resolves archives as lld).
        let flavor = argv.first().map_or(state.linker.flavor, |a| wpd_link::Flavor::from_linker_path(Path::new(a)));
        // mold links a fat LTO object's native code and never offers it to
        // the plugin: it is native code of the link.
        let fat = wpd_link::resolve::FatLto::Native;
        state.natives.from_command_line = true;
        match wpd::link_line::inputs::native_side(argv.get(1..).unwrap_or_default(), flavor, fat) {
            Ok(side) => {
                (state.natives.scan, state.natives.count) = (side.scan, side.count);
                state.natives.as_needed_refs = side.as_needed_refs;
            }
            Err(e) => {
                let why = format!("the native files the linker did not show the plugin ({e})");
                say(
                    state.linker.message,
                    api::level::WARNING,
                    &format!("{why}: every class is taken as seen by native code"),
                );
                state.natives.unknown = Some(why);
            }
        }
    }
    let from = model::from_linker(&files, output, state.linker.flavor, wraps, &mentioned, &redefined, &state.natives);
    let o = &state.options;
    wpd_llvm::Context::set_llvm_options(&o.llvm_options)?;
    let (export_dynamic, partial_export) = model::exports_by_args(&argv);
    let made = wpd::settings::Output {
        shared: output == model::Output::Shared,
        relocatable: output == model::Output::Relocatable,
        pic: output == model::Output::Pie,
        // The linker says what it exports through the resolutions
        // (`PREVAILING_DEF_IRONLY_EXP`, or `PREVAILING_DEF` for a name a
        // native file may reference too); its arguments say whether it
        // exports at all (`model::exports_by_args`).
        export_dynamic,
        partial_export,
    };
    let progress = wpd::progress::Progress::off();
    let request = wpd::LinkRequest {
        modules: &modules,
        ahead: &wpd::SummariesAhead::default(),
        settings: o,
        model: &from.model,
        native: &from.native,
        output: made,
        backends: wpd::Backends::InProcess,
        cache: None,
        progress: &progress,
    };
    let wpd::Linked { out, policy, .. } = wpd::link(&request, &mut timings)?;
    for r in wpd::report::remarks(&out.summaries, &out.plan, &out.stats, o.remarks) {
        eprintln!("{r}");
    }
    let mismatches = wpd::report::mismatches(&out.summaries, &out.plan, &policy, &out.stats);
    for m in &mismatches {
        say(state.linker.message, api::level::WARNING, &format!("plan and backend disagree: {m}"));
    }
    let temp = tempfile::Builder::new()
        .prefix("wpd-plugin-")
        .tempdir()
        .map_err(|e| Error::msg(format!("cannot create a temporary directory: {e}")))?;
    let natives = &out.natives;
    let mut paths: Vec<PathBuf> = Vec::with_capacity(natives.objects.len());
    // Every input is placed `Joined`: no vtables go to a regular LTO object.
    if natives.regular.is_some() {
        return Err(Error::msg("a regular LTO object was made for the plugin's link (a wpd bug)"));
    }
    let as_needed = &state.natives.as_needed_refs;
    let restored = if as_needed.is_empty() {
        vec![None; natives.objects.len()]
    } else {
        // The model's units are the loaded files, in order, with the
        // references of their symbol tables.
        let units: Vec<wpd::final_link::extraction::Unit<'_>> = (from.model.loaded.iter().zip(&natives.objects))
            .map(|(l, object)| wpd::final_link::extraction::Unit {
                name: &l.name,
                object,
                refs: &l.refs,
                prevailing: &l.prevailing,
            })
            .collect();
        // mold counts the references of the objects it is handed as they
        // are, without a relocation (checked with --gc-sections too).
        let needed = wpd::final_link::extraction::AsNeeded {
            answers: &|name| as_needed.contains(name),
            retained_section: false,
        };
        wpd::final_link::extraction::restore_as_needed(&units, &needed)?
    };
    for (k, (object, restored)) in natives.objects.iter().zip(restored).enumerate() {
        let path = temp.path().join(format!("{k}.o"));
        let object = restored.as_ref().map_or(object.as_slice(), |(bytes, _)| bytes.as_slice());
        std::fs::write(&path, object).map_err(|e| Error::at(path.display().to_string(), e.to_string()))?;
        paths.push(path);
    }
    for path in &paths {
        let c = CString::new(path.as_os_str().as_encoded_bytes()).map_err(|_| Error::msg("NUL in a temporary path"))?;
        // SAFETY: the linker's callback, given a C string alive through the
        // call (the linker copies the name).
        if unsafe { (state.linker.add_input_file)(c.as_ptr()) } != api::LDPS_OK {
            return Err(Error::msg(format!("the linker refused the native object {}", path.display())));
        }
    }
    state.temp = Some(temp);
    timings.record("total", start.elapsed());
    if o.report.is_some() {
        let mut json =
            wpd::report::report(&out.summaries, &out.plan, &policy, &out.stats, &mismatches, &timings, None, None);
        // The linker that loaded the plugin, as its command line names it
        // (the flavor the plugin took it for says GNU ld for mold).
        let linker = argv.first().cloned().unwrap_or_else(|| format!("{:?}", state.linker.flavor));
        json["linker"] = serde_json::Value::String(format!("{linker} (plugin)"));
        json["settings"] = serde_json::to_value(o).map_err(|e| Error::msg(e.to_string()))?;
        json["backends"] = serde_json::to_value(&out.natives.backends).map_err(|e| Error::msg(e.to_string()))?;
        json["prevailing_copies"] =
            serde_json::to_value(&out.natives.prevailing).map_err(|e| Error::msg(e.to_string()))?;
        json["link_model"] = serde_json::json!({
            "source": "linker plugin resolutions",
            "loaded": modules.iter().map(|m| m.name.clone()).collect::<Vec<_>>(),
            "outside_refs_known": true,
        });
        // Written now as well, without the output's sizes: a path that
        // cannot be written fails the link here, where every linker honours
        // the error (GNU ld and gold ignore a failing cleanup and keep the
        // program), and no earlier link's report stays in its place. The
        // cleanup writes it again with the sizes.
        if let Some(path) = &o.report {
            write_report(&json, path)?;
        }
        state.report = Some(json);
    }
    Ok(())
}

/// Writes the report `json` to `path` (atomically).
fn write_report(json: &serde_json::Value, path: &std::path::Path) -> Result<()> {
    let text = serde_json::to_string_pretty(json).map_err(|e| Error::msg(e.to_string()))?;
    Ok(wpd_summary::container::write_bytes_atomic(text.as_bytes(), path)?)
}
