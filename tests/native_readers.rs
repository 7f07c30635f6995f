//! Native code that may call the program's virtual functions without any
//! symbol saying so (`fixtures/native_readers/`): C++ with an `extern "C"`
//! interface only, as an object or a shared library, and C objects with and
//! without debug information. Each case is linked through wpd-ld and
//! through the plugin (GNU ld, gold, and mold when installed) with
//! whole-program visibility, run, and compared with the `-O0` program; the
//! report's `dead_slots` must be off, naming the native file, wherever the
//! native code may be C++, and on (functions dropped) where debug
//! information proves it C (through mold too, which shows the plugin no
//! native file: the plugin reads them from mold's command line). With the
//! native reader's slots taken for dead, the program traps in
//! `__wpd_dead_slot`.

use libtest_mimic::{Arguments, Trial};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;
use wpd_tests::link::{RunResult, link_run_report, run_program, wpd_ld_bin, wpd_plugin_so};
use wpd_tests::{CLANG, CLANGXX, Check, run, temp_dir};

/// How the native side is built.
#[derive(Clone, Copy)]
enum Native {
    /// `intro.cpp` compiled to an object with these flags.
    CxxObject(&'static [&'static str]),
    /// `intro.cpp` as `libintro.so`.
    CxxShared,
    /// `intro.cpp` as `libintro.so`, linked by the C driver (no C++
    /// standard library needed).
    CxxSharedWithoutRuntime,
    /// `intro.cpp` compiled with `-O2`, the one member of an archive of
    /// this name (a project's, named like a runtime library).
    CxxArchive(&'static str),
    /// `count.c` compiled by clang as C with these flags.
    CObject(&'static [&'static str]),
}

struct Case {
    name: &'static str,
    native: Native,
    /// `None`: dead slots must be on; `Some(s)`: off, the reason naming `s`.
    off_naming: Option<&'static str>,
}

const CASES: &[Case] = &[
    Case {
        name: "cxx_object",
        native: Native::CxxObject(&["-O2"]),
        off_naming: Some("intro.o (it names no C++ symbol"),
    },
    Case {
        name: "cxx_object_debug_info",
        native: Native::CxxObject(&["-O2", "-g"]),
        off_naming: Some("intro.o (its debug information names a language other than C)"),
    },
    Case { name: "cxx_shared_library", native: Native::CxxShared, off_naming: Some("libintro.so (it needs the C++") },
    // Only its `.symtab` says it is C++ (stripped, nothing does: a limit
    // README.md states).
    Case {
        name: "cxx_shared_library_without_runtime",
        native: Native::CxxSharedWithoutRuntime,
        off_naming: Some("libintro.so (its symbol table names the C++ source file"),
    },
    // Only a file named exactly like a runtime library is the runtime.
    Case {
        name: "cxx_archive_named_like_the_runtime",
        native: Native::CxxArchive("libatomic_queue.a"),
        off_naming: Some("libatomic_queue.a(intro.o)"),
    },
    Case { name: "c_object_debug_info", native: Native::CObject(&["-O2", "-g"]), off_naming: None },
    Case { name: "c_object", native: Native::CObject(&["-O2"]), off_naming: Some("count.o (it names no C++ symbol") },
];

fn main() {
    let args = Arguments::from_args();
    let trials =
        CASES.iter().map(|c| Trial::test(c.name, move || check(c).map_err(|e| format!("{}: {e}", c.name).into())));
    libtest_mimic::run(&args, trials.collect()).exit();
}

fn src(file: &str) -> PathBuf {
    wpd_tests::repo_root().join("fixtures/native_readers").join(file)
}

/// Compiles the native side into `dir` and returns its link arguments.
fn build_native(native: Native, dir: &Path, opt: &[&str]) -> Check<Vec<OsString>> {
    Ok(match native {
        Native::CxxObject(flags) => {
            let o = dir.join("intro.o");
            run(Command::new(CLANGXX).args(opt).args(flags).arg("-c").arg(src("intro.cpp")).arg("-o").arg(&o))?;
            vec![o.into()]
        }
        Native::CxxShared => {
            let so = dir.join("libintro.so");
            run(Command::new(CLANGXX).args(opt).args(["-fPIC", "-shared"]).arg(src("intro.cpp")).arg("-o").arg(&so))?;
            vec![so.into(), format!("-Wl,-rpath,{}", dir.display()).into()]
        }
        Native::CxxSharedWithoutRuntime => {
            let (o, so) = (dir.join("intro.o"), dir.join("libintro.so"));
            run(Command::new(CLANGXX).args(opt).arg("-fPIC").arg("-c").arg(src("intro.cpp")).arg("-o").arg(&o))?;
            run(Command::new(CLANG).arg("-shared").arg(&o).arg("-o").arg(&so))?;
            vec![so.into(), format!("-Wl,-rpath,{}", dir.display()).into()]
        }
        Native::CxxArchive(name) => {
            let (o, a) = (dir.join("intro.o"), dir.join(name));
            run(Command::new(CLANGXX).args(opt).arg("-O2").arg("-c").arg(src("intro.cpp")).arg("-o").arg(&o))?;
            run(Command::new(wpd_tests::LLVM_AR).arg("rcs").arg(&a).arg(&o))?;
            vec![a.into()]
        }
        Native::CObject(flags) => {
            let o = dir.join("count.o");
            run(Command::new(CLANG).args(opt).args(flags).arg("-c").arg(src("count.c")).arg("-o").arg(&o))?;
            vec![o.into()]
        }
    })
}

fn defines(native: Native) -> &'static [&'static str] {
    match native {
        Native::CObject(_) => &[],
        _ => &["-DINTRODUCE"],
    }
}

fn check(case: &Case) -> Check {
    let tmp = temp_dir(&format!("native-readers-{}", case.name))?;
    let (ref_dir, dir) = (tmp.path().join("ref"), tmp.path().join("lto"));
    for d in [&ref_dir, &dir] {
        wpd_tests::mkdir(d)?;
    }
    // The -O0 reference: the native side built with -O0 too.
    let native_ref = build_native(case.native, &ref_dir, &["-O0"])?;
    let reference = ref_dir.join("prog");
    run(Command::new(CLANGXX)
        .arg("-O0")
        .args(defines(case.native))
        .args([src("main.cpp"), src("zoo.cpp")])
        .args(&native_ref)
        .arg("-o")
        .arg(&reference))?;
    let want = run_program(&reference, &ref_dir)?;
    let mut objects: Vec<OsString> = Vec::new();
    for s in ["main", "zoo"] {
        let o = dir.join(format!("{s}.o"));
        run(Command::new(CLANGXX)
            .args(["-O2", "-flto=thin", "-fwhole-program-vtables"])
            .args(defines(case.native))
            .arg("-c")
            .arg(src(&format!("{s}.cpp")))
            .arg("-o")
            .arg(&o))?;
        objects.push(o.into());
    }
    objects.extend(build_native(case.native, &dir, &[])?);
    let mut failures = Vec::new();
    let mut links: Vec<(String, Vec<String>)> = vec![(
        "wpd-ld".into(),
        vec![format!("--ld-path={}", wpd_ld_bin()?.display()), "-Wl,--lto-whole-program-visibility".into()],
    )];
    for linker in ["bfd", "gold", "mold"] {
        if linker == "mold" && Command::new("mold").arg("--version").output().is_err() {
            continue;
        }
        links.push((
            format!("plugin-{linker}"),
            vec![
                format!("-fuse-ld={linker}"),
                format!("-Wl,-plugin,{}", wpd_plugin_so()?.display()),
                "-Wl,-plugin-opt=whole-program-visibility".into(),
            ],
        ));
    }
    for (label, flags) in &links {
        if let Err(e) = link_and_check(case, &dir, label, flags, &objects, &want) {
            failures.push(format!("[{label}] {e}"));
        }
    }
    if failures.is_empty() { Ok(()) } else { Err(failures.join("\n")) }
}

fn link_and_check(
    case: &Case,
    dir: &Path,
    label: &str,
    flags: &[String],
    objects: &[OsString],
    want: &RunResult,
) -> Check {
    let report = link_run_report(dir, label, flags, objects, want)?;
    let dead = &report["dead_slots"];
    let off = dead["off"].as_str();
    let functions = dead["functions"].as_u64().unwrap_or(0);
    // mold offers the plugin no native file at all: the plugin reads them
    // from mold's command line, and must judge them as wpd-ld does.
    match (case.off_naming, off) {
        (Some(name), Some(why)) if why.contains(name) => Ok(()),
        (Some(name), _) => Err(format!("dead slots should be off naming {name:?}; the report has {dead}")),
        (None, None) if functions > 0 => Ok(()),
        (None, _) => Err(format!("dead slots should be on and drop functions; the report has {dead}")),
    }
}
