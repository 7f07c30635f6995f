//! The link cache (`--wpd-cache-dir`, `--thinlto-cache-dir`,
//! `-plugin-opt=cache-dir=`; `crates/wpd/src/backends/cache.rs`): a relink with
//! nothing changed takes every summary, rewritten module and native object
//! from the cache and writes the same program; a changed object misses
//! only what depends on it; a corrupt entry is detected, rebuilt and never
//! used; two links share one cache at once. Every program prints what its
//! -O0 build prints.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;
use wpd_tests::link::wpd_ld_bin;
use wpd_tests::{CLANGXX, Check, read, repo_root, run, run_raw, temp_dir};

const SOURCES: [&str; 3] = ["main.cpp", "op.cpp", "extra.cpp"];

/// `fixtures/thinlto/strip` (three objects) compiled into `d`, with `extra`
/// flags for `extra.cpp`; the -O0 output.
fn build(d: &Path, extra: &[&str]) -> Check<(Vec<PathBuf>, Vec<u8>)> {
    let src = repo_root().join("fixtures/thinlto/strip");
    std::fs::create_dir_all(d).map_err(|e| format!("{}: {e}", d.display()))?;
    let mut objects = Vec::new();
    for s in SOURCES {
        let obj = d.join(s.replace(".cpp", ".o"));
        let mut cmd = Command::new(CLANGXX);
        cmd.args(["-O2", "-flto=thin", "-fwhole-program-vtables", "-c"]);
        if s == "extra.cpp" {
            cmd.args(extra);
        }
        run(cmd.arg(src.join(s)).arg("-o").arg(&obj))?;
        objects.push(obj);
    }
    let reference = d.join("ref");
    run(Command::new(CLANGXX).arg("-O0").args(SOURCES.map(|s| src.join(s))).arg("-o").arg(&reference))?;
    Ok((objects, run(&mut Command::new(&reference))?.stdout))
}

/// Links through wpd-ld with `cache` (a flag spelling and its directory),
/// checks the program's output, returns the report and the program's bytes.
fn link(d: &Path, objects: &[PathBuf], expected: &[u8], out: &str, cache: &str) -> Check<(Value, Vec<u8>)> {
    let prog = d.join(out);
    let report = d.join(format!("{out}.json"));
    run(Command::new(CLANGXX)
        .arg("-flto=thin")
        .arg(format!("--ld-path={}", wpd_ld_bin()?.display()))
        .arg("-Wl,--lto-whole-program-visibility")
        .arg(format!("-Wl,{cache}"))
        .arg(format!("-Wl,--wpd-report={}", report.display()))
        .args(objects)
        .arg("-o")
        .arg(&prog))?;
    let got = run(&mut Command::new(&prog))?.stdout;
    if got != expected {
        return Err(format!(
            "{out} prints {:?}, -O0 prints {:?}",
            String::from_utf8_lossy(&got),
            String::from_utf8_lossy(expected)
        ));
    }
    let json: Value = serde_json::from_slice(&read(&report)?).map_err(|e| e.to_string())?;
    Ok((json, read(&prog)?))
}

fn counts(report: &Value, kind: &str) -> (u64, u64) {
    let c = &report["cache"][kind];
    (c["hits"].as_u64().unwrap_or(u64::MAX), c["misses"].as_u64().unwrap_or(u64::MAX))
}

fn expect(report: &Value, kind: &str, hits: u64, misses: u64, what: &str) -> Check {
    let got = counts(report, kind);
    if got != (hits, misses) {
        return Err(format!(
            "{what}: expected {kind} {hits} hits and {misses} misses, report says {:?}: {}",
            got, report["cache"]
        ));
    }
    Ok(())
}

fn entries(dir: &Path, kind: &str) -> Check<Vec<PathBuf>> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.file_name().is_some_and(|n| n.to_string_lossy().starts_with(&format!("llvmcache-wpd-{kind}-"))))
        .collect();
    found.sort();
    Ok(found)
}

/// The ThinLTO modules a link of the three objects compiles (its report):
/// one per object, and one more per split unit whose vtables were compiled
/// beside it rather than in the regular LTO module.
fn thin_modules(report: &Value) -> u64 {
    let count = |key: &str| report[key].as_u64().unwrap_or(u64::MAX / 4);
    3 + count("split_units_kept_in_two") - count("split_units_vtables_in_regular_lto")
}

/// Cold link, unchanged relink (every lld spelling of the option), one
/// changed object, a corrupt entry.
fn relinks() -> Check {
    let dir = temp_dir("cache")?;
    let d = dir.path();
    let cache = d.join("cache");
    let (objects, expected) = build(d, &[])?;
    let flag = format!("--wpd-cache-dir={}", cache.display());
    let (cold, cold_prog) = link(d, &objects, &expected, "cold", &flag)?;
    expect(&cold, "summaries", 0, 3, "cold link")?;
    // One cached object per module LLVM's ThinLTO compiles: a split unit
    // kept in two side by side is two; vtables that went to the regular LTO
    // module are compiled there, which LLVM never caches.
    let compiled = thin_modules(&cold);
    expect(&cold, "objects", 0, compiled, "cold link")?;
    let (_, rewrites) = counts(&cold, "rewrites");
    if cold["cache"]["hits"] != 0 {
        return Err(format!("cold link reports hits: {}", cold["cache"]));
    }
    for spelling in [
        format!("--wpd-cache-dir={}", cache.display()),
        format!("--thinlto-cache-dir={}", cache.display()),
        format!("-plugin-opt=cache-dir={}", cache.display()),
    ] {
        let (warm, warm_prog) = link(d, &objects, &expected, "warm", &spelling)?;
        expect(&warm, "summaries", 3, 0, &spelling)?;
        expect(&warm, "rewrites", rewrites, 0, &spelling)?;
        expect(&warm, "objects", compiled, 0, &spelling)?;
        if warm_prog != cold_prog {
            return Err(format!("the relink ({spelling}) wrote a different program"));
        }
    }

    // extra.cpp changes (now with line tables): its summary misses, the others
    // hit; its object is compiled again, and the objects whose imports or
    // resolutions did not change come from the cache.
    // (Into their own folder: the first build's objects stay as they were.)
    let (changed, expected2) = build(&d.join("changed-objects"), &["-gline-tables-only"])?;
    let (after, _) = link(d, &changed, &expected2, "changed", &flag)?;
    expect(&after, "summaries", 2, 1, "one object changed")?;
    let (hits, misses) = counts(&after, "objects");
    let compiled = thin_modules(&after);
    if misses < 1 || hits + misses != compiled {
        return Err(format!(
            "one object changed: expected 1 to {compiled} object misses out of {compiled}: {}",
            after["cache"]
        ));
    }

    // One corrupt entry of each kind (a byte flipped in the middle): each is
    // detected once, rebuilt and written again, never used.
    for kind in ["object", "summary", "rewrite"] {
        let victim = entries(&cache, kind)?.into_iter().next().ok_or(format!("no {kind} entries in the cache"))?;
        let mut bytes = read(&victim)?;
        let middle = bytes.len() / 2;
        bytes[middle] ^= 0x5a;
        std::fs::write(&victim, &bytes).map_err(|e| e.to_string())?;
    }
    // Which link's entries the victims were is not known: relink both.
    let sets = [(&objects, &expected), (&changed, &expected2)];
    let mut corrupt = 0;
    for (objs, exp) in sets {
        let (r, _) = link(d, objs, exp, "after-corruption", &flag)?;
        corrupt += r["cache"]["corrupt"].as_u64().unwrap_or(0);
    }
    if corrupt != 3 {
        return Err(format!("3 entries were corrupted, the relinks reported {corrupt}"));
    }
    for (objs, exp) in sets {
        let (r, _) = link(d, objs, exp, "rebuilt", &flag)?;
        let compiled = thin_modules(&r);
        expect(&r, "objects", compiled, 0, "after the corrupt entries were rebuilt")?;
        expect(&r, "summaries", 3, 0, "after the corrupt entries were rebuilt")?;
        if r["cache"]["corrupt"] != 0 || r["cache"]["misses"] != 0 {
            return Err(format!("after the corrupt entries were rebuilt: {}", r["cache"]));
        }
    }
    Ok(())
}

/// Machine flags wpd-ld sets on the target itself (`-stack-size-section`
/// here; `-emulated-tls`, `-enable-tlsdesc`, `-enable-jmc-instrument`
/// alike), which LLVM's cache key leaves out: a relink that adds one
/// compiles every object again and gets the flag's output (the cached
/// objects had no `.stack_sizes`).
fn machine_flags_miss() -> Check {
    let dir = temp_dir("cache-machine-flags")?;
    let d = dir.path();
    let cache = d.join("cache");
    let (objects, expected) = build(d, &[])?;
    let flag = format!("--wpd-cache-dir={}", cache.display());
    let (cold, _) = link(d, &objects, &expected, "plain", &flag)?;
    let compiled = thin_modules(&cold);
    let stack_sizes = |prog: &str| -> Check<bool> {
        let out = run(Command::new("readelf").arg("-SW").arg(d.join(prog)))?;
        Ok(String::from_utf8_lossy(&out.stdout).contains(".stack_sizes"))
    };
    if stack_sizes("plain")? {
        return Err("a link without -stack-size-section has .stack_sizes".into());
    }
    let with = format!("{flag},-plugin-opt=-stack-size-section");
    let (flagged, _) = link(d, &objects, &expected, "flagged", &with)?;
    expect(&flagged, "objects", 0, compiled, "-stack-size-section added")?;
    if !stack_sizes("flagged")? {
        return Err("the relink with -stack-size-section has no .stack_sizes: objects came from the cache".into());
    }
    Ok(())
}

/// Valid entries moved under each other's names (two summaries, two
/// objects, as a careless sync of cache directories could leave them) are
/// detected, rebuilt and never used: the program prints what -O0 prints.
fn swapped_entries() -> Check {
    let dir = temp_dir("cache-swapped")?;
    let d = dir.path();
    let cache = d.join("cache");
    let (objects, expected) = build(d, &[])?;
    let flag = format!("--wpd-cache-dir={}", cache.display());
    link(d, &objects, &expected, "cold", &flag)?;
    for kind in ["summary", "object"] {
        let found = entries(&cache, kind)?;
        let [a, b, ..] = found.as_slice() else { return Err(format!("fewer than two {kind} entries")) };
        let (bytes_a, bytes_b) = (read(a)?, read(b)?);
        std::fs::write(a, &bytes_b).map_err(|e| e.to_string())?;
        std::fs::write(b, &bytes_a).map_err(|e| e.to_string())?;
    }
    let (swapped, _) = link(d, &objects, &expected, "swapped", &flag)?;
    if swapped["cache"]["corrupt"] != 4 {
        return Err(format!("4 entries were swapped, the relink found {} corrupt", swapped["cache"]["corrupt"]));
    }
    Ok(())
}

/// Two links sharing one cache directory at once both succeed.
fn concurrent() -> Check {
    let dir = temp_dir("cache-concurrent")?;
    let d = dir.path().to_path_buf();
    let (objects, expected) = build(&d, &[])?;
    let flag = format!("--thinlto-cache-dir={}", d.join("cache").display());
    let results: Vec<Check> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..2)
            .map(|k| {
                let (d, objects, expected, flag) = (&d, &objects, &expected, &flag);
                s.spawn(move || link(d, objects, expected, &format!("p{k}"), flag).map(|_| ()))
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap_or_else(|_| Err("link thread panicked".into()))).collect()
    });
    results.into_iter().collect()
}

/// An invalid pruning policy is refused with the option named.
fn bad_policy() -> Check {
    let dir = temp_dir("cache-policy")?;
    let d = dir.path();
    let (objects, _) = build(d, &[])?;
    let out = run_raw(
        Command::new(wpd_ld_bin()?)
            .arg(format!("--thinlto-cache-dir={}", d.join("cache").display()))
            .arg("--thinlto-cache-policy=prune_after=forever")
            .args(&objects)
            .arg("-o")
            .arg(d.join("p")),
    )?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    if out.status.success() || !stderr.contains("--thinlto-cache-policy") || d.join("p").exists() {
        return Err(format!("expected a refusal naming --thinlto-cache-policy, got {:?}: {stderr}", out.status));
    }
    Ok(())
}

fn main() {
    let args = libtest_mimic::Arguments::from_args();
    let trials = vec![
        libtest_mimic::Trial::test("relinks", || relinks().map_err(Into::into)),
        libtest_mimic::Trial::test("concurrent", || concurrent().map_err(Into::into)),
        libtest_mimic::Trial::test("bad_policy", || bad_policy().map_err(Into::into)),
        libtest_mimic::Trial::test("machine_flags_miss", || machine_flags_miss().map_err(Into::into)),
        libtest_mimic::Trial::test("swapped_entries", || swapped_entries().map_err(Into::into)),
    ];
    libtest_mimic::run(&args, trials).exit();
}
