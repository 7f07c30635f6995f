//! Bad-input harness: `wpd summarize`, `wpd thin-link` and `wpd dump` given empty, foreign,
//! truncated, corrupt or other-version files must fail with exit code 1 and
//! exactly one `wpd: error: ` line naming the file, never panic, and leave no
//! output or temporary file behind. A bitcode-wrapper file must summarize
//! like the bare bitcode it wraps. A directory is refused as one; a FIFO is
//! read like a file.

use libtest_mimic::{Arguments, Trial};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, OnceLock};
use wpd_tests::{
    Check, TempDir, compile, dump, file_name, list_dir, load_fixture, mkdir, read, repo_root, run_raw, show_cmd,
    summarize, temp_dir, wpd_bin, write,
};

/// The fixture whose objects serve as real inputs to mangle.
const SOURCE_FIXTURE: &str = "single_inheritance";
/// One of its objects: a split unit with vtables and call sites and no
/// module-local type ids.
const OBJECT: &str = "main.o";

/// Real inputs built once, lazily, and shared by all tests.
struct Shared {
    dir: TempDir,
    prepared: OnceLock<Result<Prepared, String>>,
}

struct Prepared {
    /// A real bitcode object.
    object: PathBuf,
    /// Its summary.
    summary: PathBuf,
}

impl Shared {
    fn get(&self) -> Check<&Prepared> {
        self.prepared
            .get_or_init(|| prepare(self.dir.path()))
            .as_ref()
            .map_err(|e| format!("preparing real inputs failed: {e}"))
    }
}

fn prepare(dir: &Path) -> Check<Prepared> {
    let fx_dir = repo_root().join("fixtures/summarize").join(SOURCE_FIXTURE);
    let fx = load_fixture(SOURCE_FIXTURE, &fx_dir)?;
    let built = compile(&fx, &dir.join("build"), &[])?;
    let object = built
        .objects
        .iter()
        .find(|o| file_name(o) == OBJECT)
        .cloned()
        .ok_or_else(|| format!("{SOURCE_FIXTURE} has no {OBJECT}"))?;
    let out = dir.join("summary");
    summarize(std::slice::from_ref(&object), &out, &[])?;
    let summary = out.join(format!("{OBJECT}.wpds"));
    if !summary.is_file() {
        return Err(format!("{} was not written", summary.display()));
    }
    Ok(Prepared { object, summary })
}

type TestFn = fn(&Shared) -> Check;

fn main() {
    let args = Arguments::from_args();
    let shared = match temp_dir("bad-input") {
        Ok(dir) => Arc::new(Shared { dir, prepared: OnceLock::new() }),
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(1);
        }
    };
    let tests: &[(&str, TestFn)] = &[
        ("summarize_empty_file", summarize_empty_file),
        ("summarize_text_file", summarize_text_file),
        ("summarize_missing_file", summarize_missing_file),
        ("summarize_elf_object", summarize_elf_object),
        ("summarize_truncated_bitcode", summarize_truncated_bitcode),
        ("summarize_good_and_bad_inputs", summarize_good_and_bad_inputs),
        ("summarize_wrapped_bitcode", summarize_wrapped_bitcode),
        ("summarize_foreign_target", summarize_foreign_target),
        ("thin_link_same_module_twice", thin_link_same_module_twice),
        ("dump_corrupt_summary", dump_corrupt_summary),
        ("dump_truncated_summary", dump_truncated_summary),
        ("dump_other_version", dump_other_version),
        ("dump_empty_file", dump_empty_file),
        ("dump_bitcode_file", dump_bitcode_file),
        ("dump_directory", dump_directory),
        ("dump_from_a_pipe", dump_from_a_pipe),
    ];
    let trials = tests
        .iter()
        .map(|&(name, f)| {
            let shared = Arc::clone(&shared);
            Trial::test(name, move || f(&shared).map_err(Into::into))
        })
        .collect();
    let conclusion = libtest_mimic::run(&args, trials);
    // Remove the shared temporary directory before exiting.
    drop(shared);
    conclusion.exit();
}

/// A fresh case directory with `in/` and an empty `out/`.
fn case_dir(shared: &Shared, name: &str) -> Check<(PathBuf, PathBuf)> {
    let base = shared.dir.path().join("cases").join(name);
    let (input, out) = (base.join("in"), base.join("out"));
    mkdir(&input)?;
    mkdir(&out)?;
    Ok((input, out))
}

/// Runs `wpd <args>` and checks the failure contract for `bad`.
fn expect_failure(args: &[&Path], bad: &Path) -> Check {
    let mut cmd = Command::new(wpd_bin()?);
    cmd.args(args);
    let out = run_raw(&mut cmd)?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    let shown = show_cmd(&cmd);
    if out.status.code() != Some(1) {
        return Err(format!("`{shown}` exited with {}, expected exit code 1\nstderr:\n{stderr}", out.status));
    }
    if stderr.contains("panicked") {
        return Err(format!("`{shown}` panicked:\n{stderr}"));
    }
    let lines: Vec<&str> = stderr.lines().collect();
    if lines.len() != 1 || !stderr.ends_with('\n') {
        return Err(format!("`{shown}` must print exactly one line on stderr, got {} line(s):\n{stderr}", lines.len()));
    }
    if !lines[0].starts_with("wpd: error: ") {
        return Err(format!("`{shown}`: stderr does not start with `wpd: error: `: {}", lines[0]));
    }
    let path = bad.to_string_lossy();
    if !lines[0].contains(path.as_ref()) {
        return Err(format!("`{shown}`: error does not name {path}: {}", lines[0]));
    }
    Ok(())
}

/// The directory holds nothing (no summary, no temporary file).
fn expect_empty(dir: &Path) -> Check {
    let left = list_dir(dir)?;
    if left.is_empty() {
        Ok(())
    } else {
        Err(format!("{} should be empty after a failure, holds {left:?}", dir.display()))
    }
}

/// `wpd summarize bad -o out` fails cleanly, and neither `out` nor the
/// input's directory gains a file.
fn summarize_fails(bad: &Path, out: &Path) -> Check {
    let in_dir = bad.parent().ok_or("input has no parent")?;
    let before = list_dir(in_dir)?;
    expect_failure(&[Path::new("summarize"), bad, Path::new("-o"), out], bad)?;
    expect_empty(out)?;
    let after = list_dir(in_dir)?;
    if before != after {
        return Err(format!("{} changed: {before:?} -> {after:?}", in_dir.display()));
    }
    Ok(())
}

fn summarize_empty_file(shared: &Shared) -> Check {
    let (input, out) = case_dir(shared, "empty")?;
    let bad = input.join("empty.o");
    write(&bad, b"")?;
    summarize_fails(&bad, &out)
}

fn summarize_text_file(shared: &Shared) -> Check {
    let (input, out) = case_dir(shared, "text")?;
    let bad = input.join("notes.o");
    write(&bad, b"this is not bitcode\njust some text\n")?;
    summarize_fails(&bad, &out)
}

fn summarize_missing_file(shared: &Shared) -> Check {
    let (input, out) = case_dir(shared, "missing")?;
    let bad = input.join("does-not-exist.o");
    expect_failure(&[Path::new("summarize"), &bad, Path::new("-o"), &out], &bad)?;
    expect_empty(&out)
}

fn summarize_elf_object(shared: &Shared) -> Check {
    let (input, out) = case_dir(shared, "elf")?;
    let src = input.join("native.c");
    write(&src, b"int native_answer(void) { return 42; }\n")?;
    let bad = input.join("native.o");
    let mut cmd = Command::new(wpd_tests::CLANG);
    cmd.arg("-O2").arg("-c").arg(&src).arg("-o").arg(&bad);
    wpd_tests::run(&mut cmd)?;
    if read(&bad)?.get(..4) != Some(b"\x7fELF".as_slice()) {
        return Err(format!("{} is not an ELF object", bad.display()));
    }
    summarize_fails(&bad, &out)
}

/// Bitcode for another target is refused by name, as every link refuses it
/// (the bitcode reader itself reads it without complaint).
fn summarize_foreign_target(shared: &Shared) -> Check {
    let (input, out) = case_dir(shared, "foreign")?;
    let src = input.join("arm.cpp");
    write(&src, b"struct B { virtual int f(); };\nint B::f() { return 1; }\nint use(B *b) { return b->f(); }\n")?;
    let bad = input.join("arm.o");
    wpd_tests::run(
        Command::new(wpd_tests::CLANGXX)
            .args(["--target=aarch64-linux-gnu", "-O2", "-flto=thin", "-fwhole-program-vtables", "-c"])
            .arg(&src)
            .arg("-o")
            .arg(&bad),
    )?;
    summarize_fails(&bad, &out)?;
    let stderr = run_raw(Command::new(wpd_bin()?).arg("summarize").arg(&bad).arg("-o").arg(&out))?.stderr;
    let stderr = String::from_utf8_lossy(&stderr);
    if !stderr.contains("bitcode for aarch64-unknown-linux-gnu, not x86-64 ELF") {
        return Err(format!("wpd summarize of aarch64 bitcode: the error does not name the target:\n{stderr}"));
    }
    Ok(())
}

/// `wpd thin-link` given one module's summary twice (a link line naming one
/// object twice) fails naming it, and writes no plan.
fn thin_link_same_module_twice(shared: &Shared) -> Check {
    let p = shared.get()?;
    let (input, out) = case_dir(shared, "twice")?;
    let copy = input.join(format!("{OBJECT}.wpds"));
    write(&copy, &read(&p.summary)?)?;
    let plan = out.join("plan.wpdp");
    expect_failure(&[Path::new("thin-link"), &p.summary, &copy, Path::new("-o"), &plan], &copy)?;
    expect_empty(&out)?;
    // Each alone links.
    let mut cmd = Command::new(wpd_bin()?);
    cmd.arg("thin-link").arg(&copy).arg("-o").arg(&plan);
    let o = run_raw(&mut cmd)?;
    if !o.status.success() || !plan.is_file() {
        return Err(format!("`{}` failed: {}", show_cmd(&cmd), String::from_utf8_lossy(&o.stderr)));
    }
    Ok(())
}

fn summarize_truncated_bitcode(shared: &Shared) -> Check {
    let p = shared.get()?;
    let (input, out) = case_dir(shared, "truncated-bitcode")?;
    let bytes = read(&p.object)?;
    let bad = input.join("half.o");
    write(&bad, &bytes[..bytes.len() / 2])?;
    summarize_fails(&bad, &out)
}

fn summarize_good_and_bad_inputs(shared: &Shared) -> Check {
    let p = shared.get()?;
    let (input, out) = case_dir(shared, "good-and-bad")?;
    let good = input.join("good.o");
    std::fs::copy(&p.object, &good).map_err(|e| format!("copy: {e}"))?;
    let bad = input.join("bad.o");
    write(&bad, b"BC\xc0\xde garbage after a bitcode magic")?;
    expect_failure(&[Path::new("summarize"), &good, &bad, Path::new("-o"), &out], &bad)?;
    // Summaries are put in place only once every input is summarized: not
    // even the good input's is left, nor a temporary file.
    let left: Vec<String> = list_dir(&out)?;
    if !left.is_empty() {
        return Err(format!("unexpected files left in {}: {left:?}", out.display()));
    }
    Ok(())
}

/// The bitcode wrapper header (as Darwin toolchains write it) around `bc`.
fn wrap_bitcode(bc: &[u8]) -> Vec<u8> {
    let mut v = Vec::with_capacity(bc.len() + 20);
    for word in [0x0B17_C0DEu32, 0, 20, bc.len() as u32, 0x0100_0007] {
        v.extend_from_slice(&word.to_le_bytes());
    }
    v.extend_from_slice(bc);
    v
}

fn summarize_wrapped_bitcode(shared: &Shared) -> Check {
    let p = shared.get()?;
    let (input, out) = case_dir(shared, "wrapped")?;
    let wrapped = input.join("wrapped.o");
    write(&wrapped, &wrap_bitcode(&read(&p.object)?))?;
    summarize(std::slice::from_ref(&wrapped), &out, &[])?;
    let got = dump(&out.join("wrapped.o.wpds"))?;
    let want = dump(&p.summary)?;
    if wpd_tests::array(&want, "vtables").is_empty() || wpd_tests::array(&want, "call_sites").is_empty() {
        return Err(format!("{OBJECT} lacks vtables or call sites: the comparison would be hollow"));
    }
    for key in ["vtables", "call_sites"] {
        if got[key] != want[key] {
            return Err(format!(
                "`{key}` of the wrapped file differs from the bare bitcode's\n{}",
                wpd_tests::short_diff(&wpd_tests::to_golden(&want[key]), &wpd_tests::to_golden(&got[key]))
            ));
        }
    }
    Ok(())
}

/// `wpd dump bad` fails cleanly and creates nothing beside it.
fn dump_fails(bad: &Path) -> Check {
    let dir = bad.parent().ok_or("no parent")?;
    let before = list_dir(dir)?;
    expect_failure(&[Path::new("dump"), bad], bad)?;
    let after = list_dir(dir)?;
    if before != after {
        return Err(format!("{} changed: {before:?} -> {after:?}", dir.display()));
    }
    Ok(())
}

/// A copy of the real summary, mangled by `f`, written as `name`.
fn mangled_summary(shared: &Shared, name: &str, f: impl FnOnce(&mut Vec<u8>)) -> Check<PathBuf> {
    let p = shared.get()?;
    let (input, _) = case_dir(shared, name)?;
    let mut bytes = read(&p.summary)?;
    if bytes.len() < 48 {
        return Err(format!("{} is implausibly small", p.summary.display()));
    }
    f(&mut bytes);
    let bad = input.join(format!("{name}.wpds"));
    write(&bad, &bytes)?;
    Ok(bad)
}

fn dump_corrupt_summary(shared: &Shared) -> Check {
    // Flip one byte in the middle of the body.
    let bad = mangled_summary(shared, "corrupt", |b| {
        let i = 40 + (b.len() - 40) / 2;
        b[i] ^= 0x5a;
    })?;
    dump_fails(&bad)
}

fn dump_truncated_summary(shared: &Shared) -> Check {
    let bad = mangled_summary(shared, "truncated", |b| b.truncate(b.len() / 2))?;
    dump_fails(&bad)
}

fn dump_other_version(shared: &Shared) -> Check {
    let bad = mangled_summary(shared, "other-version", |b| {
        let v = u32::from_le_bytes([b[8], b[9], b[10], b[11]]);
        b[8..12].copy_from_slice(&v.wrapping_add(1).to_le_bytes());
    })?;
    dump_fails(&bad)
}

fn dump_empty_file(shared: &Shared) -> Check {
    let (input, _) = case_dir(shared, "dump-empty")?;
    let bad = input.join("empty.wpds");
    write(&bad, b"")?;
    dump_fails(&bad)
}

fn dump_bitcode_file(shared: &Shared) -> Check {
    let p = shared.get()?;
    let (input, _) = case_dir(shared, "dump-bitcode")?;
    let bad = input.join("object.wpds");
    std::fs::copy(&p.object, &bad).map_err(|e| format!("copy: {e}"))?;
    dump_fails(&bad)
}

fn dump_directory(shared: &Shared) -> Check {
    let (input, _) = case_dir(shared, "dump-directory")?;
    let bad = input.join("not-a-file.wpds");
    mkdir(&bad)?;
    expect_failure(&[Path::new("dump"), &bad], &bad)?;
    let out = run_raw(Command::new(wpd_bin()?).arg("dump").arg(&bad))?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    if !stderr.contains("is a directory") {
        return Err(format!("the error should say it is a directory: {stderr}"));
    }
    Ok(())
}

/// A summary that cannot be memory-mapped (a FIFO, as `<(...)` gives) is
/// read instead, with the same result.
fn dump_from_a_pipe(shared: &Shared) -> Check {
    let p = shared.get()?;
    let want = run_raw(Command::new(wpd_bin()?).arg("dump").arg(&p.summary))?;
    if !want.status.success() {
        return Err(format!("wpd dump {} failed", p.summary.display()));
    }
    let (input, _) = case_dir(shared, "dump-pipe")?;
    let fifo = input.join("summary.wpds");
    wpd_tests::run(Command::new("mkfifo").arg(&fifo))?;
    let bytes = read(&p.summary)?;
    let fifo_w = fifo.clone();
    let writer = std::thread::spawn(move || std::fs::write(&fifo_w, bytes));
    let got = run_raw(Command::new(wpd_bin()?).arg("dump").arg(&fifo))?;
    writer.join().map_err(|_| "writer panicked")?.map_err(|e| format!("writing the FIFO: {e}"))?;
    if !got.status.success() || got.stdout != want.stdout {
        return Err(format!(
            "wpd dump of the FIFO: {}, same output: {}\n{}",
            got.status,
            got.stdout == want.stdout,
            String::from_utf8_lossy(&got.stderr)
        ));
    }
    Ok(())
}
