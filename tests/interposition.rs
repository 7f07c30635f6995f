//! Which body runs (`fixtures/interposition`): a class whose virtual
//! functions a native library loaded with `LD_PRELOAD` defines again. In a
//! shared library each exported default-visibility definition may be
//! preempted at run time, unless the link binds it inside the library
//! (`-Bsymbolic`, `-Bsymbolic-functions`, `-Bsymbolic-non-weak-functions`,
//! a `--dynamic-list` that does not name it, a version script's `local:`,
//! protected visibility); an executable's definitions are never preempted.
//! Every output kind and binding option is linked through wpd-ld and the
//! GNU ld plugin, with and without whole-program visibility, and run both
//! plainly and preempted: each run must print what the `-O0` build of the
//! same link prints in the same run. The reports show that wpd still
//! devirtualizes what the link binds, and names the preemptible functions
//! it leaves alone.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;
use wpd_tests::link::{read_report, wpd_ld_bin, wpd_plugin_so};
use wpd_tests::{CLANGXX, Check, mkdir, repo_root, run, run_raw, temp_dir};

/// The flags of the bitcode objects (the fixture adds `-fPIC` and its own).
const LTO: &[&str] = &["-O2", "-flto=thin", "-fwhole-program-vtables"];

fn fixture(file: &str) -> PathBuf {
    repo_root().join("fixtures/interposition").join(file)
}

/// What the report of a wpd-ld link with whole-program visibility must
/// show: the counts of unguarded rewrites, and a reason a decision gives.
struct Expect {
    /// At least this many call sites single-implemented and folded by
    /// virtual constant propagation (`None`: exactly zero of both).
    unguarded: Option<(u64, u64)>,
    /// Some decision's reason contains this.
    reason: Option<&'static str>,
}

/// One output kind and binding of the link.
struct Case {
    name: &'static str,
    /// `-shared`: the bitcode becomes `libwidget.so`, which a native
    /// program uses; else it is linked into the executable with `main.cpp`.
    shared: bool,
    /// Compile flags of every source.
    compile: &'static [&'static str],
    /// Link flags (`-Wl,...`), for every linker.
    link: &'static [&'static str],
    /// Whether the -O0 build's preempted run prints something else than
    /// its plain run (the setup preempts what the case says).
    preempted: bool,
    /// Linked through the GNU ld plugin too (GNU ld 2.40 has no
    /// `-Bsymbolic-non-weak-functions`).
    plugin: bool,
    expect: Expect,
}

const HIDDEN: &[&str] = &["-DHIDDEN_CLASS"];

fn cases() -> Vec<Case> {
    let none = Expect { unguarded: None, reason: None };
    vec![
        Case {
            name: "shared_default",
            shared: true,
            compile: &[],
            link: &[],
            preempted: true,
            plugin: true,
            // The vtable is exported, so the class is open; the calls stay
            // indirect, not even guarded: Widget::size may be preempted.
            expect: Expect { unguarded: None, reason: Some("not guarded for a target whose body is not known") },
        },
        Case {
            name: "shared_hidden_class",
            shared: true,
            compile: HIDDEN,
            link: &[],
            preempted: true,
            plugin: true,
            // Closed class, preemptible members: nothing folded or called
            // directly.
            expect: Expect { unguarded: None, reason: Some("_ZNK6Widget4sizeEv may be preempted at run time") },
        },
        Case {
            name: "shared_bsymbolic",
            shared: true,
            compile: HIDDEN,
            link: &["-Wl,-Bsymbolic"],
            preempted: false,
            plugin: true,
            expect: Expect { unguarded: Some((2, 1)), reason: None },
        },
        Case {
            name: "shared_bsymbolic_functions",
            shared: true,
            compile: HIDDEN,
            link: &["-Wl,-Bsymbolic-functions"],
            preempted: false,
            plugin: true,
            expect: Expect { unguarded: Some((2, 1)), reason: None },
        },
        Case {
            name: "shared_bsymbolic_non_weak_functions",
            shared: true,
            compile: HIDDEN,
            link: &["-Wl,-Bsymbolic-non-weak-functions"],
            preempted: true,
            plugin: false,
            // The weak Widget::tag stays preemptible; size and scale bind.
            expect: Expect { unguarded: Some((1, 1)), reason: Some("_ZNK6Widget3tagEv may be preempted") },
        },
        Case {
            name: "shared_dynamic_list",
            shared: true,
            compile: HIDDEN,
            link: &["-Wl,--dynamic-list=size.list"],
            preempted: true,
            plugin: true,
            // Only the listed Widget::size stays preemptible.
            expect: Expect { unguarded: Some((1, 1)), reason: Some("_ZNK6Widget4sizeEv may be preempted") },
        },
        Case {
            name: "shared_dynamic_list_quoted_glob",
            shared: true,
            compile: HIDDEN,
            link: &["-Wl,--dynamic-list=size_glob.list"],
            preempted: true,
            // GNU ld reads the quoted pattern as an exact name: its -O0
            // build binds Widget::size, lld's does not.
            plugin: false,
            // lld reads the quoted pattern as a glob: Widget::size stays
            // preemptible (wpd-ld once took it for an exact name, bound
            // the function inside and devirtualized its calls).
            expect: Expect { unguarded: Some((1, 1)), reason: Some("_ZNK6Widget4sizeEv may be preempted") },
        },
        Case {
            name: "shared_export_dynamic_symbol",
            shared: true,
            compile: HIDDEN,
            link: &["-Wl,-Bsymbolic-functions", "-Wl,--export-dynamic-symbol=_ZNK6Widget4sizeEv"],
            preempted: true,
            plugin: true,
            // -Bsymbolic-functions binds all but the named symbol.
            expect: Expect { unguarded: Some((1, 1)), reason: Some("_ZNK6Widget4sizeEv may be preempted") },
        },
        Case {
            name: "shared_version_script_local",
            shared: true,
            compile: HIDDEN,
            link: &["-Wl,--version-script=api.map"],
            preempted: false,
            plugin: true,
            expect: Expect { unguarded: Some((2, 1)), reason: None },
        },
        Case {
            name: "shared_protected",
            shared: true,
            compile: &["-fvisibility=protected"],
            link: &[],
            preempted: false,
            plugin: true,
            // Protected members bind inside the library, but the protected
            // vtable is exported: the class stays open.
            expect: none,
        },
        Case {
            name: "executable",
            shared: false,
            compile: HIDDEN,
            link: &["-no-pie"],
            preempted: false,
            plugin: true,
            expect: Expect { unguarded: Some((2, 1)), reason: None },
        },
        Case {
            name: "executable_pie",
            shared: false,
            compile: HIDDEN,
            link: &["-pie"],
            preempted: false,
            plugin: true,
            expect: Expect { unguarded: Some((2, 1)), reason: None },
        },
        Case {
            name: "executable_pie_rdynamic",
            shared: false,
            compile: HIDDEN,
            link: &["-pie", "-rdynamic"],
            preempted: false,
            plugin: true,
            expect: Expect { unguarded: Some((2, 1)), reason: None },
        },
    ]
}

/// How the bitcode is linked.
#[derive(Clone, Copy, PartialEq)]
enum Front {
    /// `clang++ --ld-path=wpd-ld` (lld underneath).
    WpdLd,
    /// GNU ld with `-plugin libwpd_plugin.so`.
    Plugin,
}

impl Front {
    fn name(self) -> &'static str {
        match self {
            Front::WpdLd => "wpd-ld",
            Front::Plugin => "plugin",
        }
    }

    /// The driver arguments of a link through this front end, with a
    /// report, with or without whole-program visibility.
    fn link_args(self, wpd_ld: &Path, plugin: &Path, report: &Path, wpv: bool) -> Vec<String> {
        let (mut args, report_flag, wpv_flag) = match self {
            Front::WpdLd => (
                vec!["-flto=thin".to_string(), format!("--ld-path={}", wpd_ld.display())],
                "-Wl,--wpd-report=",
                "-Wl,--lto-whole-program-visibility",
            ),
            Front::Plugin => (
                vec!["-fuse-ld=bfd".to_string(), format!("-Wl,-plugin,{}", plugin.display())],
                "-Wl,-plugin-opt=wpd-report=",
                "-Wl,-plugin-opt=whole-program-visibility",
            ),
        };
        args.push(format!("{report_flag}{}", report.display()));
        if wpv {
            args.push(wpv_flag.to_string());
        }
        args
    }

    /// The linker of the `-O0` build this front end's link is compared with.
    fn reference_linker(self) -> &'static str {
        match self {
            Front::WpdLd => "-fuse-ld=lld",
            Front::Plugin => "-fuse-ld=bfd",
        }
    }
}

fn compile(src: &str, out: &Path, flags: &[&str], extra: &[&str]) -> Check {
    run(Command::new(CLANGXX).args(flags).args(extra).arg("-fPIC").arg("-c").arg(fixture(src)).arg("-o").arg(out))
        .map(|_| ())
}

/// Runs `prog`, plainly or with `preload` preloaded; its stdout and exit.
fn run_prog(prog: &Path, preload: Option<&Path>) -> Check<String> {
    let mut cmd = Command::new(prog);
    if let Some(p) = preload {
        cmd.env("LD_PRELOAD", p);
    }
    let o = run_raw(&mut cmd)?;
    Ok(format!("{}[{}]", String::from_utf8_lossy(&o.stdout), o.status))
}

/// The objects of one case, built once.
struct Built {
    dir: PathBuf,
    /// `lib.o` and `main.o` at -O0 (native), and as bitcode.
    lib_ref: PathBuf,
    main_ref: PathBuf,
    lib_lto: PathBuf,
    main_lto: PathBuf,
}

fn build(case: &Case, root: &Path) -> Check<Built> {
    let dir = root.join(case.name);
    mkdir(&dir)?;
    for f in ["size.list", "size_glob.list", "api.map"] {
        std::fs::copy(fixture(f), dir.join(f)).map_err(|e| format!("{f}: {e}"))?;
    }
    let b = Built {
        lib_ref: dir.join("lib-O0.o"),
        main_ref: dir.join("main-O0.o"),
        lib_lto: dir.join("lib.o"),
        main_lto: dir.join("main.o"),
        dir,
    };
    compile("lib.cpp", &b.lib_ref, &["-O0"], case.compile)?;
    compile("main.cpp", &b.main_ref, &["-O0"], case.compile)?;
    compile("lib.cpp", &b.lib_lto, LTO, case.compile)?;
    compile("main.cpp", &b.main_lto, LTO, case.compile)?;
    Ok(b)
}

/// Links the case's output into `out_dir` (a shared library and the native
/// program using it, or the program), returning the program. `how`: the
/// driver arguments that pick the linker and, for the LTO links, wpd.
fn link(case: &Case, b: &Built, out_dir: &Path, how: &[String], objects: &[&Path]) -> Check<PathBuf> {
    mkdir(out_dir)?;
    let prog = out_dir.join("prog");
    let mut cmd = Command::new(CLANGXX);
    cmd.current_dir(&b.dir).args(how).args(case.link);
    if case.shared {
        let lib = out_dir.join("libwidget.so");
        run(cmd.args(["-shared", "-fPIC"]).args(objects).arg("-o").arg(&lib))?;
        run(Command::new(CLANGXX)
            .arg(&b.main_ref)
            .arg(format!("-L{}", out_dir.display()))
            .arg("-lwidget")
            .arg(format!("-Wl,-rpath,{}", out_dir.display()))
            .arg("-o")
            .arg(&prog))?;
    } else {
        run(cmd.args(objects).arg("-o").arg(&prog))?;
    }
    Ok(prog)
}

fn check_report(case: &Case, report: &Value) -> Check {
    let count = |k: &str| report["call_sites"][k].as_u64().unwrap_or(0);
    let (single, vcp) = (count("single_impl"), count("virtual_const_prop"));
    match case.expect.unguarded {
        None if single + vcp > 0 => {
            return Err(format!("single_impl {single}, virtual_const_prop {vcp}: expected none"));
        }
        Some((s, v)) if single < s || vcp < v => {
            return Err(format!("single_impl {single}, virtual_const_prop {vcp}: expected at least {s} and {v}"));
        }
        _ => {}
    }
    if let Some(want) = case.expect.reason {
        let decisions = report["decisions"].as_array().cloned().unwrap_or_default();
        if !decisions.iter().any(|d| d["reason"].as_str().is_some_and(|r| r.contains(want))) {
            let reasons: Vec<&str> = decisions.iter().filter_map(|d| d["reason"].as_str()).collect();
            return Err(format!("no decision gives the reason {want:?}: {reasons:?}"));
        }
    }
    Ok(())
}

fn check(case: &Case) -> Check {
    let tmp = temp_dir(&format!("interposition-{}", case.name))?;
    let b = build(case, tmp.path())?;
    let preload = b.dir.join("libpreempt.so");
    run(Command::new(CLANGXX).args(["-O0", "-fPIC", "-shared"]).arg(fixture("preempt.cpp")).arg("-o").arg(&preload))?;
    let (lib_ref, main_ref, lib_lto, main_lto) =
        (b.lib_ref.as_path(), b.main_ref.as_path(), b.lib_lto.as_path(), b.main_lto.as_path());
    let ref_objects: Vec<&Path> = if case.shared { vec![lib_ref] } else { vec![lib_ref, main_ref] };
    let lto_objects: Vec<&Path> = if case.shared { vec![lib_lto] } else { vec![lib_lto, main_lto] };
    let wpd_ld = wpd_ld_bin()?;
    let plugin = wpd_plugin_so()?;
    let fronts: &[Front] = if case.plugin { &[Front::WpdLd, Front::Plugin] } else { &[Front::WpdLd] };
    for &front in fronts {
        let reference = link(
            case,
            &b,
            &b.dir.join(format!("ref-{}", front.name())),
            &["-O0".to_string(), front.reference_linker().to_string()],
            &ref_objects,
        )?;
        let want = [run_prog(&reference, None)?, run_prog(&reference, Some(&preload))?];
        if (want[0] != want[1]) != case.preempted {
            return Err(format!(
                "test setup: the -O0 build (linked by {}) {} preempted: {want:?}",
                front.reference_linker(),
                if case.preempted { "is not" } else { "is" }
            ));
        }
        for wpv in [false, true] {
            let label = format!("{}{}", front.name(), if wpv { "-wpv" } else { "" });
            let report = b.dir.join(format!("{label}.json"));
            let how = front.link_args(&wpd_ld, &plugin, &report, wpv);
            let prog = link(case, &b, &b.dir.join(&label), &how, &lto_objects)?;
            let got = [run_prog(&prog, None)?, run_prog(&prog, Some(&preload))?];
            for (k, run) in ["plain", "preempted"].iter().enumerate() {
                if got[k] != want[k] {
                    return Err(format!("{label}, {run} run: prints {:?}, -O0 prints {:?}", got[k], want[k]));
                }
            }
            // wpd-ld models the binding options; the plugin is told none of
            // them, so it only has to be right.
            if wpv && front == Front::WpdLd {
                check_report(case, &read_report(&report)?).map_err(|e| format!("{label} report: {e}"))?;
            }
        }
    }
    Ok(())
}

fn main() {
    let args = libtest_mimic::Arguments::from_args();
    let trials = cases()
        .into_iter()
        .map(|case| libtest_mimic::Trial::test(case.name, move || check(&case).map_err(Into::into)))
        .collect();
    libtest_mimic::run(&args, trials).exit();
}
