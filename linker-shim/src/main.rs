//! `wpd-ld`: the linker clang runs with `--ld-path=wpd-ld`. It scans the ld
//! command line, classifies the inputs, runs summarize → thin link →
//! backends in-process on the bitcode, puts native objects (and archives of
//! them) in place of the bitcode, and runs the real linker.

mod args;
mod inputs;

use args::{Item, LinkArgs};
use inputs::Resolved;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use wpd::codegen::CodegenOptions;
use wpd::hierarchy::LinkFacts;
use wpd::input::BitcodeInput;
use wpd::policy::{Policy, Validation};
use wpd::timing::Timings;

fn main() -> ExitCode {
    let raw: Vec<String> = std::env::args().skip(1).collect();
    match run(raw) {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            eprintln!("wpd-ld: error: {}", e.replace('\n', " "));
            ExitCode::FAILURE
        }
    }
}

/// Finds an executable: a path as given, or a name searched in `PATH`.
fn which(name: &str) -> Option<PathBuf> {
    if name.contains('/') {
        let p = PathBuf::from(name);
        return p.is_file().then_some(p);
    }
    std::env::split_paths(&std::env::var_os("PATH")?).map(|d| d.join(name)).find(|p| p.is_file())
}

fn real_linker(args: &LinkArgs) -> Result<PathBuf, String> {
    match &args.wpd.linker {
        Some(l) => which(l).ok_or_else(|| format!("real linker {l} not found")),
        None => which("ld.lld-19")
            .or_else(|| which("ld.lld"))
            .ok_or_else(|| "real linker ld.lld-19 not found (install lld-19 or pass --wpd-linker=PATH)".to_string()),
    }
}

fn run(raw: Vec<String>) -> Result<u8, String> {
    let mut timings = Timings::default();
    let start = std::time::Instant::now();
    let argv = args::expand_response_files(raw)?;
    let link = args::parse(&argv)?;
    let linker = real_linker(&link)?;
    let (mut resolved, native) = timings.phase("inputs", || inputs::resolve(&link))?;

    if resolved.iter().all(|r| *r == Resolved::Other) {
        // No bitcode: nothing for wpd to do.
        return exec_linker(&linker, &final_args(&link, &[]));
    }
    wpd_llvm::Context::set_llvm_options(&link.llvm_options)?;

    // Bitcode modules in command-line order; each item knows its range.
    let mut modules: Vec<BitcodeInput> = Vec::new();
    let mut ranges: Vec<std::ops::Range<usize>> = Vec::with_capacity(resolved.len());
    for r in &mut resolved {
        let from = modules.len();
        let found = match r {
            // The object's bytes move into its module; an archive's stay for
            // rebuilding it.
            Resolved::BitcodeObject(p, bytes) => {
                wpd::input::bitcode_inputs(&p.display().to_string(), std::mem::take(bytes))
            }
            Resolved::BitcodeArchive(p, bytes) => wpd::input::archive_members(&p.display().to_string(), bytes),
            Resolved::Other => Ok(Vec::new()),
        };
        modules.extend(found.map_err(|e| e.to_string())?);
        ranges.push(from..modules.len());
    }

    let mut refs = native.scan.refs.clone();
    refs.extend(link.named_symbols.iter().cloned());
    // A relocatable output is linked again later, with classes wpd cannot
    // see: nothing about its hierarchies or references is final.
    let unknown = if link.relocatable {
        Some("relocatable output (-r): the rest of the program is linked later".to_string())
    } else {
        native.unknown.as_ref().map(|u| format!("wpd could not inspect {u}"))
    };
    let mut validation = Validation::from_native(&native.scan, unknown.clone());
    validation.always = link.relocatable;
    validation.enabled = link.wpd.validate;
    validation.known_safe = link.wpd.known_safe.clone();
    validation.force_open = link.wpd.open.clone();
    let policy = Policy {
        whole_program_visibility: link.whole_program_visibility,
        facts: LinkFacts {
            shared: link.shared,
            export_dynamic: link.export_dynamic || link.partial_export,
            external_refs: unknown.is_none().then_some(refs),
        },
        validation,
        speculate: link.wpd.speculate,
    };
    let codegen = CodegenOptions {
        opt_level: link.opt_level,
        cpu: link.cpu.clone(),
        verify: false,
        sections: wpd_llvm::Sections { functions: link.function_sections, data: link.data_sections },
    };
    let out = wpd::devirtualize_and_compile(&modules, &policy, &codegen, link.jobs, &mut timings)
        .map_err(|e| e.to_string())?;
    if link.wpd.remarks {
        for r in wpd::report::remarks(&out.summaries, &out.plan, &policy) {
            eprintln!("{r}");
        }
    }

    let tmp = tempfile::Builder::new()
        .prefix("wpd-ld-")
        .tempdir()
        .map_err(|e| format!("cannot create a temporary directory: {e}"))?;
    let replacements =
        timings.phase("write", || write_natives(tmp.path(), &resolved, &ranges, &modules, &out.objects))?;
    let final_argv = final_args(&link, &replacements);
    let link_start = std::time::Instant::now();
    let status = Command::new(&linker)
        .args(&final_argv)
        .status()
        .map_err(|e| format!("cannot run the real linker {}: {e}", linker.display()))?;
    timings.phases.push(("link", link_start.elapsed()));
    timings.phases.push(("total", start.elapsed()));

    if link.wpd.save_temps {
        let kept = tmp.keep();
        eprintln!("wpd-ld: temporary files kept in {}", kept.display());
    }
    let code = status.code().unwrap_or(1).clamp(0, 255) as u8;
    if let Some(report) = &link.wpd.report
        && code == 0
    {
        let output = link.output.clone().unwrap_or_else(|| "a.out".into());
        let size = std::fs::metadata(&output).ok().map(|m| m.len());
        let mut json = wpd::report::report(&out.plan, &timings, size);
        json["linker"] = serde_json::Value::String(linker.display().to_string());
        let text = serde_json::to_string_pretty(&json).map_err(|e| e.to_string())?;
        wpd_summary::container::write_bytes_atomic(text.as_bytes(), report).map_err(|e| e.to_string())?;
    }
    Ok(code)
}

/// Writes native objects (and rebuilt archives) into `dir`; returns, per
/// item, the path that replaces it.
fn write_natives(
    dir: &Path,
    resolved: &[Resolved],
    ranges: &[std::ops::Range<usize>],
    modules: &[BitcodeInput],
    objects: &[Vec<u8>],
) -> Result<Vec<Option<PathBuf>>, String> {
    let mut out = vec![None; resolved.len()];
    for (i, r) in resolved.iter().enumerate() {
        match r {
            Resolved::Other => {}
            Resolved::BitcodeObject(p, _) => {
                let idx = ranges[i].start;
                let name = p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "input.o".into());
                let sub = dir.join(format!("{i}"));
                std::fs::create_dir_all(&sub).map_err(|e| e.to_string())?;
                let path = sub.join(name);
                std::fs::write(&path, &objects[idx]).map_err(|e| format!("{}: {e}", path.display()))?;
                out[i] = Some(path);
            }
            Resolved::BitcodeArchive(p, bytes) => {
                out[i] =
                    Some(rebuild_archive(dir, i, p, bytes, &modules[ranges[i].clone()], &objects[ranges[i].clone()])?);
            }
        }
    }
    Ok(out)
}

/// An archive like `original` with every bitcode member replaced by its
/// native object, members in the same order (so the linker selects the same
/// members), with a symbol index.
fn rebuild_archive(
    dir: &Path,
    item: usize,
    original: &Path,
    bytes: &[u8],
    modules: &[BitcodeInput],
    objects: &[Vec<u8>],
) -> Result<PathBuf, String> {
    let shown = original.display().to_string();
    let archive = wpd::object::read::archive::ArchiveFile::parse(bytes)
        .map_err(|e| format!("{shown}: malformed archive: {e}"))?;
    let work = dir.join(format!("{item}"));
    let mut members = Vec::new();
    let mut next = 0usize;
    for (j, m) in archive.members().enumerate() {
        let m = m.map_err(|e| format!("{shown}: malformed archive: {e}"))?;
        let data = m.data(bytes).map_err(|e| format!("{shown}: malformed archive: {e}"))?;
        let name = String::from_utf8_lossy(m.name()).into_owned();
        let content: &[u8] = if wpd::input::is_bitcode(data) {
            let obj = objects.get(next).ok_or_else(|| format!("{shown}: archive changed while linking"))?;
            debug_assert!(modules[next].member.is_some());
            next += 1;
            obj
        } else {
            data
        };
        let sub = work.join(format!("{j}"));
        std::fs::create_dir_all(&sub).map_err(|e| e.to_string())?;
        let path = sub.join(if name.is_empty() { format!("member{j}.o") } else { name });
        std::fs::write(&path, content).map_err(|e| format!("{}: {e}", path.display()))?;
        members.push(path);
    }
    let base = original.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "lib.a".into());
    let out = work.join(base);
    let ar = which("llvm-ar-19")
        .or_else(|| which("llvm-ar"))
        .or_else(|| which("ar"))
        .ok_or("no archiver found (llvm-ar-19, llvm-ar or ar)")?;
    // q: append in order (keeps duplicate member names), c: create, s: index;
    // D: deterministic headers.
    let status = Command::new(&ar)
        .arg("qcsD")
        .arg(&out)
        .args(&members)
        .status()
        .map_err(|e| format!("cannot run {}: {e}", ar.display()))?;
    if !status.success() {
        return Err(format!("{} failed to rebuild {shown}", ar.display()));
    }
    Ok(out)
}

/// The real linker's command line: every item in place, bitcode replaced.
fn final_args(link: &LinkArgs, replacements: &[Option<PathBuf>]) -> Vec<String> {
    let mut out = Vec::new();
    for (i, item) in link.items.iter().enumerate() {
        if let Some(Some(p)) = replacements.get(i) {
            out.push(p.display().to_string());
            continue;
        }
        match item {
            Item::Input(p) => out.push(p.clone()),
            Item::Library { raw, .. } | Item::Pass(raw) => out.extend(raw.iter().cloned()),
        }
    }
    out
}

fn exec_linker(linker: &Path, argv: &[String]) -> Result<u8, String> {
    let status = Command::new(linker)
        .args(argv)
        .status()
        .map_err(|e| format!("cannot run the real linker {}: {e}", linker.display()))?;
    Ok(status.code().unwrap_or(1).clamp(0, 255) as u8)
}
