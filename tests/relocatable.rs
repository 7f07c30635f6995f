//! Relocatable links (`-r`): the output is linked again later with classes
//! wpd cannot see, so even under whole-program visibility every externally
//! named hierarchy of a partial link is open; the final program must print
//! what `-O0` prints.

use std::process::Command;
use wpd_tests::link::wpd_ld_bin;
use wpd_tests::{CLANGXX, Check, repo_root, run, temp_dir};

fn check() -> Check {
    let src = repo_root().join("fixtures/relocatable");
    let dir = temp_dir("relocatable")?;
    let d = dir.path();
    let wpd_ld = format!("--ld-path={}", wpd_ld_bin()?.display());
    for f in ["shapes", "main"] {
        run(Command::new(CLANGXX)
            .args(["-O2", "-flto=thin", "-fwhole-program-vtables", "-c"])
            .arg(src.join(format!("{f}.cpp")))
            .arg("-o")
            .arg(d.join(format!("{f}.o"))))?;
    }
    run(Command::new(CLANGXX)
        .arg("-O0")
        .arg(src.join("shapes.cpp"))
        .arg(src.join("main.cpp"))
        .arg("-o")
        .arg(d.join("ref")))?;
    let want = run(&mut Command::new(d.join("ref")))?.stdout;
    let report = d.join("partial.json");
    run(Command::new(CLANGXX)
        .args(["-flto=thin", "-r", "-nostdlib"])
        .arg(&wpd_ld)
        .arg("-Wl,--lto-whole-program-visibility")
        .arg(format!("-Wl,--wpd-report={}", report.display()))
        .arg(d.join("shapes.o"))
        .arg("-o")
        .arg(d.join("partial.o")))?;
    let r: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&report).map_err(|e| e.to_string())?).map_err(|e| e.to_string())?;
    let unguarded: u64 = ["single_impl", "uniform_ret_val", "unique_ret_val", "virtual_const_prop"]
        .iter()
        .map(|k| r["call_sites"][k].as_u64().unwrap_or(0))
        .sum();
    if unguarded != 0 || r["call_sites"]["total"].as_u64().unwrap_or(0) == 0 {
        return Err(format!("partial link devirtualized unguarded: {}", r["call_sites"]));
    }
    let open = r["open_type_ids"].as_array().cloned().unwrap_or_default();
    if !open.iter().any(|o| o["type_id"] == "_ZTS5Shape" && o["reason"].as_str().is_some_and(|s| s.contains("-r"))) {
        return Err(format!("_ZTS5Shape not reported open for the relocatable output: {open:?}"));
    }
    run(Command::new(CLANGXX)
        .arg("-flto=thin")
        .arg(&wpd_ld)
        .arg("-Wl,--lto-whole-program-visibility")
        .arg(d.join("main.o"))
        .arg(d.join("partial.o"))
        .arg("-o")
        .arg(d.join("prog")))?;
    let got = run(&mut Command::new(d.join("prog")))?.stdout;
    if got != want {
        return Err(format!(
            "prints {:?}, -O0 prints {:?}",
            String::from_utf8_lossy(&got),
            String::from_utf8_lossy(&want)
        ));
    }
    Ok(())
}

fn main() {
    let args = libtest_mimic::Arguments::from_args();
    let trials =
        vec![libtest_mimic::Trial::test("partial_link_keeps_hierarchies_open", || check().map_err(Into::into))];
    libtest_mimic::run(&args, trials).exit();
}
