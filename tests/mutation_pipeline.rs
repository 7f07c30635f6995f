//! Mutation test of every consumer of summaries and plans: real inputs
//! (fixtures compiled with clang++-19 at test time, `wpd summarize`, `wpd
//! thin-link`) are decoded, mutated structurally (see `mutants.rs`) and
//! re-encoded with a valid checksum. A mutated summary goes through `wpd
//! dump` and `wpd thin-link --remarks`, and the plan it gives through `wpd
//! backend` on the real bitcode; a mutated plan goes through `wpd dump` and
//! `wpd backend`. Each run must succeed, or fail with status 1 and exactly
//! one `wpd: error: ` line. A signal, a panic (status 101), another status,
//! more output on stderr, a run over the time limit, or a plan from the thin
//! link that the backend refuses as inconsistent fails the test, naming the
//! mutant (seed and what changed) and keeping it under the temporary
//! directory (`WPD_KEEP_TMP=1` keeps that directory).
//!
//! Seeds are fixed, so every run tests the same mutants; `WPD_MUTANTS=N`
//! sets the number of mutants per test (default below, sized for well under
//! a minute on two cores), and `WPD_MUTANTS_LOG=1` prints every mutant with
//! the first line each run wrote to stderr.

mod mutants;

use libtest_mimic::{Arguments, Trial};
use mutants::Rng;
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};
use wpd_summary::container::{decode_unchecked, encode};
use wpd_summary::{Kind, ModuleSummary, Plan};
use wpd_tests::{Check, TempDir, compile, file_name, load_fixture, mkdir, read, repo_root, temp_dir, wpd_bin, write};

/// Summary mutants per fixture.
const SUMMARY_MUTANTS: usize = 160;
/// Plan mutants per fixture.
const PLAN_MUTANTS: usize = 80;
/// Distinct thin-link plans whose backends run, per fixture and per
/// [`SUMMARY_MUTANTS`] mutants (each runs one backend per object; mutants
/// that leave the plan unchanged are skipped).
const SUMMARY_PLANS_BACKENDS: usize = 30;
/// One mutant in this many also goes through `wpd dump` (every consumer
/// reads through the same validating decoder; each `wpd` run costs about
/// 50 ms of loading LLVM).
const DUMP_EVERY: u64 = 4;
/// Longest a single `wpd` run may take.
const LIMIT: Duration = Duration::from_secs(60);

/// A fixture, how it is compiled, and the thin-link options of its baseline.
struct Source {
    fixture: &'static str,
    flags: &'static [&'static str],
}

const SOURCES: &[Source] = &[
    // Split LTO units; uniform, unique and virtual constant propagation.
    Source { fixture: "ret_vals", flags: &[] },
    // Unsplit: local vtables and functions (promotions, vtable aliases,
    // layouts naming their module).
    Source { fixture: "anon_ret_vals", flags: &["-fno-split-lto-unit"] },
];

/// A fixture built, summarized and thin-linked once.
struct Prepared {
    objects: Vec<PathBuf>,
    summaries: Vec<PathBuf>,
    decoded: Vec<ModuleSummary>,
    plan: Plan,
}

struct Shared {
    dir: TempDir,
    prepared: Vec<OnceLock<Result<Prepared, String>>>,
}

impl Shared {
    fn prepared(&self, index: usize) -> Check<&Prepared> {
        self.prepared[index]
            .get_or_init(|| prepare(&SOURCES[index], &self.dir.path().join(SOURCES[index].fixture)))
            .as_ref()
            .map_err(|e| format!("preparing {} failed: {e}", SOURCES[index].fixture))
    }
}

fn main() {
    let args = Arguments::from_args();
    let shared = match temp_dir("mutation-pipeline") {
        Ok(dir) => Arc::new(Shared { dir, prepared: SOURCES.iter().map(|_| OnceLock::new()).collect() }),
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(1);
        }
    };
    let count = |default: usize| std::env::var("WPD_MUTANTS").ok().and_then(|v| v.parse().ok()).unwrap_or(default);
    let mut trials = Vec::new();
    for (i, s) in SOURCES.iter().enumerate() {
        let sh = Arc::clone(&shared);
        let n = count(SUMMARY_MUTANTS);
        trials.push(Trial::test(format!("summaries::{}", s.fixture), move || {
            summary_mutants(&sh, i, n).map_err(Into::into)
        }));
        let sh = Arc::clone(&shared);
        let n = count(PLAN_MUTANTS);
        trials.push(Trial::test(format!("plans::{}", s.fixture), move || plan_mutants(&sh, i, n).map_err(Into::into)));
    }
    let conclusion = libtest_mimic::run(&args, trials);
    drop(shared);
    conclusion.exit();
}

/// The thin-link options of the baseline plan.
const BASELINE: &[&str] = &["--whole-program-visibility", "--speculate", "2"];

fn prepare(src: &Source, dir: &Path) -> Check<Prepared> {
    let fx_dir = repo_root().join("fixtures/e2e").join(src.fixture);
    let fx = load_fixture(src.fixture, &fx_dir)?;
    let built = compile(&fx, &dir.join("build"), src.flags)?;
    if fx.archive.is_some() {
        return Err("archive fixtures are not supported here".into());
    }
    let objects = built.inputs.clone();
    let sums = dir.join("summaries");
    wpd_tests::summarize(&objects, &sums, &[])?;
    let summaries: Vec<PathBuf> = objects.iter().map(|o| sums.join(format!("{}.wpds", file_name(o)))).collect();
    let mut decoded = Vec::new();
    for s in &summaries {
        decoded.push(decode_unchecked::<ModuleSummary>(Kind::Summary, &read(s)?, s).map_err(|e| e.to_string())?);
    }
    let plan_path = dir.join("plan.wpdp");
    let mut cmd = Command::new(wpd_bin()?);
    cmd.arg("thin-link").args(&summaries).arg("-o").arg(&plan_path).args(BASELINE);
    expect_success(&mut cmd, dir)?;
    let plan = decode_unchecked::<Plan>(Kind::Plan, &read(&plan_path)?, &plan_path).map_err(|e| e.to_string())?;
    for o in &objects {
        let mut cmd = backend_cmd(o, &plan_path, &dir.join("out.o"))?;
        expect_success(&mut cmd, dir)?;
    }
    Ok(Prepared { objects, summaries, decoded, plan })
}

fn expect_success(cmd: &mut Command, dir: &Path) -> Check {
    match run_limited(cmd, dir)? {
        Ran { code: Some(0), .. } => Ok(()),
        r => Err(format!("baseline `{}` failed: {}", wpd_tests::show_cmd(cmd), r.describe())),
    }
}

fn backend_cmd(object: &Path, plan: &Path, out: &Path) -> Check<Command> {
    let mut cmd = Command::new(wpd_bin()?);
    cmd.arg("backend").arg(object).arg("--plan").arg(plan).arg("-o").arg(out);
    Ok(cmd)
}

/// How a run ended.
struct Ran {
    code: Option<i32>,
    signal: Option<i32>,
    timed_out: bool,
    stderr: String,
}

impl Ran {
    fn describe(&self) -> String {
        let how = match (self.timed_out, self.code, self.signal) {
            (true, _, _) => format!("no exit within {}s", LIMIT.as_secs()),
            (_, Some(c), _) => format!("exit status {c}"),
            (_, None, Some(s)) => format!("killed by signal {s}"),
            _ => "unknown end".into(),
        };
        let err: String = self.stderr.lines().take(8).collect::<Vec<_>>().join("\n  ");
        format!("{how}; stderr:\n  {err}")
    }

    /// Success, or a clean refusal: status 1 and exactly one error line.
    fn contract(&self) -> Result<(), String> {
        let lines: Vec<&str> = self.stderr.lines().collect();
        let clean_error = lines.len() == 1 && lines[0].starts_with("wpd: error: ");
        match self.code {
            Some(0) if !self.timed_out && !self.stderr.contains("panicked") => Ok(()),
            Some(1) if !self.timed_out && clean_error => Ok(()),
            _ => Err(self.describe()),
        }
    }
}

/// Runs `cmd` with stdout discarded and stderr captured, killing it after
/// [`LIMIT`].
fn run_limited(cmd: &mut Command, dir: &Path) -> Check<Ran> {
    use std::os::unix::process::ExitStatusExt;
    let err_path = dir.join("stderr.txt");
    let err_file = std::fs::File::create(&err_path).map_err(|e| format!("{}: {e}", err_path.display()))?;
    let mut child = cmd
        .stdout(Stdio::null())
        .stderr(Stdio::from(err_file))
        .spawn()
        .map_err(|e| format!("cannot run `{}`: {e}", wpd_tests::show_cmd(cmd)))?;
    let start = Instant::now();
    let (status, timed_out) = loop {
        if let Some(s) = child.try_wait().map_err(|e| e.to_string())? {
            break (s, false);
        }
        if start.elapsed() > LIMIT {
            let _ = child.kill();
            break (child.wait().map_err(|e| e.to_string())?, true);
        }
        std::thread::sleep(Duration::from_millis(1));
    };
    let stderr = String::from_utf8_lossy(&read(&err_path)?).into_owned();
    Ok(Ran { code: status.code(), signal: status.signal(), timed_out, stderr })
}

/// Failures of one test, reported together at the end.
struct Failures {
    dir: PathBuf,
    list: Vec<String>,
}

impl Failures {
    fn new(dir: PathBuf) -> Check<Failures> {
        mkdir(&dir)?;
        Ok(Failures { dir, list: Vec::new() })
    }

    /// Records a failing mutant, keeping its file as `<seed>.<ext>`.
    fn add(&mut self, seed: u64, what: &str, cmd: &Command, mutant: &Path, why: String) -> Check {
        let ext = mutant.extension().map(|e| e.to_string_lossy().into_owned()).unwrap_or_default();
        let kept = self.dir.join(format!("{seed}.{ext}"));
        std::fs::copy(mutant, &kept).map_err(|e| format!("{}: {e}", kept.display()))?;
        self.list.push(format!(
            "seed {seed}: {what}\n  `{}`\n  {why}\n  mutant kept as {}",
            wpd_tests::show_cmd(cmd),
            kept.display()
        ));
        Ok(())
    }

    fn finish(self, tested: &str) -> Check {
        if self.list.is_empty() {
            return Ok(());
        }
        let shown: Vec<&String> = self.list.iter().take(12).collect();
        Err(format!(
            "{} of {tested} broke the contract (set WPD_KEEP_TMP=1 to keep the files):\n{}",
            self.list.len(),
            shown.iter().map(|s| s.as_str()).collect::<Vec<_>>().join("\n")
        ))
    }
}

/// Runs `cmd` and records a failure when it breaks the contract; returns
/// the run.
fn check_run(
    cmd: &mut Command,
    dir: &Path,
    failures: &mut Failures,
    seed: u64,
    what: &str,
    mutant: &Path,
) -> Check<Ran> {
    let ran = run_limited(cmd, dir)?;
    if std::env::var_os("WPD_MUTANTS_LOG").is_some() {
        let verb = cmd.get_args().next().map(|a| a.to_string_lossy().into_owned()).unwrap_or_default();
        let first = ran.stderr.lines().next().unwrap_or("");
        eprintln!("[{seed}] {what}\n    {verb}: {:?} {first}", ran.code);
    }
    if let Err(why) = ran.contract() {
        failures.add(seed, what, cmd, mutant, why)?;
    }
    Ok(ran)
}

fn summary_mutants(shared: &Shared, index: usize, count: usize) -> Check {
    let p = shared.prepared(index)?;
    let dir = shared.dir.path().join(SOURCES[index].fixture).join("summary-mutants");
    mkdir(&dir)?;
    let mut failures = Failures::new(dir.join("failures"))?;
    let hashes: Vec<String> = p.decoded.iter().map(|s| s.module.hash.clone()).collect();
    let pools: Vec<Vec<String>> = p.decoded.iter().map(mutants::summary_names).collect();
    let mut plans_seen: HashSet<Vec<u8>> = HashSet::new();
    plans_seen.insert(encode(Kind::Plan, &p.plan).map_err(|e| e.to_string())?);
    let (mut refused, mut linked, mut backends) = (0, 0, 0);
    for seed in 0..count as u64 {
        let mut rng = Rng::new(seed * 2 + index as u64 * 1_000_003);
        let m = rng.below(p.decoded.len());
        let mut s = p.decoded[m].clone();
        let what = format!(
            "{}: {}",
            file_name(&p.summaries[m]),
            mutants::mutate_summary(&mut s, &pools[m], &hashes, &mut rng)
        );
        let mutant = dir.join(file_name(&p.summaries[m]));
        write(&mutant, &encode(Kind::Summary, &s).map_err(|e| e.to_string())?)?;
        if seed % DUMP_EVERY == 0 {
            let mut dump = Command::new(wpd_bin()?);
            dump.arg("dump").arg(&mutant);
            check_run(&mut dump, &dir, &mut failures, seed, &what, &mutant)?;
        }

        let inputs: Vec<&Path> =
            p.summaries.iter().enumerate().map(|(k, s)| if k == m { mutant.as_path() } else { s.as_path() }).collect();
        let plan_path = dir.join("plan.wpdp");
        let _ = std::fs::remove_file(&plan_path);
        let mut link = Command::new(wpd_bin()?);
        link.arg("thin-link").args(&inputs).arg("-o").arg(&plan_path).arg("--remarks");
        if !rng.chance(4) {
            link.arg("--whole-program-visibility");
        }
        link.arg("--speculate").arg(rng.below(3).to_string());
        if rng.chance(8) {
            link.arg("--shared");
        }
        let ran = check_run(&mut link, &dir, &mut failures, seed, &what, &mutant)?;
        if ran.code != Some(0) {
            refused += 1;
            continue;
        }
        linked += 1;
        let plan = read(&plan_path)?;
        if backends >= SUMMARY_PLANS_BACKENDS * count / SUMMARY_MUTANTS || !plans_seen.insert(plan) {
            continue;
        }
        backends += 1;
        for o in &p.objects {
            let mut cmd = backend_cmd(o, &plan_path, &dir.join("out.o"))?;
            let ran = check_run(&mut cmd, &dir, &mut failures, seed, &what, &mutant)?;
            if ran.stderr.contains("inconsistent plan") {
                failures.add(
                    seed,
                    &what,
                    &cmd,
                    &mutant,
                    format!("the thin link wrote an inconsistent plan: {}", ran.stderr.trim()),
                )?;
            }
        }
    }
    eprintln!(
        "{}: {count} summary mutants: {refused} refused, {linked} thin-linked, {backends} new plans through the backends",
        SOURCES[index].fixture
    );
    failures.finish(&format!("{count} summary mutants"))
}

fn plan_mutants(shared: &Shared, index: usize, count: usize) -> Check {
    let p = shared.prepared(index)?;
    let dir = shared.dir.path().join(SOURCES[index].fixture).join("plan-mutants");
    mkdir(&dir)?;
    let mut failures = Failures::new(dir.join("failures"))?;
    let hashes: Vec<String> = p.plan.modules.iter().map(|m| m.hash.clone()).collect();
    let mut pool = mutants::plan_names(&p.plan);
    pool.extend(p.decoded.iter().flat_map(mutants::summary_names));
    pool.sort();
    pool.dedup();
    let (mut refused, mut applied) = (0, 0);
    for seed in 0..count as u64 {
        let mut rng = Rng::new(seed * 2 + 1 + index as u64 * 1_000_003);
        let mut plan = p.plan.clone();
        let what = mutants::mutate_plan(&mut plan, &pool, &hashes, &mut rng);
        let mutant = dir.join("plan.wpdp");
        write(&mutant, &encode(Kind::Plan, &plan).map_err(|e| e.to_string())?)?;
        if seed % DUMP_EVERY == 0 {
            let mut dump = Command::new(wpd_bin()?);
            dump.arg("dump").arg(&mutant);
            check_run(&mut dump, &dir, &mut failures, seed, &what, &mutant)?;
        }
        // Backends in a random order; a plan refused on reading is refused
        // by every backend the same way, so one run shows it.
        let first = rng.below(p.objects.len());
        let order = (0..p.objects.len()).map(|k| &p.objects[(first + k) % p.objects.len()]);
        let refusal = format!("{}: ", mutant.display());
        for (k, o) in order.enumerate() {
            let mut cmd = backend_cmd(o, &mutant, &dir.join("out.o"))?;
            let ran = check_run(&mut cmd, &dir, &mut failures, seed, &what, &mutant)?;
            if k == 0 && ran.stderr.contains(&refusal) {
                refused += 1;
                break;
            }
            applied += usize::from(k == 0);
        }
    }
    eprintln!("{}: {count} plan mutants: {refused} refused, {applied} through every backend", SOURCES[index].fixture);
    failures.finish(&format!("{count} plan mutants"))
}
