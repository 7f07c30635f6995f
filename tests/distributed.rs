//! Distributed backends (`wpd-ld --wpd-index-only=DIR`,
//! `crates/wpd/src/backends/distributed.rs`): a real CMake + Ninja project linked in
//! one process and as distributed jobs gives the same program, byte for
//! byte, and the same report; a job runs anywhere its listed files are; the
//! final link refuses objects of other inputs and jobs that have not run.
//! Every program prints what its -O0 build prints.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;
use wpd_tests::link::wpd_ld_bin;
use wpd_tests::{CLANGXX, Check, LLVM_AR, demo_objects, demo_reference, read, repo_root, run, run_raw, temp_dir};

const LTO_FLAGS: &str = "-O2 -flto=thin -fwhole-program-vtables";

fn which(name: &str) -> Check<PathBuf> {
    let path = std::env::var_os("PATH").ok_or("no PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
        .ok_or_else(|| format!("{name} not found in PATH (make toolchain installs it)"))
}

fn fixture() -> PathBuf {
    repo_root().join("fixtures/distributed")
}

/// What the fixture prints built at -O0.
fn reference(d: &Path) -> Check<Vec<u8>> {
    let src = fixture();
    let exe = d.join("ref");
    run(Command::new(CLANGXX)
        .arg("-O0")
        .args(["main.cpp", "animals.cpp", "zoo.cpp"].map(|s| src.join(s)))
        .arg("-o")
        .arg(&exe))?;
    Ok(run(&mut Command::new(&exe))?.stdout)
}

/// Configures the build tree `build` with wpd-ld and `link_flags`.
fn configure(build: &Path, link_flags: &str) -> Check {
    let ld = format!("--ld-path={} -Wl,--lto-whole-program-visibility {link_flags}", wpd_ld_bin()?.display());
    run(Command::new("cmake")
        .arg("-G")
        .arg("Ninja")
        .arg("-S")
        .arg(fixture())
        .arg("-B")
        .arg(build)
        .arg(format!("-DCMAKE_CXX_COMPILER={}", which(CLANGXX)?.display()))
        .arg(format!("-DCMAKE_AR={}", which("llvm-ar-19")?.display()))
        .arg(format!("-DCMAKE_RANLIB={}", which("llvm-ranlib-19")?.display()))
        .arg(format!("-DCMAKE_CXX_FLAGS={LTO_FLAGS}"))
        .arg(format!("-DCMAKE_EXE_LINKER_FLAGS={ld}")))?;
    Ok(())
}

fn build(build: &Path) -> Check {
    run(Command::new("cmake").arg("--build").arg(build))?;
    Ok(())
}

fn report(path: &Path) -> Check<Value> {
    let mut v: Value = serde_json::from_slice(&read(path)?).map_err(|e| format!("{}: {e}", path.display()))?;
    // Wall times and memory peaks differ from run to run, and only an in-process link lists
    // its backends (a distributed link's run as jobs of their own);
    // everything else must not differ.
    let object = v.as_object_mut().ok_or("a report is an object")?;
    object.remove("timings_ms");
    object.remove("peak_mib");
    object.remove("backends");
    Ok(v)
}

fn same_output(prog: &Path, expected: &[u8], what: &str) -> Check {
    let got = run(&mut Command::new(prog))?.stdout;
    if got != expected {
        return Err(format!(
            "{what} prints {:?}, -O0 prints {:?}",
            String::from_utf8_lossy(&got),
            String::from_utf8_lossy(expected)
        ));
    }
    Ok(())
}

/// The CMake project linked in-process, then reconfigured to link with
/// `--wpd-index-only` and finished by `ninja -C` on the job directory: the
/// same program and the same report. One job, copied with the files
/// jobs.json lists into an empty directory, writes the same object there.
fn cmake_ninja() -> Check {
    let t = temp_dir("distributed-cmake")?;
    let expected = reference(t.path())?;
    let tree = t.path().join("build");
    let app = tree.join("app");
    let jobs_dir = tree.join("wpd-jobs");

    configure(&tree, &format!("-Wl,--wpd-report={}", t.path().join("in-process.json").display()))?;
    build(&tree)?;
    same_output(&app, &expected, "the in-process link")?;
    let in_process = read(&app)?;
    std::fs::remove_file(&app).map_err(|e| e.to_string())?;

    // Only the link flags change: CMake relinks, the objects stay.
    let flags = format!(
        "-Wl,--wpd-report={} -Wl,--wpd-index-only={}",
        t.path().join("distributed.json").display(),
        jobs_dir.display()
    );
    configure(&tree, &flags)?;
    build(&tree)?;
    if app.exists() {
        return Err("the index-only link wrote the program".into());
    }
    let jobs: Value = serde_json::from_slice(&read(&jobs_dir.join("jobs.json"))?).map_err(|e| e.to_string())?;
    let list = jobs["jobs"].as_array().ok_or("jobs.json has no jobs")?;
    // main.o, and the archive's two members.
    if list.len() != 3 {
        return Err(format!("expected 3 jobs, jobs.json has {}: {jobs}", list.len()));
    }
    if jobs["link"]["output"].as_str() != Some(&*app.display().to_string()) {
        return Err(format!("the final link writes {}, not {}", jobs["link"]["output"], app.display()));
    }
    run(Command::new("ninja").arg("-C").arg(&jobs_dir))?;
    same_output(&app, &expected, "the distributed link")?;
    if read(&app)? != in_process {
        return Err("the distributed link's program differs from the in-process link's".into());
    }
    let (a, b) = (report(&t.path().join("in-process.json"))?, report(&t.path().join("distributed.json"))?);
    if a != b {
        return Err(format!("the reports differ:\nin-process: {a}\ndistributed: {b}"));
    }
    let calls = &a["call_sites"];
    let devirtualized =
        calls["total"].as_u64().unwrap_or(0).saturating_sub(calls["not_devirtualized"].as_u64().unwrap_or(0));
    if devirtualized == 0 {
        return Err(format!("nothing was devirtualized: {calls}"));
    }

    // A job needs only the files it lists.
    let job = &list[1];
    let elsewhere = t.path().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).map_err(|e| e.to_string())?;
    for f in job["inputs"].as_array().ok_or("a job lists its inputs")? {
        let f = f.as_str().ok_or("an input is a path")?;
        std::fs::copy(jobs_dir.join(f), elsewhere.join(f)).map_err(|e| format!("{f}: {e}"))?;
    }
    let argv: Vec<&str> =
        job["command"].as_array().ok_or("a job has a command")?.iter().filter_map(Value::as_str).collect();
    run(Command::new(argv[0]).args(&argv[1..]).current_dir(&elsewhere))?;
    let object = job["object"].as_str().ok_or("a job names its object")?;
    if read(&elsewhere.join(object))? != read(&jobs_dir.join(object))? {
        return Err(format!("job {object} wrote another object in another directory"));
    }
    Ok(())
}

fn final_link(jobs_dir: &Path) -> Check<std::process::Output> {
    let jobs: Value = serde_json::from_slice(&read(&jobs_dir.join("jobs.json"))?).map_err(|e| e.to_string())?;
    let argv: Vec<&str> =
        jobs["link"]["command"].as_array().ok_or("no final link")?.iter().filter_map(Value::as_str).collect();
    run_raw(Command::new(argv[0]).args(&argv[1..]).current_dir(jobs["link"]["cwd"].as_str().ok_or("no cwd")?))
}

/// The final link before the jobs ran, after an input changed (a bitcode
/// object, or a native one, which the plan was validated against), or on a
/// job object compiled from another version of its module, stops with an
/// error naming the file, and writes no program; Ninja runs the final link
/// again when an input changes.
fn refused() -> Check {
    let t = temp_dir("distributed-refused")?;
    let mut objects = demo_objects(t.path())?;
    // A native object of the link (C, defining a function nothing calls).
    let native = t.path().join("count.o");
    let count_c = repo_root().join("fixtures/native_readers/count.c");
    run(Command::new("clang-19").args(["-O2", "-c"]).arg(&count_c).arg("-o").arg(&native))?;
    objects.push(native.clone());
    let jobs_dir = t.path().join("jobs");
    let prog = t.path().join("shapes");
    let index_only = || -> Check {
        run(Command::new(CLANGXX)
            .arg("-flto=thin")
            .arg(format!("--ld-path={}", wpd_ld_bin()?.display()))
            .arg(format!("-Wl,--wpd-index-only={}", jobs_dir.display()))
            .args(&objects)
            .arg("-o")
            .arg(&prog)
            .current_dir(t.path()))
        .map(drop)
    };
    index_only()?;
    let out = final_link(&jobs_dir)?;
    let err = String::from_utf8_lossy(&out.stderr);
    if out.status.success() || !err.contains("0.o") || !err.contains("has not run") || prog.exists() {
        return Err(format!("a final link before the jobs: {:?}, stderr {err}", out.status));
    }
    run(Command::new("ninja").arg("-C").arg(&jobs_dir))?;
    run(&mut Command::new(&prog))?;
    // The native object rebuilt (other bytes): Ninja runs the final link
    // again, which refuses it by name.
    run(Command::new("clang-19").args(["-O0", "-c"]).arg(&count_c).arg("-o").arg(&native))?;
    let out = run_raw(Command::new("ninja").arg("-C").arg(&jobs_dir))?;
    let text = String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    if out.status.success() || !text.contains("count.o changed since the index-only link") {
        return Err(format!("ninja after a native input changed: {:?}, output {text}", out.status));
    }
    run(Command::new("clang-19").args(["-O2", "-c"]).arg(&count_c).arg("-o").arg(&native))?;
    run(Command::new("ninja").arg("-C").arg(&jobs_dir))?;
    run(&mut Command::new(&prog))?;
    std::fs::remove_file(&prog).map_err(|e| e.to_string())?;
    // shapes.o's job object, for the stale-object check below.
    let old_shapes_object = read(&jobs_dir.join("1.o"))?;
    // shapes.o rebuilt with other flags: not the input the jobs were made from.
    run(Command::new(CLANGXX)
        .args(["-O1", "-flto=thin", "-fwhole-program-vtables", "-c"])
        .arg(repo_root().join("fixtures/demo/shapes.cpp"))
        .arg("-o")
        .arg(&objects[1]))?;
    let out = final_link(&jobs_dir)?;
    let err = String::from_utf8_lossy(&out.stderr);
    if out.status.success() || !err.contains("shapes.o") || !err.contains("changed since the index-only link") {
        return Err(format!("a final link on a changed input: {:?}, stderr {err}", out.status));
    }
    if prog.exists() {
        return Err("the refused final link wrote the program".into());
    }
    // The index made again for the new shapes.o and its jobs run; then
    // shapes.o's object from before (what a build system's cache keyed on
    // the wrong inputs could hand back) and an object no job wrote are
    // refused by name.
    index_only()?;
    run(Command::new("ninja").arg("-C").arg(&jobs_dir))?;
    run(&mut Command::new(&prog))?;
    let new_shapes_object = read(&jobs_dir.join("1.o"))?;
    for (object, what) in [(&old_shapes_object, "a stale object"), (&read(&native)?, "no .wpd.job.module section")] {
        std::fs::write(jobs_dir.join("1.o"), object).map_err(|e| e.to_string())?;
        let out = final_link(&jobs_dir)?;
        let err = String::from_utf8_lossy(&out.stderr);
        if out.status.success() || !err.contains("1.o") || !err.contains("shapes.o") || !err.contains(what) {
            return Err(format!("a final link on a job object with {what}: {:?}, stderr {err}", out.status));
        }
    }
    std::fs::write(jobs_dir.join("1.o"), &new_shapes_object).map_err(|e| e.to_string())?;
    let out = final_link(&jobs_dir)?;
    if !out.status.success() {
        return Err(format!(
            "the final link on the jobs' own objects: stderr {}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }

    // A link step that fails (a CFI module, which wpd refuses) leaves no
    // job list and no module of the earlier index behind.
    let cfi = t.path().join("cfi.o");
    run(Command::new(CLANGXX)
        .args(LTO_FLAGS.split(' '))
        .args(["-fvisibility=hidden", "-fsanitize=cfi-vcall", "-c"])
        .arg(repo_root().join("fixtures/demo/main.cpp"))
        .arg("-o")
        .arg(&cfi))?;
    let out = run_raw(
        Command::new(CLANGXX)
            .arg("-flto=thin")
            .arg(format!("--ld-path={}", wpd_ld_bin()?.display()))
            .arg(format!("-Wl,--wpd-index-only={}", jobs_dir.display()))
            .arg(&cfi)
            .arg(&objects[1])
            .arg("-o")
            .arg(&prog),
    )?;
    let left: Vec<String> = std::fs::read_dir(&jobs_dir)
        .map_err(|e| e.to_string())?
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".bc") || n == "jobs.json" || n.ends_with(".o"))
        .collect();
    if out.status.success() || !left.is_empty() {
        return Err(format!(
            "a failed link step: {:?}, stderr {}, left {left:?}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        ));
    }

    // A directory of something else is not an index directory.
    let other = t.path().join("other");
    std::fs::create_dir_all(&other).map_err(|e| e.to_string())?;
    std::fs::write(other.join("0.o"), b"mine").map_err(|e| e.to_string())?;
    let out = run_raw(
        Command::new(CLANGXX)
            .arg("-flto=thin")
            .arg(format!("--ld-path={}", wpd_ld_bin()?.display()))
            .arg(format!("-Wl,--wpd-index-only={}", other.display()))
            .args(&objects)
            .arg("-o")
            .arg(&prog),
    )?;
    let err = String::from_utf8_lossy(&out.stderr);
    if out.status.success() || !err.contains("neither empty nor") || read(&other.join("0.o"))? != b"mine" {
        return Err(format!("an index-only link into a foreign directory: {:?}, stderr {err}", out.status));
    }
    Ok(())
}

/// wpd-ld with whole-program visibility and a report beside `prog`
/// (`prog.json`), linking `objects` from `dir` into `prog`, `flags` first.
fn wpd_ld(dir: &Path, objects: &[PathBuf], prog: &Path, flags: &[String]) -> Check<Command> {
    let mut cmd = Command::new(CLANGXX);
    cmd.current_dir(dir)
        .arg("-flto=thin")
        .arg(format!("--ld-path={}", wpd_ld_bin()?.display()))
        .arg("-Wl,--lto-whole-program-visibility")
        .arg(format!("-Wl,--wpd-report={}", prog.with_extension("json").display()))
        .args(flags)
        .args(objects)
        .arg("-o")
        .arg(prog);
    Ok(cmd)
}

/// [`wpd_ld`] with lld's DTLTO options (`--thinlto-distributor=python3
/// --thinlto-distributor-arg=isolating_distributor.py`, then
/// `distributor_args`) and `link_flags`.
fn dtlto_link(
    dir: &Path,
    objects: &[PathBuf],
    prog: &Path,
    distributor_args: &[&str],
    link_flags: &[&str],
) -> Check<std::process::Output> {
    let script = fixture().join("isolating_distributor.py");
    let mut flags = vec![
        format!("-Wl,--thinlto-distributor={}", which("python3")?.display()),
        format!("-Wl,--thinlto-distributor-arg={}", script.display()),
    ];
    flags.extend(distributor_args.iter().map(|a| format!("-Wl,--thinlto-distributor-arg={a}")));
    flags.extend(link_flags.iter().map(|f| f.to_string()));
    run_raw(&mut wpd_ld(dir, objects, prog, &flags)?)
}

/// The DTLTO files a link left in `dir` (its job directory and job
/// description must be gone).
fn leftovers(dir: &Path) -> Check<Vec<String>> {
    Ok(std::fs::read_dir(dir)
        .map_err(|e| e.to_string())?
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains("dtlto") || n.contains("dist-file"))
        .collect())
}

/// DTLTO: the demo linked in-process and through a distributor that runs
/// every job in an empty directory with only its listed files (their own
/// directory renamed away meanwhile), and through one that runs them in
/// place: the same program, byte for byte, the same report, and nothing
/// left beside the output.
fn dtlto() -> Check {
    let t = temp_dir("distributed-dtlto")?;
    let objects = demo_objects(t.path())?;
    let out = t.path().join("out");
    std::fs::create_dir_all(&out).map_err(|e| e.to_string())?;
    let in_process = out.join("in-process");
    run(&mut wpd_ld(&out, &objects, &in_process, &[])?)?;
    let expected = demo_reference(t.path())?;
    same_output(&in_process, &expected, "the in-process link")?;
    let baseline = report(&in_process.with_extension("json"))?;
    for (name, args) in [("isolated", &[][..]), ("in-place", &["--in-place"][..])] {
        let prog = out.join(name);
        let o = dtlto_link(&out, &objects, &prog, args, &[])?;
        if !o.status.success() {
            return Err(format!("the {name} DTLTO link failed: {}", String::from_utf8_lossy(&o.stderr)));
        }
        same_output(&prog, &expected, &format!("the {name} DTLTO link"))?;
        if read(&prog)? != read(&in_process)? {
            return Err(format!("the {name} DTLTO link's program differs from the in-process link's"));
        }
        let got = report(&prog.with_extension("json"))?;
        if got != baseline {
            return Err(format!("the reports differ:\nin-process: {baseline}\n{name} DTLTO: {got}"));
        }
        let left = leftovers(&out)?;
        if !left.is_empty() {
            return Err(format!("the {name} DTLTO link left {left:?}"));
        }
    }
    // A sample profile travels with the jobs (copied beside their options
    // file, found there by an isolated job): the same program again.
    let profile = out.join("demo.prof");
    std::fs::write(&profile, "main:1000:10\n 1: 10\n 2: 100\n").map_err(|e| e.to_string())?;
    let flag = format!("-Wl,--lto-sample-profile={}", profile.display());
    let (plain, distributed) = (out.join("profiled"), out.join("profiled-dtlto"));
    run(&mut wpd_ld(&out, &objects, &plain, std::slice::from_ref(&flag))?)?;
    // In place, the jobs run in the link's directory: they find the
    // profile beside their options file, not in their working directory.
    for args in [&[][..], &["--in-place"][..]] {
        let o = dtlto_link(&out, &objects, &distributed, args, &[&flag])?;
        if !o.status.success() {
            return Err(format!("the profiled DTLTO link {args:?} failed: {}", String::from_utf8_lossy(&o.stderr)));
        }
        if read(&plain)? != read(&distributed)? {
            return Err(format!("with a sample profile, the DTLTO link {args:?} differs from the in-process link"));
        }
    }
    Ok(())
}

/// A DTLTO link whose distributor loses a job's object, brings it back
/// empty, fails, or is not there stops with one line naming the job, its
/// file or the distributor, writes no program and leaves no DTLTO file.
fn dtlto_refused() -> Check {
    let t = temp_dir("distributed-dtlto-refused")?;
    let objects = demo_objects(t.path())?;
    let out = t.path().join("out");
    std::fs::create_dir_all(&out).map_err(|e| e.to_string())?;
    let prog = out.join("prog");
    let cases: [(&[&str], &str); 3] = [
        (&["--drop-outputs-of=1"], "DTLTO job 2 ("),
        // An empty object: the error names the job's output file.
        (&["--empty-outputs-of=1"], ".dtlto/1.o: not the object of the backend job of"),
        (&["--exit=3"], "the ThinLTO distributor"),
    ];
    for (args, says) in cases {
        let o = dtlto_link(&out, &objects, &prog, args, &[])?;
        let err = String::from_utf8_lossy(&o.stderr);
        let lines = err.lines().filter(|l| l.contains("wpd-ld")).count();
        if o.status.success() || !err.contains(says) || lines != 1 || prog.exists() {
            return Err(format!("distributor {args:?}: {:?}, stderr {err}", o.status));
        }
        let left = leftovers(&out)?;
        if !left.is_empty() {
            return Err(format!("distributor {args:?}: the failed link left {left:?}"));
        }
    }
    let missing = ["-Wl,--thinlto-distributor=/nonexistent/distributor".to_string()];
    let o = run_raw(&mut wpd_ld(&out, &objects, &prog, &missing)?)?;
    let err = String::from_utf8_lossy(&o.stderr);
    if o.status.success() || !err.contains("/nonexistent/distributor") || prog.exists() {
        return Err(format!("a missing distributor: {:?}, stderr {err}", o.status));
    }
    Ok(())
}

/// Compiles the distributed fixture's sources (and `extra`, written by the
/// test) into `src/` under `dir`, as a Bazel-style build does: the full
/// bitcode `X.o` and the minimized `X.min.o` its thin link reads
/// (`-fthin-link-bitcode=`). Returns the source stems.
fn bazel_objects(dir: &Path, extra: &[(&str, &str)]) -> Check<Vec<String>> {
    let src = dir.join("src");
    std::fs::create_dir_all(&src).map_err(|e| e.to_string())?;
    let mut sources: Vec<(String, PathBuf)> =
        ["main", "animals", "zoo"].iter().map(|s| (s.to_string(), fixture().join(format!("{s}.cpp")))).collect();
    for (stem, text) in extra {
        let path = src.join(format!("{stem}.cpp"));
        std::fs::write(&path, text).map_err(|e| e.to_string())?;
        sources.push((stem.to_string(), path));
    }
    for (stem, path) in &sources {
        run(Command::new(CLANGXX)
            .current_dir(dir)
            .args(LTO_FLAGS.split(' '))
            .arg("-g")
            .arg(format!("-I{}", fixture().display()))
            .arg("-c")
            .arg(path)
            .arg(format!("-fthin-link-bitcode=src/{stem}.min.o"))
            .arg("-o")
            .arg(format!("src/{stem}.o")))?;
    }
    Ok(sources.into_iter().map(|(s, _)| s).collect())
}

/// Bazel-style distributed ThinLTO with clang's own backends: wpd-ld's
/// `--thinlto-index-only` on minimized bitcode (`--thinlto-object-suffix-
/// replace`), index files under another prefix, objects under a third
/// (`--thinlto-prefix-replace=src/;idx/;obj/`), imports files, a lazy
/// object the link does not load; then `clang -fthinlto-index=` per
/// input and lld. The program prints what -O0 prints, and clang's
/// backends make every single-impl call the in-process link makes.
fn bazel_style() -> Check {
    let t = temp_dir("distributed-bazel")?;
    let dir = t.path();
    // A slot with one implementation, called from another module (a static
    // initializer prints), and an object nothing needs.
    let tick = "struct Tick { virtual int at(int) const; virtual ~Tick(); };\n\
                int Tick::at(int t) const { return 3 * t + 1; }\nTick::~Tick() {}\n\
                Tick *make_tick() { return new Tick; }\n";
    let use_tick = "#include <cstdio>\nstruct Tick { virtual int at(int) const; virtual ~Tick(); };\n\
                    Tick *make_tick();\n\
                    static int shown = [] { Tick *t = make_tick(); std::printf(\"tick %d\\n\", t->at(4)); \
                    delete t; return 0; }();\n";
    let unused = "struct Unused { virtual int f(); };\nint Unused::f() { return 7; }\n";
    let stems = bazel_objects(dir, &[("tick", tick), ("use_tick", use_tick), ("unused", unused)])?;
    let used = ["main", "animals", "zoo", "tick", "use_tick"];
    let reference = dir.join("ref");
    let mut cmd = Command::new(CLANGXX);
    cmd.current_dir(dir).arg("-O0").arg(format!("-I{}", fixture().display()));
    for stem in used {
        let src = if stem.contains("tick") {
            dir.join(format!("src/{stem}.cpp"))
        } else {
            fixture().join(format!("{stem}.cpp"))
        };
        cmd.arg(src);
    }
    run(cmd.arg("-o").arg(&reference))?;
    let expected = run(&mut Command::new(&reference))?.stdout;
    // The in-process link of the full bitcode: the counts to carry.
    let full: Vec<PathBuf> = used.iter().map(|s| dir.join(format!("src/{s}.o"))).collect();
    let in_process = dir.join("in-process");
    run(&mut wpd_ld(dir, &full, &in_process, &[])?)?;
    let planned = report(&in_process.with_extension("json"))?["call_sites"]["single_impl"].as_u64().unwrap_or(0);
    if planned == 0 {
        return Err("the fixture has no single-impl call to carry".into());
    }
    let flags: Vec<String> = [
        "-Wl,--thinlto-index-only=objects.txt",
        "-Wl,--thinlto-emit-imports-files",
        "-Wl,--thinlto-prefix-replace=src/;idx/;obj/",
        "-Wl,--thinlto-object-suffix-replace=.min.o;.o",
        "-Wl,--lto-obj-path=obj/lto.o",
    ]
    .map(String::from)
    .to_vec();
    let mut inputs: Vec<PathBuf> = used.iter().map(|s| PathBuf::from(format!("src/{s}.min.o"))).collect();
    inputs.extend(["-Wl,--start-lib", "src/unused.min.o", "-Wl,--end-lib"].map(PathBuf::from));
    let prog = dir.join("prog");
    std::fs::create_dir_all(dir.join("obj")).map_err(|e| e.to_string())?;
    run(&mut wpd_ld(dir, &inputs, &prog, &flags)?)?;
    if prog.exists() {
        return Err("an index-only link wrote a program".into());
    }
    let listed = String::from_utf8_lossy(&read(&dir.join("objects.txt"))?).into_owned();
    let want: String = used.iter().map(|s| format!("obj/{s}.o\n")).collect();
    if listed != want {
        return Err(format!("objects.txt is {listed:?}, not {want:?}"));
    }
    let imports = String::from_utf8_lossy(&read(&dir.join("idx/main.o.imports"))?).into_owned();
    if !imports.lines().all(|l| l.starts_with("src/") && l.ends_with(".o") && !l.ends_with(".min.o")) {
        return Err(format!("idx/main.o.imports names other files than the full bitcode: {imports:?}"));
    }
    // The same link with a cache (which serves the summaries) writes the
    // same indexes, byte for byte.
    let indexes = |dir: &Path| -> Check<Vec<Vec<u8>>> {
        used.iter().map(|s| read(&dir.join(format!("idx/{s}.o.thinlto.bc")))).collect()
    };
    let first = indexes(dir)?;
    let mut cached = flags.clone();
    cached.push("-Wl,--thinlto-cache-dir=cache".into());
    run(&mut wpd_ld(dir, &inputs, &prog, &cached)?)?;
    if indexes(dir)? != first {
        return Err("the link with a cache wrote other indexes".into());
    }
    let entries = std::fs::read_dir(dir.join("cache")).map_err(|e| e.to_string())?.count();
    if entries == 0 {
        return Err("the index-only link left its cache empty".into());
    }
    let carried = report(&prog.with_extension("json"))?;
    if carried["mode"] != "thinlto-index-only" || carried["clang_indexes"]["single_impl"].as_u64() != Some(planned) {
        return Err(format!("the report carries {} of {planned} single-impl calls", carried["clang_indexes"]));
    }
    // The backends, as the build system runs them: every input, the
    // unloaded one into an empty object.
    let mut remarks = 0;
    for stem in &stems {
        let o = run(Command::new(CLANGXX)
            .current_dir(dir)
            .args(["-O2", "-c", "-x", "ir"])
            .arg(format!("src/{stem}.o"))
            .arg(format!("-fthinlto-index=idx/{stem}.o.thinlto.bc"))
            .arg("-Rpass=wholeprogramdevirt")
            .arg("-o")
            .arg(format!("obj/{stem}.o")))?;
        remarks += String::from_utf8_lossy(&o.stderr).matches("single-impl: devirtualized").count();
    }
    let nm = run(Command::new("llvm-nm-19").arg(dir.join("obj/unused.o")))?;
    if !nm.stdout.is_empty() {
        return Err(format!("the unloaded object compiled to {}", String::from_utf8_lossy(&nm.stdout)));
    }
    let mut link = Command::new(CLANGXX);
    link.current_dir(dir).arg("-fuse-ld=lld").arg("obj/lto.o").args(listed.lines()).arg("-o").arg(&prog);
    run(&mut link)?;
    same_output(&prog, &expected, "the Bazel-style link")?;
    if remarks < planned as usize {
        return Err(format!(
            "clang's backends remarked {remarks} single-impl calls, the in-process link made {planned}"
        ));
    }
    Ok(())
}

/// The Bazel-style link's refusals: one line, exit 1, no index, imports or
/// list file left (a build system would take stale ones for new).
fn bazel_refused() -> Check {
    let t = temp_dir("distributed-bazel-refused")?;
    let dir = t.path();
    bazel_objects(dir, &[])?;
    run(Command::new(LLVM_AR).current_dir(dir).args(["rcs", "src/libzoo.a", "src/zoo.o"]))?;
    let prog = dir.join("prog");
    let index_only =
        || ["-Wl,--thinlto-index-only=objects.txt", "-Wl,--thinlto-emit-imports-files"].map(String::from).to_vec();
    let with = |extra: &[&str]| {
        let mut f = index_only();
        f.extend(extra.iter().map(|s| s.to_string()));
        f
    };
    let objects = |names: &[&str]| names.iter().map(PathBuf::from).collect::<Vec<_>>();
    let cases: Vec<(Vec<PathBuf>, Vec<String>, &str)> = vec![
        // Split LTO units put vtables into LLVM's regular LTO object.
        (objects(&["src/main.o", "src/animals.o", "src/zoo.o"]), index_only(), "--lto-obj-path"),
        (
            objects(&["src/main.o", "src/animals.o", "src/libzoo.a"]),
            with(&["-Wl,--lto-obj-path=lto.o"]),
            "src/libzoo.a(zoo.o): --thinlto-index-only: an archive member",
        ),
        (
            objects(&["src/main.o"]),
            vec!["-Wl,--thinlto-emit-imports-files".into()],
            "thinlto-emit-imports-files is only for a --thinlto-index-only link",
        ),
        (objects(&["src/main.o"]), with(&["-Wl,--thinlto-prefix-replace=a"]), "expects 'old;new'"),
        (objects(&["src/main.o"]), with(&["-Wl,--wpd-remarks"]), "-Rpass=wholeprogramdevirt"),
        (
            objects(&["src/main.min.o", "src/animals.min.o", "src/zoo.min.o"]),
            with(&["-Wl,--lto-obj-path=lto.o", "-Wl,--thinlto-object-suffix-replace=.min.o;.gone.o"]),
            "src/main.gone.o: No such file",
        ),
    ];
    for (inputs, flags, says) in cases {
        let o = run_raw(&mut wpd_ld(dir, &inputs, &prog, &flags)?)?;
        let err = String::from_utf8_lossy(&o.stderr);
        let lines = err.lines().filter(|l| l.starts_with("wpd-ld: error:")).count();
        if o.status.success() || !err.contains(says) || lines != 1 {
            return Err(format!("{flags:?} {inputs:?}: {:?}, stderr {err}", o.status));
        }
        for left in ["objects.txt", "src/main.o.thinlto.bc", "src/main.o.imports", "lto.o", "prog"] {
            if dir.join(left).exists() {
                return Err(format!("{flags:?} {inputs:?}: the failed link left {left}"));
            }
        }
    }
    Ok(())
}

fn main() {
    let args = libtest_mimic::Arguments::from_args();
    let trials = vec![
        libtest_mimic::Trial::test("cmake_ninja", || cmake_ninja().map_err(Into::into)),
        libtest_mimic::Trial::test("refused", || refused().map_err(Into::into)),
        libtest_mimic::Trial::test("dtlto", || dtlto().map_err(Into::into)),
        libtest_mimic::Trial::test("dtlto_refused", || dtlto_refused().map_err(Into::into)),
        libtest_mimic::Trial::test("bazel_style", || bazel_style().map_err(Into::into)),
        libtest_mimic::Trial::test("bazel_refused", || bazel_refused().map_err(Into::into)),
    ];
    libtest_mimic::run(&args, trials).exit();
}
