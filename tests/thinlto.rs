//! What LLVM's ThinLTO does to wpd-ld's links beyond devirtualization
//! (`fixtures/thinlto`, `crates/wpd/src/backends/thinlto.rs`): the devirtualized
//! callee in another object is imported and inlined, one copy of a template instantiated in every object is compiled,
//! dead external code is dropped unless exported, and functions only
//! their own module calls are internalized. Every program prints what its -O0 build
//! prints; split and unsplit units alike.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use wpd_tests::link::wpd_ld_bin;
use wpd_tests::{CLANGXX, Check, LLVM_AR, repo_root, run, run_raw, temp_dir, wpd_bin};

struct Build {
    dir: PathBuf,
    objects: Vec<PathBuf>,
    expected: Vec<u8>,
}

fn build(program: &str, d: &Path, extra: &[&str]) -> Check<Build> {
    let src = repo_root().join("fixtures/thinlto").join(program);
    let mut sources: Vec<String> = std::fs::read_dir(&src)
        .map_err(|e| format!("{}: {e}", src.display()))?
        .filter_map(|e| e.ok().map(|e| e.file_name().to_string_lossy().into_owned()))
        .filter(|n| n.ends_with(".cpp"))
        .collect();
    sources.sort();
    let mut objects = Vec::new();
    for s in &sources {
        let obj = d.join(s.replace(".cpp", ".o"));
        // `native*.cpp`: compiled without LTO, a native object of the link.
        let flags: &[&str] = if s.starts_with("native") {
            &["-O2", "-c"]
        } else {
            &["-O2", "-flto=thin", "-fwhole-program-vtables", "-c"]
        };
        run(Command::new(CLANGXX).args(flags).args(extra).arg(src.join(s)).arg("-o").arg(&obj))?;
        objects.push(obj);
    }
    run(Command::new(CLANGXX)
        .arg("-O0")
        .args(extra)
        .args(sources.iter().map(|s| src.join(s)))
        .arg("-o")
        .arg(d.join("ref")))?;
    let expected = run(&mut Command::new(d.join("ref")))?.stdout;
    Ok(Build { dir: d.to_path_buf(), objects, expected })
}

/// Links through wpd-ld, runs the program and checks its output; returns
/// the program and wpd-ld's stderr.
fn link(b: &Build, out: &str, extra: &[&str]) -> Check<(PathBuf, String)> {
    let inputs: Vec<&Path> = b.objects.iter().map(PathBuf::as_path).collect();
    link_inputs(b, &inputs, out, extra, None)
}

/// [`link`] of `inputs` (`b`'s objects, some of them in an archive) with
/// `TMPDIR` set to `tmp` when given.
fn link_inputs(b: &Build, inputs: &[&Path], out: &str, extra: &[&str], tmp: Option<&Path>) -> Check<(PathBuf, String)> {
    let prog = b.dir.join(out);
    let mut cmd = Command::new(CLANGXX);
    if let Some(tmp) = tmp {
        cmd.env("TMPDIR", tmp);
    }
    cmd.arg("-flto=thin").arg("-Wl,--lto-whole-program-visibility");
    cmd.arg(format!("--ld-path={}", wpd_ld_bin()?.display()));
    let output = run(cmd.args(extra).args(inputs).arg("-o").arg(&prog))?;
    prints_as_o0(b, &prog, out)?;
    Ok((prog, String::from_utf8_lossy(&output.stderr).into_owned()))
}

/// Runs `prog` (named `what`) and checks that it prints what `b`'s -O0
/// build prints.
fn prints_as_o0(b: &Build, prog: &Path, what: &str) -> Check {
    let got = run(&mut Command::new(prog))?.stdout;
    if got != b.expected {
        return Err(format!(
            "{what} prints {:?}, -O0 prints {:?}",
            String::from_utf8_lossy(&got),
            String::from_utf8_lossy(&b.expected)
        ));
    }
    Ok(())
}

/// The instructions of `function` in `prog` (objdump, symbolized).
fn disassembly(prog: &Path, function: &str) -> Check<String> {
    let out = run(Command::new("objdump").args(["-d", "--no-show-raw-insn", "-C"]).arg(prog))?;
    let text = String::from_utf8_lossy(&out.stdout);
    let start = format!("<{function}>:");
    let body: Vec<&str> =
        text.lines().skip_while(|l| !l.ends_with(&start)).skip(1).take_while(|l| !l.trim().is_empty()).collect();
    if body.is_empty() {
        return Err(format!("{function} not found in {}", prog.display()));
    }
    Ok(body.join("\n"))
}

/// `nm` lines of `prog` (`-D`: its dynamic symbols), demangled.
fn symbols(prog: &Path, dynamic: bool) -> Check<Vec<String>> {
    let out = run(Command::new("nm").arg("-C").args(if dynamic { &["-D"][..] } else { &[][..] }).arg(prog))?;
    Ok(String::from_utf8_lossy(&out.stdout).lines().map(str::to_string).collect())
}

fn defines(lines: &[String], name: &str) -> Vec<String> {
    lines
        .iter()
        .filter(|l| {
            let mut f = l.split_whitespace();
            let kind = if l.starts_with(' ') { f.next() } else { f.nth(1) };
            kind.is_some_and(|k| k != "U" && k != "w" && k != "v") && l.contains(name)
        })
        .cloned()
        .collect()
}

fn imports_devirtualized_callee(extra: &[&str]) -> Check {
    let dir = temp_dir("thinlto-import")?;
    let mut flags = vec!["-DITERATIONS=1000000"];
    flags.extend(extra);
    let b = build("import", dir.path(), &flags)?;
    let (wpd, _) = link(&b, "wpd", &[])?;
    let main = disassembly(&wpd, "main")?;
    if main.lines().any(|l| l.contains("call") && l.contains("Mix::apply")) {
        return Err(format!("wpd-ld's main still calls Mix::apply (not imported and inlined):\n{main}"));
    }
    Ok(())
}

fn one_copy_dead_code_internalized(extra: &[&str]) -> Check {
    let dir = temp_dir("thinlto-strip")?;
    let b = build("strip", dir.path(), extra)?;
    let (prog, stderr) = link(&b, "prog", &["-Wl,--wpd-save-temps"])?;
    let all = symbols(&prog, false)?;
    if !defines(&all, "dead_helper").is_empty() {
        return Err(format!("dead_helper was not dead-stripped: {:?}", defines(&all, "dead_helper")));
    }
    let scale = defines(&all, "scale_seed(int)");
    if scale.iter().any(|l| l.contains(" T ")) {
        return Err(format!("scale_seed(int), called only from its own module, stayed global: {scale:?}"));
    }
    // One compiled copy of sum_all<int> among the native objects.
    let temps = stderr
        .lines()
        .find_map(|l| l.split("temporary files kept in ").nth(1))
        .map(|p| PathBuf::from(p.trim()))
        .ok_or(format!("no temporary directory reported: {stderr}"))?;
    let mut copies = Vec::new();
    for obj in walk(&temps)?.into_iter().filter(|p| p.extension().is_some_and(|e| e == "o")) {
        if !defines(&symbols(&obj, false)?, "sum_all<int>").is_empty() {
            copies.push(obj.display().to_string());
        }
    }
    let _ = std::fs::remove_dir_all(&temps);
    if copies.len() != 1 {
        return Err(format!("sum_all<int> compiled in {} objects, expected 1: {copies:?}", copies.len()));
    }
    // Exported (-rdynamic), the dead function stays, in the dynamic table.
    let (exported, _) = link(&b, "exported", &["-rdynamic"])?;
    let dynamic = symbols(&exported, true)?;
    if defines(&dynamic, "dead_helper").is_empty() {
        return Err("with -rdynamic, dead_helper must stay and be exported".into());
    }
    // ... but not sum_all<int>, which LLVM may omit from the symbol table
    // (linkonce_odr, unnamed_addr): lld and LLVMgold leave it out of what
    // --export-dynamic exports, and so does wpd (it was exported, and kept
    // in the program, before).
    let template = defines(&dynamic, "sum_all<int>");
    if !template.is_empty() {
        return Err(format!("with -rdynamic, sum_all<int> was exported: {template:?}"));
    }
    Ok(())
}

/// Full-LTO, split ThinLTO, empty and unsplit C bitcode in one link.
fn mixed_bitcode_kinds() -> Check {
    let dir = temp_dir("thinlto-mixed")?;
    let d = dir.path();
    let src = repo_root().join("fixtures/thinlto/mixed");
    let units: [(&str, &str, &[&str]); 4] = [
        (CLANGXX, "main.cpp", &["-flto", "-fwhole-program-vtables"]),
        (CLANGXX, "impl.cpp", &["-flto=thin", "-fwhole-program-vtables"]),
        (CLANGXX, "empty.cpp", &["-flto=thin"]),
        ("clang-19", "counter.c", &["-flto=thin", "-fcommon"]),
    ];
    let mut objects = Vec::new();
    for (compiler, file, flags) in units {
        let obj = d.join(format!("{file}.o"));
        run(Command::new(compiler).arg("-O2").args(flags).arg("-c").arg(src.join(file)).arg("-o").arg(&obj))?;
        objects.push(obj);
    }
    let mut refs = Vec::new();
    for (compiler, file, _) in units {
        let obj = d.join(format!("{file}.O0.o"));
        run(Command::new(compiler).arg("-O0").arg("-c").arg(src.join(file)).arg("-o").arg(&obj))?;
        refs.push(obj);
    }
    run(Command::new(CLANGXX).args(&refs).arg("-o").arg(d.join("ref")))?;
    let b = Build { dir: d.to_path_buf(), objects, expected: run(&mut Command::new(d.join("ref")))?.stdout };
    let report = d.join("report.json");
    let (_, stderr) = link(&b, "prog", &["-Wl,--wpd-remarks", &format!("-Wl,--wpd-report={}", report.display())])?;
    if !stderr.contains("single-impl: devirtualized a call to _ZNK1D1fEv") {
        return Err(format!("main's call to B::f was not devirtualized: {stderr}"));
    }
    // The empty unit and the C unit have nothing for the plan and no type
    // intrinsic: they go to ThinLTO as clang wrote them (and counter.c's
    // code is still imported into main, which prints its count).
    let json = report_json(&report)?;
    if json["modules_unchanged"] != 2 {
        return Err(format!("expected 2 modules passed through unchanged, report says {}", json["modules_unchanged"]));
    }
    Ok(())
}

/// The report of a link, parsed.
fn report_json(path: &Path) -> Check<serde_json::Value> {
    serde_json::from_slice(&std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?)
        .map_err(|e| format!("{}: {e}", path.display()))
}

/// Modules whose calls all stay indirect go to LLVM's ThinLTO as clang
/// wrote them, type tests and all (`fixtures/thinlto/indirect`); their type
/// tests are dropped inside LLVM's backends, before LLVM's own
/// devirtualization could act on them. Built with `-fvisibility=hidden`,
/// where LLVM's thin link alone (no whole-program visibility) devirtualizes
/// `count_to`'s call: with the hierarchy left open by `--wpd-open`, that
/// call must stay indirect. In split objects, a unit the plan leaves alone
/// that defines vtables (shapes.cpp) is kept in two: its thin part as clang
/// wrote it, its vtables compiled beside it.
fn indirect_calls_pass_through(split: bool) -> Check {
    let dir = temp_dir("thinlto-indirect")?;
    let mut flags = vec!["-fvisibility=hidden"];
    if !split {
        flags.push("-fno-split-lto-unit");
    }
    let b = build("indirect", dir.path(), &flags)?;
    let report = dir.path().join("report.json");
    let report_flag = format!("-Wl,--wpd-report={}", report.display());
    // Closed-set dispatch off: main's deletes and use_shapes' calls (two
    // implementations each) stay indirect, so their modules pass through.
    // Dead slots off: the vtables' unused entries (the complete-object
    // destructors, Up::next's, whose only call is now direct) would have
    // shapes.cpp and counter.cpp rewritten.
    let (_, stderr) =
        link(&b, "prog", &["-Wl,--wpd-remarks", "-Wl,--wpd-closed-set=off", "-Wl,--wpd-no-dead-slots", &report_flag])?;
    if !stderr.contains("single-impl: devirtualized a call to _ZN2Up4nextEv") {
        return Err(format!("count_to's call was not devirtualized: {stderr}"));
    }
    // main.cpp (its deletes), use_shapes.cpp (two implementations) and
    // shapes.cpp change nothing. use_counter.cpp's call is devirtualized,
    // and counter.cpp keeps the hidden Up::next that call now names.
    let json = report_json(&report)?;
    let kept = u64::from(split);
    // (Plain files, no archive before them: the vtables go to the regular
    // LTO object.)
    if json["split_units_vtables_in_regular_lto"] != kept {
        return Err(format!("expected {kept} split unit(s) with vtables in the regular LTO object: {json}"));
    }
    if json["modules_unchanged"] != 3 || json["split_units_kept_in_two"] != kept || json["type_tests_dropped"] != 5 {
        return Err(format!(
            "expected 3 modules unchanged ({kept} kept in two) and 5 type tests dropped, report says {} ({}) and {}",
            json["modules_unchanged"], json["split_units_kept_in_two"], json["type_tests_dropped"]
        ));
    }
    let (prog, _) = link(&b, "open", &["-Wl,--wpd-open=*", "-Wl,--wpd-speculate=off", &report_flag])?;
    let json = report_json(&report)?;
    let kept = if split { 2 } else { 0 };
    if json["modules_unchanged"] != 5
        || json["split_units_kept_in_two"] != kept
        || json["call_sites"]["not_devirtualized"] != 5
    {
        return Err(format!(
            "open hierarchies: expected 5 modules unchanged ({kept} kept in two) and 5 calls left indirect, report says {} ({}) and {}",
            json["modules_unchanged"], json["split_units_kept_in_two"], json["call_sites"]["not_devirtualized"]
        ));
    }
    let body = disassembly(&prog, "count_to(Counter*, int)")?;
    if !body.lines().any(|l| l.contains("call") && l.contains('*')) {
        return Err(format!("count_to's call was devirtualized although wpd left it indirect:\n{body}"));
    }
    Ok(())
}

/// Split units in an archive, in a linker script or between `--start-lib`
/// and `--end-lib` are kept in two as well: two ThinLTO modules for LLVM's
/// thin link, one backend and one object where the unit stood (a member, a
/// script entry, a lazy object), which the real linker loads or not as it
/// would have loaded the unit. Linked each way with every hierarchy open
/// (nothing devirtualized), counter.cpp and shapes.cpp are kept in two and
/// the program prints what -O0 prints.
fn split_units_in_archives() -> Check {
    let dir = temp_dir("thinlto-split-archive")?;
    let d = dir.path();
    let b = build("indirect", d, &["-fvisibility=hidden"])?;
    let (main, rest): (Vec<PathBuf>, Vec<PathBuf>) = b.objects.iter().cloned().partition(|o| o.ends_with("main.o"));
    let lib = d.join("libshapes.a");
    run(Command::new(LLVM_AR).arg("rcs").arg(&lib).args(&rest))?;
    let report = d.join("report.json");
    let report_flag = format!("-Wl,--wpd-report={}", report.display());
    let open = ["-Wl,--wpd-open=*", "-Wl,--wpd-speculate=off", report_flag.as_str()];
    // Linker scripts naming the objects (INPUT) and the archive (GROUP),
    // which wpd-ld writes again with both objects in each unit's place.
    let quoted = |p: &PathBuf| format!("\"{}\"", p.display());
    let inputs = d.join("inputs.ld");
    let names: Vec<String> = rest.iter().map(quoted).collect();
    std::fs::write(&inputs, format!("INPUT ( {} )\n", names.join(" "))).map_err(|e| e.to_string())?;
    let group = d.join("group.ld");
    std::fs::write(&group, format!("GROUP ( {} )\n", quoted(&lib))).map_err(|e| e.to_string())?;
    let ways: [(&str, Vec<PathBuf>); 4] = [
        ("archive", main.iter().cloned().chain([lib.clone()]).collect()),
        ("script-input", main.iter().cloned().chain([inputs]).collect()),
        ("script-group", main.iter().cloned().chain([group]).collect()),
        (
            "start-lib",
            main.iter()
                .cloned()
                .chain([PathBuf::from("-Wl,--start-lib")])
                .chain(rest.iter().cloned())
                .chain([PathBuf::from("-Wl,--end-lib")])
                .collect(),
        ),
    ];
    for (way, objects) in ways {
        let linked = Build { dir: d.to_path_buf(), objects, expected: b.expected.clone() };
        let (prog, _) = link(&linked, way, &open)?;
        let json = report_json(&report)?;
        // One backend per unit: a unit kept in two is compiled by its thin
        // part's backend, vtables included, into the one object that
        // stands where the unit stood.
        let backends: Vec<&str> =
            json["backends"].as_array().into_iter().flatten().filter_map(|r| r["module"].as_str()).collect();
        if backends.len() != 1 + rest.len() || backends.iter().any(|m| m.ends_with(".vtables")) {
            return Err(format!("{way}: expected one backend per unit, none for vtables alone, ran {backends:?}"));
        }
        let lines = symbols(&prog, false)?;
        if defines(&lines, "vtable for ").is_empty() {
            return Err(format!("{way}: no vtable defined in the program"));
        }
        if json["modules_unchanged"] != 5
            || json["split_units_kept_in_two"] != 2
            || json["split_units_vtables_in_regular_lto"] != 0
        {
            return Err(format!(
                "{way}: expected 5 modules unchanged, counter.cpp and shapes.cpp kept in two side by side, report says {}, {} and {} in the regular LTO object",
                json["modules_unchanged"], json["split_units_kept_in_two"], json["split_units_vtables_in_regular_lto"]
            ));
        }
    }
    Ok(())
}

/// A split unit's regular part (its vtables, their type info) stays where
/// it is (`fixtures/thinlto/home`): LLVM's importer takes the functions that
/// name a vtable (`make_rule`, inlined into `main`) but never the vtable
/// itself, as in lld's own ThinLTO link, where that part goes into the
/// regular LTO module. The regular part's `available_externally` copy of
/// `Triple::step` does not keep the real one, in the thin part, from being
/// imported where a devirtualized call names it. Linked from an archive,
/// both with every hierarchy open (rule.cpp passes through, kept in two:
/// its regular part a module of its own) and closed (rule.cpp's own call
/// devirtualized, so it is rewritten: its two parts one module; `main`'s
/// calls of `step` inlined). LLVM prints what it imports
/// (`-print-imports`).
fn regular_parts_stay_home(extra: &[&str]) -> Check {
    let dir = temp_dir("thinlto-regular-home")?;
    let d = dir.path();
    let b = build("home", d, extra)?;
    let (main, rest): (Vec<PathBuf>, Vec<PathBuf>) = b.objects.iter().cloned().partition(|o| o.ends_with("main.o"));
    let lib = d.join("librule.a");
    run(Command::new(LLVM_AR).arg("rcs").arg(&lib).args(&rest))?;
    let inputs: Vec<&Path> = main.iter().map(PathBuf::as_path).chain([lib.as_path()]).collect();
    let report = d.join("report.json");
    let report_flag = format!("-Wl,--wpd-report={}", report.display());
    let imports = ["-Wl,-mllvm,-print-imports", report_flag.as_str()];
    let open = ["-Wl,--wpd-open=*", "-Wl,--wpd-speculate=off"];
    let split = extra.is_empty();
    for (way, flags) in [("open", &open[..]), ("closed", &[][..])] {
        let extra: Vec<&str> = imports.iter().chain(flags).copied().collect();
        let (prog, stderr) = link_inputs(&b, &inputs, way, &extra, None)?;
        let imported: Vec<&str> = stderr.lines().filter(|l| l.contains(": Import ")).collect();
        let names = |prefix: &str| -> Vec<&&str> {
            imported.iter().filter(|l| l.contains(&format!("main.cpp: Import {prefix}"))).collect()
        };
        if names("_Z9make_rulev ").is_empty() {
            return Err(format!("{way}: expected make_rule imported into main.cpp, LLVM imported {imported:?}"));
        }
        let vtables: Vec<&&str> = imported
            .iter()
            .filter(|l| ["_ZTV", "_ZTI", "_ZTS"].iter().any(|p| l.contains(&format!("Import {p}"))))
            .collect();
        if split && !vtables.is_empty() {
            return Err(format!("{way}: LLVM imported a split unit's vtables or type info: {vtables:?}"));
        }
        let json = report_json(&report)?;
        let (kept, single) = (&json["split_units_kept_in_two"], &json["call_sites"]["single_impl"]);
        if way == "open" && (*kept != u64::from(split) || *single != 0) {
            return Err(format!(
                "{way}: expected rule.cpp kept in two (split units only) and no call devirtualized, the report says {kept} kept, {single} single-implementation calls"
            ));
        }
        if way == "closed" {
            if *kept != 0 || *single != 4 {
                return Err(format!(
                    "{way}: expected rule.cpp rewritten and its call and main's three devirtualized, the report says {kept} kept in two, {single} single-implementation calls"
                ));
            }
            if names("_ZNK12_GLOBAL__N_16Triple4stepEl").is_empty() {
                return Err(format!("{way}: expected Triple::step imported into main.cpp, LLVM imported {imported:?}"));
            }
            let main = disassembly(&prog, "main")?;
            if main.lines().any(|l| l.contains("call") && l.contains("Triple::step")) {
                return Err(format!("{way}: main still calls Triple::step (not imported and inlined):\n{main}"));
            }
        }
    }
    Ok(())
}

/// Where the vtables of a split unit kept in two go (`linker-shim/src/placement.rs`,
/// `fixtures/thinlto/order`): into the link's one regular LTO object when no
/// archive comes before the unit, beside the unit otherwise. Square's
/// vtable (square.cpp) is the only reference to `Square::id`, defined in an
/// archive member with a static initializer. lld extracts that member when
/// the reference meets it, and initializers run in load order: with the
/// archive first, the vtables' object must stand right after square.cpp's,
/// not before it, or reg.cpp's initializer would run before square.cpp's.
/// Every call is left indirect (`--wpd-open=*`, `--wpd-speculate=off`) so
/// both units pass through; `make_square` is not inlined into `main`, where
/// LLVM would then call `Square::id` directly (a reference that extracts
/// the member earlier, in lld's own ThinLTO link as well).
fn vtables_placement() -> Check {
    let dir = temp_dir("thinlto-order")?;
    let d = dir.path();
    let src = repo_root().join("fixtures/thinlto/order");
    let lib = d.join("libreg.a");
    let reg = d.join("reg.o");
    run(Command::new(CLANGXX).args(["-O2", "-c"]).arg(src.join("archive/reg.cpp")).arg("-o").arg(&reg))?;
    run(Command::new(LLVM_AR).arg("rcs").arg(&lib).arg(&reg))?;
    let mut bitcode = Vec::new();
    let mut reference = Vec::new();
    for name in ["main", "square"] {
        let obj = d.join(format!("{name}.o"));
        run(Command::new(CLANGXX)
            .args(["-O2", "-flto=thin", "-fwhole-program-vtables", "-c"])
            .arg(src.join(format!("{name}.cpp")))
            .arg("-o")
            .arg(&obj))?;
        bitcode.push(obj);
        let o0 = d.join(format!("{name}.O0.o"));
        run(Command::new(CLANGXX).args(["-O0", "-c"]).arg(src.join(format!("{name}.cpp"))).arg("-o").arg(&o0))?;
        reference.push(o0);
    }
    let report = d.join("report.json");
    let flags = [
        "-Wl,--wpd-open=*".to_string(),
        "-Wl,--wpd-speculate=off".to_string(),
        format!("-Wl,--wpd-report={}", report.display()),
    ];
    let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
    for (way, archive_first, in_regular_lto) in [("archive-first", true, 0), ("archive-last", false, 1)] {
        let order = |objects: &[PathBuf]| -> Vec<PathBuf> {
            if archive_first {
                std::iter::once(lib.clone()).chain(objects.iter().cloned()).collect()
            } else {
                objects.iter().cloned().chain([lib.clone()]).collect()
            }
        };
        // The -O0 program, linked by lld in the same order.
        let ref_prog = d.join(format!("ref-{way}"));
        run(Command::new(CLANGXX).arg("-fuse-ld=lld").args(order(&reference)).arg("-o").arg(&ref_prog))?;
        let expected = run(&mut Command::new(&ref_prog))?.stdout;
        if !String::from_utf8_lossy(&expected).starts_with("main.cpp initialized\nsquare.cpp initialized\nreg.cpp") {
            return Err(format!("{way}: the -O0 program's initializers ran in another order: {expected:?}"));
        }
        let linked = Build { dir: d.to_path_buf(), objects: order(&bitcode), expected };
        link(&linked, way, &flags)?;
        let json = report_json(&report)?;
        if json["split_units_kept_in_two"] != 1 || json["split_units_vtables_in_regular_lto"] != in_regular_lto {
            return Err(format!(
                "{way}: expected square.cpp kept in two, its vtables {} the regular LTO object; report says {} and {}",
                if in_regular_lto == 1 { "in" } else { "not in" },
                json["split_units_kept_in_two"],
                json["split_units_vtables_in_regular_lto"]
            ));
        }
    }
    Ok(())
}

/// The real linker extracts the archive members the original link
/// extracted, where it did (`wpd::final_link::extraction`): `main.o libx.a factory.o`,
/// libx.a's impl.o loaded for factory.o's reference (lld resolves it
/// backwards, after factory.o) and util.o for main.o's call to util(),
/// which LTO inlines away. wpd devirtualizes main's call to Impl::f, a new
/// reference that would pull impl.o in before factory.o; without util's
/// reference, util.o would not load. Either would change which static
/// initializers run, or their order: the output must equal the -O0
/// program's, linked by lld in the same order (and by GNU ld and gold with
/// the archive last, their only working order).
fn archive_extraction_kept() -> Check {
    let dir = temp_dir("thinlto-extraction")?;
    let d = dir.path();
    let src = repo_root().join("fixtures/thinlto/extraction");
    let compile = |source: PathBuf, out: &str, lto: bool| -> Check<PathBuf> {
        let obj = d.join(out);
        let flags: &[&str] = if lto { &["-O2", "-flto=thin", "-fwhole-program-vtables"] } else { &["-O0"] };
        run(Command::new(CLANGXX).args(flags).arg("-c").arg(source).arg("-o").arg(&obj))?;
        Ok(obj)
    };
    let mut libs = Vec::new();
    for lto in [true, false] {
        let suffix = if lto { "" } else { ".O0" };
        let members = [
            compile(src.join("archive/impl.cpp"), &format!("impl{suffix}.o"), lto)?,
            compile(src.join("archive/util.cpp"), &format!("util{suffix}.o"), lto)?,
        ];
        let lib = d.join(format!("libx{suffix}.a"));
        run(Command::new(LLVM_AR).arg("rcs").arg(&lib).args(&members))?;
        libs.push(lib);
    }
    let (main, factory) =
        (compile(src.join("main.cpp"), "main.o", true)?, compile(src.join("factory.cpp"), "factory.o", true)?);
    let (main0, factory0) =
        (compile(src.join("main.cpp"), "main.O0.o", false)?, compile(src.join("factory.cpp"), "factory.O0.o", false)?);
    for (way, linker, archive_last) in [("lld", "lld", false), ("bfd", "bfd", true), ("gold", "gold", true)] {
        let order = |main: &PathBuf, lib: &PathBuf, factory: &PathBuf| -> Vec<PathBuf> {
            if archive_last {
                vec![main.clone(), factory.clone(), lib.clone()]
            } else {
                vec![main.clone(), lib.clone(), factory.clone()]
            }
        };
        let ref_prog = d.join(format!("ref-{way}"));
        run(Command::new(CLANGXX)
            .arg(format!("-fuse-ld={linker}"))
            .args(order(&main0, &libs[1], &factory0))
            .arg("-o")
            .arg(&ref_prog))?;
        let expected = run(&mut Command::new(&ref_prog))?.stdout;
        let text = String::from_utf8_lossy(&expected);
        let at = |file: &str| text.find(&format!("{file}.cpp initialized"));
        if at("util").is_none() || at("factory").is_none() || at("factory") > at("impl") {
            return Err(format!("{way}: the -O0 program did not load its files as this test needs: {text:?}"));
        }
        let linked = Build { dir: d.to_path_buf(), objects: order(&main, &libs[0], &factory), expected };
        let real = format!("-Wl,--wpd-linker=ld.{}", if linker == "lld" { "lld-19" } else { linker });
        let (_, stderr) = link(&linked, way, &["-Wl,--wpd-remarks", &real])?;
        if !stderr.contains("single-impl: devirtualized a call to _ZN4Impl1fEi") {
            return Err(format!("{way}: main's call to Impl::f was not devirtualized: {stderr}"));
        }
    }
    Ok(())
}

/// Split and unsplit units in one link, with virtual calls: LLVM's thin
/// link refuses a "partially split" index once a summary records a virtual
/// call, so every module wpd hands it carries one `EnableSplitLTOUnit`
/// value (here the more common one, split); the unsplit units the plan
/// leaves alone are rewritten with that flag rather than passed through.
fn mixed_split_flags() -> Check {
    let dir = temp_dir("thinlto-mixed-split")?;
    let d = dir.path();
    let b = build("indirect", d, &["-fvisibility=hidden"])?;
    let src = repo_root().join("fixtures/thinlto/indirect");
    let mut objects = Vec::new();
    for o in &b.objects {
        let stem = o.file_stem().and_then(|s| s.to_str()).unwrap_or_default().to_string();
        if stem == "main" || stem == "use_shapes" {
            let unsplit = d.join(format!("{stem}.nosplit.o"));
            run(Command::new(CLANGXX)
                .args(["-O2", "-flto=thin", "-fwhole-program-vtables", "-fvisibility=hidden", "-fno-split-lto-unit"])
                .arg("-c")
                .arg(src.join(format!("{stem}.cpp")))
                .arg("-o")
                .arg(&unsplit))?;
            objects.push(unsplit);
        } else {
            objects.push(o.clone());
        }
    }
    let mixed = Build { dir: d.to_path_buf(), objects, expected: b.expected.clone() };
    let report = d.join("report.json");
    let report_flag = format!("-Wl,--wpd-report={}", report.display());
    // Closed-set dispatch and dead slots off, as in
    // indirect_calls_pass_through.
    let (_, stderr) = link(
        &mixed,
        "prog",
        &["-Wl,--wpd-remarks", "-Wl,--wpd-closed-set=off", "-Wl,--wpd-no-dead-slots", &report_flag],
    )?;
    if !stderr.contains("single-impl: devirtualized a call to _ZN2Up4nextEv") {
        return Err(format!("count_to's call was not devirtualized: {stderr}"));
    }
    // shapes.cpp is kept in two; main.cpp and use_shapes.cpp, unsplit,
    // change nothing but are written again with the link's flag.
    let json = report_json(&report)?;
    if json["modules_unchanged"] != 1 || json["split_units_kept_in_two"] != 1 {
        return Err(format!(
            "expected only shapes.cpp unchanged (kept in two), report says {} ({})",
            json["modules_unchanged"], json["split_units_kept_in_two"]
        ));
    }
    link(&mixed, "open", &["-Wl,--wpd-open=*", "-Wl,--wpd-speculate=off"])?;
    Ok(())
}

/// `wpd backend` (one module on its own) writes split DWARF when asked.
fn backend_split_dwarf() -> Check {
    let dir = temp_dir("thinlto-dwo")?;
    let d = dir.path();
    let src = repo_root().join("fixtures/demo");
    let mut objs = Vec::new();
    for f in ["main.cpp", "shapes.cpp"] {
        let o = d.join(f.replace(".cpp", ".o"));
        run(Command::new(CLANGXX)
            .args(["-O2", "-g", "-flto=thin", "-fwhole-program-vtables", "-c"])
            .arg(src.join(f))
            .arg("-o")
            .arg(&o))?;
        objs.push(o);
    }
    let wpd = wpd_tests::wpd_bin()?;
    run(Command::new(&wpd).arg("summarize").args(&objs).arg("-o").arg(d.join("s")))?;
    run(Command::new(&wpd)
        .arg("thin-link")
        .arg(d.join("s/main.o.wpds"))
        .arg(d.join("s/shapes.o.wpds"))
        .arg("-o")
        .arg(d.join("p.wpdp")))?;
    let dwo = d.join("main.dwo");
    run(Command::new(&wpd)
        .arg("backend")
        .arg(&objs[0])
        .arg("--plan")
        .arg(d.join("p.wpdp"))
        .arg("-o")
        .arg(d.join("main.native.o"))
        .arg("--split-dwarf-file")
        .arg(&dwo))?;
    let sections = run(Command::new("readelf").arg("-S").arg(&dwo))?;
    if !String::from_utf8_lossy(&sections.stdout).contains(".debug_info.dwo") {
        return Err(format!("{} has no .debug_info.dwo", dwo.display()));
    }
    let object = std::fs::read(d.join("main.native.o")).map_err(|e| e.to_string())?;
    if !object.windows(b"main.dwo".len()).any(|w| w == b"main.dwo") {
        return Err("the object does not name its .dwo".into());
    }
    Ok(())
}

/// The final link runs lld's driver in wpd-ld's own process when the real
/// linker is the lld wpd-ld links as a library: the program is byte for byte
/// the one a separate ld.lld-19 process writes (`--wpd-spawn-linker`),
/// archives wpd-ld rebuilds (LLVM's archive writer) included, and lld's
/// errors still fail the link with lld's message and no output.
fn in_process_lld_equals_spawned() -> Check {
    let dir = temp_dir("thinlto-inproc")?;
    let mut b = build("import", dir.path(), &[])?;
    // One object in an archive: wpd-ld rebuilds it with the native member.
    let lib = b.dir.join("libop.a");
    let member = b.objects.pop().ok_or("no objects")?;
    run(Command::new(LLVM_AR).arg("rcs").arg(&lib).arg(&member))?;
    b.objects.push(lib);
    let mut ran_in_process = Vec::new();
    for (out, extra) in [("inproc", None), ("spawned", Some("-Wl,--wpd-spawn-linker"))] {
        let report = b.dir.join(format!("{out}.json"));
        let report_arg = format!("-Wl,--wpd-report={}", report.display());
        let mut args = vec![report_arg.as_str()];
        args.extend(extra);
        link(&b, out, &args)?;
        let json: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&report).map_err(|e| e.to_string())?).map_err(|e| e.to_string())?;
        ran_in_process.push(json["linker_in_process"].as_bool());
    }
    if ran_in_process != [Some(true), Some(false)] {
        return Err(format!("linker_in_process should be true, then false: {ran_in_process:?}"));
    }
    let (inproc, spawned) = (b.dir.join("inproc"), b.dir.join("spawned"));
    let a = std::fs::read(&inproc).map_err(|e| e.to_string())?;
    let c = std::fs::read(&spawned).map_err(|e| e.to_string())?;
    if a != c {
        return Err("the in-process link and the ld.lld-19 process wrote different programs".into());
    }
    // An undefined symbol in a native object: lld's error, in-process.
    let missing = b.dir.join("missing.cpp");
    std::fs::write(&missing, "void nowhere();\nvoid call_nowhere() { nowhere(); }\n").map_err(|e| e.to_string())?;
    let native = b.dir.join("missing.o");
    run(Command::new(CLANGXX).arg("-c").arg(&missing).arg("-o").arg(&native))?;
    let bad = b.dir.join("bad");
    let out = Command::new(CLANGXX)
        .arg("-flto=thin")
        .arg(format!("--ld-path={}", wpd_ld_bin()?.display()))
        .args(&b.objects)
        .arg(&native)
        .arg("-Wl,-u,_Z12call_nowherev")
        .arg("-o")
        .arg(&bad)
        .output()
        .map_err(|e| e.to_string())?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    if out.status.success() || !stderr.contains("undefined symbol: nowhere()") {
        return Err(format!("an undefined symbol must fail the link with lld's message: {stderr}"));
    }
    if bad.exists() {
        return Err("a failed link left its output behind".into());
    }
    Ok(())
}

fn walk(dir: &Path) -> Check<Vec<PathBuf>> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))? {
        let p = e.map_err(|e| e.to_string())?.path();
        if p.is_dir() {
            out.extend(walk(&p)?);
        } else {
            out.push(p);
        }
    }
    Ok(out)
}

/// wpd-ld starts LLVM's ThinLTO backends by estimated work, the most
/// first, where LLVM starts the largest bitcode first
/// (`fixtures/thinlto/schedule`): main.o, the smallest bitcode, imports and
/// inlines every step, so its backend has the most to do and starts first;
/// steps_a.o, the largest bitcode (a constant table), does not. The
/// report's `backends` lists every module once, in start order, its
/// estimated work never growing; the program prints what -O0 prints.
fn backends_start_by_work(extra: &[&str]) -> Check {
    let dir = temp_dir("thinlto-schedule")?;
    let b = build("schedule", dir.path(), extra)?;
    let size = |name: &str| -> Check<u64> {
        let path = b.dir.join(name);
        Ok(std::fs::metadata(&path).map_err(|e| format!("{}: {e}", path.display()))?.len())
    };
    if size("main.o")? >= size("steps_a.o")? {
        return Err("the fixture no longer makes steps_a.o the largest bitcode".into());
    }
    let report = dir.path().join("report.json");
    link(&b, "wpd", &["-Wl,--wpd-jobs=2", &format!("-Wl,--wpd-report={}", report.display())])?;
    let json = report_json(&report)?;
    let backends = json["backends"].as_array().ok_or("the report has no `backends`")?;
    let modules: Vec<&str> = backends.iter().map(|r| r["module"].as_str().unwrap_or("")).collect();
    let work: Vec<u64> = backends.iter().map(|r| r["estimated_work"].as_u64().unwrap_or(0)).collect();
    let thin: Vec<&&str> = modules.iter().filter(|m| !m.ends_with(".vtables")).collect();
    let mut expected: Vec<String> = b.objects.iter().map(|o| o.display().to_string()).collect();
    let mut got: Vec<String> = thin.iter().map(|m| m.to_string()).collect();
    expected.sort();
    got.sort();
    if got != expected {
        return Err(format!("the report's backends are {modules:?}, the link's modules {expected:?}"));
    }
    if !modules.first().is_some_and(|m| m.ends_with("/main.o")) {
        return Err(format!("main.o's backend did not start first: {modules:?} (estimated work {work:?})"));
    }
    if work.windows(2).any(|w| w[0] < w[1]) {
        return Err(format!("backends did not start by estimated work, the most first: {modules:?} {work:?}"));
    }
    if backends.iter().any(|r| r["ms"].as_f64().is_none_or(|ms| ms <= 0.0) || r["start_ms"].as_f64().is_none()) {
        return Err(format!("a backend without its times: {backends:?}"));
    }
    Ok(())
}

/// Copies of templates and inline functions every object instantiates go
/// where the backends have least to do (`fixtures/thinlto/spread`): the
/// linker keeps a_first.o's copy of each group, and wpd-ld compiles some of
/// them in b.o, c.o or main.o instead, as the report's `prevailing_copies`
/// says and the objects show. A static local's variable and a function in
/// a named section stay. With b.o and c.o in an archive nothing moves (a
/// member's definitions decide what the link extracts). Both programs print
/// what -O0 prints.
fn prevailing_copies_spread(extra: &[&str]) -> Check {
    let dir = temp_dir("thinlto-spread")?;
    let b = build("spread", dir.path(), extra)?;
    let report = dir.path().join("report.json");
    let temps = dir.path().join("temps");
    std::fs::create_dir_all(&temps).map_err(|e| e.to_string())?;
    let inputs: Vec<&Path> = b.objects.iter().map(PathBuf::as_path).collect();
    let flags = [format!("-Wl,--wpd-report={}", report.display()), "-Wl,--wpd-save-temps".into()];
    let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
    link_inputs(&b, &inputs, "wpd", &flags, Some(&temps))?;
    let json = report_json(&report)?;
    let copies = &json["prevailing_copies"];
    let moved = copies["moved"].as_array().ok_or("the report has no `prevailing_copies.moved`")?;
    if moved.is_empty() {
        return Err(format!("no group moved: {copies}"));
    }
    let first = b.objects[0].display().to_string();
    if !first.ends_with("a_first.o") {
        return Err(format!("a_first.o is not the first object: {first}"));
    }
    let objects = walk(&temps)?;
    let object_of = |module: &str| -> Check<&PathBuf> {
        let base = Path::new(module).file_name().ok_or("no file name")?.to_string_lossy().into_owned();
        objects
            .iter()
            .find(|p| p.file_name().is_some_and(|n| n.to_string_lossy() == base))
            .ok_or_else(|| format!("no native object for {module} in {objects:?}"))
    };
    for g in moved {
        let (group, from, to) = (g["group"].as_str(), g["from"].as_str(), g["to"].as_str());
        let (Some(group), Some(from), Some(to)) = (group, from, to) else {
            return Err(format!("a moved group without its names: {g}"));
        };
        if from != first || to == first {
            return Err(format!("{group} moved from {from} to {to}; the linker keeps {first}'s copy"));
        }
        if group.starts_with("_ZZ") || group.starts_with("_ZGV") || group.contains("in_section") {
            return Err(format!("{group} moved, but only groups of ODR functions outside named sections may"));
        }
        if g["instructions"].as_u64().is_none_or(|n| n == 0) {
            return Err(format!("{group} moved without a weight: {g}"));
        }
        // The group's key function (when its signature names one, as it
        // does but for constructor and destructor groups): defined in
        // `to`'s object, only referenced in `from`'s.
        if group.contains("C5E") || group.contains("D5E") {
            continue;
        }
        let defined_in = |module: &str| -> Check<bool> {
            let out = run(Command::new("nm").arg(object_of(module)?))?;
            Ok(String::from_utf8_lossy(&out.stdout).lines().any(|l| {
                let f: Vec<&str> = l.split_whitespace().collect();
                f.len() == 3 && f[2] == group && !matches!(f[1], "U" | "w" | "v")
            }))
        };
        if !defined_in(to)? || defined_in(from)? {
            return Err(format!("{group}: the report says {to}'s copy is compiled, the objects disagree"));
        }
    }
    let total: u64 = moved.iter().filter_map(|g| g["instructions"].as_u64()).sum();
    if copies["instructions_moved"].as_u64() != Some(total)
        || copies["movable_groups"].as_u64() < Some(moved.len() as u64)
    {
        return Err(format!("inconsistent counts: {copies}"));
    }
    // b.o and c.o from an archive: nothing moves.
    let lib = dir.path().join("libbc.a");
    let (members, mut rest): (Vec<&Path>, Vec<&Path>) =
        inputs.iter().partition(|o| o.ends_with("b.o") || o.ends_with("c.o"));
    run(Command::new(LLVM_AR).arg("rcs").arg(&lib).args(&members))?;
    rest.push(&lib);
    let report2 = dir.path().join("report2.json");
    link_inputs(&b, &rest, "wpd-archive", &[&format!("-Wl,--wpd-report={}", report2.display())], None)?;
    let copies = &report_json(&report2)?["prevailing_copies"];
    if copies["moved"].as_array().is_none_or(|m| !m.is_empty()) {
        return Err(format!("groups moved although archive members define them: {copies}"));
    }
    Ok(())
}

/// Copies of an inline function compiled with other flags do not move
/// (`fixtures/thinlto/spread_flags`): b.cpp, compiled with
/// `-fno-exceptions -ffast-math`, has copies of `run` (nounwind there: an
/// exception through it skips its cleanup) and `ratio` (folded to 1) that
/// do not run as a.cpp's, which the linker keeps. Nothing moves and the
/// program prints what -O0 prints. With b.cpp compiled as a.cpp is, the
/// copies move to it (the thin link would move them here too, but for the
/// flags).
fn spread_keeps_copies_of_other_flags() -> Check {
    let src = repo_root().join("fixtures/thinlto/spread_flags");
    let moved_groups = |b_flags: &[&str], label: &str| -> Check<Vec<String>> {
        let dir = temp_dir(&format!("thinlto-spread-flags-{label}"))?;
        let d = dir.path();
        let mut objects = Vec::new();
        let mut reference = Vec::new();
        for unit in ["a", "b", "main"] {
            let flags: &[&str] = if unit == "b" { b_flags } else { &[] };
            let (bc, o0) = (d.join(format!("{unit}.o")), d.join(format!("{unit}.o0.o")));
            let source = src.join(format!("{unit}.cpp"));
            let thin = ["-O2", "-flto=thin", "-fwhole-program-vtables", "-c"];
            run(Command::new(CLANGXX).args(thin).args(flags).arg(&source).arg("-o").arg(&bc))?;
            run(Command::new(CLANGXX).args(["-O0", "-c"]).args(flags).arg(&source).arg("-o").arg(&o0))?;
            objects.push(bc);
            reference.push(o0);
        }
        run(Command::new(CLANGXX).args(&reference).arg("-o").arg(d.join("ref")))?;
        let expected = run(&mut Command::new(d.join("ref")))?.stdout;
        let b = Build { dir: d.to_path_buf(), objects, expected };
        let report = d.join("report.json");
        let inputs: Vec<&Path> = b.objects.iter().map(PathBuf::as_path).collect();
        link_inputs(&b, &inputs, "wpd", &[&format!("-Wl,--wpd-report={}", report.display())], None)?;
        let moved = report_json(&report)?["prevailing_copies"]["moved"].clone();
        let groups = moved.as_array().ok_or("the report has no `prevailing_copies.moved`")?;
        Ok(groups.iter().filter_map(|g| g["group"].as_str().map(str::to_string)).collect())
    };
    let ours = |groups: &[String]| groups.iter().any(|g| g == "_Z3runi" || g == "_Z5ratiod");
    let moved = moved_groups(&["-fno-exceptions", "-ffast-math"], "other")?;
    if ours(&moved) {
        return Err(format!("copies compiled with other flags moved: {moved:?}"));
    }
    let moved = moved_groups(&[], "same")?;
    if !(moved.iter().any(|g| g == "_Z3runi") && moved.iter().any(|g| g == "_Z5ratiod")) {
        return Err(format!("with the same flags, run and ratio should move to b.cpp's module: {moved:?}"));
    }
    Ok(())
}

/// A check taking the extra compile flags of its objects.
type FlagsCheck = fn(&[&str]) -> Check;

/// A check run on split LTO units (clang's default with whole-program
/// vtables) and on `-fno-split-lto-unit` objects: two trials, `NAME_split`
/// and `NAME_nosplit`.
/// A call the thin link planned to dispatch, left indirect by the backend
/// (`WPD_TEST_REFUSE_DISPATCH_IN`, as when LLVM refuses a rewrite), may
/// load a slot the plan made dead: wpd-ld plans the link again without
/// dead slots instead of failing it, warns, records why in the report, and
/// the program prints what -O0 prints (`fixtures/thinlto/refused_dispatch`).
fn refused_dispatch_links_without_dead_slots(extra: &[&str]) -> Check {
    let tmp = temp_dir("thinlto-refused")?;
    let b = build("refused_dispatch", tmp.path(), extra)?;
    let report = |name: &str| b.dir.join(format!("{name}.report.json"));
    // As planned: total_area's call dispatched, perimeter's slots dead.
    link(&b, "planned", &[&format!("-Wl,--wpd-report={}", report("planned").display())])?;
    let planned = report_json(&report("planned"))?;
    if planned.pointer("/dead_slots/slots").and_then(serde_json::Value::as_u64).unwrap_or(0) == 0 {
        return Err(format!("no dead slot to lose: {}", planned["dead_slots"]));
    }
    let prog = b.dir.join("refused");
    let out = run(Command::new(CLANGXX)
        .env("WPD_TEST_REFUSE_DISPATCH_IN", "_Z10total_areaPKP5Shapei")
        .args(["-flto=thin", "-Wl,--lto-whole-program-visibility"])
        .arg(format!("--ld-path={}", wpd_ld_bin()?.display()))
        .arg(format!("-Wl,--wpd-report={}", report("refused").display()))
        .args(extra)
        .args(&b.objects)
        .arg("-o")
        .arg(&prog))?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    if !stderr.contains("it stays indirect, and the plan removed slots it may load")
        || !stderr.contains("linking without dead slots instead")
    {
        return Err(format!("no warning of the plan made again: {stderr}"));
    }
    prints_as_o0(&b, &prog, "refused")?;
    let r = report_json(&report("refused"))?;
    let off = r.pointer("/dead_slots/off").and_then(serde_json::Value::as_str).unwrap_or("");
    if r.pointer("/dead_slots/slots").and_then(serde_json::Value::as_u64) != Some(0)
        || !off.contains("a call planned to load no slot stayed indirect")
    {
        return Err(format!("dead slots not off, or not said why: {}", r["dead_slots"]));
    }
    // The refused call is the one disagreement between plan and backend;
    // main's call of the same slot is still dispatched.
    let mismatches = r["mismatches"].as_array().map_or(0, Vec::len);
    let dispatched = r.pointer("/call_sites/closed_set").and_then(serde_json::Value::as_u64).unwrap_or(0);
    if mismatches != 1 || dispatched == 0 {
        return Err(format!("{mismatches} mismatches and {dispatched} dispatched calls: {}", r["mismatches"]));
    }
    Ok(())
}

/// The functions `-mllvm -print-imports` says the backend of `module` (a
/// source file's name) imported, and the variables, in `stderr`.
fn imports_into(stderr: &str, module: &str) -> (BTreeSet<String>, BTreeSet<String>) {
    let (mut functions, mut variables) = (BTreeSet::new(), BTreeSet::new());
    for line in stderr.lines() {
        let Some((into, rest)) = line.split_once(": Import ") else { continue };
        if !into.ends_with(module) {
            continue;
        }
        let name = rest.split(" from ").next().unwrap_or(rest).to_string();
        // The fixture's variables: `scale`, a function's statics (`_ZZ`)
        // and string constants.
        if name == "scale" || name.starts_with("_ZZ") || name.starts_with(".str") {
            variables.insert(name);
        } else {
            functions.insert(name);
        }
    }
    (functions, variables)
}

/// A file with a vtable and no external definition (`tests.cpp`) is one
/// clang writes as a regular LTO module, even under `-flto=thin`: a split
/// unit needs a name, taken from an external definition. LLVM's own link
/// compiles it in its regular LTO partition, which imports no function.
/// wpd-ld compiles it in a ThinLTO backend of its own and imports no
/// function into it either (before, it imported and inlined the registry's
/// functions: Catch2's tests took 16% more `.text` than lld's link), but
/// it does import the read-only variable `scale` (the thin link gives every
/// reader of one a copy); `main.cpp` still imports functions.
fn fallback_module_imports_no_function() -> Check {
    let tmp = temp_dir("thinlto-fallback")?;
    let b = build("fallback", tmp.path(), &[])?;
    // The summaries say which module clang wrote so: tests.o, not main.o,
    // nor a -flto=full object (flagged ThinLTO = 0 too, but with external
    // definitions).
    let full = b.dir.join("registry.full.o");
    run(Command::new(CLANGXX)
        .args(["-O2", "-flto=full", "-fwhole-program-vtables", "-c"])
        .arg(repo_root().join("fixtures/thinlto/fallback/registry.cpp"))
        .arg("-o")
        .arg(&full))?;
    let sums = b.dir.join("summaries");
    let objects = [b.dir.join("tests.o"), b.dir.join("main.o"), full];
    run(Command::new(wpd_bin()?).arg("summarize").arg("-o").arg(&sums).args(&objects))?;
    for (object, want) in objects.iter().zip([true, false, false]) {
        let name = object.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let dump = run(Command::new(wpd_bin()?).arg("dump").arg(sums.join(format!("{name}.wpds"))))?;
        let got = String::from_utf8_lossy(&dump.stdout).contains("\"thin_fallback\": true");
        if got != want {
            return Err(format!("{name}: thin_fallback {got}, expected {want}"));
        }
    }
    let lld = run(Command::new(CLANGXX)
        .args(["-flto=thin", "-fuse-ld=lld", "-Wl,--lto-whole-program-visibility", "-Wl,-mllvm,-print-imports"])
        .args(&b.objects)
        .arg("-o")
        .arg(b.dir.join("lld")))?;
    let (lld_functions, _) = imports_into(&String::from_utf8_lossy(&lld.stderr), "tests.cpp");
    if !lld_functions.is_empty() {
        return Err(format!("lld's link imported functions into tests.cpp, no regular LTO module: {lld_functions:?}"));
    }
    let (_, stderr) = link(&b, "wpd", &["-Wl,-mllvm,-print-imports"])?;
    let (functions, variables) = imports_into(&stderr, "tests.cpp");
    if !functions.is_empty() {
        return Err(format!("functions imported into tests.cpp: {functions:?}\n{stderr}"));
    }
    if !variables.contains("scale") {
        return Err(format!("the read-only variable scale was not imported into tests.cpp: {variables:?}\n{stderr}"));
    }
    let (main_functions, _) = imports_into(&stderr, "main.cpp");
    if !main_functions.contains("_Z5weighi") {
        return Err(format!("main.cpp no longer imports weigh: {main_functions:?}\n{stderr}"));
    }
    Ok(())
}

/// `Square::sides` is weak in `square.cpp`, a split unit, whose vtable
/// part then holds an `available_externally` copy of it, and strong in
/// `native.cpp`, compiled without LTO: LLVM 19's thin link stops on the
/// pair (`Interposable and available_externally/linkonce_odr/weak_odr
/// symbol`), lld's link with it. wpd-ld, with or without whole-program
/// visibility, rewrites the unit whole (its copy merged away) instead of
/// passing its two parts through, and the program runs the native body
/// (`fixtures/thinlto/weak_native`; found by the fuzzer's `weak-override`
/// shape, seed 116004).
fn weak_function_overridden_natively() -> Check {
    weak_overridden_natively("weak_native", "sides 4, weak square")
}

/// The same corner through a thunk: `A::side` overrides a function of A's
/// second base, so A's vtable holds a this-adjusting thunk, weak like
/// `side` in the unit of A's vtable, of which clang puts an
/// `available_externally` copy in main's own unit, which builds a vtable
/// of a class derived from A. The native strong `side` prevails; lld's
/// link stops on the thunk's two copies, and so did wpd-ld's, its note
/// blaming `--thinlto-index-only`. wpd-ld gives LLVM the weak copy as the
/// linker-redefined one, and the program runs the native body
/// (`fixtures/thinlto/weak_native_thunk`).
fn weak_thunk_overridden_natively() -> Check {
    weak_overridden_natively("weak_native_thunk", "side 2")
}

/// Builds `fixture` (its `native*.cpp` without LTO), checks that the `-O0`
/// program prints `expected` and that lld's ThinLTO link stops on the weak
/// copy, then links through wpd-ld without and with whole-program
/// visibility, each program printing what `-O0` prints.
fn weak_overridden_natively(fixture: &str, expected: &str) -> Check {
    let tmp = temp_dir(&format!("thinlto-{fixture}"))?;
    let d = tmp.path();
    let b = build(fixture, d, &[])?;
    if !String::from_utf8_lossy(&b.expected).contains(expected) {
        return Err(format!("-O0 prints {:?}", String::from_utf8_lossy(&b.expected)));
    }
    let lld = run_raw(
        Command::new(CLANGXX).args(["-flto=thin", "-fuse-ld=lld"]).args(&b.objects).arg("-o").arg(d.join("lld")),
    )?;
    if lld.status.success() || !String::from_utf8_lossy(&lld.stderr).contains("Interposable and available_externally") {
        return Err(format!(
            "lld's link no longer stops on the weak copy (the corner is gone): {}",
            String::from_utf8_lossy(&lld.stderr)
        ));
    }
    // Without whole-program visibility the plan leaves the unit alone.
    let mut cmd = Command::new(CLANGXX);
    cmd.arg("-flto=thin").arg(format!("--ld-path={}", wpd_ld_bin()?.display()));
    run(cmd.args(&b.objects).arg("-o").arg(d.join("open")))?;
    prints_as_o0(&b, &d.join("open"), "the link without whole-program visibility")?;
    link(&b, "closed", &[])?;
    Ok(())
}

/// A `-static` link loads glibc's and libstdc++'s archives: the C and C++
/// runtime, not native code of the program, so dead slots stay on. (Debian's
/// `libm.a` is a script naming `libm-2.36.a`, whose members have no debug
/// information: taken for unknown native code, they turned elimination off.)
fn static_link_keeps_dead_slots(extra: &[&str]) -> Check {
    let tmp = temp_dir("thinlto-static")?;
    let b = build("refused_dispatch", tmp.path(), extra)?;
    let report = b.dir.join("static.report.json");
    link(&b, "static", &["-static", &format!("-Wl,--wpd-report={}", report.display())])?;
    let r = report_json(&report)?;
    let slots = r.pointer("/dead_slots/slots").and_then(serde_json::Value::as_u64).unwrap_or(0);
    if slots == 0 || !r["dead_slots"]["off"].is_null() {
        return Err(format!("a static link lost its dead slots: {}", r["dead_slots"]));
    }
    Ok(())
}

fn split_and_nosplit(name: &str, check: FlagsCheck) -> [libtest_mimic::Trial; 2] {
    [
        libtest_mimic::Trial::test(format!("{name}_split"), move || check(&[]).map_err(Into::into)),
        libtest_mimic::Trial::test(format!("{name}_nosplit"), move || {
            check(&["-fno-split-lto-unit"]).map_err(Into::into)
        }),
    ]
}

fn main() {
    let args = libtest_mimic::Arguments::from_args();
    let mut trials = vec![
        libtest_mimic::Trial::test("mixed_bitcode_kinds", || mixed_bitcode_kinds().map_err(Into::into)),
        libtest_mimic::Trial::test("indirect_calls_pass_through_split", || {
            indirect_calls_pass_through(true).map_err(Into::into)
        }),
        libtest_mimic::Trial::test("indirect_calls_pass_through_nosplit", || {
            indirect_calls_pass_through(false).map_err(Into::into)
        }),
        libtest_mimic::Trial::test("split_units_in_archives", || split_units_in_archives().map_err(Into::into)),
        libtest_mimic::Trial::test("mixed_split_flags", || mixed_split_flags().map_err(Into::into)),
        libtest_mimic::Trial::test("vtables_placement", || vtables_placement().map_err(Into::into)),
        libtest_mimic::Trial::test("archive_extraction_kept", || archive_extraction_kept().map_err(Into::into)),
        libtest_mimic::Trial::test("backend_split_dwarf", || backend_split_dwarf().map_err(Into::into)),
        libtest_mimic::Trial::test("in_process_lld_equals_spawned", || {
            in_process_lld_equals_spawned().map_err(Into::into)
        }),
        libtest_mimic::Trial::test("fallback_module_imports_no_function", || {
            fallback_module_imports_no_function().map_err(Into::into)
        }),
        libtest_mimic::Trial::test("weak_function_overridden_natively", || {
            weak_function_overridden_natively().map_err(Into::into)
        }),
        libtest_mimic::Trial::test("weak_thunk_overridden_natively", || {
            weak_thunk_overridden_natively().map_err(Into::into)
        }),
        libtest_mimic::Trial::test("spread_keeps_copies_of_other_flags", || {
            spread_keeps_copies_of_other_flags().map_err(Into::into)
        }),
    ];
    let both: [(&str, FlagsCheck); 7] = [
        ("imports_devirtualized_callee", imports_devirtualized_callee),
        ("static_link_keeps_dead_slots", static_link_keeps_dead_slots),
        ("refused_dispatch_links_without_dead_slots", refused_dispatch_links_without_dead_slots),
        ("one_copy_dead_code_internalized", one_copy_dead_code_internalized),
        ("backends_start_by_work", backends_start_by_work),
        ("prevailing_copies_spread", prevailing_copies_spread),
        ("regular_parts_stay_home", regular_parts_stay_home),
    ];
    for (name, check) in both {
        trials.extend(split_and_nosplit(name, check));
    }
    libtest_mimic::run(&args, trials).exit();
}
