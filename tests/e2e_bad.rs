//! Bad-input harness for `wpd-ld` (driven through clang++-19 --ld-path):
//! a truncated bitcode object, a corrupt bitcode archive member, a missing
//! input file, a missing real linker and an unknown `--wpd-` option must
//! each fail with a non-zero exit and exactly one `wpd-ld: error: ` line
//! naming the culprit, never panic, create no output binary and leave
//! `$TMPDIR` (a fresh directory per case) empty. When the real linker
//! itself fails (an undefined symbol), its exit status and message come
//! through and the temporary directory is removed as well. A module whose
//! debug info the verifier rejects (IR fine) links as lld links it: the
//! debug info is stripped with one warning naming the module. A module
//! whose IR the verifier rejects fails the link with one error naming it:
//! wpd-ld verifies each backend's module once, before optimization, in
//! place of LLVM's two verifier runs around the pipeline. Two bitcode
//! objects defining one virtual function fail as lld fails them
//! (`duplicate symbol`), and link as it links them under `-z muldefs` and
//! `--noinhibit-exec` (the first definition runs).

use libtest_mimic::{Arguments, Trial};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};
use wpd_tests::link::{expect_empty_dir, positional_inputs, wpd_ld_command};
use wpd_tests::{
    Check, LLVM_AR, TempDir, compile, file_name, load_fixture, mkdir, read, repo_root, run, run_raw, show_cmd,
    temp_dir, write,
};

/// The fixture whose objects serve as real inputs.
const SOURCE_FIXTURE: &str = "single_impl";
/// The object that gets truncated.
const OBJECT: &str = "main.o";

/// Real inputs built once, lazily, and shared by all tests.
struct Shared {
    dir: TempDir,
    prepared: OnceLock<Result<Vec<PathBuf>, String>>,
}

impl Shared {
    /// The fixture's compiled objects.
    fn objects(&self) -> Check<&[PathBuf]> {
        self.prepared
            .get_or_init(|| {
                let fx_dir = repo_root().join("fixtures/e2e").join(SOURCE_FIXTURE);
                let fx = load_fixture(SOURCE_FIXTURE, &fx_dir)?;
                let built = compile(&fx, &self.dir.path().join("build"), &[])?;
                Ok(positional_inputs(&built).into_iter().map(PathBuf::from).collect())
            })
            .as_deref()
            .map_err(|e| format!("preparing real inputs failed: {e}"))
    }

    fn object(&self, name: &str) -> Check<PathBuf> {
        self.objects()?
            .iter()
            .find(|o| file_name(o) == name)
            .cloned()
            .ok_or_else(|| format!("{SOURCE_FIXTURE} has no {name}"))
    }
}

type TestFn = fn(&Shared) -> Check;

fn main() {
    let args = Arguments::from_args();
    let shared = match temp_dir("e2e-bad") {
        Ok(dir) => Arc::new(Shared { dir, prepared: OnceLock::new() }),
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(1);
        }
    };
    let tests: &[(&str, TestFn)] = &[
        ("truncated_bitcode_object", truncated_bitcode_object),
        ("corrupt_archive_member", corrupt_archive_member),
        ("missing_input_file", missing_input_file),
        ("malformed_input_script", malformed_input_script),
        ("foreign_target_bitcode", foreign_target_bitcode),
        ("missing_real_linker", missing_real_linker),
        ("unknown_wpd_option", unknown_wpd_option),
        ("real_linker_failure", real_linker_failure),
        ("invalid_debug_info_is_stripped", invalid_debug_info_is_stripped),
        ("invalid_ir_is_refused", invalid_ir_is_refused),
        ("duplicate_definition", duplicate_definition),
    ];
    let trials = tests
        .iter()
        .map(|&(name, f)| {
            let shared = Arc::clone(&shared);
            Trial::test(name, move || f(&shared).map_err(Into::into))
        })
        .collect();
    let conclusion = libtest_mimic::run(&args, trials);
    drop(shared);
    conclusion.exit();
}

/// A case directory: `in/` for made-up inputs, `out/` for the (never
/// created) program, `tmp/` as `$TMPDIR`.
struct Case {
    input: PathBuf,
    out: PathBuf,
    tmp: PathBuf,
}

fn case(shared: &Shared, name: &str) -> Check<Case> {
    let base = shared.dir.path().join("cases").join(name);
    let c = Case { input: base.join("in"), out: base.join("out"), tmp: base.join("tmp") };
    for d in [&c.input, &c.out, &c.tmp] {
        mkdir(d)?;
    }
    Ok(c)
}

/// The other objects of the program (everything but `except`).
fn others(shared: &Shared, except: &str) -> Check<Vec<OsString>> {
    Ok(shared.objects()?.iter().filter(|o| file_name(o) != except).map(|o| o.clone().into_os_string()).collect())
}

/// Links through wpd-ld and checks the failure contract: `needle` must
/// appear in the single `wpd-ld: error: ` line.
fn expect_failure(c: &Case, inputs: &[OsString], extra: &[String], needle: &str) -> Check {
    let exe = c.out.join("prog");
    let mut cmd = wpd_ld_command(&c.input, inputs, &exe, true, extra, &c.tmp)?;
    let shown = show_cmd(&cmd);
    let o = run_raw(&mut cmd)?;
    let stderr = String::from_utf8_lossy(&o.stderr);
    if o.status.success() {
        return Err(format!("`{shown}` succeeded, expected a failure\nstderr:\n{stderr}"));
    }
    if stderr.contains("panicked") || stderr.contains("RUST_BACKTRACE") {
        return Err(format!("`{shown}` panicked:\n{stderr}"));
    }
    let ours: Vec<&str> = stderr.lines().filter(|l| l.starts_with("wpd-ld")).collect();
    // Everything else must be clang's own summary of the failed link.
    let foreign: Vec<&str> = stderr.lines().filter(|l| !l.starts_with("wpd-ld") && !is_clang_summary(l)).collect();
    if ours.len() != 1 || !foreign.is_empty() {
        return Err(format!("`{shown}` must print exactly one wpd-ld line (and clang's summary), got:\n{stderr}"));
    }
    if !ours[0].starts_with("wpd-ld: error: ") {
        return Err(format!("`{shown}`: the line does not start with `wpd-ld: error: `: {}", ours[0]));
    }
    if !ours[0].contains(needle) {
        return Err(format!("`{shown}`: the error does not name {needle}: {}", ours[0]));
    }
    expect_empty_dir(&c.out, "no output may be created by a failed link")?;
    expect_empty_dir(&c.tmp, "a failed link must remove its temporary files")
}

/// clang's own line after a failed link step.
fn is_clang_summary(line: &str) -> bool {
    line.starts_with("clang") && line.contains("linker command failed")
}

/// Writes the first half of a real bitcode object.
fn truncated(shared: &Shared, dir: &Path, name: &str) -> Check<PathBuf> {
    let bytes = read(&shared.object(OBJECT)?)?;
    if bytes.get(..4) != Some(b"BC\xC0\xDE".as_slice()) {
        return Err(format!("{OBJECT} is not raw bitcode"));
    }
    let bad = dir.join(name);
    write(&bad, &bytes[..bytes.len() / 2])?;
    Ok(bad)
}

fn truncated_bitcode_object(shared: &Shared) -> Check {
    let c = case(shared, "truncated")?;
    let bad = truncated(shared, &c.input, "half.o")?;
    let mut inputs = others(shared, OBJECT)?;
    inputs.insert(0, bad.clone().into_os_string());
    expect_failure(&c, &inputs, &[], "half.o")
}

fn corrupt_archive_member(shared: &Shared) -> Check {
    let c = case(shared, "archive")?;
    let bad = truncated(shared, &c.input, "half.o")?;
    let lib = c.input.join("libbad.a");
    run(std::process::Command::new(LLVM_AR).arg("rcs").arg(&lib).arg(&bad))?;
    std::fs::remove_file(&bad).map_err(|e| format!("cannot remove {}: {e}", bad.display()))?;
    let mut inputs = others(shared, OBJECT)?;
    inputs.push(lib.into_os_string());
    expect_failure(&c, &inputs, &[], "libbad.a")
}

fn missing_input_file(shared: &Shared) -> Check {
    let c = case(shared, "missing-input")?;
    let missing = c.input.join("gone.o");
    // Through -Wl, so that clang does not check the file itself.
    let extra = [format!("-Wl,{}", missing.display())];
    expect_failure(&c, &others(shared, "")?, &extra, "gone.o")
}

/// An input script whose list never closes: lld stops on it, and so must
/// wpd-ld, which would otherwise read it as a shorter script and hand the
/// real linker a well-formed one of its own.
fn malformed_input_script(shared: &Shared) -> Check {
    let c = case(shared, "malformed-script")?;
    let objects = others(shared, "")?;
    let names: Vec<String> = objects.iter().map(|o| o.to_string_lossy().into_owned()).collect();
    let script = c.input.join("inputs.ld");
    write(&script, format!("INPUT({}\n", names.join(" ")).as_bytes())?;
    expect_failure(&c, &[script.into_os_string()], &[], "inputs.ld: not a well-formed linker script")
}

/// Bitcode for another target (aarch64, i386, the x32 ABI) is refused by
/// name before LLVM reads it for x86-64 (an aarch64 module crashed
/// LLVM's backend), as lld refuses an incompatible file.
fn foreign_target_bitcode(shared: &Shared) -> Check {
    // No header: a fresh machine has no other target's C++ library.
    let source = shared.dir.path().join("foreign.cpp");
    write(&source, b"struct B { virtual int f(); };\nint B::f() { return 1; }\nint use(B *b) { return b->f(); }\n")?;
    for (target, name) in
        [("aarch64-linux-gnu", "arm.o"), ("i386-linux-gnu", "x86.o"), ("x86_64-linux-gnux32", "x32.o")]
    {
        let c = case(shared, &format!("foreign-{name}"))?;
        let object = c.input.join(name);
        run(std::process::Command::new(wpd_tests::CLANGXX)
            .arg(format!("--target={target}"))
            .args(["-O2", "-flto=thin", "-fwhole-program-vtables", "-c"])
            .arg(&source)
            .arg("-o")
            .arg(&object))?;
        let mut inputs = others(shared, "")?;
        inputs.push(object.into_os_string());
        expect_failure(
            &c,
            &inputs,
            &[],
            &format!("{name}: bitcode for {}", target.replace("-linux", "-unknown-linux")),
        )?;
    }
    Ok(())
}

fn missing_real_linker(shared: &Shared) -> Check {
    let c = case(shared, "missing-linker")?;
    let extra = ["-Wl,--wpd-linker=/nonexistent/ld.wpd-test".to_string()];
    expect_failure(&c, &others(shared, "")?, &extra, "/nonexistent/ld.wpd-test")
}

fn unknown_wpd_option(shared: &Shared) -> Check {
    let c = case(shared, "unknown-option")?;
    let extra = ["-Wl,--wpd-foo".to_string()];
    expect_failure(&c, &others(shared, "")?, &extra, "--wpd-foo")
}

fn real_linker_failure(shared: &Shared) -> Check {
    let c = case(shared, "linker-fails")?;
    // engine.o defines make_engine, which main.o calls.
    let inputs = others(shared, "engine.o")?;
    let exe = c.out.join("prog");
    let mut cmd = wpd_ld_command(&c.input, &inputs, &exe, true, &[], &c.tmp)?;
    let shown = show_cmd(&cmd);
    let o = run_raw(&mut cmd)?;
    let stderr = String::from_utf8_lossy(&o.stderr);
    if o.status.success() {
        return Err(format!("`{shown}` succeeded without the definition of make_engine"));
    }
    if stderr.contains("panicked") {
        return Err(format!("`{shown}` panicked:\n{stderr}"));
    }
    if !stderr.contains("make_engine") {
        return Err(format!("`{shown}`: the undefined symbol make_engine is not reported:\n{stderr}"));
    }
    expect_empty_dir(&c.out, "no output may be created by a failed link")?;
    expect_empty_dir(&c.tmp, "a failed link must remove its temporary files")
}

/// A small program (main calls a noinline `helper`) in `c`'s input folder,
/// compiled with `flags` to a ThinLTO object and disassembled: returns the
/// source's path and the object's IR text, for a case to break and
/// reassemble. The object itself is removed, so that only the broken one
/// can be linked.
fn helper_program(c: &Case, flags: &[&str]) -> Check<(PathBuf, String)> {
    let src = c.input.join("prog.cpp");
    write(
        &src,
        b"#include <cstdio>\n\
          __attribute__((noinline)) int helper(int x) { return x + 40; }\n\
          int main(int argc, char **) { std::printf(\"%d\\n\", helper(argc + 1)); return 0; }\n",
    )?;
    let good = c.input.join("good.o");
    run(std::process::Command::new("clang++-19")
        .args(["-O2", "-flto=thin", "-fwhole-program-vtables", "-fno-split-lto-unit", "-c"])
        .args(flags)
        .arg(&src)
        .arg("-o")
        .arg(&good))?;
    let text = output_of(std::process::Command::new("llvm-dis-19").arg(&good).arg("-o").arg("-"))?;
    std::fs::remove_file(&good).map_err(|e| format!("cannot remove {}: {e}", good.display()))?;
    Ok((src, text))
}

/// Runs `cmd`, which must succeed; returns its stdout.
fn output_of(cmd: &mut std::process::Command) -> Check<String> {
    Ok(String::from_utf8_lossy(&run(cmd)?.stdout).into_owned())
}

/// wpd-ld reads modules with LLVM's reader-side debug info check off and
/// makes the check once in the backends (wpd_llvm's set_llvm_options): a
/// module with invalid debug info must still link, its debug info dropped
/// with a warning, and the program must print what its -O0 build prints.
fn invalid_debug_info_is_stripped(shared: &Shared) -> Check {
    let c = case(shared, "invalid-debug-info")?;
    let (src, text) = helper_program(&c, &["-g"])?;
    // helper's !dbg names main's subprogram: "DISubprogram attached to more
    // than one function", a debug info error only.
    let attachment = |name: &str| -> Check<String> {
        let line = text
            .lines()
            .find(|l| l.starts_with("define") && l.contains(name))
            .ok_or_else(|| format!("no definition of {name} in the disassembly"))?;
        let at = line.rfind("!dbg !").ok_or_else(|| format!("{name} has no !dbg attachment"))?;
        Ok(line[at..].trim_end_matches(" {").to_string())
    };
    let (helper, main) = (attachment("@_Z6helperi(")?, attachment("@main(")?);
    let helper_line = text.lines().find(|l| l.starts_with("define") && l.contains("@_Z6helperi(")).unwrap_or("");
    let broken = text.replacen(helper_line, &helper_line.replace(&helper, &main), 1);
    if broken == text {
        return Err("could not retarget helper's !dbg attachment".into());
    }
    let ll = c.input.join("bad.ll");
    write(&ll, broken.as_bytes())?;
    let bad = c.input.join("bad.o");
    run(std::process::Command::new("llvm-as-19")
        .args(["-disable-verify", "-disable-auto-upgrade-debug-info"])
        .arg(&ll)
        .arg("-o")
        .arg(&bad))?;
    let reference = c.out.join("prog.O0");
    run(std::process::Command::new("clang++-19").arg("-O0").arg(&src).arg("-o").arg(&reference))?;
    let expected = output_of(&mut std::process::Command::new(&reference))?;

    let exe = c.out.join("prog");
    let mut cmd = wpd_ld_command(&c.input, &[bad.into_os_string()], &exe, true, &[], &c.tmp)?;
    let shown = show_cmd(&cmd);
    let o = run_raw(&mut cmd)?;
    let stderr = String::from_utf8_lossy(&o.stderr);
    if !o.status.success() {
        return Err(format!("`{shown}` failed on a module whose IR is valid:\n{stderr}"));
    }
    let warnings: Vec<&str> = stderr.lines().filter(|l| l.contains("ignoring invalid debug info in")).collect();
    if warnings.len() != 1 || !warnings[0].contains("bad.o") {
        return Err(format!("`{shown}` must warn once that it drops bad.o's debug info, stderr:\n{stderr}"));
    }
    let got = output_of(&mut std::process::Command::new(&exe))?;
    if got != expected {
        return Err(format!("`{shown}`: the program prints {got:?}, its -O0 build {expected:?}"));
    }
    expect_empty_dir(&c.tmp, "a link must remove its temporary files")
}

/// A module the bitcode reader accepts but the verifier rejects (an
/// instruction used before it is defined), without debug info, so that
/// only the full verification of wpd's backends can catch it: the link
/// must fail with one error naming the module, as LLVM's own verifier run
/// before the pipeline would have stopped it (lld aborts there).
fn invalid_ir_is_refused(shared: &Shared) -> Check {
    let c = case(shared, "invalid-ir")?;
    let (_, text) = helper_program(&c, &[])?;
    // Two instructions at the top of helper, each using the other.
    let header = text
        .lines()
        .find(|l| l.starts_with("define") && l.contains("@_Z6helperi("))
        .ok_or("no definition of helper in the disassembly")?;
    let cycle = format!("{header}\n  %wpd.a = add i32 %wpd.b, 1\n  %wpd.b = add i32 %wpd.a, 1");
    let broken = text.replacen(header, &cycle, 1);
    let ll = c.input.join("bad.ll");
    write(&ll, broken.as_bytes())?;
    let bad = c.input.join("bad.o");
    run(std::process::Command::new("llvm-as-19").arg("-disable-verify").arg(&ll).arg("-o").arg(&bad))?;
    // The one error line names the module and is the verifier's.
    expect_failure(&c, &[bad.into_os_string()], &[], "bad.o: invalid module")
}

/// Two bitcode objects define `Shape::sides()` (3 and 4): lld refuses the
/// link ("duplicate symbol"), and so must wpd-ld, although the thin link
/// compiles only the first copy (the final link never sees the other).
/// With `-z muldefs` (and, with a warning, `--noinhibit-exec`) the first
/// definition wins: the program must print what its -O0 build linked the
/// same way prints, the call devirtualized or not.
fn duplicate_definition(_shared: &Shared) -> Check {
    let c = case(_shared, "duplicate-definition")?;
    let sources: [(&str, &[u8]); 3] = [
        (
            "shape.h",
            b"struct Shape { virtual int sides() const; virtual ~Shape() {} };\n\
              Shape *make();\n",
        ),
        (
            "three.cpp",
            b"#include \"shape.h\"\nint Shape::sides() const { return 3; }\nShape *make() { return new Shape; }\n",
        ),
        ("four.cpp", b"#include \"shape.h\"\nint Shape::sides() const { return 4; }\n"),
    ];
    for (name, text) in sources {
        write(&c.input.join(name), text)?;
    }
    write(
        &c.input.join("main.cpp"),
        b"#include <cstdio>\n#include \"shape.h\"\n\
          int main() { Shape *s = make(); std::printf(\"%d\\n\", s->sides()); delete s; }\n",
    )?;
    let units = ["main", "three", "four"];
    let mut bitcode = Vec::new();
    for u in units {
        let (src, obj) = (c.input.join(format!("{u}.cpp")), c.input.join(format!("{u}.o")));
        run(std::process::Command::new("clang++-19")
            .args(["-O2", "-flto=thin", "-fwhole-program-vtables", "-c"])
            .arg(&src)
            .arg("-o")
            .arg(&obj))?;
        bitcode.push(obj.into_os_string());
    }
    expect_failure(&c, &bitcode, &[], "duplicate symbol: Shape::sides() const")?;
    // The -O0 reference, linked with -z muldefs: three.cpp's 3 wins.
    let ref_dir = c.input.join("ref");
    mkdir(&ref_dir)?;
    let reference = ref_dir.join("prog");
    let mut cmd = std::process::Command::new("clang++-19");
    cmd.current_dir(&c.input).arg("-O0").args(units.map(|u| format!("{u}.cpp")));
    run(cmd.arg("-fuse-ld=lld").arg("-Wl,-z,muldefs").arg("-o").arg(&reference))?;
    let want = wpd_tests::link::run_program(&reference, &ref_dir)?;
    if want.stdout != "3\n" {
        return Err(format!("the -O0 reference with -z muldefs printed {:?}, expected \"3\\n\"", want.stdout));
    }
    for (flag, warns) in
        [("-Wl,-z,muldefs", false), ("-Wl,--allow-multiple-definition", false), ("-Wl,--noinhibit-exec", true)]
    {
        let dir = c.input.join(flag.trim_start_matches("-Wl,").replace([',', '-'], ""));
        mkdir(&dir)?;
        let exe = dir.join("prog");
        let mut cmd = wpd_ld_command(&c.input, &bitcode, &exe, true, &[flag.to_string()], &c.tmp)?;
        let shown = show_cmd(&cmd);
        let o = run_raw(&mut cmd)?;
        let stderr = String::from_utf8_lossy(&o.stderr);
        if !o.status.success() {
            return Err(format!("`{shown}` failed:\n{stderr}"));
        }
        let warned = stderr.lines().any(|l| l.starts_with("wpd-ld: warning: duplicate symbol: Shape::sides() const"));
        if warned != warns {
            return Err(format!("`{shown}`: a duplicate-symbol warning expected: {warns}, stderr:\n{stderr}"));
        }
        wpd_tests::link::same_run(&shown, &want, &wpd_tests::link::run_program(&exe, &dir)?)?;
    }
    Ok(())
}
