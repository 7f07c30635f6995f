//! Real-world code base: leveldb 1.22 (the C++ sources shipped in the
//! `leveldb-sys` crate, fetched through cargo at test time). The library and
//! eleven of its own test programs are compiled with clang++-19 ThinLTO and
//! whole-program vtables, linked through `wpd-ld` with whole-program
//! visibility, run, and compared with `-O0` builds of the same sources. leveldb
//! is built on virtual interfaces (Env, Comparator, Iterator, Cache, Logger,
//! FilterPolicy), registers its tests from static constructors, and uses
//! threads. `db_test` is left out: its output depends on compaction timing
//! even at `-O0`.
//!
//! What each link loads (archive members of the leveldb library, shared
//! libraries) must equal what lld loads in its own link of the same inputs
//! (`--trace` of a `--thinlto-index-only` link, see `link::oracle`): the
//! report's `link_model.loaded` against lld's list. `WPD_E2E_VERBOSE=1`
//! prints the figures.
//!
//! Each program is also linked through the linker plugin
//! (`libwpd_plugin.so`) by one of GNU ld, gold and mold in turn (each
//! linker gets a third of the programs): the program must agree with `-O0`,
//! every call site both links compile must get the same outcome, and the
//! counts must equal wpd-ld's. Counts are of the program's call sites, so
//! they hold even where mold 1.10 loads archive members that lld does not
//! (`helpers/memenv/memenv.o` for weak `EnvWrapper` methods that
//! `util/env.o` also defines): that member's functions are dead, or copies
//! that another module's copy replaces, and are left out of the counts
//! (`outside_program_call_sites`).
//!
//! Set `WPD_SKIP_REALWORLD=1` to skip (e.g. offline).

use libtest_mimic::{Arguments, Trial};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;
use wpd_tests::link::oracle::{self, Flavor};
use wpd_tests::link::{wpd_ld_bin, wpd_plugin_so};
use wpd_tests::{CLANGXX, Check, LLVM_AR, mkdir, run, temp_dir, write};

const LEVELDB_SYS: &str = "2.0.9";
const TESTS: &[&str] = &[
    "db/corruption_test",
    "db/fault_injection_test",
    "db/log_test",
    "db/recovery_test",
    "db/skiplist_test",
    "db/version_set_test",
    "db/write_batch_test",
    "helpers/memenv/memenv_test",
    "table/table_test",
    "util/cache_test",
    "util/env_test",
];

/// The leveldb source tree inside the fetched crate.
fn leveldb_sources(scratch: &Path) -> Check<PathBuf> {
    mkdir(scratch)?;
    let manifest = scratch.join("Cargo.toml");
    write(
        &manifest,
        format!(
            "[package]\nname = \"fetch-leveldb\"\nversion = \"0.0.0\"\nedition = \"2021\"\n\n[dependencies]\nleveldb-sys = \"={LEVELDB_SYS}\"\n"
        )
        .as_bytes(),
    )?;
    mkdir(&scratch.join("src"))?;
    write(&scratch.join("src/lib.rs"), b"")?;
    let meta =
        run(Command::new("cargo").args(["metadata", "--format-version", "1", "--manifest-path"]).arg(&manifest))?;
    let v: serde_json::Value = serde_json::from_slice(&meta.stdout).map_err(|e| format!("cargo metadata: {e}"))?;
    let pkg = v["packages"]
        .as_array()
        .and_then(|ps| ps.iter().find(|p| p["name"] == "leveldb-sys"))
        .ok_or("cargo metadata lists no leveldb-sys")?;
    let dir = Path::new(pkg["manifest_path"].as_str().ok_or("no manifest_path")?)
        .parent()
        .ok_or("bad manifest_path")?
        .join("deps/leveldb-1.22");
    if dir.join("db/db_impl.cc").is_file() { Ok(dir) } else { Err(format!("no leveldb sources in {}", dir.display())) }
}

/// Compiles `(source, object)` pairs two at a time.
fn compile_all(jobs: &[(PathBuf, PathBuf)], flags: &[String]) -> Check {
    for pair in jobs.chunks(2) {
        let mut children = Vec::new();
        for (src, obj) in pair {
            let mut c = Command::new(CLANGXX);
            c.args(flags).arg("-c").arg(src).arg("-o").arg(obj);
            children.push((c.spawn().map_err(|e| format!("{CLANGXX}: {e}"))?, src.clone()));
        }
        for (mut child, src) in children {
            let status = child.wait().map_err(|e| e.to_string())?;
            if !status.success() {
                return Err(format!("compiling {} failed", src.display()));
            }
        }
    }
    Ok(())
}

fn run_test(program: &Path, tmp: &Path) -> Check<(i32, String)> {
    let _ = std::fs::remove_dir_all(tmp);
    mkdir(tmp)?;
    let out =
        Command::new(program).env("TEST_TMPDIR", tmp).output().map_err(|e| format!("{}: {e}", program.display()))?;
    let mut text = String::from_utf8_lossy(&out.stdout).into_owned();
    text.push_str(&String::from_utf8_lossy(&out.stderr));
    Ok((out.status.code().unwrap_or(-1), text))
}

fn leveldb() -> Check {
    let wpd_ld = wpd_ld_bin()?;
    let dir = temp_dir("realworld-leveldb")?;
    let work = dir.path();
    let src = leveldb_sources(&work.join("fetch"))?;
    let cfg = work.join("cfg/port");
    mkdir(&cfg)?;
    write(
        &cfg.join("port_config.h"),
        b"#define HAVE_FDATASYNC 1\n#define HAVE_FULLFSYNC 0\n#define HAVE_O_CLOEXEC 1\n#define HAVE_CRC32C 0\n#define HAVE_SNAPPY 0\n",
    )?;
    let mut lib_sources = Vec::new();
    for sub in ["db", "table", "util"] {
        for e in std::fs::read_dir(src.join(sub)).map_err(|e| e.to_string())? {
            let name = e.map_err(|e| e.to_string())?.file_name().to_string_lossy().into_owned();
            let skip = ["_test.cc", "_bench.cc", "leveldbutil.cc", "env_windows.cc"];
            if name.ends_with(".cc") && !skip.iter().any(|s| name.ends_with(s)) {
                lib_sources.push(format!("{sub}/{name}"));
            }
        }
    }
    lib_sources.push("helpers/memenv/memenv.cc".into());
    lib_sources.sort();
    let common: Vec<String> = vec![
        "-std=c++17".into(),
        "-w".into(),
        "-DLEVELDB_PLATFORM_POSIX=1".into(),
        "-DLEVELDB_IS_BIG_ENDIAN=0".into(),
        format!("-I{}", src.display()),
        format!("-I{}", src.join("include").display()),
        format!("-I{}", work.join("cfg").display()),
    ];
    for (mode, extra) in [("lto", vec!["-O2", "-flto=thin", "-fwhole-program-vtables"]), ("o0", vec!["-O0"])] {
        let out = work.join(mode);
        mkdir(&out)?;
        let mut flags = common.clone();
        flags.extend(extra.iter().map(|s| s.to_string()));
        let obj = |s: &str| out.join(format!("{}.o", s.replace('/', "_")));
        let all: Vec<(PathBuf, PathBuf)> = lib_sources
            .iter()
            .map(String::as_str)
            .chain(TESTS.iter().copied())
            .map(|s| {
                let file = if s.ends_with(".cc") { s.to_string() } else { format!("{s}.cc") };
                (src.join(&file), obj(file.trim_end_matches(".cc")))
            })
            .collect();
        compile_all(&all, &flags)?;
        let mut ar = Command::new(LLVM_AR);
        ar.arg("rcs").arg(work.join(format!("libleveldb_{mode}.a")));
        for s in &lib_sources {
            ar.arg(obj(s.trim_end_matches(".cc")));
        }
        run(&mut ar)?;
    }
    let mut failures = Vec::new();
    let mut compared = Vec::new();
    let plugin = wpd_plugin_so()?;
    for (i, t) in TESTS.iter().enumerate() {
        let stem = t.replace('/', "_");
        let reference = work.join(format!("{stem}.o0"));
        run(Command::new(CLANGXX)
            .arg(work.join("o0").join(format!("{stem}.o")))
            .arg(format!("-L{}", work.display()))
            .args(["-lleveldb_o0", "-lpthread", "-o"])
            .arg(&reference))?;
        let program = work.join(format!("{stem}.wpd"));
        let report = work.join(format!("{stem}.json"));
        let inputs: Vec<OsString> = vec![
            work.join("lto").join(format!("{stem}.o")).into(),
            format!("-L{}", work.display()).into(),
            "-lleveldb_lto".into(),
            "-lpthread".into(),
        ];
        run(Command::new(CLANGXX)
            .current_dir(work)
            .args(["-O2", "-flto=thin"])
            .arg(format!("--ld-path={}", wpd_ld.display()))
            .arg("-Wl,--lto-whole-program-visibility")
            .arg(format!("-Wl,--wpd-report={}", report.display()))
            .args(&inputs)
            .arg("-o")
            .arg(&program))?;
        let want = run_test(&reference, &work.join("tmp"))?;
        let got = run_test(&program, &work.join("tmp"))?;
        let r: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&report).map_err(|e| e.to_string())?).map_err(|e| e.to_string())?;
        let single = r["call_sites"]["single_impl"].as_u64().unwrap_or(0);
        // What the link loaded, against lld's own link of the same inputs.
        let out = work.join(format!("{stem}.oracle"));
        match oracle::oracle_link(Flavor::Lld, work, &inputs, &out, true).and_then(|theirs| {
            let ours = oracle::from_report(&r, work)
                .map_err(|e| format!("{e}; ld.lld loaded {}:\n{}", oracle::describe(&theirs), theirs.listing()))?;
            oracle::compare(&ours, &theirs)
        }) {
            Ok(c) => compared.push(c),
            Err(e) => failures.push(format!("{t}: oracle: {e}")),
        }
        if want != got {
            failures.push(format!(
                "{t}: -O0 exit {} vs wpd exit {}\n--- -O0\n{}\n--- wpd\n{}",
                want.0, got.0, want.1, got.1
            ));
        } else if !want.1.contains("==== PASSED") {
            failures.push(format!("{t}: no tests ran:\n{}", want.1));
        } else if single == 0 {
            failures.push(format!("{t}: nothing devirtualized (report: {})", r["call_sites"]));
        }
        // The plugin route, one linker per program in turn.
        let linker = ["bfd", "gold", "mold"][i % 3];
        let via_plugin = work.join(format!("{stem}.plugin-{linker}"));
        let plugin_report = work.join(format!("{stem}.plugin-{linker}.json"));
        run(Command::new(CLANGXX)
            .current_dir(work)
            .arg(format!("-fuse-ld={linker}"))
            .arg(format!("-Wl,-plugin,{}", plugin.display()))
            .arg("-Wl,-plugin-opt=whole-program-visibility")
            .arg(format!("-Wl,-plugin-opt=wpd-report={}", plugin_report.display()))
            .args(&inputs)
            .arg("-o")
            .arg(&via_plugin))?;
        let got = run_test(&via_plugin, &work.join("tmp"))?;
        let p: serde_json::Value = serde_json::from_slice(&std::fs::read(&plugin_report).map_err(|e| e.to_string())?)
            .map_err(|e| e.to_string())?;
        if want != got {
            failures.push(format!("{t}: -O0 exit {} vs plugin ({linker}) exit {}\n{}", want.0, got.0, got.1));
        }
        // Call sites by module (as `archive(member)`, the directory left
        // out), function, location, type id and offset.
        let outcomes = |v: &serde_json::Value| -> std::collections::BTreeMap<String, String> {
            v["calls"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|c| {
                    let module = c["module"].as_str().unwrap_or("").rsplit('/').next().unwrap_or("").to_string();
                    let key = format!("{module} {} {} {} {}", c["function"], c["location"], c["type_id"], c["offset"]);
                    (key, c["outcome"].to_string())
                })
                .collect()
        };
        let (ours, theirs) = (outcomes(&r), outcomes(&p));
        let differ: Vec<String> = ours
            .iter()
            .filter_map(|(k, o)| match theirs.get(k) {
                Some(t) if t != o => Some(format!("{k}: wpd-ld {o}, plugin {t}")),
                None => Some(format!("{k}: not compiled by the plugin")),
                _ => None,
            })
            .collect();
        if !differ.is_empty() {
            failures.push(format!("{t}: plugin ({linker}) differs from wpd-ld:\n{}", differ.join("\n")));
        }
        if p["call_sites"] != r["call_sites"] {
            failures.push(format!("{t}: plugin ({linker}) call_sites {}, wpd-ld {}", p["call_sites"], r["call_sites"]));
        }
    }
    if std::env::var_os("WPD_E2E_VERBOSE").is_some_and(|v| v != "0" && !v.is_empty()) {
        let sum = |f: fn(&oracle::Compared) -> usize| compared.iter().map(f).sum::<usize>();
        eprintln!(
            "oracle: {} wpd-ld links checked against lld: {} equal ({} archive members, {} shared libraries, {} objects), {} failed",
            TESTS.len(),
            compared.len(),
            sum(|c| c.members),
            sum(|c| c.libraries),
            sum(|c| c.objects),
            TESTS.len() - compared.len()
        );
    }
    if failures.is_empty() { Ok(()) } else { Err(failures.join("\n\n")) }
}

fn main() {
    let args = Arguments::from_args();
    let skip = std::env::var_os("WPD_SKIP_REALWORLD").is_some();
    let trials = vec![Trial::test("leveldb", || leveldb().map_err(Into::into)).with_ignored_flag(skip)];
    libtest_mimic::run(&args, trials).exit();
}
