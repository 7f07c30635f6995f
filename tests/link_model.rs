//! Programs whose meaning depends on how the linker resolves the link line
//! (`fixtures/link_model/`): archive members extracted or not, `--wrap`,
//! `--defsym`, a script's assignment, `--push-state`, group rescans, weak
//! references, `-u`. Each case is built at test time (native `-O0` objects
//! and archives for the reference; bitcode objects and archives for
//! wpd-ld), linked through wpd-ld once per real linker (ld.lld-19, GNU ld,
//! gold; not one whose own `-O0` program of the case is wrong), run, and
//! compared with the `-O0` program that linker links; lines the program
//! must not print (a constructor of a member the linker leaves out) and the
//! report's `link_model` (members loaded and not loaded, the flavor) are
//! checked too. The same bitcode is then linked by GNU ld, gold and mold
//! through the linker plugin (`libwpd_plugin.so`, the linker's own
//! resolutions as the model), with the same checks of the program.

use libtest_mimic::{Arguments, Trial};
use std::path::Path;
use std::process::Command;
use wpd_tests::link::{RunResult, read_report, run_program, same_run, wpd_ld_bin, wpd_plugin_so};
use wpd_tests::{CLANG, CLANGXX, Check, LLVM_AR, mkdir, repo_root, run, temp_dir};

/// One object: its name, source and extra compile flags.
type Object = (&'static str, &'static str, &'static [&'static str]);

/// One case: how to build it and what to expect. In `link`, `@` stands for
/// the build directory (native objects for `-O0`, bitcode for wpd-ld).
struct Case {
    name: &'static str,
    objects: &'static [Object],
    /// Archives: file name and member objects, in order.
    archives: &'static [(&'static str, &'static [&'static str])],
    /// Native shared libraries every build links against: file name,
    /// source, flags.
    shared: &'static [Object],
    link: &'static [&'static str],
    /// wpd-ld flags (each link also gets `--wpd-report`).
    wpd_flags: &'static [&'static str],
    /// Output lines that would mean a member ran that the link leaves out.
    absent: &'static [&'static str],
    /// `link_model.loaded` entries that must end with these (e.g.
    /// `libcodecs.a(identity.o)`), and entries none may end with.
    loaded: &'static [&'static str],
    not_loaded: &'static [&'static str],
    /// Linkers whose own `-O0` program of the case is wrong (neither
    /// wpd-ld behind them nor the plugin in them is tried).
    broken_in: &'static [&'static str],
    /// Files of the fixture copied into both build folders (linker
    /// scripts the link line names as `@/<file>`).
    files: &'static [&'static str],
    /// wpd-ld's model knows every outside reference (a script command it
    /// does not model makes them unknown).
    outside_refs_known: bool,
    /// wpd-ld's report must count functions its dead slots dropped (what
    /// the case is about would otherwise not happen).
    drops_functions: bool,
}

const WPV: &str = "-Wl,--lto-whole-program-visibility";

const CASES: &[Case] = &[
    Case {
        name: "unreferenced_plugin",
        objects: &[("main.o", "main.cpp", &[]), ("identity.o", "identity.cpp", &[]), ("rot.o", "rot.cpp", &[])],
        archives: &[("libcodecs.a", &["identity.o", "rot.o"])],
        shared: &[],
        link: &["@/main.o", "@/libcodecs.a"],
        wpd_flags: &["-Wl,--wpd-speculate=2"],
        absent: &["rot13"],
        loaded: &["libcodecs.a(identity.o)"],
        not_loaded: &["libcodecs.a(rot.o)"],
        broken_in: &[],
        files: &[],
        outside_refs_known: true,
        drops_functions: false,
    },
    Case {
        name: "wrap_double",
        objects: &[("main.o", "main.cpp", &[]), ("sink.o", "sink.cpp", &[]), ("fake.o", "fake.cpp", &[])],
        archives: &[],
        shared: &[],
        link: &["@/main.o", "@/sink.o", "@/fake.o", "-Wl,--wrap=_Z9make_sinkv"],
        wpd_flags: &[WPV],
        absent: &[],
        loaded: &["fake.o"],
        not_loaded: &[],
        broken_in: &[],
        files: &[],
        outside_refs_known: true,
        drops_functions: false,
    },
    Case {
        name: "wrap_virtual",
        objects: &[("main.o", "main.cpp", &[]), ("shape.o", "shape.cpp", &[]), ("spy.o", "spy.cpp", &[])],
        archives: &[],
        shared: &[],
        link: &["@/main.o", "@/shape.o", "@/spy.o", "-Wl,--wrap=_ZNK5Shape4areaEv"],
        // Without whole-program visibility nothing is devirtualized: the
        // split unit shape.o goes to LLVM in two (its vtables compiled with
        // its thin part), the case where a direct call once ran the copy of
        // area() clang puts beside the vtable.
        wpd_flags: &[],
        absent: &[],
        loaded: &["shape.o", "spy.o"],
        not_loaded: &[],
        broken_in: &[],
        files: &[],
        outside_refs_known: true,
        drops_functions: false,
    },
    Case {
        name: "defsym_alias",
        objects: &[("main.o", "main.cpp", &[]), ("fixed.o", "fixed.cpp", &[])],
        archives: &[],
        shared: &[],
        link: &["@/main.o", "@/fixed.o", "-Wl,--defsym=_Z12system_clockv=fixed_clock"],
        wpd_flags: &[WPV],
        absent: &[],
        loaded: &["fixed.o"],
        not_loaded: &[],
        broken_in: &[],
        files: &[],
        outside_refs_known: true,
        drops_functions: false,
    },
    Case {
        name: "defsym_virtual",
        objects: &[("main.o", "main.cpp", &[]), ("shapes.o", "shapes.cpp", &[])],
        archives: &[],
        shared: &[],
        link: &["@/main.o", "@/shapes.o", "-Wl,--defsym=_ZNK5Large5scaleEi=_ZNK5Small5scaleEi"],
        // The slot's two targets are dispatched on the vtable pointer; the
        // plugin once called (and inlined) Large::scale's bitcode body,
        // which GNU ld reports as prevailing and then replaces.
        wpd_flags: &[WPV, "-Wl,--wpd-speculate=2"],
        absent: &[],
        loaded: &["shapes.o"],
        not_loaded: &[],
        // gold 1.16 links the -O0 program, which then crashes.
        broken_in: &["gold"],
        files: &[],
        outside_refs_known: true,
        drops_functions: false,
    },
    Case {
        name: "script_assignment",
        objects: &[("main.o", "main.cpp", &[]), ("shapes.o", "shapes.cpp", &[])],
        archives: &[],
        shared: &[],
        link: &["@/main.o", "@/shapes.o", "@/assign.ld"],
        // wpd-ld reads the script as one it cannot model (every hierarchy
        // open), and guards calls; the plugin, told nothing of the
        // assignment by GNU ld, dispatched Large::scale's bitcode body.
        wpd_flags: &[WPV, "-Wl,--wpd-speculate=2"],
        absent: &[],
        loaded: &["shapes.o"],
        not_loaded: &[],
        broken_in: &["gold"],
        files: &["assign.ld"],
        outside_refs_known: false,
        drops_functions: false,
    },
    Case {
        name: "as_needed_dead_slot",
        objects: &[("main.o", "main.cpp", &[])],
        archives: &[],
        shared: &[("libaudit.so", "audit.c", &[])],
        link: &["@/main.o", "-L@", "-Wl,-rpath,@", "-Wl,--as-needed", "-laudit", "-Wl,--no-as-needed"],
        // Dead slots drop `Base::audit` and `Derived::audit`, the only
        // references to the library; the program must still load it.
        wpd_flags: &[WPV],
        absent: &[],
        loaded: &["main.o", "libaudit.so"],
        not_loaded: &[],
        broken_in: &[],
        files: &[],
        outside_refs_known: true,
        drops_functions: true,
    },
    Case {
        name: "as_needed_dead_slot_gc",
        objects: &[("main.o", "main.cpp", &[])],
        archives: &[],
        shared: &[("libaudit.so", "audit.c", &[])],
        link: &[
            "@/main.o",
            "-L@",
            "-Wl,-rpath,@",
            "-Wl,--as-needed",
            "-laudit",
            "-Wl,--no-as-needed",
            "-Wl,--gc-sections",
        ],
        // The same under --gc-sections: lld counts only references from
        // live sections' relocations.
        wpd_flags: &[WPV],
        absent: &[],
        loaded: &["main.o", "libaudit.so"],
        not_loaded: &[],
        broken_in: &[],
        files: &[],
        outside_refs_known: true,
        drops_functions: true,
    },
    Case {
        name: "push_pop_state",
        objects: &[
            ("main.o", "main.cpp", &[]),
            ("counter.o", "counter.cpp", &[]),
            ("greeter.o", "greeter.cpp", &["-DGREETING=\"static\""]),
        ],
        archives: &[("libcounter.a", &["counter.o"]), ("libgreeter.a", &["greeter.o"])],
        shared: &[("libgreeter.so", "greeter.cpp", &["-DGREETING=\"dynamic\""])],
        link: &[
            "@/main.o",
            "-L@",
            "-Wl,-rpath,@",
            "-Wl,--push-state,-Bstatic",
            "-lcounter",
            "-Wl,--pop-state",
            "-lgreeter",
        ],
        wpd_flags: &[],
        absent: &["static"],
        loaded: &["libcounter.a(counter.o)", "libgreeter.so"],
        not_loaded: &["libgreeter.a(greeter.o)"],
        broken_in: &[],
        files: &[],
        outside_refs_known: true,
        drops_functions: false,
    },
    Case {
        name: "group_rescan",
        objects: &[
            ("main.o", "main.cpp", &[]),
            ("square.o", "square.cpp", &[]),
            ("total.o", "total.cpp", &[]),
            ("triangle.o", "triangle.cpp", &[]),
        ],
        archives: &[("libback.a", &["total.o", "triangle.o"]), ("libfront.a", &["square.o"])],
        shared: &[],
        link: &["@/main.o", "-Wl,--start-group", "@/libback.a", "@/libfront.a", "-Wl,--end-group"],
        wpd_flags: &[WPV, "-Wl,--wpd-speculate=2"],
        absent: &["triangle"],
        loaded: &["libfront.a(square.o)", "libback.a(total.o)"],
        not_loaded: &["libback.a(triangle.o)"],
        broken_in: &[],
        files: &[],
        outside_refs_known: true,
        drops_functions: false,
    },
    Case {
        name: "weak_reference",
        objects: &[("main.o", "main.cpp", &[]), ("french.o", "french.cpp", &[])],
        archives: &[("libfrench.a", &["french.o"])],
        shared: &[],
        link: &["@/main.o", "@/libfrench.a"],
        wpd_flags: &[],
        absent: &["french", "bonjour"],
        loaded: &[],
        not_loaded: &["libfrench.a(french.o)"],
        broken_in: &[],
        files: &[],
        outside_refs_known: true,
        drops_functions: false,
    },
    Case {
        name: "undefined_flag",
        objects: &[("main.o", "main.cpp", &[]), ("upper.o", "upper.cpp", &[]), ("lower.o", "lower.cpp", &[])],
        archives: &[("libplugins.a", &["lower.o", "upper.o"])],
        shared: &[],
        link: &["-Wl,-u,link_upper", "@/main.o", "@/libplugins.a"],
        wpd_flags: &["-Wl,--wpd-speculate=2"],
        absent: &["lower"],
        loaded: &["libplugins.a(upper.o)"],
        not_loaded: &["libplugins.a(lower.o)"],
        broken_in: &[],
        files: &[],
        outside_refs_known: true,
        drops_functions: false,
    },
];

/// The real linkers, by the flavor wpd-ld should report for each.
const LINKERS: &[(&str, Option<&str>)] = &[("lld", None), ("bfd", Some("ld.bfd")), ("gold", Some("ld.gold"))];

fn main() {
    let args = Arguments::from_args();
    let trials =
        CASES.iter().map(|c| Trial::test(c.name, move || check(c).map_err(|e| format!("{}: {e}", c.name).into())));
    libtest_mimic::run(&args, trials.collect()).exit();
}

fn with_dir(arg: &str, dir: &Path) -> String {
    arg.replace('@', &dir.display().to_string())
}

/// Compiles the objects and archives of `case` into `dir`: native `-O0`
/// (`bitcode` false) or ThinLTO bitcode.
fn build(case: &Case, src: &Path, dir: &Path, bitcode: bool) -> Check {
    mkdir(dir)?;
    let flags: &[&str] = if bitcode { &["-O2", "-flto=thin", "-fwhole-program-vtables"] } else { &["-O0"] };
    for (obj, source, extra) in case.objects {
        run(Command::new(CLANGXX)
            .args(flags)
            .args(*extra)
            .arg("-c")
            .arg(src.join(source))
            .arg("-o")
            .arg(dir.join(obj)))?;
    }
    for (lib, members) in case.archives {
        let ar = if bitcode { LLVM_AR } else { "ar" };
        run(Command::new(ar).arg("rcs").arg(dir.join(lib)).args(members.iter().map(|m| dir.join(m))))?;
    }
    for file in case.files {
        std::fs::copy(src.join(file), dir.join(file)).map_err(|e| format!("{file}: {e}"))?;
    }
    for (lib, source, extra) in case.shared {
        let compiler = if source.ends_with(".c") { CLANG } else { CLANGXX };
        run(Command::new(compiler)
            .args(["-O0", "-fPIC", "-shared"])
            .args(*extra)
            .arg(src.join(source))
            .arg("-o")
            .arg(dir.join(lib)))?;
    }
    Ok(())
}

fn check(case: &Case) -> Check {
    let src = repo_root().join("fixtures/link_model").join(case.name);
    let tmp = temp_dir(&format!("link-model-{}", case.name))?;
    let (native, lto) = (tmp.path().join("native"), tmp.path().join("lto"));
    build(case, &src, &native, false)?;
    build(case, &src, &lto, true)?;

    let link_args = |dir: &Path| case.link.iter().map(|a| with_dir(a, dir)).collect::<Vec<_>>();
    // The -O0 program as `linker` links it (the linkers differ: lld wraps
    // the references an object makes to its own definitions, GNU ld, gold
    // and mold do not); `None` when it cannot (mold 1.10 does not restore
    // -Bdynamic at --pop-state).
    let reference = |linker: &str| -> Result<Option<RunResult>, String> {
        let exe = native.join(format!("prog-{linker}"));
        let linked = Command::new(CLANGXX)
            .arg("-O0")
            .arg(format!("-fuse-ld={linker}"))
            .args(link_args(&native))
            .arg("-o")
            .arg(&exe)
            .output()
            .is_ok_and(|o| o.status.success());
        if !linked {
            return Ok(None);
        }
        let want = run_program(&exe, &native)?;
        if want.code != Some(0) {
            return Err(format!("the -O0 program linked by {linker} ended with {}", want.exit()));
        }
        if let Some(absent) = case.absent.iter().find(|a| want.stdout.contains(*a)) {
            return Err(format!("the -O0 program linked by {linker} prints {absent:?}; the fixture is wrong"));
        }
        Ok(Some(want))
    };

    let wpd_ld = wpd_ld_bin()?;
    for (flavor, linker) in LINKERS.iter().filter(|(f, _)| !case.broken_in.contains(f)) {
        let want = reference(flavor)?.ok_or_else(|| format!("{flavor} cannot link the -O0 program"))?;
        let exe = lto.join(format!("prog-{flavor}"));
        let report = lto.join(format!("report-{flavor}.json"));
        let mut cmd = Command::new(CLANGXX);
        cmd.current_dir(&lto)
            .env("TMPDIR", tmp.path())
            .arg("-flto=thin")
            .arg(format!("--ld-path={}", wpd_ld.display()))
            .args(case.wpd_flags)
            .arg(format!("-Wl,--wpd-report={}", report.display()));
        if let Some(l) = linker {
            cmd.arg(format!("-Wl,--wpd-linker={l}"));
        }
        cmd.args(link_args(&lto)).arg("-o").arg(&exe);
        run(&mut cmd).map_err(|e| format!("[{flavor}] {e}"))?;
        let got = run_program(&exe, &lto)?;
        same_run(&format!("[{flavor}] wpd-ld"), &want, &got)?;
        check_absent(case, flavor, &got)?;
        check_model(case, flavor, &report)?;
    }

    // The plugin route: no -flto at link time (clang would add its own
    // LLVMgold.so); wpd-ld's options become plugin options.
    let plugin = wpd_plugin_so()?;
    for linker in ["bfd", "gold", "mold"].into_iter().filter(|l| !case.broken_in.contains(l)) {
        // A linker that cannot link the native program is not asked to
        // link the bitcode one.
        let Some(want) = reference(linker)? else {
            eprintln!("{}: {linker} cannot link the native program either; plugin link skipped", case.name);
            continue;
        };
        let exe = lto.join(format!("prog-plugin-{linker}"));
        let mut cmd = Command::new(CLANGXX);
        cmd.current_dir(&lto).arg(format!("-fuse-ld={linker}")).arg(format!("-Wl,-plugin,{}", plugin.display()));
        for f in case.wpd_flags {
            if *f == WPV {
                cmd.arg("-Wl,-plugin-opt=whole-program-visibility");
            } else if let Some(rest) = f.strip_prefix("-Wl,--wpd-") {
                cmd.arg(format!("-Wl,-plugin-opt=wpd-{rest}"));
            } else {
                cmd.arg(f);
            }
        }
        cmd.args(link_args(&lto)).arg("-o").arg(&exe);
        let what = format!("plugin-{linker}");
        run(&mut cmd).map_err(|e| format!("[{what}] {e}"))?;
        let got = run_program(&exe, &lto)?;
        same_run(&format!("[{what}]"), &want, &got)?;
        check_absent(case, &what, &got)?;
    }
    Ok(())
}

fn check_absent(case: &Case, flavor: &str, got: &RunResult) -> Check {
    match case.absent.iter().find(|a| got.stdout.contains(*a)) {
        Some(a) => Err(format!("[{flavor}] the program prints {a:?}: a member the linker leaves out was linked in")),
        None => Ok(()),
    }
}

fn check_model(case: &Case, flavor: &str, report: &Path) -> Check {
    let r = read_report(report)?;
    let model = &r["link_model"];
    if model["flavor"] != *flavor {
        return Err(format!("[{flavor}] report link_model.flavor is {}", model["flavor"]));
    }
    let loaded: Vec<&str> = model["loaded"].as_array().into_iter().flatten().filter_map(|v| v.as_str()).collect();
    for want in case.loaded {
        if !loaded.iter().any(|l| l.ends_with(want)) {
            return Err(format!("[{flavor}] link_model.loaded lacks {want}: {loaded:?}"));
        }
    }
    for unwanted in case.not_loaded {
        if loaded.iter().any(|l| l.ends_with(unwanted)) {
            return Err(format!("[{flavor}] link_model.loaded has {unwanted}: {loaded:?}"));
        }
    }
    if model["outside_refs_known"] != case.outside_refs_known {
        return Err(format!("[{flavor}] outside references unknown: {model}"));
    }
    let dropped = r["dead_slots"]["functions"].as_u64().unwrap_or(0);
    if case.drops_functions && dropped == 0 {
        return Err(format!("[{flavor}] dead slots dropped no function: {}", r["dead_slots"]));
    }
    Ok(())
}
