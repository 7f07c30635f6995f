//! Real-world code bases, their C++ sources fetched through cargo at test
//! time, compiled with clang++-19 ThinLTO and whole-program vtables, linked
//! through `wpd-ld`, run, and compared with `-O0` builds of the same sources.
//!
//! **leveldb 1.22** (the `leveldb-sys` crate): the library and eleven of its
//! own test programs, linked with whole-program visibility. leveldb is built
//! on virtual interfaces (Env, Comparator, Iterator, Cache, Logger,
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
//! **libzmq 4.3.5** (the `zeromq-src` crate): 118 C++ sources and one C
//! source, the library's classes built by multiple inheritance (sessions,
//! engines, connecters and listeners reached through `this`-adjusting
//! thunks), an I/O thread per context and a reaper thread.
//! `fixtures/realworld/libzmq_driver.cpp` moves messages through every
//! transport the sources build (inproc, tcp and ws on the loopback, abstract
//! ipc) and six socket patterns. The program is linked four ways: with the
//! library as an archive and whole-program visibility (the devirtualized
//! call sites, by caller and target, must include every one LLVM's own
//! WholeProgramDevirt devirtualizes in lld's link of the same objects);
//! without whole-program visibility through gold and the plugin, with every
//! third object a native `-O0` one; and against `libzmq.so`, itself linked
//! by wpd-ld without whole-program visibility (where no call may be
//! devirtualized: every vtable is the library users' to derive from). The
//! archive link is made with one and with two jobs: the programs must be
//! byte-identical.
//!
//! **spdlog 1.10** (Debian's `libspdlog-dev`, header-only, with fmt
//! header-only): `fixtures/realworld/spdlog/` logs through one logger
//! with four sinks, a pattern whose flags are some thirty formatter
//! classes behind one slot plus two custom ones, level filtering and a
//! backtrace. Linked with whole-program visibility through wpd-ld (every
//! call site LLVM's WholeProgramDevirt devirtualizes in lld's link of the
//! same objects must be devirtualized too, and some slots must be dead),
//! through gold and the plugin (the same counts and dead slots as wpd-ld:
//! the program shares `<sstream>`'s VTT and instantiations with
//! libstdc++.so), and as a bitcode shared library linked by wpd-ld with a
//! program linked against it; each must print what its -O0 build prints.
//!
//! Set `WPD_SKIP_REALWORLD=1` to skip (e.g. offline).

use libtest_mimic::{Arguments, Trial};
use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;
use wpd_tests::link::oracle::{self, Flavor};
use wpd_tests::link::{
    DevirtualizedSites, llvm_command, llvm_yaml_devirtualized, read_report, report_devirtualized, run_program,
    same_run, wpd_ld_bin, wpd_ld_command, wpd_plugin_so,
};
use wpd_tests::{CLANG, CLANGXX, Check, LLVM_AR, list_dir, mkdir, read, repo_root, run, temp_dir, write};

const LEVELDB_SYS: &str = "2.0.9";
const ZEROMQ_SRC: &str = "0.3.6+4.3.5";
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

/// The directory of crate `name`, version `version`, fetched through cargo
/// into `scratch`.
fn crate_dir(scratch: &Path, name: &str, version: &str) -> Check<PathBuf> {
    mkdir(scratch)?;
    let manifest = scratch.join("Cargo.toml");
    write(
        &manifest,
        format!(
            "[package]\nname = \"fetch-{name}\"\nversion = \"0.0.0\"\nedition = \"2021\"\n\n[dependencies]\n{name} = \"={version}\"\n"
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
        .and_then(|ps| ps.iter().find(|p| p["name"] == name))
        .ok_or(format!("cargo metadata lists no {name}"))?;
    Ok(Path::new(pkg["manifest_path"].as_str().ok_or("no manifest_path")?).parent().ok_or("bad manifest_path")?.into())
}

/// The leveldb source tree inside the fetched crate.
fn leveldb_sources(scratch: &Path) -> Check<PathBuf> {
    let dir = crate_dir(scratch, "leveldb-sys", LEVELDB_SYS)?.join("deps/leveldb-1.22");
    if dir.join("db/db_impl.cc").is_file() { Ok(dir) } else { Err(format!("no leveldb sources in {}", dir.display())) }
}

/// Compiles `(source, object)` pairs with `compiler`, two at a time.
fn compile_all(compiler: &str, jobs: &[(PathBuf, PathBuf)], flags: &[String]) -> Check {
    for pair in jobs.chunks(2) {
        let mut children = Vec::new();
        for (src, obj) in pair {
            let mut c = Command::new(compiler);
            c.args(flags).arg("-c").arg(src).arg("-o").arg(obj);
            children.push((c.spawn().map_err(|e| format!("{compiler}: {e}"))?, src.clone()));
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
        compile_all(CLANGXX, &all, &flags)?;
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
        let r = read_report(&report)?;
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
        let p = read_report(&plugin_report)?;
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

/// libzmq's configuration on Linux as the `zeromq-src` crate's build gives
/// it (`-D` flags and an empty `platform.hpp`), without libsodium.
const LIBZMQ_DEFINES: &[&str] = &[
    "-DZMQ_USE_CV_IMPL_STL11=1",
    "-DZMQ_STATIC=1",
    "-DZMQ_USE_BUILTIN_SHA1=1",
    "-DZMQ_HAVE_WS=1",
    "-DZMQ_HAVE_LINUX=1",
    "-DZMQ_IOTHREAD_POLLER_USE_EPOLL=1",
    "-DZMQ_POLL_BASED_ON_POLL=1",
    "-DZMQ_HAVE_IPC=1",
    "-DHAVE_STRNLEN=1",
    "-DZMQ_HAVE_UIO=1",
    "-DZMQ_HAVE_STRUCT_SOCKADDR_UN=1",
];

fn libzmq() -> Check {
    let plugin = wpd_plugin_so()?;
    let dir = temp_dir("realworld-libzmq")?;
    let work = dir.path();
    let vendor = crate_dir(&work.join("fetch"), "zeromq-src", ZEROMQ_SRC)?.join("vendor");
    let config = work.join("config");
    mkdir(&config)?;
    write(&config.join("platform.hpp"), b"")?;
    // Every library source the crate compiles on Linux: all of src/ but the
    // TLS websocket engine (GnuTLS), and the bundled SHA-1.
    let mut sources: Vec<PathBuf> = Vec::new();
    for e in std::fs::read_dir(vendor.join("src")).map_err(|e| format!("{}: {e}", vendor.display()))? {
        let path = e.map_err(|e| e.to_string())?.path();
        if path.extension().is_some_and(|x| x == "cpp") && !path.ends_with("wss_engine.cpp") {
            sources.push(path);
        }
    }
    sources.sort();
    if sources.len() < 100 {
        return Err(format!("only {} libzmq sources in {}", sources.len(), vendor.display()));
    }
    let sha1 = vendor.join("external/sha1/sha1.c");
    let driver = repo_root().join("fixtures/realworld/libzmq_driver.cpp");
    let mut common: Vec<String> = LIBZMQ_DEFINES.iter().map(|d| d.to_string()).collect();
    common.extend(["-w".to_string(), "-fPIC".to_string()]);
    for inc in [vendor.join("include"), vendor.join("src"), config.clone()] {
        common.push(format!("-I{}", inc.display()));
    }
    let obj = |mode: &str, src: &Path| {
        work.join(mode).join(format!("{}.o", src.file_stem().unwrap_or_default().to_string_lossy()))
    };
    let mut lib_objects: BTreeMap<&str, Vec<PathBuf>> = BTreeMap::new();
    for (mode, extra) in [("lto", &["-O2", "-flto=thin", "-fwhole-program-vtables"][..]), ("o0", &["-O0"][..])] {
        mkdir(&work.join(mode))?;
        let mut flags = common.clone();
        flags.extend(extra.iter().map(|s| s.to_string()));
        let mut cxx: Vec<(PathBuf, PathBuf)> = sources.iter().map(|s| (s.clone(), obj(mode, s))).collect();
        cxx.push((driver.clone(), obj(mode, &driver)));
        let mut cxx_flags = flags.clone();
        cxx_flags.push("-std=c++11".into());
        compile_all(CLANGXX, &cxx, &cxx_flags)?;
        compile_all(CLANG, &[(sha1.clone(), obj(mode, &sha1))], &flags)?;
        let objects = lib_objects.entry(mode).or_default();
        objects.extend(sources.iter().chain([&sha1]).map(|s| obj(mode, s)));
    }
    let (lto, o0) = (&lib_objects["lto"], &lib_objects["o0"]);
    let mut ar = Command::new(LLVM_AR);
    run(ar.arg("rcs").arg(work.join("libzmq_lto.a")).args(lto))?;

    let reference = work.join("zmq.o0");
    run(Command::new(CLANGXX).arg(obj("o0", &driver)).args(o0).args(["-lpthread", "-o"]).arg(&reference))?;
    let want = run_program(&reference, work)?;
    if want.code != Some(0) || !want.stdout.ends_with("done\n") || want.stdout.contains("FAIL") {
        return Err(format!("the -O0 libzmq program did not run through ({}):\n{}", want.exit(), want.stdout));
    }
    let mut failures = Vec::new();
    let mut compare = |what: &str, program: &Path| -> Check {
        failures.extend(same_run(what, &want, &run_program(program, work)?).err());
        Ok(())
    };
    let tmp = work.join("tmp");
    let wpd_link = |inputs: &[OsString], wpv: bool, out: &Path, report: &Path, extra: &[String]| -> Check {
        let mut extra = extra.to_vec();
        extra.push(format!("-Wl,--wpd-report={}", report.display()));
        run(&mut wpd_ld_command(work, inputs, out, wpv, &extra, &tmp)?).map(drop)
    };

    // 1. The library as an archive, whole-program visibility, one and two jobs.
    let archive_inputs: Vec<OsString> = vec![
        obj("lto", &driver).into(),
        format!("-L{}", work.display()).into(),
        "-lzmq_lto".into(),
        "-lpthread".into(),
    ];
    let mut programs = Vec::new();
    for jobs in [1, 2] {
        let (program, report) = (work.join(format!("zmq.wpd{jobs}")), work.join(format!("zmq.wpd{jobs}.json")));
        wpd_link(&archive_inputs, true, &program, &report, &[format!("-Wl,--wpd-jobs={jobs}")])?;
        programs.push(read(&program)?);
    }
    compare("wpd-ld (archive)", &work.join("zmq.wpd2"))?;
    let report = read_report(&work.join("zmq.wpd2.json"))?;
    let theirs = llvm_devirtualized(work, &archive_inputs, &work.join("zmq.lld"))?;
    compare("lld", &work.join("zmq.lld"))?;
    let missed = missed_by_wpd(&theirs, &report, |_| false);

    // 2. gold and the plugin, every third library object a native -O0 one,
    //    no whole-program visibility.
    let mut mixed: Vec<OsString> = vec![obj("lto", &driver).into()];
    mixed.extend(lto.iter().zip(o0).enumerate().map(|(i, (l, n))| if i % 3 == 0 { n } else { l }.into()));
    let gold = work.join("zmq.gold");
    run(Command::new(CLANGXX)
        .current_dir(work)
        .arg("-fuse-ld=gold")
        .arg(format!("-Wl,-plugin,{}", plugin.display()))
        .arg(format!("-Wl,-plugin-opt=wpd-report={}", work.join("zmq.gold.json").display()))
        .args(&mixed)
        .args(["-lpthread", "-o"])
        .arg(&gold))?;
    compare("gold plugin (mixed)", &gold)?;

    // 3. libzmq.so linked by wpd-ld, then the program against it.
    let so_report = work.join("libzmq.so.json");
    let mut so_inputs: Vec<OsString> = vec!["-shared".into()];
    so_inputs.extend(lto.iter().map(|p| p.clone().into()));
    so_inputs.push("-lpthread".into());
    wpd_link(&so_inputs, false, &work.join("libzmq.so"), &so_report, &[])?;
    let so = read_report(&so_report)?;
    let against_so = work.join("zmq.so-user");
    let user_inputs: Vec<OsString> = vec![
        obj("lto", &driver).into(),
        format!("-L{}", work.display()).into(),
        "-lzmq".into(),
        format!("-Wl,-rpath,{}", work.display()).into(),
    ];
    wpd_link(&user_inputs, true, &against_so, &work.join("zmq.so-user.json"), &[])?;
    compare("against libzmq.so", &against_so)?;

    if programs[0] != programs[1] {
        failures.push("the archive link made different programs with --wpd-jobs=1 and 2".into());
    }
    if theirs.is_empty() {
        failures.push("LLVM devirtualized nothing in libzmq: the remarks were not read".into());
    } else if !missed.is_empty() {
        failures.push(format!("LLVM devirtualized calls wpd did not:\n{}", missed.join("\n")));
    }
    // No class of libzmq 4.3.5 with virtual functions has internal linkage:
    // every call site of the library goes through a vtable its users can
    // derive from, so none may become direct.
    for kind in ["single_impl", "uniform_ret_val", "unique_ret_val", "virtual_const_prop"] {
        if so["call_sites"][kind].as_u64() != Some(0) {
            failures.push(format!("libzmq.so without whole-program visibility: {kind} in {}", so["call_sites"]));
        }
    }
    if std::env::var_os("WPD_E2E_VERBOSE").is_some_and(|v| v != "0" && !v.is_empty()) {
        eprintln!(
            "libzmq: wpd {} (LLVM {} distinct), libzmq.so {}",
            report["call_sites"],
            theirs.values().sum::<usize>(),
            so["call_sites"]
        );
    }
    if failures.is_empty() { Ok(()) } else { Err(failures.join("\n\n")) }
}

/// LLVM's own devirtualization of `inputs` (lld's ThinLTO with
/// whole-program visibility, linked into `program`), from its remarks as
/// YAML: they name the calling function, which objects without debug
/// lines still have.
fn llvm_devirtualized(work: &Path, inputs: &[OsString], program: &Path) -> Check<DevirtualizedSites> {
    let yaml = format!("-Wl,--opt-remarks-filename,{}", work.join("remarks.yaml").display());
    run(&mut llvm_command(work, inputs, program, true, &[&yaml, "-Wl,--opt-remarks-passes,wholeprogramdevirt"]))?;
    let remark_files: Vec<PathBuf> =
        list_dir(work)?.into_iter().filter(|n| n.starts_with("remarks.yaml")).map(|n| work.join(n)).collect();
    llvm_yaml_devirtualized(&remark_files)
}

/// The call sites LLVM devirtualized (`theirs`) that wpd's `report` did
/// not, by caller, kind and target, except in the callers `excused` names.
fn missed_by_wpd(
    theirs: &DevirtualizedSites,
    report: &serde_json::Value,
    excused: impl Fn(&str) -> bool,
) -> Vec<String> {
    let ours = report_devirtualized(report);
    theirs
        .iter()
        .filter(|(site, n)| ours.get(*site).copied().unwrap_or(0) < **n && !excused(&site.0))
        .map(|((caller, kind, target), n)| format!("{caller} {kind} {target} x{n}"))
        .collect()
}

fn spdlog() -> Check {
    let src = repo_root().join("fixtures/realworld/spdlog");
    if !Path::new("/usr/include/spdlog/spdlog.h").is_file() {
        return Err("spdlog's headers are missing: install libspdlog-dev (make toolchain)".into());
    }
    let t = temp_dir("realworld-spdlog")?;
    let work = t.path();
    let units = ["sinks", "batch", "main"];
    let common: Vec<String> = ["-std=c++17", "-DFMT_HEADER_ONLY", "-fPIC"]
        .map(String::from)
        .into_iter()
        .chain([format!("-I{}", src.display())])
        .collect();
    let jobs = |suffix: &str| -> Vec<(PathBuf, PathBuf)> {
        units.iter().map(|u| (src.join(format!("{u}.cpp")), work.join(format!("{u}.{suffix}.o")))).collect()
    };
    let flags =
        |opt: &[&str]| -> Vec<String> { opt.iter().map(|f| f.to_string()).chain(common.iter().cloned()).collect() };
    compile_all(CLANGXX, &jobs("lto"), &flags(&["-O2", "-flto=thin", "-fwhole-program-vtables"]))?;
    compile_all(CLANGXX, &jobs("o0"), &flags(&["-O0"]))?;
    let objects = |suffix: &str, which: &[&str]| -> Vec<OsString> {
        which.iter().map(|u| work.join(format!("{u}.{suffix}.o")).into_os_string()).collect()
    };
    let reference = work.join("ref");
    run(Command::new(CLANGXX).args(objects("o0", &units)).arg("-o").arg(&reference))?;
    let want = run_program(&reference, work)?;
    if want.code != Some(0) || !want.stdout.contains("COUNT: direct:0=") {
        return Err(format!("the -O0 build of the spdlog driver ended with {}:\n{}", want.exit(), want.stdout));
    }
    let lto = objects("lto", &units);

    // 1. wpd-ld, whole-program visibility, against LLVM's WPD in lld.
    let prog = work.join("log.wpd");
    let report = work.join("log.json");
    let tmp = work.join("tmp");
    run(&mut wpd_ld_command(work, &lto, &prog, true, &[format!("-Wl,--wpd-report={}", report.display())], &tmp)?)?;
    same_run("spdlog (wpd-ld)", &want, &run_program(&prog, work)?)?;
    let ours_report = read_report(&report)?;
    let lld_prog = work.join("log.lld");
    let theirs = llvm_devirtualized(work, &lto, &lld_prog)?;
    same_run("spdlog (lld)", &want, &run_program(&lld_prog, work)?)?;
    // LLVM also folds `catch (const std::exception &e) { e.what(); }` into
    // `std::runtime_error::what()`, the one override among the bitcode's
    // vtables, though libstdc++.so throws its own `std::exception`
    // classes (`std::bad_alloc`): wpd finds the class open and guards the
    // call. A site LLVM devirtualizes must be devirtualized by wpd too,
    // unless wpd left a call of an open type id in that function.
    let open: Vec<&str> =
        ours_report["open_type_ids"].as_array().into_iter().flatten().filter_map(|o| o["type_id"].as_str()).collect();
    let open_call_in =
        |caller: &str| {
            ours_report["calls"].as_array().into_iter().flatten().any(|c| {
                c["function"].as_str() == Some(caller) && c["type_id"].as_str().is_some_and(|t| open.contains(&t))
            })
        };
    let missed = missed_by_wpd(&theirs, &ours_report, open_call_in);
    if theirs.is_empty() || !missed.is_empty() {
        return Err(format!("LLVM devirtualized {} call sites; wpd missed: {missed:?}", theirs.len()));
    }
    let dead = |r: &serde_json::Value| (r["dead_slots"]["slots"].as_u64(), r["dead_slots"]["functions"].as_u64());
    if dead(&ours_report).0.unwrap_or(0) == 0 {
        return Err(format!("no dead slot in the spdlog driver: {}", ours_report["dead_slots"]));
    }

    // 2. gold and the plugin: the linker's resolutions as the model.
    let plugin_prog = work.join("log.gold");
    let plugin_report = work.join("log.gold.json");
    run(Command::new(CLANGXX)
        .env("TMPDIR", &tmp)
        .arg("-fuse-ld=gold")
        .arg(format!("-Wl,-plugin,{}", wpd_plugin_so()?.display()))
        .arg("-Wl,-plugin-opt=whole-program-visibility")
        .arg(format!("-Wl,-plugin-opt=wpd-report={}", plugin_report.display()))
        .args(&lto)
        .arg("-o")
        .arg(&plugin_prog))?;
    same_run("spdlog (gold plugin)", &want, &run_program(&plugin_prog, work)?)?;
    let plugin_report = read_report(&plugin_report)?;
    if plugin_report["call_sites"] != ours_report["call_sites"] || dead(&plugin_report) != dead(&ours_report) {
        return Err(format!(
            "the plugin's link differs from wpd-ld's: call sites {} against {}, dead slots {} against {}",
            plugin_report["call_sites"],
            ours_report["call_sites"],
            plugin_report["dead_slots"],
            ours_report["dead_slots"]
        ));
    }

    // 3. The library as a bitcode shared library, and a program using it.
    let lib = work.join("libsplog.so");
    run(&mut wpd_ld_command(work, &objects("lto", &["sinks", "batch"]), &lib, true, &["-shared".to_string()], &tmp)?)?;
    let user = work.join("log.so-user");
    let link_lib = [format!("-L{}", work.display()), "-lsplog".to_string(), format!("-Wl,-rpath,{}", work.display())];
    run(&mut wpd_ld_command(work, &objects("lto", &["main"]), &user, true, &link_lib, &tmp)?)?;
    same_run("spdlog (bitcode shared library)", &want, &run_program(&user, work)?)
}

fn main() {
    let args = Arguments::from_args();
    let skip = std::env::var_os("WPD_SKIP_REALWORLD").is_some();
    let trials = vec![
        Trial::test("leveldb", || leveldb().map_err(Into::into)).with_ignored_flag(skip),
        Trial::test("libzmq", || libzmq().map_err(Into::into)).with_ignored_flag(skip),
        Trial::test("spdlog", || spdlog().map_err(Into::into)).with_ignored_flag(skip),
    ];
    libtest_mimic::run(&args, trials).exit();
}
