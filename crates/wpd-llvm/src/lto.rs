//! LLVM's ThinLTO (`lto::LTO`, `shim/lto.cpp`) driven by wpd: wpd gives it
//! the rewritten modules and a resolution for every symbol (computed from
//! its own link model); LLVM's thin link does what lld's does with them
//! (prevailing copies, dead stripping, internalization and promotion,
//! attribute propagation, cross-module import) and its in-process backends
//! produce one native object per module.

use crate::ffi::{self, ShimMessage};
use crate::{Module, name_text};
use std::ffi::CString;
use std::marker::PhantomData;
use std::os::raw::{c_char, c_int, c_void};
use std::path::Path;
use wpd_summary::error::{Error, Result};

impl Module<'_> {
    /// The module as ThinLTO bitcode: a fresh module summary (with the
    /// direct calls wpd's rewrites made, which LLVM's importer then sees),
    /// a module hash and a symbol table. A split unit's two parts, linked,
    /// become one ThinLTO module. `split_flag`: the `EnableSplitLTOUnit`
    /// flag the module and its summary carry, the one every module of the
    /// link must share ([`LtoLayout::split_flag`]). `kept_home` names the
    /// definitions LLVM's importer must leave in this module: those of a
    /// split unit's regular part. LLVM's own link puts that part into the
    /// regular LTO module, out of every ThinLTO backend's reach; kept out
    /// of reach here too, no backend pays for reading this module, copying
    /// a vtable and optimizing a copy that code generation then drops.
    pub fn write_thinlto_bitcode(&self, split_flag: bool, kept_home: &[String]) -> Result<Vec<u8>> {
        // The summary and symbol table read module-level assembly, which
        // needs the target's assembly parser.
        crate::codegen::init_native_target();
        let mut out = std::ptr::null_mut();
        let mut len = 0usize;
        let mut err = ShimMessage::new();
        // A name with a NUL byte is not marked: it stays importable, which
        // costs time, never correctness.
        let names: Vec<CString> = kept_home.iter().filter_map(|n| CString::new(n.as_str()).ok()).collect();
        let name_ptrs: Vec<*const c_char> = names.iter().map(|n| n.as_ptr()).collect();
        // SAFETY: a live module; `name_ptrs` holds `len()` NUL-terminated
        // strings that outlive the call; out-pointers are valid; `err`
        // receives null or a malloc'd message.
        let status = unsafe {
            ffi::wpd_write_thinlto_bitcode(
                self.raw,
                c_int::from(split_flag),
                name_ptrs.as_ptr(),
                name_ptrs.len(),
                &mut out,
                &mut len,
                err.out(),
            )
        };
        status.check(err, "cannot write bitcode")?;
        // SAFETY: `out` holds `len` bytes, malloc'd by the shim.
        let bytes = unsafe { std::slice::from_raw_parts(out.cast::<u8>(), len) }.to_vec();
        // SAFETY: allocated with malloc by the shim.
        unsafe { ffi::wpd_free(out.cast()) };
        Ok(bytes)
    }
}

/// How a bitcode file is laid out for LLVM's ThinLTO ([`thinlto_layout`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LtoLayout {
    /// A split LTO unit as clang writes it (a ThinLTO module, then the
    /// regular LTO module holding its vtables); otherwise one ThinLTO
    /// module.
    pub split_unit: bool,
    /// Its summary's `EnableSplitLTOUnit` flag (`-fsplit-lto-unit`, set by
    /// clang for `-fwhole-program-vtables` objects, also when there was
    /// nothing to split): the flag LLVM's thin link checks across modules.
    pub split_flag: bool,
}

/// The layout of `bytes` when LLVM's ThinLTO can take it, or a part of it,
/// as it is: one ThinLTO module with a summary, or a split unit as clang
/// writes it (`None`: anything else). Reads the file's module list and LTO
/// info only, not the modules.
pub fn thinlto_layout(bytes: &[u8], name: &str) -> Result<Option<LtoLayout>> {
    let cname = CString::new(name.replace('\0', "?")).expect("no interior NUL");
    let (mut split_unit, mut flag): (c_int, c_int) = (0, 0);
    let mut err = ShimMessage::new();
    // SAFETY: `bytes` and `cname` outlive the call, which copies nothing it
    // keeps; out-pointers are valid; `err` receives null or a malloc'd
    // message.
    let status = unsafe {
        ffi::wpd_thinlto_layout(
            bytes.as_ptr().cast(),
            bytes.len(),
            cname.as_ptr(),
            &mut split_unit,
            &mut flag,
            err.out(),
        )
    };
    let taken = status.check_declined(err, "invalid bitcode")?;
    Ok(taken.then_some(LtoLayout { split_unit: split_unit == 1, split_flag: flag == 1 }))
}

/// The thin part of a split unit (`bytes`, which [`thinlto_layout`] found
/// to be one: [`LtoLayout::split_unit`]) as a bitcode file of its own, cut
/// out without reading the module: clang's module, summary and symbol
/// table as they are. `None`: the bytes are not laid out so after all.
pub fn split_thin_part(bytes: &[u8], name: &str) -> Result<Option<Vec<u8>>> {
    let cname = CString::new(name.replace('\0', "?")).expect("no interior NUL");
    let mut out = std::ptr::null_mut();
    let mut len = 0usize;
    let mut err = ShimMessage::new();
    // SAFETY: `bytes` and `cname` outlive the call; out-pointers are valid;
    // `err` receives null or a malloc'd message.
    let status = unsafe {
        ffi::wpd_split_thin_part(bytes.as_ptr().cast(), bytes.len(), cname.as_ptr(), &mut out, &mut len, err.out())
    };
    if !status.check_declined(err, "invalid bitcode")? {
        return Ok(None);
    }
    // SAFETY: on WPD_OK `out` holds `len` bytes, malloc'd by the shim.
    let part = unsafe { std::slice::from_raw_parts(out.cast::<u8>(), len) }.to_vec();
    // SAFETY: allocated with malloc by the shim.
    unsafe { ffi::wpd_free(out.cast()) };
    Ok(Some(part))
}

/// Relocation model of the link's code (lld: PIC for `-pie`/`-shared`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LtoReloc {
    Static,
    Pic,
    /// Each module's own (a relocatable output).
    Module,
}

/// How the link's ThinLTO optimizes and generates code.
#[derive(Clone, Debug)]
pub struct LtoOptions<'a> {
    pub opt_level: u8,
    /// Code generation's level, 0 to 3 (lld's `--lto-CGO`); above 3 is 3, as
    /// for `opt_level` (the shim clamps both).
    pub cg_opt_level: u8,
    /// Empty: the modules' own `target-cpu`.
    pub cpu: &'a str,
    pub reloc: LtoReloc,
    pub sections: crate::Sections,
    /// LLVM's spelling (`gdb`, `lldb`, `sce`, `dbx`).
    pub debugger_tuning: Option<&'a str>,
    pub emulated_tls: bool,
    pub tls_descriptors: bool,
    pub stack_size_section: bool,
    pub split_machine_functions: bool,
    pub jmc_instrument: bool,
    pub sample_profile: Option<&'a Path>,
    pub cs_profile: Option<&'a Path>,
    pub cs_generate: bool,
    /// Split DWARF: `<dir>/<task>.dwo`, as lld names them.
    pub dwo_dir: Option<&'a Path>,
    /// Backend threads; `None`: one per physical core (lld's default).
    pub threads: Option<usize>,
    /// Verify each backend's module once, before its optimization pipeline
    /// (after import); `--disable-verify` turns it off. lld verifies there
    /// and again after the pipeline; wpd does not verify LLVM's own
    /// optimizer's output, as clang's release builds do not.
    pub verify: bool,
    /// Regular LTO modules will be added (the regular parts of split units,
    /// given whole): LLVM's regular LTO step links them into one module,
    /// readied as the thin backends' are (type tests dropped, CFI refused),
    /// whose object [`ThinLto::run`] returns beside the thin ones.
    pub regular_parts: bool,
}

/// One symbol of an LTO input, in the input's symbol order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LtoSymbol {
    /// In `wpd_summary::name`'s lossless text form.
    pub name: String,
    /// The section the symbol is placed in (`__start_`/`__stop_` refer to
    /// it), empty for none.
    pub section: String,
    pub undefined: bool,
    pub weak: bool,
    pub common: bool,
    /// In `llvm.used`.
    pub used: bool,
    pub visibility: crate::Visibility,
}

/// What the link decided about one symbol of one input (lld's
/// `lto::SymbolResolution`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LtoResolution {
    /// This input's definition is the one the link keeps.
    pub prevailing: bool,
    /// The definition the program uses is in this linkage unit (dso_local).
    pub final_definition: bool,
    /// Code outside the bitcode references it: never internalized or
    /// dropped.
    pub visible_to_regular_obj: bool,
    /// Exported to the dynamic linker.
    pub export_dynamic: bool,
    /// Redefined by the linker (`--defsym`, `--wrap`): no interprocedural
    /// optimization through it.
    pub linker_redefined: bool,
}

impl LtoResolution {
    fn bits(self) -> u8 {
        (self.prevailing as u8)
            | (self.final_definition as u8) << 1
            | (self.visible_to_regular_obj as u8) << 2
            | (self.export_dynamic as u8) << 3
            | (self.linker_redefined as u8) << 4
    }
}

/// A bitcode buffer opened as an LTO input, borrowing the bytes.
pub struct LtoInput<'b> {
    raw: *mut c_void,
    symbols: Vec<LtoSymbol>,
    _bytes: PhantomData<&'b [u8]>,
}

impl Drop for LtoInput<'_> {
    fn drop(&mut self) {
        if !self.raw.is_null() {
            // SAFETY: we own the input (not yet handed to an LTO).
            unsafe { ffi::wpd_lto_input_free(self.raw) }
        }
    }
}

impl<'b> LtoInput<'b> {
    /// Opens `bytes` (ThinLTO bitcode with a symbol table) under the unique
    /// module name `name`.
    pub fn open(bytes: &'b [u8], name: &str) -> Result<LtoInput<'b>> {
        crate::codegen::init_native_target();
        let cname = CString::new(name.replace('\0', "?")).map_err(|e| Error::msg(e.to_string()))?;
        let mut err = ShimMessage::new();
        // SAFETY: `bytes` outlives the input (the lifetime 'b ties them);
        // `err` receives null or a malloc'd message.
        let raw = unsafe { ffi::wpd_lto_input_open(bytes.as_ptr().cast(), bytes.len(), cname.as_ptr(), err.out()) };
        if raw.is_null() {
            return Err(Error::msg(err.or("not LTO bitcode")));
        }
        let mut input = LtoInput { raw, symbols: Vec::new(), _bytes: PhantomData };
        // SAFETY: a live input.
        let n = unsafe { ffi::wpd_lto_input_symbol_count(raw) };
        input.symbols.reserve(n);
        for i in 0..n {
            let (mut name, mut name_len, mut sec, mut sec_len, mut flags) =
                (std::ptr::null(), 0usize, std::ptr::null(), 0usize, 0u32);
            // SAFETY: i < n; the out-pointers are valid; the strings point
            // into the live input and are copied at once.
            let symbol = unsafe {
                ffi::wpd_lto_input_symbol(raw, i, &mut name, &mut name_len, &mut sec, &mut sec_len, &mut flags);
                LtoSymbol {
                    name: name_text(name, name_len),
                    section: name_text(sec, sec_len),
                    undefined: flags & 1 != 0,
                    weak: flags & 2 != 0,
                    common: flags & 4 != 0,
                    used: flags & 8 != 0,
                    visibility: if flags & 64 != 0 {
                        crate::Visibility::Hidden
                    } else if flags & 128 != 0 {
                        crate::Visibility::Protected
                    } else {
                        crate::Visibility::Default
                    },
                }
            };
            input.symbols.push(symbol);
        }
        Ok(input)
    }

    /// The symbols, in the order [`ThinLto::add`] wants resolutions.
    pub fn symbols(&self) -> &[LtoSymbol] {
        &self.symbols
    }
}

/// One link's ThinLTO: inputs are added in task order (the k-th input added
/// is task k + 1; task 0 is LLVM's regular LTO partition, which wpd's
/// inputs never use), then [`ThinLto::run`] compiles them all.
pub struct ThinLto<'b> {
    raw: *mut c_void,
    added: usize,
    /// A distributed link's thin link ([`ThinLto::post_import`]).
    post_import: bool,
    _bytes: PhantomData<&'b [u8]>,
}

impl Drop for ThinLto<'_> {
    fn drop(&mut self) {
        // SAFETY: we own it.
        unsafe { ffi::wpd_lto_free(self.raw) }
    }
}

/// The options in the shim's layout, with the strings they point to
/// (alive as long as it is).
struct RawOptions {
    raw: ffi::LtoOptionsRaw,
    _strings: [CString; 4],
}

impl RawOptions {
    fn new(o: &LtoOptions<'_>) -> Result<RawOptions> {
        let text = |s: Option<&Path>| {
            CString::new(s.map(|p| p.as_os_str().as_encoded_bytes().to_vec()).unwrap_or_default())
                .map_err(|_| Error::msg("NUL in a path of the link's options"))
        };
        let cpu = CString::new(o.cpu).map_err(|e| Error::msg(e.to_string()))?;
        let sample = text(o.sample_profile)?;
        let cs = text(o.cs_profile)?;
        let dwo = text(o.dwo_dir)?;
        let tuning = match o.debugger_tuning {
            None => -1,
            Some("gdb") => 1,
            Some("lldb") => 2,
            Some("sce") => 3,
            Some("dbx") => 4,
            Some(other) => {
                return Err(Error::msg(format!("unknown debugger tuning '{other}' (gdb, lldb, sce or dbx)")));
            }
        };
        let raw = ffi::LtoOptionsRaw {
            opt_level: o.opt_level as u32,
            cg_opt_level: o.cg_opt_level as u32,
            cpu: cpu.as_ptr(),
            reloc: match o.reloc {
                LtoReloc::Static => 0,
                LtoReloc::Pic => 1,
                LtoReloc::Module => 2,
            },
            function_sections: o.sections.functions as i32,
            data_sections: o.sections.data as i32,
            debugger_tuning: tuning,
            emulated_tls: o.emulated_tls as i32,
            tls_descriptors: o.tls_descriptors as i32,
            stack_size_section: o.stack_size_section as i32,
            split_machine_functions: o.split_machine_functions as i32,
            jmc_instrument: o.jmc_instrument as i32,
            sample_profile: sample.as_ptr(),
            cs_profile: cs.as_ptr(),
            cs_generate: o.cs_generate as i32,
            dwo_dir: dwo.as_ptr(),
            threads: o.threads.unwrap_or(0).min(u32::MAX as usize) as u32,
            verify: o.verify as i32,
            regular_parts: o.regular_parts as i32,
        };
        // The CStrings' heap buffers do not move when they are moved here.
        Ok(RawOptions { raw, _strings: [cpu, sample, cs, dwo] })
    }
}

impl<'b> ThinLto<'b> {
    /// A link whose backends run in this process ([`ThinLto::run`] returns
    /// the objects).
    pub fn new(o: &LtoOptions<'_>) -> Result<ThinLto<'b>> {
        Self::create(o, false)
    }

    /// A distributed link's thin link: [`ThinLto::run`] applies LLVM's thin
    /// link to every module (prevailing copies, dead stripping,
    /// internalization and promotion, imports; type tests dropped) and
    /// returns each as bitcode instead of compiling it; [`thin_backend`]
    /// then optimizes and compiles one, anywhere, as [`ThinLto::new`]'s
    /// backends would have.
    pub fn post_import(o: &LtoOptions<'_>) -> Result<ThinLto<'b>> {
        Self::create(o, true)
    }

    /// An index-only link for clang's own ThinLTO backends (lld's
    /// `--thinlto-index-only`): [`ThinLto::run`] runs LLVM's thin link on
    /// the inputs as clang wrote them and writes, per input, the index
    /// file `clang -fthinlto-index=` reads (and its imports file), with
    /// `x`'s devirtualizations as the type-id resolutions LLVM's backend
    /// applies. Nothing is compiled but a split unit's regular part (LLVM's
    /// regular LTO object, [`LtoObjects::regular`]).
    pub fn index_only(o: &LtoOptions<'_>, x: &IndexOnly<'_>) -> Result<ThinLto<'b>> {
        crate::codegen::init_native_target();
        let options = RawOptions::new(o)?;
        let c = |s: &str| CString::new(s).map_err(|_| Error::msg(format!("NUL in '{}'", s.replace('\0', "?"))));
        let (old, new, native) = (c(x.old_prefix)?, c(x.new_prefix)?, c(x.native_prefix)?);
        let listed = x.linked_objects.map(|p| p.as_os_str().as_encoded_bytes().to_vec()).unwrap_or_default();
        let listed = CString::new(listed).map_err(|_| Error::msg("NUL in the path of the object list"))?;
        let bytes = |b: &[u8]| CString::new(b).map_err(|_| Error::msg("NUL in a name of a resolution"));
        let names: Vec<(CString, Option<CString>)> = x
            .resolutions
            .iter()
            .map(|r| Ok((bytes(&r.type_id)?, r.single_impl.as_deref().map(bytes).transpose()?)))
            .collect::<Result<_>>()?;
        let raw_res: Vec<ffi::SlotResolutionRaw> = x
            .resolutions
            .iter()
            .zip(&names)
            .map(|(r, (id, single))| ffi::SlotResolutionRaw {
                type_id: id.as_ptr(),
                type_id_len: id.as_bytes().len(),
                offset: r.offset,
                single_impl: single.as_ref().map_or(std::ptr::null(), |s| s.as_ptr()),
                single_impl_len: single.as_ref().map_or(0, |s| s.as_bytes().len()),
                local_module: r.local_module.map_or(-1, |m| m as i64),
                args: r.args.as_ptr(),
                arg_count: r.args.len(),
                value: r.value,
            })
            .collect();
        let id_ptrs: Vec<*const c_char> = x.type_ids.iter().map(|t| t.as_ptr().cast()).collect();
        let id_lens: Vec<usize> = x.type_ids.iter().map(Vec::len).collect();
        let raw_x = ffi::IndexOnlyOptionsRaw {
            old_prefix: old.as_ptr(),
            new_prefix: new.as_ptr(),
            native_prefix: native.as_ptr(),
            emit_imports: c_int::from(x.emit_imports),
            linked_objects: listed.as_ptr(),
            whole_program_visibility: c_int::from(x.whole_program_visibility),
            resolutions: raw_res.as_ptr(),
            resolution_count: raw_res.len(),
            type_ids: id_ptrs.as_ptr(),
            type_id_lens: id_lens.as_ptr(),
            type_id_count: id_ptrs.len(),
        };
        let mut err = ShimMessage::new();
        // SAFETY: the options, `raw_x` and every string and array they
        // point to live through the call; the shim copies what it keeps.
        // `err` receives null or a malloc'd message.
        let raw = unsafe { ffi::wpd_lto_new_index_only(&options.raw, &raw_x, err.out()) };
        if raw.is_null() {
            return Err(Error::msg(err.or("cannot start the index-only link")));
        }
        Ok(ThinLto { raw, added: 0, post_import: true, _bytes: PhantomData })
    }

    fn create(o: &LtoOptions<'_>, post_import_only: bool) -> Result<ThinLto<'b>> {
        crate::codegen::init_native_target();
        let options = RawOptions::new(o)?;
        // SAFETY: the options and their strings live through the call; the
        // shim copies what it keeps.
        let raw = unsafe { ffi::wpd_lto_new(&options.raw, post_import_only as c_int) };
        Ok(ThinLto { raw, added: 0, post_import: post_import_only, _bytes: PhantomData })
    }

    /// Adds `input` with one resolution per symbol (in
    /// [`LtoInput::symbols`] order).
    pub fn add(&mut self, mut input: LtoInput<'b>, resolutions: &[LtoResolution]) -> Result<()> {
        let bits: Vec<u8> = resolutions.iter().map(|r| r.bits()).collect();
        let raw = std::mem::replace(&mut input.raw, std::ptr::null_mut());
        let mut err = ShimMessage::new();
        // SAFETY: both live; the shim takes ownership of the input; `err`
        // receives null or a malloc'd message.
        let status = unsafe { ffi::wpd_lto_add(self.raw, raw, bits.as_ptr(), bits.len(), err.out()) };
        status.check(err, "cannot add to the link")?;
        self.added += 1;
        Ok(())
    }

    /// Compiles the `joined`-th module added with the `host`-th (both
    /// counted from 0, in the order of [`ThinLto::add`]), in the host's
    /// backend: LLVM's thin link decides for each as the module it is,
    /// then the host's backend applies those decisions to the joined
    /// module and links it into its own after import, so that one pipeline
    /// and one code generation compile both. [`ThinLto::run`] returns an
    /// empty object for the joined module. For a module no other module
    /// imports from (a split unit's regular part, written with its
    /// definitions kept home, [`Module::write_thinlto_bitcode`]), with
    /// backends in this process ([`ThinLto::new`]).
    pub fn join(&mut self, joined: usize, host: usize) -> Result<()> {
        if self.post_import {
            return Err(Error::msg("a distributed link compiles every module on its own: none is joined to another"));
        }
        if joined >= self.added || host >= self.added {
            return Err(Error::msg(format!(
                "cannot join module {joined} to module {host}: {} modules added",
                self.added
            )));
        }
        let mut err = ShimMessage::new();
        // SAFETY: a live LTO; `err` receives null or a malloc'd message.
        let status = unsafe { ffi::wpd_lto_join(self.raw, joined, host, err.out()) };
        status.check(err, "cannot join the modules")
    }

    /// Makes the `module`-th module added (counted from 0, in the order of
    /// [`ThinLto::add`]) import global variables only, no function, with
    /// backends in this process or post-import ([`ThinLto::new`],
    /// [`ThinLto::post_import`]): a module that LLVM's own link compiles
    /// in its regular LTO partition, which imports nothing from ThinLTO
    /// modules. The variables stay: the thin link gives every module that
    /// reads a variable it found read-only a copy of its own.
    pub fn import_variables_only(&mut self, module: usize) -> Result<()> {
        let mut err = ShimMessage::new();
        // SAFETY: a live LTO; `err` receives null or a malloc'd message.
        let status = unsafe { ffi::wpd_lto_import_variables_only(self.raw, module, err.out()) };
        status.check(err, "cannot restrict the module's imports")
    }

    /// Runs LLVM's thin link and the backends; returns one native object
    /// per input, in the order they were added, and the object of the
    /// regular LTO module (empty unless an input had a regular LTO module,
    /// see [`LtoOptions::regular_parts`]). LLVM's warnings go to
    /// `on_warning`; `on_module` is called (from backend threads) as each
    /// module's code generation starts, or its object comes from `cache`.
    /// With `cache`, a backend whose object LLVM's ThinLTO cache key finds
    /// there does not run, and every object compiled under a key is stored.
    pub fn run(
        self,
        on_warning: &mut dyn FnMut(&str),
        on_module: &(dyn Fn() + Sync),
        cache: Option<&dyn ObjectCache>,
    ) -> Result<LtoObjects> {
        struct Sink<'w> {
            objects: Vec<Vec<u8>>,
            regular: Vec<u8>,
            warn: &'w mut dyn FnMut(&str),
            cache: Option<&'w dyn ObjectCache>,
        }
        /// Objects the cache had, by task; filled from backend threads.
        struct Found<'c> {
            cache: &'c dyn ObjectCache,
            objects: std::sync::Mutex<Vec<Option<Vec<u8>>>>,
        }
        unsafe fn bytes<'a>(data: *const c_char, len: usize) -> &'a [u8] {
            // SAFETY (callers): data holds len bytes, alive for 'a.
            if len == 0 { &[] } else { unsafe { std::slice::from_raw_parts(data.cast::<u8>(), len) } }
        }
        unsafe extern "C" fn progress(pctx: *mut c_void) {
            // SAFETY: pctx points to `on_module` of `run` (a Sync closure,
            // alive through the call), called from backend threads through
            // shared references only.
            let f = unsafe { &*pctx.cast::<&(dyn Fn() + Sync)>() };
            f();
        }
        unsafe extern "C" fn lookup(lctx: *mut c_void, task: u32, key: *const c_char, len: usize) -> c_int {
            // SAFETY: lctx is the Found of `run` (shared, Sync: a mutex and
            // a Sync cache), alive through the call; key holds len bytes.
            let found = unsafe { &*lctx.cast::<Found<'_>>() };
            let key = String::from_utf8_lossy(unsafe { bytes(key, len) });
            let Some(object) = found.cache.lookup(&key) else { return 0 };
            let mut objects = found.objects.lock().unwrap_or_else(|e| e.into_inner());
            match objects.get_mut(task as usize) {
                Some(slot) => {
                    *slot = Some(object);
                    1
                }
                None => 0,
            }
        }
        unsafe extern "C" fn emit(
            ctx: *mut c_void,
            task: u32,
            data: *const c_char,
            len: usize,
            key: *const c_char,
            key_len: usize,
        ) {
            // SAFETY: ctx is the Sink of `run`; data holds len bytes, key
            // key_len bytes.
            let sink = unsafe { &mut *ctx.cast::<Sink<'_>>() };
            let (object, key) = unsafe { (bytes(data, len), bytes(key, key_len)) };
            // Task 0 is the regular LTO partition (LLVM never caches it).
            if task == 0 {
                sink.regular = object.to_vec();
            } else if let Some(slot) = (task as usize).checked_sub(1).and_then(|k| sink.objects.get_mut(k)) {
                *slot = object.to_vec();
                if let (Some(cache), false, false) = (sink.cache, key.is_empty(), object.is_empty()) {
                    cache.store(&String::from_utf8_lossy(key), object);
                }
            }
        }
        unsafe extern "C" fn warn(ctx: *mut c_void, text: *const c_char, len: usize) {
            // SAFETY: ctx is the Sink of `run`; text holds len bytes.
            let sink = unsafe { &mut *ctx.cast::<Sink<'_>>() };
            (sink.warn)(&String::from_utf8_lossy(unsafe { bytes(text, len) }));
        }
        let tasks = self.added + 1;
        let found = cache.map(|cache| Found { cache, objects: std::sync::Mutex::new(vec![None; tasks]) });
        let mut sink = Sink { objects: vec![Vec::new(); self.added], regular: Vec::new(), warn: on_warning, cache };
        let on_module: &(dyn Fn() + Sync) = on_module;
        let mut err = ShimMessage::new();
        let (lookup_fn, lookup_ctx): (Option<ffi::LtoLookupFn>, *mut c_void) = match &found {
            Some(f) => (Some(lookup), std::ptr::from_ref(f).cast_mut().cast()),
            None => (None, std::ptr::null_mut()),
        };
        // SAFETY: a live LTO. `emit` and `warn` get the sink, which outlives
        // the call; the shim calls them on this thread after every backend
        // finished. `progress` gets `on_module` and `lookup` gets `found`,
        // both alive through the call and used from backend threads through
        // shared references only (both Sync). `err` receives null or a
        // malloc'd message.
        let status = unsafe {
            ffi::wpd_lto_run(
                self.raw,
                emit,
                (&raw mut sink).cast(),
                warn,
                progress,
                (&raw const on_module).cast_mut().cast(),
                lookup_fn,
                lookup_ctx,
                err.out(),
            )
        };
        status.check(err, "ThinLTO failed")?;
        unsafe extern "C" fn each_run(ctx: *mut c_void, task: u32, work: u64, start_ms: f64, ms: f64) {
            // SAFETY: ctx is the Vec of `run` below, alive and borrowed only
            // here through the call.
            let runs = unsafe { &mut *ctx.cast::<Vec<TaskRun>>() };
            runs.push(TaskRun { task, estimated_work: work, start_ms, ms });
        }
        let mut backends: Vec<TaskRun> = Vec::new();
        // SAFETY: a live LTO; `each_run` gets `backends`, alive through the
        // call, on this thread.
        unsafe { ffi::wpd_lto_backend_runs(self.raw, each_run, (&raw mut backends).cast()) };
        let mut objects = sink.objects;
        if let Some(found) = found {
            let cached = found.objects.into_inner().unwrap_or_else(|e| e.into_inner());
            for (task, object) in cached.into_iter().enumerate() {
                if let (Some(object), Some(slot)) = (object, task.checked_sub(1).and_then(|k| objects.get_mut(k))) {
                    *slot = object;
                }
            }
        }
        Ok(LtoObjects { thin: objects, regular: sink.regular, backends })
    }
}

/// What an index-only link ([`ThinLto::index_only`]) writes, and wpd's
/// devirtualizations for clang's backends to apply.
#[derive(Clone, Debug, Default)]
pub struct IndexOnly<'a> {
    /// lld's `--thinlto-prefix-replace=old;new;native`: index files go to
    /// the input's path with `old_prefix` replaced by `new_prefix`; the
    /// object list names objects with `native_prefix` (or `new_prefix`).
    pub old_prefix: &'a str,
    pub new_prefix: &'a str,
    pub native_prefix: &'a str,
    /// Write `<path>.imports` beside each index (the files each backend
    /// reads).
    pub emit_imports: bool,
    /// Where the list of native objects goes (`--thinlto-index-only=FILE`).
    pub linked_objects: Option<&'a Path>,
    /// The backends treat public type tests as type tests (LLVM's
    /// whole-program visibility), so the resolutions reach their calls.
    pub whole_program_visibility: bool,
    pub resolutions: Vec<SlotResolution>,
    /// Every type id (metadata string, as bytes) the program's modules
    /// name: each gets a type-id summary, so that no backend takes one for
    /// an id no vtable has and turns its type tests false.
    pub type_ids: Vec<Vec<u8>>,
}

/// One of wpd's devirtualizations, as an LLVM type-id resolution of the
/// slot (`type_id`, `offset`).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct SlotResolution {
    /// The type id's metadata string, as bytes.
    pub type_id: Vec<u8>,
    pub offset: u64,
    /// Every call of the slot calls this function (its symbol's bytes).
    pub single_impl: Option<Vec<u8>>,
    /// `single_impl` is a local function of this input (counted from 0 in
    /// the order [`ThinLto::add`] took them): LLVM's thin link exports it,
    /// and the calls name it as its backend promotes it.
    pub local_module: Option<usize>,
    /// Without `single_impl`: the slot's calls with these constant
    /// arguments (after `this`) return `value`.
    pub args: Vec<u64>,
    pub value: u64,
}

/// Writes an index that tells clang's backend to compile `path`'s module
/// into an empty object: for a bitcode file an index-only link did not
/// load (a lazy object nothing needed), as lld's does.
pub fn write_empty_index(path: &Path) -> Result<()> {
    let c = CString::new(path.as_os_str().as_encoded_bytes().to_vec())
        .map_err(|_| Error::msg(format!("NUL in the path {}", path.display())))?;
    let mut err = ShimMessage::new();
    // SAFETY: `c` lives through the call; `err` receives null or a malloc'd
    // message.
    let status = unsafe { ffi::wpd_write_empty_index(c.as_ptr(), err.out()) };
    status.check(err, "cannot write the index")
}

/// What [`ThinLto::run`] produced.
#[derive(Debug, Default)]
pub struct LtoObjects {
    /// One per input, in the order they were added.
    pub thin: Vec<Vec<u8>>,
    /// The regular LTO module's object: empty unless inputs had regular LTO
    /// modules ([`LtoOptions::regular_parts`]).
    pub regular: Vec<u8>,
    /// The thin backends in the order they started (wpd starts them by
    /// estimated work, the most first).
    pub backends: Vec<TaskRun>,
}

/// One thin backend of a [`ThinLto::run`], by its task.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TaskRun {
    /// Its task: the input's position among those added, plus one.
    pub task: u32,
    /// The work the scheduler expected of it, in instructions (clang's
    /// per-function counts of what it compiles, imports and may inline;
    /// `backend_work` in the shim).
    pub estimated_work: u64,
    /// When it started, in milliseconds after the first backend started.
    pub start_ms: f64,
    /// How long it ran, in milliseconds (a cache hit: only the look-up).
    pub ms: f64,
}

/// One job of a distributed link: `bytes` is a module as
/// [`ThinLto::post_import`]'s run returned it, optimized and compiled as the
/// in-process link's backend does from there (LLVM's
/// `-thinlto-assume-merged`, set in this process). `task` is the module's
/// task in the link (its position plus one), which names its split DWARF
/// file; `name` names it in errors. Returns the native object; LLVM's
/// warnings go to `on_warning`.
pub fn thin_backend(
    o: &LtoOptions<'_>,
    bytes: &[u8],
    name: &str,
    task: u32,
    on_warning: &mut dyn FnMut(&str),
) -> Result<Vec<u8>> {
    unsafe extern "C" fn warn(ctx: *mut c_void, text: *const c_char, len: usize) {
        // SAFETY: ctx is `on_warning` of `thin_backend`, alive through the
        // call, used on this thread only; text holds len bytes.
        let f = unsafe { &mut *ctx.cast::<&mut dyn FnMut(&str)>() };
        let text = if len == 0 { &[][..] } else { unsafe { std::slice::from_raw_parts(text.cast::<u8>(), len) } };
        f(&String::from_utf8_lossy(text));
    }
    crate::codegen::init_native_target();
    let options = RawOptions::new(o)?;
    let cname = CString::new(name).map_err(|_| Error::msg(format!("NUL in the module name {name:?}")))?;
    let (mut out, mut len, mut err) = (std::ptr::null_mut(), 0usize, ShimMessage::new());
    let mut on_warning = on_warning;
    // SAFETY: the options, strings and bytes live through the call, which
    // copies what it keeps; `warn` gets `on_warning`, alive through the
    // call and called on this thread; the out-pointers are valid; `err`
    // receives null or a malloc'd message.
    let status = unsafe {
        ffi::wpd_thin_backend(
            &options.raw,
            bytes.as_ptr().cast(),
            bytes.len(),
            cname.as_ptr(),
            task,
            &mut out,
            &mut len,
            warn,
            (&raw mut on_warning).cast(),
            err.out(),
        )
    };
    status.check(err, "ThinLTO backend failed")?;
    // SAFETY: `out` holds `len` bytes, malloc'd by the shim.
    let object = unsafe { std::slice::from_raw_parts(out.cast::<u8>(), len) }.to_vec();
    // SAFETY: allocated with malloc by the shim.
    unsafe { ffi::wpd_free(out.cast()) };
    Ok(object)
}

/// Native objects stored by LLVM's ThinLTO cache key ([`ThinLto::run`]).
/// Called from backend threads.
pub trait ObjectCache: Sync {
    /// The object stored under `key`, if any (and intact).
    fn lookup(&self, key: &str) -> Option<Vec<u8>>;
    /// Stores `object` under `key`.
    fn store(&self, key: &str, object: &[u8]);
}

/// Checks a cache pruning policy (lld's `--thinlto-cache-policy` syntax,
/// e.g. `prune_interval=1h:prune_after=24h:cache_size=10%`).
pub fn parse_cache_policy(policy: &str) -> Result<()> {
    let c = CString::new(policy).map_err(|_| Error::msg("NUL in the cache policy"))?;
    let mut err = ShimMessage::new();
    // SAFETY: a NUL-terminated string alive through the call; `err`
    // receives null or a malloc'd message.
    let status = unsafe { ffi::wpd_cache_policy_check(c.as_ptr(), err.out()) };
    status.check(err, "invalid cache policy")
}

/// Prunes the cache directory `dir` by `policy` (LLVM's `pruneCache`, as
/// lld runs it after a link).
pub fn prune_cache(dir: &std::path::Path, policy: &str) -> Result<()> {
    let d = CString::new(dir.as_os_str().as_encoded_bytes()).map_err(|_| Error::msg("NUL in the cache path"))?;
    let c = CString::new(policy).map_err(|_| Error::msg("NUL in the cache policy"))?;
    let mut err = ShimMessage::new();
    // SAFETY: NUL-terminated strings alive through the call; `err`
    // receives null or a malloc'd message.
    let status = unsafe { ffi::wpd_cache_prune(d.as_ptr(), c.as_ptr(), err.out()) };
    status.check(err, "invalid cache policy")
}
