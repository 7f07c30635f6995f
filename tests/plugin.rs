//! The linker plugin (`libwpd_plugin.so`) on its own: a good link through
//! GNU ld, gold and mold leaves no temporary file and writes a report with
//! the output's sizes; a broken bitcode file and an unknown plugin option
//! fail the link with one line naming them, through the linker's message
//! callback. A program sharing names with libstdc++.so (a `<sstream>`
//! VTT, an `int` exception's typeinfo, template instantiations GNU ld
//! exports for the runtime) still has dead slots through the plugin, as
//! through wpd-ld. Under mold, which shows the plugin no native file, the
//! plugin scans the native members of the archives on mold's command
//! line. A link given `-flto`, where clang loads LLVMgold.so
//! ahead of wpd (so LLVM's LTO takes every bitcode file), says so. (`tests/e2e.rs` links every fixture through the plugin;
//! `tests/link_model.rs` the link-model cases; `tests/realworld.rs`
//! leveldb.)

use std::path::{Path, PathBuf};
use std::process::Command;
use wpd_tests::link::{wpd_ld_bin, wpd_plugin_so};
use wpd_tests::{CLANGXX, Check, TempDir, demo_objects, demo_reference, repo_root, run, run_raw, temp_dir};

const LINKERS: [&str; 3] = ["bfd", "gold", "mold"];

fn plugin_link(linker: &str, tmp: &Path, extra: &[&str], inputs: &[&Path], out: &Path) -> Check<std::process::Output> {
    run_raw(
        Command::new(CLANGXX)
            .env("TMPDIR", tmp)
            .arg(format!("-fuse-ld={linker}"))
            .arg(format!("-Wl,-plugin,{}", wpd_plugin_so()?.display()))
            .args(extra)
            .args(inputs)
            .arg("-o")
            .arg(out),
    )
}

/// A scratch folder with the demo's bitcode objects and what its -O0
/// build prints.
/// Compiles `src` to ThinLTO bitcode with whole-program vtables.
fn thin_object(src: &Path, obj: &Path) -> Check {
    run(Command::new(CLANGXX).args(["-O2", "-flto=thin", "-fwhole-program-vtables", "-c"]).arg(src).arg("-o").arg(obj))
        .map(drop)
}

fn demo(label: &str) -> Check<(TempDir, Vec<PathBuf>, Vec<u8>)> {
    let t = temp_dir(label)?;
    let objects = demo_objects(t.path())?;
    let want = demo_reference(t.path())?;
    Ok((t, objects, want))
}

/// Links `inputs` through the plugin with `extra` and a report, checks
/// that the program prints `want`, and returns the report.
fn checked_link(
    linker: &str,
    scratch: &Path,
    extra: &[&str],
    inputs: &[&Path],
    prog: &Path,
    want: &[u8],
) -> Check<serde_json::Value> {
    let report = prog.with_extension("json");
    let report_flag = format!("-Wl,-plugin-opt=wpd-report={}", report.display());
    let args: Vec<&str> = extra.iter().copied().chain([report_flag.as_str()]).collect();
    let o = plugin_link(linker, scratch, &args, inputs, prog)?;
    if !o.status.success() {
        return Err(format!("[{linker}] link failed: {}", String::from_utf8_lossy(&o.stderr)));
    }
    if run(&mut Command::new(prog))?.stdout != want {
        return Err(format!("[{linker}] the program's output differs from -O0"));
    }
    serde_json::from_slice(&std::fs::read(&report).map_err(|e| e.to_string())?).map_err(|e| e.to_string())
}

fn clean_links() -> Check {
    let (t, objects, want) = demo("plugin-clean")?;
    let inputs: Vec<&Path> = objects.iter().map(PathBuf::as_path).collect();
    for linker in LINKERS {
        let scratch = t.path().join(format!("tmp-{linker}"));
        std::fs::create_dir_all(&scratch).map_err(|e| e.to_string())?;
        let prog = t.path().join(format!("prog-{linker}"));
        let r = checked_link(linker, &scratch, &["-Wl,-plugin-opt=whole-program-visibility"], &inputs, &prog, &want)?;
        let left: Vec<_> = std::fs::read_dir(&scratch).map_err(|e| e.to_string())?.flatten().collect();
        if !left.is_empty() {
            return Err(format!("[{linker}] the plugin left {} files in TMPDIR", left.len()));
        }
        if r["size"]["output"]["sections"][".text"].as_u64().unwrap_or(0) == 0 {
            return Err(format!("[{linker}] the report has no output size: {}", r["size"]));
        }
        if r["call_sites"]["single_impl"].as_u64().unwrap_or(0) == 0 {
            return Err(format!("[{linker}] nothing devirtualized: {}", r["call_sites"]));
        }
        // The linker that loaded the plugin, by the name it runs under.
        let named = r["linker"].as_str().unwrap_or_default();
        if !named.ends_with(" (plugin)") || !named.contains(linker) {
            return Err(format!("[{linker}] the report names the linker {named:?}"));
        }
    }
    Ok(())
}

/// Split units the plan leaves alone are kept in two through the plugin
/// too (two modules for LLVM's thin link, compiled by one backend into the
/// one object handed to the linker), from an archive: `fixtures/thinlto/indirect` with every
/// hierarchy open, so nothing is devirtualized and counter.cpp and
/// shapes.cpp are both kept in two. The program prints what -O0 prints.
fn split_units_kept_in_two() -> Check {
    let t = temp_dir("plugin-split")?;
    let d = t.path();
    let src = repo_root().join("fixtures/thinlto/indirect");
    let units = ["main", "counter", "shapes", "use_counter", "use_shapes"];
    let mut objects = Vec::new();
    for u in units {
        let obj = d.join(format!("{u}.o"));
        run(Command::new(CLANGXX)
            .args(["-O2", "-flto=thin", "-fwhole-program-vtables", "-fvisibility=hidden", "-c"])
            .arg(src.join(format!("{u}.cpp")))
            .arg("-o")
            .arg(&obj))?;
        objects.push(obj);
    }
    let lib = d.join("libindirect.a");
    run(Command::new("llvm-ar-19").arg("rcs").arg(&lib).args(&objects[1..]))?;
    let reference = d.join("ref");
    run(Command::new(CLANGXX)
        .arg("-O0")
        .arg("-fvisibility=hidden")
        .args(units.map(|u| src.join(format!("{u}.cpp"))))
        .arg("-o")
        .arg(&reference))?;
    let want = run(&mut Command::new(&reference))?.stdout;
    for linker in LINKERS {
        let prog = d.join(format!("prog-{linker}"));
        let open = [
            "-Wl,-plugin-opt=whole-program-visibility",
            "-Wl,-plugin-opt=wpd-open=*",
            "-Wl,-plugin-opt=wpd-speculate=off",
        ];
        let r = checked_link(linker, d, &open, &[&objects[0], &lib], &prog, &want)?;
        if r["split_units_kept_in_two"] != 2 {
            return Err(format!(
                "[{linker}] expected 2 split units kept in two, report says {}",
                r["split_units_kept_in_two"]
            ));
        }
    }
    Ok(())
}

/// LLVM's code generation flags reach the plugin's backends: the demo's
/// loops aligned to 4 KiB make `.text` larger (`-plugin-opt=-` options go
/// to LLVM's parser, which knows the flags LLVM's tools register, as
/// LLVMgold's does).
fn code_generation_flags() -> Check {
    let (t, objects, want) = demo("plugin-codegen-flags")?;
    let inputs: Vec<&Path> = objects.iter().map(PathBuf::as_path).collect();
    let text = |r: &serde_json::Value| r["size"]["output"]["sections"][".text"].as_u64().unwrap_or(0);
    for linker in LINKERS {
        let plain = checked_link(linker, t.path(), &[], &inputs, &t.path().join(format!("plain-{linker}")), &want)?;
        let flag = "-Wl,-plugin-opt=-align-loops=4096";
        let aligned =
            checked_link(linker, t.path(), &[flag], &inputs, &t.path().join(format!("aligned-{linker}")), &want)?;
        if text(&aligned) <= text(&plain) {
            return Err(format!("[{linker}] {flag}: .text {} bytes, without it {}", text(&aligned), text(&plain)));
        }
    }
    Ok(())
}

/// `-plugin-opt=-function-sections=0` (and `-data-sections=0`) reach the
/// plugin's code generation as wpd-ld's: the objects it keeps
/// (`save-temps`) have a `.text.<function>` section per function outside a
/// comdat group by default, and none with the option.
fn section_options() -> Check {
    let (t, objects, want) = demo("plugin-sections")?;
    let inputs: Vec<&Path> = objects.iter().map(PathBuf::as_path).collect();
    // The `.text.<name>` sections of the objects the link kept, counted.
    let function_sections = |extra: &[&str], label: &str| -> Check<usize> {
        let prog = t.path().join(label);
        // The plugin keeps its temporary folder in TMPDIR, here its own.
        let scratch = t.path().join(format!("tmp-{label}"));
        std::fs::create_dir_all(&scratch).map_err(|e| e.to_string())?;
        let mut args = vec!["-Wl,-plugin-opt=save-temps"];
        args.extend(extra);
        let o = plugin_link("bfd", &scratch, &args, &inputs, &prog)?;
        if !o.status.success() || run(&mut Command::new(&prog))?.stdout != want {
            let err = String::from_utf8_lossy(&o.stderr);
            return Err(format!("{label}: the link failed or its program differs from -O0: {err}"));
        }
        let mut n = 0;
        let mut objects = 0;
        let mut dirs = vec![scratch];
        while let Some(dir) = dirs.pop() {
            for entry in std::fs::read_dir(&dir).map_err(|e| format!("{}: {e}", dir.display()))? {
                let path = entry.map_err(|e| e.to_string())?.path();
                if path.is_dir() {
                    dirs.push(path);
                } else if path.extension().is_some_and(|x| x == "o") {
                    // Sections of functions that are not in a comdat group
                    // (an inline function has a section of its own anyway).
                    let sections = run(Command::new("readelf").arg("-SW").arg(&path))?.stdout;
                    n += String::from_utf8_lossy(&sections)
                        .lines()
                        .filter(|l| l.contains(" .text._Z"))
                        .filter(|l| {
                            !l.split_whitespace().any(|w| w.len() <= 4 && w.starts_with("AX") && w.contains('G'))
                        })
                        .count();
                    objects += 1;
                }
            }
        }
        if objects == 0 {
            return Err(format!("{label}: save-temps kept no object"));
        }
        Ok(n)
    };
    let on = function_sections(&[], "sections-default")?;
    let off = function_sections(&["-Wl,-plugin-opt=-function-sections=0", "-Wl,-plugin-opt=-data-sections=0"], "off")?;
    if on == 0 || off != 0 {
        return Err(format!(".text.<function> sections: {on} by default, {off} with -function-sections=0"));
    }
    Ok(())
}

/// wpd-ld and the plugin read `-plugin-opt=` with one parser: the same
/// options (code generation flags, sections, wpd's own) give the same
/// settings in both reports, and a link whose programs print what -O0
/// prints.
fn same_settings() -> Check {
    let (t, objects, want) = demo("plugin-same-settings")?;
    let inputs: Vec<&Path> = objects.iter().map(PathBuf::as_path).collect();
    let opts = [
        "O1",
        "mcpu=x86-64-v2",
        "-function-sections=0",
        "-data-sections=0",
        "-emulated-tls",
        "-debugger-tune=gdb",
        "-align-loops=32",
        "whole-program-visibility",
        "wpd-speculate=2",
        "wpd-open=_ZTV6Circle",
        "wpd-remarks=none",
    ];
    let flags: Vec<String> = opts.iter().map(|o| format!("-Wl,-plugin-opt={o}")).collect();
    let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
    let plugin = checked_link("bfd", t.path(), &flags, &inputs, &t.path().join("via-plugin"), &want)?;
    let report = t.path().join("via-wpd-ld.json");
    let prog = t.path().join("via-wpd-ld");
    run(Command::new(CLANGXX)
        .arg("-flto=thin")
        .arg(format!("--ld-path={}", wpd_ld_bin()?.display()))
        .args(&flags)
        .arg(format!("-Wl,--wpd-report={}", report.display()))
        .args(&inputs)
        .arg("-o")
        .arg(&prog))?;
    if run(&mut Command::new(&prog))?.stdout != want {
        return Err("wpd-ld's program differs from -O0".into());
    }
    let wpd_ld: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&report).map_err(|e| e.to_string())?).map_err(|e| e.to_string())?;
    // clang adds `thinlto` and `mcpu=` for wpd-ld, which the options above
    // set alike (a report does not hold its own path).
    let (a, b) = (plugin["settings"].clone(), wpd_ld["settings"].clone());
    if a.is_null() || a != b {
        return Err(format!("settings differ:\n  plugin: {a}\n  wpd-ld: {b}"));
    }
    if a["function_sections"] != false || a["machine"]["debugger_tuning"] != "gdb" || a["speculate"] != 2 {
        return Err(format!("the options did not reach the settings: {a}"));
    }
    Ok(())
}

/// A broken bitcode file, an unknown option, index files and a report
/// that cannot be written: each an error naming it, under every linker.
fn refused() -> Check {
    let t = temp_dir("plugin-refused")?;
    let objects = demo_objects(t.path())?;
    let bad = t.path().join("broken.o");
    // Bitcode magic, then nothing a module could be read from.
    std::fs::write(&bad, b"BC\xc0\xde\x35\x14\x00\x00").map_err(|e| e.to_string())?;
    for linker in LINKERS {
        let out = t.path().join(format!("never-{linker}"));
        let o = plugin_link(linker, t.path(), &[], &[&objects[0], &bad], &out)?;
        let err = String::from_utf8_lossy(&o.stderr);
        if o.status.success() || !err.lines().any(|l| l.contains("wpd plugin: ") && l.contains("broken.o: ")) {
            return Err(format!("[{linker}] a broken bitcode file: {:?}, stderr {err}", o.status));
        }
        let o = plugin_link(linker, t.path(), &["-Wl,-plugin-opt=wpd-frobnicate"], &[&objects[0], &objects[1]], &out)?;
        let err = String::from_utf8_lossy(&o.stderr);
        if o.status.success() || !err.contains("unsupported plugin option -plugin-opt=wpd-frobnicate") || out.exists() {
            return Err(format!("[{linker}] an unknown plugin option: {:?}, stderr {err}", o.status));
        }
        // Index files for clang's backends are wpd-ld's: the plugin says so
        // rather than link as if the option were not there.
        let o = plugin_link(
            linker,
            t.path(),
            &["-Wl,-plugin-opt=thinlto-index-only=objects.txt"],
            &[&objects[0], &objects[1]],
            &out,
        )?;
        let err = String::from_utf8_lossy(&o.stderr);
        if o.status.success() || !err.contains("link through wpd-ld") || out.exists() {
            return Err(format!("[{linker}] -plugin-opt=thinlto-index-only: {:?}, stderr {err}", o.status));
        }
        // A report that cannot be written fails the link, and leaves no
        // program: GNU ld and gold ignore an error of the plugin's cleanup,
        // so the report is written before the objects go back.
        let nowhere = t.path().join("no-such-dir").join("r.json");
        let flag = format!("-Wl,-plugin-opt=wpd-report={}", nowhere.display());
        let o = plugin_link(linker, t.path(), &[&flag], &[&objects[0], &objects[1]], &out)?;
        let err = String::from_utf8_lossy(&o.stderr);
        if o.status.success() || !err.contains("no-such-dir/r.json") || out.exists() {
            return Err(format!("[{linker}] an unwritable report: {:?}, stderr {err}", o.status));
        }
    }
    Ok(())
}

/// A program whose only shared library is the C++ runtime, sharing names
/// with it the way real programs do: `std::stringstream` (its VTT and
/// construction vtables are libstdc++.so's, and GNU ld exports the
/// program's copies of the instantiations libstdc++.so also defines), an
/// `int` thrown and caught (its typeinfo is the runtime's). No call loads
/// `describe`, so its entries must be dead through the plugin of GNU ld,
/// gold and mold as through wpd-ld (mold shows the plugin no native file:
/// the plugin reads them from mold's command line), and the program must
/// print what its -O0 build prints.
fn dead_slots_beside_the_runtime() -> Check {
    let t = temp_dir("plugin-runtime-names")?;
    let src = t.path().join("prog.cpp");
    wpd_tests::write(
        &src,
        br#"#include <cstdio>
#include <sstream>
#include <string>
struct Shape {
  virtual ~Shape() {}
  virtual int area() const = 0;
  virtual std::string describe() const = 0;
};
struct Square : Shape {
  int s;
  explicit Square(int s) : s(s) {}
  int area() const override { return s * s; }
  std::string describe() const override { std::ostringstream o; o << "square " << s; return o.str(); }
};
struct Circle : Shape {
  int r;
  explicit Circle(int r) : r(r) {}
  int area() const override { return 3 * r * r; }
  std::string describe() const override { std::ostringstream o; o << "circle " << r; return o.str(); }
};
__attribute__((noinline)) Shape *make(int i) { if (i > 2) return new Circle(i); return new Square(i); }
int main(int argc, char **) {
  std::stringstream total;
  for (int i = 0; i < 4; i++) {
    Shape *s = make(i + argc);
    total << s->area() << ' ';
    delete s;
  }
  try { throw argc; } catch (int n) { total << "caught " << n; }
  std::printf("%s\n", total.str().c_str());
}
"#,
    )?;
    let obj = t.path().join("prog.o");
    thin_object(&src, &obj)?;
    let reference = t.path().join("ref");
    run(Command::new(CLANGXX).arg("-O0").arg(&src).arg("-o").arg(&reference))?;
    let want = run(&mut Command::new(&reference))?.stdout;
    for linker in LINKERS {
        let scratch = t.path().join(format!("tmp-{linker}"));
        std::fs::create_dir_all(&scratch).map_err(|e| e.to_string())?;
        let prog = t.path().join(format!("prog-{linker}"));
        let r = checked_link(linker, &scratch, &["-Wl,-plugin-opt=whole-program-visibility"], &[&obj], &prog, &want)?;
        let dead = &r["dead_slots"];
        if dead["slots"].as_u64().unwrap_or(0) == 0 {
            return Err(format!("[{linker}] no dead slot beside the C++ runtime: {dead}"));
        }
    }
    Ok(())
}

/// mold shows the plugin no native file: the plugin reads mold's command
/// line, and scans every native member of its archives, loaded or not
/// (mold may load members lld's resolution would not). A native archive
/// member nothing references holds a subclass of the program's `Shape`:
/// through mold `Shape`'s hierarchy is open, naming that member, while
/// through gold, which shows the plugin the members it loads, it is closed
/// and `area` has one implementation. (GNU ld offers the plugin members
/// it only probes, this one too: scanned, they keep classes open.) Every
/// program prints what its -O0 build prints.
fn mold_scans_every_archive_member() -> Check {
    let t = temp_dir("plugin-mold-members")?;
    let header = t.path().join("shape.h");
    wpd_tests::write(&header, b"struct Shape {\n  virtual ~Shape() {}\n  virtual int area() const = 0;\n};\n")?;
    let prog_src = t.path().join("prog.cpp");
    wpd_tests::write(
        &prog_src,
        br#"#include "shape.h"
#include <cstdio>
struct Square final : Shape {
  int s;
  explicit Square(int s) : s(s) {}
  int area() const override { return s * s; }
};
__attribute__((noinline)) Shape *make(int i) { return new Square(i); }
__attribute__((noinline)) int total(Shape *const *v, int n) {
  int t = 0;
  for (int i = 0; i < n; ++i) t += v[i]->area();
  return t;
}
int main(int argc, char **) {
  Shape *v[3] = {make(argc), make(argc + 1), make(argc + 2)};
  std::printf("%d\n", total(v, 3));
  for (Shape *s : v) delete s;
}
"#,
    )?;
    let extra_src = t.path().join("extra.cpp");
    wpd_tests::write(
        &extra_src,
        br#"#include "shape.h"
struct Circle final : Shape {
  int area() const override { return 3; }
};
Shape *make_circle() { return new Circle; }
"#,
    )?;
    let prog = t.path().join("prog.o");
    thin_object(&prog_src, &prog)?;
    let extra = t.path().join("extra.o");
    run(Command::new(CLANGXX).args(["-O2", "-c"]).arg(&extra_src).arg("-o").arg(&extra))?;
    let archive = t.path().join("libextra.a");
    run(Command::new("llvm-ar-19").arg("rcs").arg(&archive).arg(&extra))?;
    let reference = t.path().join("ref");
    run(Command::new(CLANGXX).arg("-O0").arg(&prog_src).arg(&archive).arg("-o").arg(&reference))?;
    let want = run(&mut Command::new(&reference))?.stdout;
    let mut failures = Vec::new();
    for linker in LINKERS {
        let scratch = t.path().join(format!("tmp-{linker}"));
        std::fs::create_dir_all(&scratch).map_err(|e| e.to_string())?;
        let out = t.path().join(format!("prog-{linker}"));
        let r = checked_link(
            linker,
            &scratch,
            &["-Wl,-plugin-opt=whole-program-visibility"],
            &[&prog, &archive],
            &out,
            &want,
        )?;
        let open = r["open_type_ids"].to_string();
        let single = r["call_sites"]["single_impl"].as_u64().unwrap_or(0);
        match (linker, open.contains("_ZTS5Shape") && open.contains("libextra.a(extra.o)")) {
            ("mold", false) => {
                failures.push(format!("[mold] Shape should be open, naming libextra.a(extra.o): {open}"))
            }
            ("mold", true) if single != 0 => {
                failures.push(format!("[mold] {single} single-impl call(s) of an open Shape"))
            }
            ("gold", true) => failures.push(format!("[gold] Shape opened by a member not loaded: {open}")),
            ("gold", false) if single == 0 => failures.push("[gold] area() not made direct".to_string()),
            _ => {}
        }
    }
    if failures.is_empty() { Ok(()) } else { Err(failures.join("\n")) }
}

/// `-flto=thin` on a GNU ld or gold link line makes clang load LLVMgold.so
/// before any `-Wl,-plugin`: LLVM's plugin claims every bitcode file and
/// wpd's never sees one. The program is still right (LLVM's LTO built
/// it), but wpd did nothing, which the link must say.
fn llvm_plugin_first_is_said() -> Check {
    let (t, objects, want) = demo("plugin-llvmgold-first")?;
    let inputs: Vec<&Path> = objects.iter().map(PathBuf::as_path).collect();
    for linker in ["bfd", "gold"] {
        let prog = t.path().join(format!("prog-{linker}"));
        let o =
            plugin_link(linker, t.path(), &["-flto=thin", "-Wl,-plugin-opt=whole-program-visibility"], &inputs, &prog)?;
        // GNU ld prints a plugin's warnings on stdout, gold on stderr.
        let said = format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
        if !o.status.success() {
            return Err(format!("[{linker}] link failed: {said}"));
        }
        if !said.contains("wpd plugin: LLVM's own LTO plugin") || !said.contains("LLVMgold") {
            return Err(format!("[{linker}] nothing says LLVMgold.so took the bitcode; the link printed:\n{said}"));
        }
        if run(&mut Command::new(&prog))?.stdout != want {
            return Err(format!("[{linker}] the program's output differs from -O0"));
        }
    }
    // Without -flto, no such line.
    let prog = t.path().join("prog-plain");
    let o = plugin_link("bfd", t.path(), &["-Wl,-plugin-opt=whole-program-visibility"], &inputs, &prog)?;
    let said = format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    if !o.status.success() || said.contains("LLVM's own LTO plugin") {
        return Err(format!("a link without -flto failed or warned of LLVMgold.so: {said}"));
    }
    Ok(())
}

fn main() {
    let args = libtest_mimic::Arguments::from_args();
    let trials = vec![
        libtest_mimic::Trial::test("clean_links", || clean_links().map_err(Into::into)),
        libtest_mimic::Trial::test("split_units_kept_in_two", || split_units_kept_in_two().map_err(Into::into)),
        libtest_mimic::Trial::test("code_generation_flags", || code_generation_flags().map_err(Into::into)),
        libtest_mimic::Trial::test("section_options", || section_options().map_err(Into::into)),
        libtest_mimic::Trial::test("same_settings", || same_settings().map_err(Into::into)),
        libtest_mimic::Trial::test("refused", || refused().map_err(Into::into)),
        libtest_mimic::Trial::test("llvm_plugin_first_is_said", || llvm_plugin_first_is_said().map_err(Into::into)),
        libtest_mimic::Trial::test("mold_scans_every_archive_member", || {
            mold_scans_every_archive_member().map_err(Into::into)
        }),
        libtest_mimic::Trial::test("dead_slots_beside_the_runtime", || {
            dead_slots_beside_the_runtime().map_err(Into::into)
        }),
    ];
    libtest_mimic::run(&args, trials).exit();
}
