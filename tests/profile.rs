//! Profile builds (`fixtures/profile`): a closed hierarchy of four shapes
//! whose workload (`tri` or `square`) decides which classes run. Each build
//! is instrumented, run with one workload, and rebuilt with its profile as
//! ThinLTO bitcode; wpd-ld links it. The closed-set dispatch at the loop's
//! call must follow the profile: the hottest class first, the second
//! hottest next, and the two classes the profile calls cold never tested
//! (they keep the indirect call). The two workloads give opposite orders,
//! so an order that did not come from the profile fails one of them. Every
//! program prints what the `-O0` build prints, for both workloads.
//!
//! IR instrumentation (`-fprofile-generate`, `-fprofile-use`) records
//! indirect-call targets by default; clang's front-end instrumentation
//! (`-fprofile-instr-generate`, `-fprofile-instr-use`) only with
//! `-mllvm -enable-value-profiling`, so both are tested, the front end's
//! also without value profiles (the plan's static order then stands).
//! A sample profile (`-fprofile-sample-use`, AutoFDO's text format) is
//! written by the test as a sampling profiler would record the workload:
//! the loop's call and its targets' counts, 90% and 10%.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;
use wpd_tests::link::wpd_ld_command;
use wpd_tests::{BASE_FLAGS, CLANGXX, Check, repo_root, run, temp_dir};

const SOURCES: &[&str] = &["shapes.cpp", "main.cpp"];
const WORKLOADS: &[&str] = &["tri", "square"];

/// How a build is instrumented and how its profile is used.
struct Mode {
    name: &'static str,
    /// Flags of the instrumented build (`{dir}`: where raw profiles go).
    generate: &'static [&'static str],
    /// Flags of the ThinLTO build (`{profile}`: the merged profile).
    use_flags: &'static [&'static str],
    /// Whether the calls carry value profiles, so the order must follow.
    value_profiles: bool,
    /// A sample profile written by the test ([`sample_profile`]) instead
    /// of an instrumented run.
    sampled: bool,
}

const MODES: &[Mode] = &[
    Mode {
        name: "ir_instrumentation",
        generate: &["-fprofile-generate={dir}"],
        use_flags: &["-fprofile-use={profile}"],
        value_profiles: true,
        sampled: false,
    },
    Mode {
        name: "frontend_instrumentation",
        generate: &["-fprofile-instr-generate", "-mllvm", "-enable-value-profiling"],
        use_flags: &["-fprofile-instr-use={profile}", "-mllvm", "-enable-value-profiling"],
        value_profiles: true,
        sampled: false,
    },
    Mode {
        name: "frontend_without_value_profiles",
        generate: &["-fprofile-instr-generate"],
        use_flags: &["-fprofile-instr-use={profile}"],
        value_profiles: false,
        sampled: false,
    },
    Mode {
        name: "sample_profile",
        generate: &[],
        use_flags: &["-fprofile-sample-use={profile}"],
        value_profiles: true,
        sampled: true,
    },
];

/// The sample profile of `workload` in AutoFDO's text format: `total`'s
/// loop call (by its line offset from the function's first line, read
/// from main.cpp) with the counts of its targets, hottest first.
fn sample_profile(dir: &Path, workload: &str) -> Check<String> {
    let main = std::fs::read_to_string(dir.join("main.cpp")).map_err(|e| format!("main.cpp: {e}"))?;
    let line_of = |what: &str| main.lines().position(|l| l.contains(what)).ok_or(format!("main.cpp has no {what}"));
    let offset = line_of("->area(")? - line_of("long total(")?;
    let [hot, warm] = expected(workload);
    let target = |class: &str| format!("_ZNK12_GLOBAL__N_1{}{class}4areaEl", class.len());
    Ok(format!("_Z5totalPP5Shapeil:1000000:100\n {offset}: 100000 {}:90000 {}:10000\n", target(hot), target(warm)))
}

fn output(cmd: &mut Command) -> Check<String> {
    Ok(String::from_utf8_lossy(&run(cmd)?.stdout).into_owned())
}

/// The fixture's sources copied into `dir`: the profile names local
/// functions by their source file's name, so every build compiles the same
/// relative paths.
fn sources(dir: &Path) -> Check {
    for f in ["shapes.h", "shapes.cpp", "main.cpp"] {
        let from = repo_root().join("fixtures/profile").join(f);
        std::fs::copy(&from, dir.join(f)).map_err(|e| format!("cannot copy {}: {e}", from.display()))?;
    }
    Ok(())
}

/// The remark of the dispatch of `area` (the loop's call, in `total`).
fn total_remark(stderr: &str) -> Check<String> {
    stderr
        .lines()
        .find(|l| l.starts_with("closed-set:") && l.contains("4areaEl"))
        .map(str::to_string)
        .ok_or_else(|| format!("no closed-set remark for the call in total():\n{stderr}"))
}

/// The targets a remark lists, as class names (`Tri`, `Circle`, ...).
fn classes(remark: &str) -> Vec<String> {
    let list = remark.split(": ").nth(2).unwrap_or("");
    let list = list.split(';').next().unwrap_or("").split(" (").next().unwrap_or("");
    list.split(", ")
        .map(|t| {
            let t = t.trim_start_matches("_ZNK12_GLOBAL__N_1");
            let digits = t.chars().take_while(char::is_ascii_digit).collect::<String>();
            let len: usize = digits.parse().unwrap_or(0);
            t[digits.len()..].chars().take(len).collect()
        })
        .collect()
}

/// The order a workload's profile must give: hottest first, the second
/// next; the two classes it runs once each are cold.
fn expected(workload: &str) -> [&'static str; 2] {
    if workload == "tri" { ["Tri", "Circle"] } else { ["Square", "Hex"] }
}

/// The instrumented build of `mode`, run once with `workload`, its raw
/// profiles merged into `dir/p.profdata`.
fn instrumented_run(mode: &Mode, workload: &str, dir: &Path) -> Check {
    let dir_s = dir.display().to_string();
    let generate: Vec<String> = mode.generate.iter().map(|f| f.replace("{dir}", &dir_s)).collect();
    run(Command::new(CLANGXX).current_dir(dir).arg("-O2").args(&generate).args(SOURCES).arg("-o").arg("gen"))?;
    run(Command::new(dir.join("gen"))
        .current_dir(dir)
        .env("LLVM_PROFILE_FILE", dir.join("run.profraw"))
        .arg(workload))?;
    let raw: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| format!("cannot list {dir_s}: {e}"))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "profraw"))
        .collect();
    if raw.is_empty() {
        return Err(format!("the instrumented program wrote no profile in {dir_s}"));
    }
    run(Command::new("llvm-profdata-19").current_dir(dir).arg("merge").arg("-o").arg("p.profdata").args(&raw))?;

    Ok(())
}

fn check(mode: &Mode, workload: &str) -> Check {
    let tmp = temp_dir(&format!("profile-{}-{workload}", mode.name))?;
    let dir = tmp.path();
    sources(dir)?;

    // The reference: -O0, no profile.
    run(Command::new(CLANGXX).current_dir(dir).arg("-O0").args(SOURCES).arg("-o").arg("ref"))?;
    let reference: Vec<String> =
        WORKLOADS.iter().map(|w| output(Command::new(dir.join("ref")).arg(w))).collect::<Check<_>>()?;

    let profile = if mode.sampled { "p.prof" } else { "p.profdata" };
    if mode.sampled {
        std::fs::write(dir.join(profile), sample_profile(dir, workload)?).map_err(|e| e.to_string())?;
    } else {
        instrumented_run(mode, workload, dir)?;
    }

    // The ThinLTO build with the profile, linked by wpd-ld.
    let use_flags: Vec<String> = mode.use_flags.iter().map(|f| f.replace("{profile}", profile)).collect();
    let mut objects: Vec<OsString> = Vec::new();
    for src in SOURCES {
        let obj = src.replace(".cpp", ".o");
        run(Command::new(CLANGXX)
            .current_dir(dir)
            .args(BASE_FLAGS)
            .args(&use_flags)
            .arg("-c")
            .arg(src)
            .arg("-o")
            .arg(&obj))?;
        objects.push(obj.into());
    }
    // Four classes: above the default of 3 targets. A sample profile also
    // goes to the backends, as clang's driver passes it.
    let mut extra = vec!["-Wl,--wpd-remarks".to_string(), "-Wl,--wpd-closed-set=4".to_string()];
    if mode.sampled {
        extra.push(format!("-fprofile-sample-use={profile}"));
    }
    let link = run(&mut wpd_ld_command(dir, &objects, &dir.join("prog"), true, &extra, &dir.join("tmp"))?)?;
    let stderr = String::from_utf8_lossy(&link.stderr);
    let remark = total_remark(&stderr)?;
    let order = classes(&remark);
    if mode.value_profiles {
        let want = expected(workload);
        if !remark.contains("in profile order") || order != want || !remark.contains("2 cold in the profile") {
            return Err(format!(
                "the dispatch does not follow the {workload} profile (want {want:?} tested, 2 cold left indirect):\n{remark}"
            ));
        }
    } else if remark.contains("profile order") || order.len() != 4 {
        return Err(format!("without value profiles the plan's order of all 4 targets stands:\n{remark}"));
    }

    for (w, want) in WORKLOADS.iter().zip(&reference) {
        let got = output(Command::new(dir.join("prog")).arg(w))?;
        if &got != want {
            return Err(format!("workload {w}: the program printed {got:?}, the -O0 build {want:?}"));
        }
    }
    Ok(())
}

fn main() {
    let args = libtest_mimic::Arguments::from_args();
    let mut trials = Vec::new();
    for mode in MODES {
        for &workload in WORKLOADS {
            trials.push(libtest_mimic::Trial::test(format!("{}_{workload}", mode.name), move || {
                check(mode, workload).map_err(Into::into)
            }));
        }
    }
    libtest_mimic::run(&args, trials).exit();
}
