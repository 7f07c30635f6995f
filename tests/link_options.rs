//! Link-line options and inputs that reach `wpd-ld` through clang++-19:
//! archive member names that are paths, a response file larger than
//! `ARG_MAX`, the code generation flags clang passes as `-plugin-opt=-…`
//! (`-ggdb`, `-femulated-tls`, …), split DWARF and the profile options.
//! Each program (from `fixtures/link_options/`) is linked through wpd-ld
//! and must print what its `-O0` build prints; each option must also show
//! its effect in the output (a section, a symbol, DWARF, a profile), so a
//! refused or ignored option fails the test. The binary itself is checked
//! too: its allocator, and its BOLT layout (which must not change a byte
//! of what it writes). Every link runs with its own
//! `$TMPDIR`, which must be empty afterwards.

use libtest_mimic::{Arguments, Trial};
use std::path::{Path, PathBuf};
use std::process::Command;
use wpd_tests::link::{RunResult, expect_empty_dir, link, run_program, same_run, wpd_ld_bin};
use wpd_tests::{CLANGXX, Check, TempDir, mkdir, read, repo_root, run, run_raw, show_cmd, temp_dir, write};

const DWARFDUMP: &str = "llvm-dwarfdump-19";
const READELF: &str = "llvm-readelf-19";
const NM: &str = "llvm-nm-19";
const PROFDATA: &str = "llvm-profdata-19";
/// How the fixtures' bitcode is compiled.
const BITCODE_FLAGS: &[&str] = &["-O2", "-flto=thin", "-fwhole-program-vtables"];

type TestFn = fn() -> Check;

fn main() {
    let args = Arguments::from_args();
    let tests: &[(&str, TestFn)] = &[
        ("archive_absolute_member_path", archive_absolute_member_path),
        ("archive_dotdot_member_path", archive_dotdot_member_path),
        ("response_file_larger_than_arg_max", response_file_larger_than_arg_max),
        ("response_file_without_bitcode", response_file_without_bitcode),
        ("debugger_tune_gdb", || debugger_tune("gdb")),
        ("debugger_tune_lldb", || debugger_tune("lldb")),
        ("debugger_tune_sce", || debugger_tune("sce")),
        ("emulated_tls", emulated_tls),
        ("stack_size_section", stack_size_section),
        ("tls_descriptors", tls_descriptors),
        ("jmc_instrument", jmc_instrument),
        ("split_machine_functions", split_machine_functions),
        ("split_dwarf", split_dwarf),
        ("sample_profile", sample_profile),
        ("cs_profile_generate_and_use", cs_profile_generate_and_use),
        ("refused_plugin_options", refused_plugin_options),
        ("llvm_code_generation_flags", llvm_code_generation_flags),
        ("codegen_level", codegen_level),
        ("default_counts", default_counts),
        ("allocator_serves_llvm", allocator_serves_llvm),
        ("low_memory_purges_at_once", low_memory_purges_at_once),
        ("optimized_layout_same_output", optimized_layout_same_output),
    ];
    let trials = tests.iter().map(|&(name, f)| Trial::test(name, move || f().map_err(Into::into))).collect();
    libtest_mimic::run(&args, trials).exit();
}

/// One test's build directory (`tmp/` in it is wpd-ld's `$TMPDIR`) and its
/// fixture folder.
struct Case {
    dir: TempDir,
    src: PathBuf,
}

impl Case {
    fn new(label: &str, fixture: &str) -> Check<Case> {
        let c = Case {
            dir: temp_dir(&format!("link-options-{label}"))?,
            src: repo_root().join("fixtures/link_options").join(fixture),
        };
        mkdir(&c.tmp())?;
        Ok(c)
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    fn tmp(&self) -> PathBuf {
        self.path("tmp")
    }

    /// A clang++-19 command run in the build directory.
    fn clang(&self) -> Command {
        let mut cmd = Command::new(CLANGXX);
        cmd.current_dir(self.dir.path());
        cmd
    }

    /// Compiles `source` of the fixture to bitcode `out` with `extra` flags.
    fn bitcode(&self, source: &str, out: &str, extra: &[&str]) -> Check<PathBuf> {
        let obj = self.path(out);
        run(self.clang().args(BITCODE_FLAGS).args(extra).arg("-c").arg(self.src.join(source)).arg("-o").arg(&obj))?;
        Ok(obj)
    }

    /// Builds `sources` with `-O0` and runs the program.
    fn reference(&self, sources: &[&str]) -> Check<RunResult> {
        let exe = self.path("ref");
        run(self.clang().arg("-O0").args(sources.iter().map(|s| self.src.join(s))).arg("-o").arg(&exe))?;
        let r = run_program(&exe, self.dir.path())?;
        if r.code != Some(0) || r.stdout.is_empty() {
            return Err(format!("the -O0 build ended with {} and printed {:?}", r.exit(), r.stdout));
        }
        Ok(r)
    }

    /// The wpd-ld link: `clang++-19 -flto=thin --ld-path=wpd-ld extra inputs
    /// -o out` in the build directory, with `$TMPDIR` set to `tmp/`.
    fn wpd_ld(&self, inputs: &[&Path], out: &str, extra: &[&str]) -> Check<Command> {
        let mut cmd = self.clang();
        cmd.env("TMPDIR", self.tmp()).arg("-flto=thin").arg(format!("--ld-path={}", wpd_ld_bin()?.display()));
        cmd.args(extra).args(inputs).arg("-o").arg(out);
        Ok(cmd)
    }

    /// Links through wpd-ld (which must succeed and leave `$TMPDIR` empty)
    /// and runs the program; returns its path and what it did.
    fn link_and_run(&self, inputs: &[&Path], out: &str, extra: &[&str]) -> Check<(PathBuf, RunResult)> {
        let exe = self.path(out);
        link(&mut self.wpd_ld(inputs, out, extra)?, &exe)?;
        expect_empty_dir(&self.tmp(), "wpd-ld must remove its temporary directory")?;
        let r = run_program(&exe, self.dir.path())?;
        Ok((exe, r))
    }
}

/// Runs a tool that must succeed; returns its stdout.
fn stdout_of(cmd: &mut Command) -> Check<String> {
    Ok(String::from_utf8_lossy(&run(cmd)?.stdout).into_owned())
}

fn tool(name: &str, args: &[&str], file: &Path) -> Check<String> {
    stdout_of(Command::new(name).args(args).arg(file))
}

// --- archives whose member names are paths ------------------------------

/// A GNU archive (symbol index, long-name table) of one member stored under
/// `member_name` and defining `symbol`, as `ar rcsP` writes a member under
/// its full path.
fn gnu_archive(member_name: &str, data: &[u8], symbol: &str) -> Vec<u8> {
    fn header(out: &mut Vec<u8>, name: &str, size: usize) {
        out.extend_from_slice(format!("{name:<16}{:<12}{:<6}{:<6}{:<8}{size:<10}`\n", 0, 0, 0, 644).as_bytes());
    }
    fn pad(out: &mut Vec<u8>) {
        if out.len() % 2 == 1 {
            out.push(b'\n');
        }
    }
    let mut index = Vec::new();
    index.extend_from_slice(&1u32.to_be_bytes());
    index.extend_from_slice(&0u32.to_be_bytes()); // patched below
    index.extend_from_slice(symbol.as_bytes());
    index.push(0);
    let names = format!("{member_name}/\n");
    let mut out = b"!<arch>\n".to_vec();
    header(&mut out, "/", index.len());
    let index_at = out.len();
    out.extend_from_slice(&index);
    pad(&mut out);
    header(&mut out, "//", names.len());
    out.extend_from_slice(names.as_bytes());
    pad(&mut out);
    let member_at = out.len() as u32;
    out[index_at + 4..index_at + 8].copy_from_slice(&member_at.to_be_bytes());
    header(&mut out, "/0", data.len());
    out.extend_from_slice(data);
    pad(&mut out);
    out
}

/// Links `main.o` with an archive whose bitcode member is named
/// `member_name(victim)`: the program must work, and the user's file at
/// `victim` (where the name points) must be left alone.
fn archive_member_path(label: &str, member_name: fn(&Path) -> String) -> Check {
    let c = Case::new(label, "archive_member_path")?;
    let want = c.reference(&["main.cpp", "answer.cpp"])?;
    let main_o = c.bitcode("main.cpp", "main.o", &[])?;
    let answer_o = c.bitcode("answer.cpp", "answer.o", &[])?;
    let victim = c.path("victim/answer.o");
    mkdir(&c.path("victim"))?;
    let name = member_name(&victim);
    let lib = c.path("libanswer.a");
    write(&lib, &gnu_archive(&name, &read(&answer_o)?, "_Z6answerv"))?;
    let notes = b"my precious notes\n";
    write(&victim, notes)?;
    let (_, got) = c.link_and_run(&[&main_o, &lib], "prog", &[])?;
    if read(&victim)? != notes {
        return Err(format!("wpd-ld overwrote {} through the archive member name {name:?}", victim.display()));
    }
    same_run("wpd-ld", &want, &got)
}

fn archive_absolute_member_path() -> Check {
    archive_member_path("abs-member", |victim| victim.display().to_string())
}

fn archive_dotdot_member_path() -> Check {
    // Enough `../` to reach `/` from any directory wpd-ld may write in.
    archive_member_path("dotdot-member", |victim| {
        format!("{}{}", "../".repeat(64), victim.display().to_string().trim_start_matches('/'))
    })
}

// --- a response file larger than ARG_MAX --------------------------------

/// Writes `big.rsp`: enough `-L` lines to exceed `getconf ARG_MAX` (at
/// least 40,000, as repro 12 has it).
fn big_response_file(c: &Case) -> Check<PathBuf> {
    let arg_max: usize = stdout_of(Command::new("getconf").arg("ARG_MAX"))?
        .trim()
        .parse()
        .map_err(|e| format!("getconf ARG_MAX: {e}"))?;
    let n = (arg_max / 40).max(40_000);
    let dir = c.path("a/fairly/long/library/search/path");
    let text: String = (0..n).map(|i| format!("-L{}/{i:06}\n", dir.display())).collect();
    if text.len() <= arg_max {
        return Err(format!("the response file has {} bytes, not more than ARG_MAX {arg_max}", text.len()));
    }
    let rsp = c.path("big.rsp");
    write(&rsp, text.as_bytes())?;
    Ok(rsp)
}

fn response_file_larger_than_arg_max() -> Check {
    let c = Case::new("rsp", "response_file")?;
    let want = c.reference(&["main.cpp"])?;
    let rsp = big_response_file(&c)?;
    let main_o = c.bitcode("main.cpp", "main.o", &[])?;
    let (_, got) = c.link_and_run(&[&main_o], "prog", &[&format!("-Wl,@{}", rsp.display())])?;
    same_run("wpd-ld", &want, &got)
}

fn response_file_without_bitcode() -> Check {
    let c = Case::new("rsp-native", "response_file")?;
    let want = c.reference(&["main.cpp"])?;
    let rsp = big_response_file(&c)?;
    // A native object: wpd-ld runs the real linker without a backend.
    let main_o = c.path("main.o");
    run(c.clang().args(["-O2", "-c"]).arg(c.src.join("main.cpp")).arg("-o").arg(&main_o))?;
    let (_, got) = c.link_and_run(&[&main_o], "prog", &[&format!("-Wl,@{}", rsp.display())])?;
    same_run("wpd-ld", &want, &got)
}

// --- code generation flags ----------------------------------------------

/// Counts of DWARF attributes that debugger tuning changes.
#[derive(Debug, PartialEq, Eq)]
struct Tuned {
    /// `DW_AT_APPLE_*` (lldb only).
    apple: usize,
    /// `DW_AT_linkage_name` (SCE keeps them on abstract subprograms only).
    linkage_names: usize,
}

fn tuned(exe: &Path) -> Check<Tuned> {
    let dump = tool(DWARFDUMP, &["--debug-info"], exe)?;
    Ok(Tuned { apple: dump.matches("DW_AT_APPLE_").count(), linkage_names: dump.matches("DW_AT_linkage_name").count() })
}

/// `-g<debugger>` at link time (clang: `-plugin-opt=-debugger-tune=…`),
/// against the same link with plain `-g` (gdb on Linux).
fn debugger_tune(debugger: &str) -> Check {
    let c = Case::new(&format!("tune-{debugger}"), "debug")?;
    let want = c.reference(&["main.cpp"])?;
    let obj = c.bitcode("main.cpp", "main.o", &["-g"])?;
    let (plain_exe, _) = c.link_and_run(&[&obj], "plain", &["-g"])?;
    let (exe, got) = c.link_and_run(&[&obj], "prog", &[&format!("-g{debugger}")])?;
    same_run("wpd-ld", &want, &got)?;
    let (plain, t) = (tuned(&plain_exe)?, tuned(&exe)?);
    let ok = match debugger {
        "gdb" => t == plain && t.apple == 0 && t.linkage_names > 0,
        "lldb" => t.apple > 0 && plain.apple == 0,
        "sce" => t.apple == 0 && t.linkage_names < plain.linkage_names,
        _ => false,
    };
    if ok { Ok(()) } else { Err(format!("-g{debugger}: DWARF {t:?}, with -g alone {plain:?}")) }
}

fn emulated_tls() -> Check {
    let c = Case::new("emutls", "tls")?;
    let want = c.reference(&["main.cpp"])?;
    let obj = c.bitcode("main.cpp", "main.o", &[])?;
    let (exe, got) = c.link_and_run(&[&obj], "prog", &["-femulated-tls"])?;
    same_run("wpd-ld", &want, &got)?;
    let syms = tool(NM, &[], &exe)?;
    if syms.contains("__emutls_get_address") && syms.contains("__emutls_v.total") {
        Ok(())
    } else {
        Err(format!("-femulated-tls: no __emutls_get_address / __emutls_v.total in {}:\n{syms}", exe.display()))
    }
}

fn stack_size_section() -> Check {
    let c = Case::new("stack-sizes", "tls")?;
    let want = c.reference(&["main.cpp"])?;
    let obj = c.bitcode("main.cpp", "main.o", &[])?;
    let (exe, got) = c.link_and_run(&[&obj], "prog", &["-fstack-size-section"])?;
    same_run("wpd-ld", &want, &got)?;
    let sections = tool(READELF, &["-S"], &exe)?;
    if sections.contains(".stack_sizes") {
        Ok(())
    } else {
        Err(format!("-fstack-size-section: no .stack_sizes section in {}:\n{sections}", exe.display()))
    }
}

/// `-mtls-dialect=gnu2` (`-plugin-opt=-enable-tlsdesc`) on a shared
/// library, whose preemptible thread-local counter keeps a TLS descriptor
/// relocation; a program built with `-O0` uses the library.
fn tls_descriptors() -> Check {
    let c = Case::new("tlsdesc", "tls")?;
    let want = c.reference(&["counter.cpp", "use_counter.cpp"])?;
    let obj = c.bitcode("counter.cpp", "counter.o", &["-fPIC"])?;
    let lib = c.path("libcounter.so");
    link(&mut c.wpd_ld(&[&obj], "libcounter.so", &["-shared", "-mtls-dialect=gnu2"])?, &lib)?;
    expect_empty_dir(&c.tmp(), "wpd-ld must remove its temporary directory")?;
    let relocs = tool(READELF, &["-r"], &lib)?;
    if !relocs.contains("R_X86_64_TLSDESC") {
        return Err(format!("-mtls-dialect=gnu2: no R_X86_64_TLSDESC in {}:\n{relocs}", lib.display()));
    }
    let exe = c.path("prog");
    run(c
        .clang()
        .arg("-O0")
        .arg(c.src.join("use_counter.cpp"))
        .arg(&lib)
        .arg("-Wl,-rpath,$ORIGIN")
        .arg("-o")
        .arg(&exe))?;
    same_run("wpd-ld", &want, &run_program(&exe, c.dir.path())?)
}

/// `-fjmc` (`-plugin-opt=-enable-jmc-instrument`): functions with debug
/// information check `__CheckForDebuggerJustMyCode`.
fn jmc_instrument() -> Check {
    let c = Case::new("jmc", "debug")?;
    let want = c.reference(&["main.cpp"])?;
    let obj = c.bitcode("main.cpp", "main.o", &["-g"])?;
    let (exe, got) = c.link_and_run(&[&obj], "prog", &["-g", "-fjmc"])?;
    same_run("wpd-ld", &want, &got)?;
    let syms = tool(NM, &[], &exe)?;
    if syms.contains("__CheckForDebuggerJustMyCode") {
        Ok(())
    } else {
        Err(format!("-fjmc: no __CheckForDebuggerJustMyCode in {}:\n{syms}", exe.display()))
    }
}

/// An instrumentation profile of the `profile` fixture (an `-O2
/// -fprofile-generate` build, run once, merged).
fn ir_profile(c: &Case) -> Check<PathBuf> {
    let raw = c.path("raw");
    let gen_exe = c.path("gen");
    run(c
        .clang()
        .args(["-O2", &format!("-fprofile-generate={}", raw.display())])
        .arg(c.src.join("main.cpp"))
        .arg("-o")
        .arg(&gen_exe))?;
    let r = run_program(&gen_exe, c.dir.path())?;
    if r.code != Some(0) {
        return Err(format!("the instrumented build ended with {}", r.exit()));
    }
    let profdata = c.path("ir.profdata");
    run(Command::new(PROFDATA).arg("merge").arg("-o").arg(&profdata).arg(&raw))?;
    Ok(profdata)
}

fn split_machine_functions() -> Check {
    let c = Case::new("mfs", "profile")?;
    let want = c.reference(&["main.cpp"])?;
    let profdata = ir_profile(&c)?;
    // The blocks the profile never saw move to `<function>.cold`.
    let obj = c.bitcode("main.cpp", "main.o", &[&format!("-fprofile-use={}", profdata.display())])?;
    let (exe, got) = c.link_and_run(&[&obj], "prog", &["-fsplit-machine-functions"])?;
    same_run("wpd-ld", &want, &got)?;
    let syms = tool(NM, &[], &exe)?;
    if syms.lines().any(|l| l.ends_with(".cold")) {
        Ok(())
    } else {
        Err(format!("-fsplit-machine-functions: no `.cold` part in {}:\n{syms}", exe.display()))
    }
}

// --- split DWARF --------------------------------------------------------

/// The `DWO_id = 0x…` of the first unit of a DWARF dump.
fn dwo_id(dump: &str) -> Option<&str> {
    let rest = &dump[dump.find("DWO_id = ")? + "DWO_id = ".len()..];
    rest.split(|ch: char| !ch.is_ascii_alphanumeric()).next()
}

fn split_dwarf() -> Check {
    let c = Case::new("split-dwarf", "debug")?;
    let want = c.reference(&["main.cpp"])?;
    let obj = c.bitcode("main.cpp", "main.o", &["-g", "-gsplit-dwarf"])?;
    mkdir(&c.path("out"))?;
    // clang passes -plugin-opt=dwo_dir=out/prog_dwo.
    let (exe, got) = c.link_and_run(&[&obj], "out/prog", &["-g", "-gsplit-dwarf"])?;
    same_run("wpd-ld", &want, &got)?;
    let dwo = c.path("out/prog_dwo/1.dwo");
    if !dwo.is_file() {
        let left = wpd_tests::list_dir(&c.path("out/prog_dwo")).unwrap_or_default();
        return Err(format!("no {} (the dwo directory holds {left:?})", dwo.display()));
    }
    let skeleton = tool(DWARFDUMP, &["--debug-info"], &exe)?;
    let split = tool(DWARFDUMP, &["--debug-info"], &dwo)?;
    let names_dwo =
        skeleton.contains("DW_UT_skeleton") && skeleton.contains("DW_AT_dwo_name\t(\"out/prog_dwo/1.dwo\")");
    if !names_dwo
        || !split.contains("DW_UT_split_compile")
        || dwo_id(&skeleton).is_none()
        || dwo_id(&skeleton) != dwo_id(&split)
    {
        return Err(format!(
            "the skeleton in {} does not refer to {}:\n--- skeleton\n{}\n--- dwo\n{}",
            exe.display(),
            dwo.display(),
            skeleton.lines().take(12).collect::<Vec<_>>().join("\n"),
            split.lines().take(6).collect::<Vec<_>>().join("\n")
        ));
    }
    Ok(())
}

// --- profiles -----------------------------------------------------------

/// Links through wpd-ld, which must fail with exactly one `wpd-ld: error:`
/// line containing `needle`, create no program and leave `$TMPDIR` empty.
fn expect_one_error(c: &Case, inputs: &[&Path], extra: &[&str], needle: &str) -> Check {
    let out = "failed";
    let mut cmd = c.wpd_ld(inputs, out, extra)?;
    let shown = show_cmd(&cmd);
    let o = run_raw(&mut cmd)?;
    let stderr = String::from_utf8_lossy(&o.stderr);
    let ours: Vec<&str> = stderr.lines().filter(|l| l.starts_with("wpd-ld")).collect();
    if o.status.success() || ours.len() != 1 || !ours[0].starts_with("wpd-ld: error: ") || !ours[0].contains(needle) {
        return Err(format!("`{shown}` must fail with one `wpd-ld: error:` line naming {needle}, got:\n{stderr}"));
    }
    if stderr.contains("panicked") || c.path(out).exists() {
        return Err(format!("`{shown}` panicked or left a program:\n{stderr}"));
    }
    expect_empty_dir(&c.tmp(), "a failed link must remove its temporary files")
}

fn sample_profile() -> Check {
    let c = Case::new("sample", "profile")?;
    let want = c.reference(&["main.cpp"])?;
    let mut profiles = Vec::new();
    for name in ["sample", "unrelated"] {
        let prof = c.path(&format!("{name}.prof"));
        run(Command::new(PROFDATA)
            .args(["merge", "--sample"])
            .arg(c.src.join(format!("{name}.txt")))
            .arg("-o")
            .arg(&prof))?;
        profiles.push(prof);
    }
    // A sample profile at compile time marks the functions for sample-based
    // optimization; the unrelated one gives them no samples, so whatever
    // the program's profile does happens at link time.
    let obj = c.bitcode("main.cpp", "main.o", &["-g", &format!("-fprofile-sample-use={}", profiles[1].display())])?;
    let keep = "-Wl,-z,keep-text-section-prefix";
    let with = |prof: &Path| format!("-fprofile-sample-use={}", prof.display());
    let (exe, got) = c.link_and_run(&[&obj], "prog", &[&with(&profiles[0]), keep])?;
    same_run("wpd-ld", &want, &got)?;
    // Functions without samples in a profiled program are cold.
    let sections = tool(READELF, &["-S"], &exe)?;
    if !sections.contains(".text.unlikely") {
        return Err(format!("-fprofile-sample-use: no .text.unlikely in {}:\n{sections}", exe.display()));
    }
    let (control, _) = c.link_and_run(&[&obj], "control", &[&with(&profiles[1]), keep])?;
    if tool(READELF, &["-S"], &control)?.contains(".text.unlikely") {
        return Err("the .text.unlikely section does not come from the link-time profile".into());
    }
    let bad = c.path("bad.prof");
    write(&bad, b"not a profile\n")?;
    expect_one_error(&c, &[&obj], &[&with(&bad)], "bad.prof")
}

fn cs_profile_generate_and_use() -> Check {
    let c = Case::new("cs-profile", "profile")?;
    let want = c.reference(&["main.cpp"])?;
    // Context-sensitive instrumentation happens in the backends; the
    // compile step names the output directory.
    let gen_flag = "-fcs-profile-generate=csdir";
    let obj = c.bitcode("main.cpp", "main.o", &[gen_flag])?;
    let (_, got) = c.link_and_run(&[&obj], "gen", &[gen_flag])?;
    same_run("wpd-ld (instrumented)", &want, &got)?;
    let csdir = c.path("csdir");
    let raws = wpd_tests::list_dir(&csdir).unwrap_or_default();
    if !raws.iter().any(|r| r.ends_with(".profraw")) {
        return Err(format!("-fcs-profile-generate: the program wrote no profile to {} ({raws:?})", csdir.display()));
    }
    let profdata = c.path("cs.profdata");
    run(Command::new(PROFDATA).arg("merge").arg("-o").arg(&profdata).arg(&csdir))?;
    let shown = tool(PROFDATA, &["show", "--showcs"], &profdata)?;
    let functions =
        shown.lines().find_map(|l| l.strip_prefix("Total functions: ")).and_then(|n| n.trim().parse::<u32>().ok());
    if functions.unwrap_or(0) == 0 {
        return Err(format!("-fcs-profile-generate: no context-sensitive counts in the profile:\n{shown}"));
    }
    // -fprofile-use at link time: -plugin-opt=cs-profile-path=.
    let use_flag = format!("-fprofile-use={}", profdata.display());
    let (_, got) = c.link_and_run(&[&obj], "prog", &[&use_flag])?;
    same_run("wpd-ld (profile use)", &want, &got)?;
    let bad = c.path("bad.profdata");
    write(&bad, b"not a profile\n")?;
    expect_one_error(&c, &[&obj], &[&format!("-fprofile-use={}", bad.display())], "bad.profdata")?;
    expect_one_error(&c, &[&obj], &["-Wl,-plugin-opt=cs-profile-path=missing.profdata"], "missing.profdata")
}

// --- options wpd-ld refuses ---------------------------------------------

fn refused_plugin_options() -> Check {
    let c = Case::new("refused", "response_file")?;
    let obj = c.bitcode("main.cpp", "main.o", &[])?;
    expect_one_error(&c, &[&obj], &["-fsave-optimization-record"], "-plugin-opt=opt-remarks-filename=")?;
    expect_one_error(&c, &[&obj], &["-save-stats"], "-plugin-opt=stats-file=")
}

// --- LLVM's code generation flags ------------------------------------------

/// The size of the program's `.text`.
fn text_size(exe: &Path) -> Check<u64> {
    let sections = tool(READELF, &["-SW"], exe)?;
    sections
        .lines()
        .find_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            let at = f.iter().position(|w| *w == ".text")?;
            u64::from_str_radix(f.get(at + 4)?, 16).ok()
        })
        .ok_or_else(|| format!("no .text in {}:\n{sections}", exe.display()))
}

/// The flags LLVM registers only in its tools (llc, lld: `-align-loops`,
/// `-mattr`, `-relocation-model`, the MC layer's `-dwarf64`, ...) reach the
/// backends under both spellings, as lld takes them; an option LLVM does
/// not know is still refused.
fn llvm_code_generation_flags() -> Check {
    let c = Case::new("codegen-flags", "profile")?;
    let want = c.reference(&["main.cpp"])?;
    let obj = c.bitcode("main.cpp", "main.o", &["-g"])?;
    let (plain, got) = c.link_and_run(&[&obj], "plain", &["-g"])?;
    same_run("wpd-ld", &want, &got)?;
    // `total`'s loop aligned to 4 KiB: the padding makes .text larger.
    for (out, flag) in
        [("aligned", "-Wl,-mllvm,-align-loops=4096"), ("aligned-opt", "-Wl,-plugin-opt=-align-loops=4096")]
    {
        let (exe, got) = c.link_and_run(&[&obj], out, &["-g", flag])?;
        same_run("wpd-ld", &want, &got)?;
        let (before, after) = (text_size(&plain)?, text_size(&exe)?);
        if after <= before {
            return Err(format!("{flag}: .text {after} bytes, without it {before}: the loop was not aligned"));
        }
    }
    // An MC flag: 64-bit DWARF in the units wpd-ld's backends emit.
    let (exe, got) = c.link_and_run(&[&obj], "dwarf64", &["-g", "-Wl,-mllvm,-dwarf64", "-Wl,-mllvm,-mattr=+sse4.2"])?;
    same_run("wpd-ld", &want, &got)?;
    let dump = tool(DWARFDUMP, &["--debug-info"], &exe)?;
    if !dump.contains("format = DWARF64") || tool(DWARFDUMP, &["--debug-info"], &plain)?.contains("format = DWARF64") {
        return Err(format!(
            "-mllvm -dwarf64: no DWARF64 unit in {}:\n{}",
            exe.display(),
            &dump[..dump.len().min(600)]
        ));
    }
    // -mcpu= under -mllvm is -plugin-opt=mcpu= (the last wins: an unknown
    // CPU gets LLVM's warning, as from lld), and "native" is this machine.
    for (out, cpu, warned) in [("unknown-cpu", "nosuchcpu", true), ("native", "native", false)] {
        let exe = c.path(out);
        let mcpu = format!("-Wl,-mllvm,-mcpu={cpu}");
        let linked = link(&mut c.wpd_ld(&[&obj], out, &["-Wl,-plugin-opt=mcpu=x86-64", &mcpu])?, &exe)?;
        let stderr = String::from_utf8_lossy(&linked.stderr);
        if stderr.contains(&format!("'{cpu}' is not a recognized processor")) != warned {
            return Err(format!(
                "{mcpu}: LLVM's warning for an unknown CPU expected: {warned}; wpd-ld said:\n{stderr}"
            ));
        }
        same_run("wpd-ld", &want, &run_program(&exe, c.dir.path())?)?;
    }
    expect_one_error(&c, &[&obj], &["-Wl,-mllvm,-no-such-llvm-flag"], "unknown LLVM option '-no-such-llvm-flag'")?;
    expect_one_error(&c, &[&obj], &["-Wl,-mllvm,-mcpu="], "-mllvm -mcpu= needs a value")
}

/// lld's `--lto-CGO<n>` sets code generation's level apart from the
/// optimization level: at 0 LLVM selects instructions the fast way, which
/// makes more code; each program prints what -O0 prints. A level LLVM does
/// not have is one error line.
fn codegen_level() -> Check {
    let c = Case::new("codegen-level", "profile")?;
    let want = c.reference(&["main.cpp"])?;
    let obj = c.bitcode("main.cpp", "main.o", &[])?;
    let (plain, got) = c.link_and_run(&[&obj], "plain", &[])?;
    same_run("wpd-ld", &want, &got)?;
    let (cgo0, got) = c.link_and_run(&[&obj], "cgo0", &["-Wl,--lto-CGO0"])?;
    same_run("wpd-ld --lto-CGO0", &want, &got)?;
    let (cgo3, got) = c.link_and_run(&[&obj], "cgo3", &["-Wl,--lto-CGO3"])?;
    same_run("wpd-ld --lto-CGO3", &want, &got)?;
    let (before, fast, aggressive) = (text_size(&plain)?, text_size(&cgo0)?, text_size(&cgo3)?);
    if fast <= before {
        return Err(format!(
            "--lto-CGO0: .text {fast} bytes, at the default level {before}: the level was not applied"
        ));
    }
    if aggressive >= fast {
        return Err(format!("--lto-CGO3: .text {aggressive} bytes, not less than --lto-CGO0's {fast}"));
    }
    expect_one_error(&c, &[&obj], &["-Wl,--lto-CGO4"], "invalid codegen optimization level --lto-CGO4")?;
    // lld and LLVMgold refuse an optimization level past 3, and so does wpd.
    expect_one_error(&c, &[&obj], &["-Wl,--lto-O4"], "invalid optimization level --lto-O4 (0 to 3)")
}

/// clang's `-flto-jobs=0` (its documented default, passed as
/// `-plugin-opt=jobs=0`) and `--thinlto-jobs=0` mean one thread per core,
/// as lld takes them; a count that is no number is one error naming it.
/// `--lto-partitions=1`, lld's default, links.
fn default_counts() -> Check {
    let c = Case::new("job-counts", "profile")?;
    let want = c.reference(&["main.cpp"])?;
    let obj = c.bitcode("main.cpp", "main.o", &[])?;
    for (out, flag) in
        [("jobs0", "-flto-jobs=0"), ("thinlto0", "-Wl,--thinlto-jobs=0"), ("empty", "-Wl,--thinlto-jobs=")]
    {
        let (_, got) = c.link_and_run(&[&obj], out, &[flag, "-Wl,--wpd-report=r.json"])?;
        same_run(&format!("wpd-ld {flag}"), &want, &got)?;
        let report: serde_json::Value = serde_json::from_slice(&read(&c.path("r.json"))?).map_err(|e| e.to_string())?;
        if !report["settings"]["jobs"].is_null() {
            return Err(format!(
                "wpd-ld {flag}: the report's jobs are {}, not the default",
                report["settings"]["jobs"]
            ));
        }
    }
    expect_one_error(&c, &[&obj], &["-Wl,--thinlto-jobs=many"], "--thinlto-jobs=many: invalid job count 'many'")?;
    // lld's default partition count, spelled out, links; wpd's regular
    // LTO is one partition, so another count is refused, not ignored.
    let (_, got) = c.link_and_run(&[&obj], "partitions1", &["-Wl,--lto-partitions=1"])?;
    same_run("wpd-ld --lto-partitions=1", &want, &got)?;
    expect_one_error(&c, &[&obj], &["-Wl,--lto-partitions=2"], "--lto-partitions=2 is not supported")
}

// --- the process ----------------------------------------------------------

/// wpd-ld's allocator (mimalloc) must serve the C++ code linked in, LLVM's
/// backends and lld, not only Rust (and so must `wpd`'s): the executable
/// must define and export glibc's whole allocation interface, so that
/// libstdc++'s `operator new` and every `malloc` binds to it. A build that lost the override (a
/// feature flag, a dependency moved) still links and runs, only slower:
/// this catches it. Then one real link, with mimalloc's statistics on,
/// must show mimalloc serving the link's allocations.
fn allocator_serves_llvm() -> Check {
    // Both commands that run LLVM: wpd-ld, and `wpd` (distributed backends,
    // the per-phase commands).
    const ALLOCATION: &[&str] =
        &["malloc", "free", "calloc", "realloc", "posix_memalign", "aligned_alloc", "memalign", "malloc_usable_size"];
    for bin in [wpd_ld_bin()?, wpd_tests::wpd_bin()?] {
        let out = run(Command::new(NM).args(["-D", "--defined-only"]).arg(&bin))?;
        let nm = String::from_utf8_lossy(&out.stdout);
        let defined: Vec<&str> = nm.lines().filter_map(|l| l.split_whitespace().nth(2)).collect();
        if let Some(f) = ALLOCATION.iter().find(|f| !defined.contains(f)) {
            return Err(format!(
                "{} does not define and export `{f}`: LLVM would allocate with glibc's",
                bin.display()
            ));
        }
    }
    let c = Case::new("allocator", "response_file")?;
    let want = c.reference(&["main.cpp"])?;
    let obj = c.bitcode("main.cpp", "main.o", &[])?;
    let mut cmd = c.wpd_ld(&[&obj], "prog", &[])?;
    cmd.env("MIMALLOC_SHOW_STATS", "1");
    let out = run(&mut cmd)?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    if !stderr.contains("peak rss") {
        return Err(format!("no mimalloc statistics after a link through wpd-ld:\n{stderr}"));
    }
    expect_empty_dir(&c.tmp(), "wpd-ld must remove its temporary directory")?;
    let got = run_program(&c.path("prog"), c.dir.path())?;
    same_run("wpd-ld", &want, &got)
}

/// `--wpd-low-memory` sets mimalloc's purge delay to 0 (freed pages go
/// back to the system at once; linker-shim/src/allocator.rs), which the
/// report's `allocator` reads back from mimalloc: 10 ms without the flag,
/// the environment's `MIMALLOC_PURGE_DELAY` when it is set, 0 with the flag
/// whatever the environment says. The program is the same bytes either way
/// and prints what its -O0 build prints.
fn low_memory_purges_at_once() -> Check {
    let c = Case::new("low_memory", "response_file")?;
    let want = c.reference(&["main.cpp"])?;
    let obj = c.bitcode("main.cpp", "main.o", &[])?;
    let purge_delay = |label: &str, extra: &[&str], env: Option<&str>| -> Check<(Vec<u8>, i64)> {
        let report = c.path(&format!("{label}.json"));
        let report_arg = format!("-Wl,--wpd-report={}", report.display());
        let mut args = vec![report_arg.as_str()];
        args.extend_from_slice(extra);
        let mut cmd = c.wpd_ld(&[&obj], label, &args)?;
        if let Some(v) = env {
            cmd.env("MIMALLOC_PURGE_DELAY", v);
        }
        link(&mut cmd, &c.path(label))?;
        expect_empty_dir(&c.tmp(), "wpd-ld must remove its temporary directory")?;
        same_run(label, &want, &run_program(&c.path(label), c.dir.path())?)?;
        let json: serde_json::Value = serde_json::from_slice(&read(&report)?).map_err(|e| e.to_string())?;
        let delay = json["allocator"]["purge_delay_ms"]
            .as_i64()
            .ok_or_else(|| format!("{label}: the report has no allocator.purge_delay_ms: {}", json["allocator"]))?;
        Ok((read(&c.path(label))?, delay))
    };
    let (default_bytes, default_delay) = purge_delay("default", &[], None)?;
    let (low_bytes, low_delay) = purge_delay("low", &["-Wl,--wpd-low-memory"], None)?;
    let (_, env_delay) = purge_delay("env", &[], Some("3"))?;
    let (_, env_low_delay) = purge_delay("env_low", &["-Wl,--wpd-low-memory"], Some("3"))?;
    let delays = [default_delay, low_delay, env_delay, env_low_delay];
    if delays != [10, 0, 3, 0] {
        return Err(format!(
            "purge delays (default, --wpd-low-memory, MIMALLOC_PURGE_DELAY=3, both): {delays:?}, want [10, 0, 3, 0]"
        ));
    }
    if default_bytes != low_bytes {
        return Err("--wpd-low-memory changed the program's bytes".into());
    }
    Ok(())
}

// --- wpd-ld's code layout --------------------------------------------------

/// `make build` lays wpd-ld out by profile with BOLT (linker-shim/bolt.sh),
/// which keeps the linker's layout beside it as `wpd-ld.prebolt`. The layout
/// moves code and must change nothing wpd-ld writes: a generated program that
/// none of bolt.sh's training links used (gen.py seed 13: several bases,
/// merged calls, a constant vtable address, placement new), linked by both
/// binaries with two backend jobs, must come out the same bytes and print
/// what its -O0 build prints. `make test` sets `WPD_REQUIRE_BOLT_LAYOUT`: a
/// build that stopped laying wpd-ld out fails there; a plain `cargo build`
/// has nothing to compare and passes with a note.
fn optimized_layout_same_output() -> Check {
    let bin = wpd_ld_bin()?;
    if !tool(READELF, &["-SW"], &bin)?.contains(".note.bolt_info") {
        if std::env::var_os("WPD_REQUIRE_BOLT_LAYOUT").is_some() {
            return Err(format!(
                "{} is not laid out by BOLT (no .note.bolt_info): `make build` runs linker-shim/bolt.sh after cargo",
                bin.display()
            ));
        }
        eprintln!(
            "note: {} keeps the linker's layout (linker-shim/bolt.sh not run): nothing to compare",
            bin.display()
        );
        return Ok(());
    }
    let prebolt = bin.with_file_name("wpd-ld.prebolt");
    let sections = tool(READELF, &["-SW"], &prebolt).map_err(|e| format!("{e}\n(linker-shim/bolt.sh keeps it)"))?;
    if sections.contains(".note.bolt_info") || !sections.contains(".rela.text") {
        return Err(format!("{} is not the linker's layout of wpd-ld", prebolt.display()));
    }
    let dir = temp_dir("link-options-layout")?;
    let src = dir.path().join("src");
    run(Command::new("python3")
        .arg(repo_root().join("fuzz/hierarchies/gen.py"))
        .args(["--seed", "13", "--tus", "5", "--split", "--native", "0", "--no-shared", "--no-archive"])
        .arg("--out")
        .arg(&src))?;
    let mut sources: Vec<PathBuf> = std::fs::read_dir(&src)
        .map_err(|e| format!("{}: {e}", src.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        // dead-needed's library (`dn0.c`) too: one program, compiled as C++.
        .filter(|p| p.extension().is_some_and(|x| x == "cpp" || x == "c"))
        .collect();
    sources.sort();
    let reference = dir.path().join("ref");
    run(Command::new(CLANGXX).args(["-O0", "-std=c++20", "-w"]).args(&sources).arg("-o").arg(&reference))?;
    let want = run_program(&reference, dir.path())?;
    let mut objects = Vec::new();
    for source in &sources {
        let obj = source.with_extension("o");
        run(Command::new(CLANGXX)
            .args(BITCODE_FLAGS)
            .args(["-std=c++20", "-w", "-c"])
            .arg(source)
            .arg("-o")
            .arg(&obj))?;
        objects.push(obj);
    }
    // Each links `prog` in its own directory: the two command lines differ
    // in `--ld-path` alone.
    let mut programs = Vec::new();
    for (name, linker) in [("bolted", &bin), ("prebolt", &prebolt)] {
        let out = dir.path().join(name);
        mkdir(&out)?;
        let exe = out.join("prog");
        let mut cmd = Command::new(CLANGXX);
        cmd.arg("-flto=thin").arg(format!("--ld-path={}", linker.display()));
        cmd.args(["-Wl,--lto-whole-program-visibility", "-Wl,--wpd-jobs=2"]).args(&objects).arg("-o").arg(&exe);
        link(&mut cmd, &exe)?;
        same_run(&format!("wpd-ld ({name})"), &want, &run_program(&exe, dir.path())?)?;
        programs.push(read(&exe)?);
    }
    if programs[0] != programs[1] {
        return Err(format!(
            "{} and {} link seed 13 to different programs: BOLT changed what wpd-ld writes",
            bin.display(),
            prebolt.display()
        ));
    }
    Ok(())
}
