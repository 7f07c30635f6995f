//! Bitcode whose vtables carry no type metadata (compiled with `-emit-llvm`
//! but not `-flto`): its classes are as invisible to the type-id index as
//! native ones, so validation opens them and their bases. Without validation
//! (`--wpd-no-validate`, LLVM's behaviour) the base's slot looks like it has
//! a single implementation. The same module built with `-fno-rtti` has no
//! typeinfo to find its bases through: then every externally named
//! hierarchy of the link is open.

use std::process::Command;
use wpd_tests::link::wpd_ld_bin;
use wpd_tests::{CLANGXX, Check, repo_root, run, temp_dir};

fn report(path: &std::path::Path) -> Check<serde_json::Value> {
    let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    serde_json::from_slice(&bytes).map_err(|e| e.to_string())
}

fn check(rtti: bool) -> Check {
    let src = repo_root().join("fixtures/untyped_bitcode");
    let dir = temp_dir("untyped")?;
    let d = dir.path();
    run(Command::new(CLANGXX)
        .args(["-O2", "-flto=thin", "-fwhole-program-vtables", "-c"])
        .arg(src.join("main.cpp"))
        .arg("-o")
        .arg(d.join("main.o")))?;
    run(Command::new(CLANGXX)
        .args(["-O2", "-emit-llvm", "-c"])
        .args(if rtti { &[][..] } else { &["-fno-rtti"][..] })
        .arg(src.join("other.cpp"))
        .arg("-o")
        .arg(d.join("other.o")))?;
    run(Command::new(CLANGXX)
        .arg("-O0")
        .arg(src.join("main.cpp"))
        .arg(src.join("other.cpp"))
        .arg("-o")
        .arg(d.join("ref")))?;
    let want = run(&mut Command::new(d.join("ref")))?.stdout;
    let link = |out: &str, extra: &[&str]| -> Check<serde_json::Value> {
        let r = d.join(format!("{out}.json"));
        run(Command::new(CLANGXX)
            .arg("-flto=thin")
            .arg(format!("--ld-path={}", wpd_ld_bin()?.display()))
            .arg("-Wl,--lto-whole-program-visibility")
            .arg(format!("-Wl,--wpd-report={}", r.display()))
            .args(extra)
            .arg(d.join("main.o"))
            .arg(d.join("other.o"))
            .arg("-o")
            .arg(d.join(out)))?;
        report(&r)
    };
    let validated = link("validated", &[])?;
    let got = run(&mut Command::new(d.join("validated")))?.stdout;
    if got != want {
        return Err(format!(
            "validated link prints {:?}, -O0 prints {:?}",
            String::from_utf8_lossy(&got),
            String::from_utf8_lossy(&want)
        ));
    }
    let open = validated["open_type_ids"].as_array().cloned().unwrap_or_default();
    let shape = open.iter().find(|o| o["type_id"] == "_ZTS5Shape").ok_or(format!("_ZTS5Shape not open: {open:?}"))?;
    let reason = shape["reason"].as_str().unwrap_or_default();
    if !reason.contains("other.o") || !reason.contains("no type metadata") {
        return Err(format!("reason does not name the untyped module: {reason}"));
    }
    if !rtti && !reason.contains("no typeinfo") {
        return Err(format!("reason does not say the untyped module has no typeinfo: {reason}"));
    }
    let unguarded = |r: &serde_json::Value| {
        ["single_impl", "uniform_ret_val", "unique_ret_val", "virtual_const_prop"]
            .iter()
            .map(|k| r["call_sites"][k].as_u64().unwrap_or(0))
            .sum::<u64>()
    };
    if unguarded(&validated) != 0 {
        return Err(format!("validated link devirtualized Shape calls unguarded: {}", validated["call_sites"]));
    }
    // LLVM's behaviour: the same link without validation believes the promise.
    let trusting = link("trusting", &["-Wl,--wpd-no-validate"])?;
    if unguarded(&trusting) == 0 {
        return Err(format!("--wpd-no-validate changed nothing: {}", trusting["call_sites"]));
    }
    Ok(())
}

fn main() {
    let args = libtest_mimic::Arguments::from_args();
    let trials = vec![
        libtest_mimic::Trial::test("untyped_bitcode_opens_its_bases", || check(true).map_err(Into::into)),
        libtest_mimic::Trial::test("untyped_norrti_bitcode_opens_every_hierarchy", || check(false).map_err(Into::into)),
    ];
    libtest_mimic::run(&args, trials).exit();
}
