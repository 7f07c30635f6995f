//! Reports people act on (`wpd report`, `wpd report diff`, remarks with
//! source locations, LLVM optimization records, sizes): two builds of the
//! demo, with `-g`, one with whole-program visibility and one without.
//! Checks every format, the gates' exit codes, the documented CI shell step
//! (taken from docs/cli.md as written), `llvm-opt-report-19` reading the
//! YAML, and a headless Chromium screenshot of the HTML page that must not
//! be blank.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use wpd_tests::link::wpd_ld_bin;
use wpd_tests::{BASE_FLAGS, CLANGXX, Check, repo_root, run, run_raw, temp_dir, wpd_bin};

struct Builds {
    _dir: wpd_tests::TempDir,
    dir: PathBuf,
    objects: Vec<PathBuf>,
    /// With whole-program visibility (more devirtualized), remarks, YAML
    /// and a size baseline.
    good: PathBuf,
    good_stderr: String,
    /// Without: fewer calls devirtualized.
    plain: PathBuf,
}

fn build() -> Check<Builds> {
    let tmp = temp_dir("report")?;
    let dir = tmp.path().to_path_buf();
    let src = repo_root().join("fixtures/demo");
    let mut objects = Vec::new();
    for f in ["main.cpp", "shapes.cpp"] {
        let obj = dir.join(f.replace(".cpp", ".o"));
        run(Command::new(CLANGXX).args(BASE_FLAGS).arg("-c").arg(src.join(f)).arg("-o").arg(&obj).current_dir(&dir))?;
        objects.push(obj);
    }
    let link = |name: &str, extra: &[&str]| -> Check<Output> {
        run(Command::new(CLANGXX)
            .arg("-flto=thin")
            .arg(format!("--ld-path={}", wpd_ld_bin()?.display()))
            .arg(format!("-Wl,--wpd-report={}", dir.join(format!("{name}.json")).display()))
            .args(extra)
            .args(&objects)
            .arg("-o")
            .arg(dir.join(name)))
    };
    let yaml = format!("-Wl,--wpd-remarks-file={}", dir.join("remarks.yaml").display());
    let good = link(
        "good",
        &["-Wl,--lto-whole-program-visibility", "-Wl,--wpd-remarks=all", &yaml, "-Wl,--wpd-size-baseline"],
    )?;
    link("plain", &[])?;
    Ok(Builds {
        good: dir.join("good.json"),
        plain: dir.join("plain.json"),
        good_stderr: String::from_utf8_lossy(&good.stderr).into_owned(),
        objects,
        dir,
        _dir: tmp,
    })
}

fn wpd(args: &[&str]) -> Check<Output> {
    run_raw(Command::new(wpd_bin()?).args(args))
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn expect_status(o: &Output, code: i32, what: &str) -> Check {
    if o.status.code() == Some(code) {
        Ok(())
    } else {
        Err(format!(
            "{what}: exit {:?}, expected {code}\n--- stdout\n{}--- stderr\n{}",
            o.status.code(),
            stdout(o),
            String::from_utf8_lossy(&o.stderr)
        ))
    }
}

fn p(path: &Path) -> &str {
    path.to_str().unwrap_or_default()
}

/// `file:line:col` somewhere in `line`, the file in fixtures/demo.
fn has_location(line: &str) -> bool {
    line.split(['(', ' ', ')']).any(|w| {
        let mut parts = w.rsplitn(3, ':');
        let (col, ln, file) = (parts.next(), parts.next(), parts.next());
        file.is_some_and(|f| f.ends_with(".cpp") || f.ends_with(".h"))
            && ln.is_some_and(|l| l.parse::<u32>().is_ok())
            && col.is_some_and(|c| c.parse::<u32>().is_ok())
    })
}

fn remarks_and_yaml(b: &Builds) -> Check {
    let passed: Vec<&str> = b.good_stderr.lines().filter(|l| l.contains(": devirtualized a call to ")).collect();
    let missed: Vec<&str> =
        b.good_stderr.lines().filter(|l| l.starts_with("missed: virtual call left indirect: ")).collect();
    if passed.is_empty() || missed.is_empty() {
        return Err(format!(
            "--wpd-remarks=all printed {} passed and {} missed remarks:\n{}",
            passed.len(),
            missed.len(),
            b.good_stderr
        ));
    }
    if let Some(l) = passed.iter().chain(&missed).find(|l| !has_location(l)) {
        return Err(format!("remark without file:line:col (objects built with -g): {l}"));
    }
    let yaml_path = b.dir.join("remarks.yaml");
    let yaml = std::fs::read_to_string(&yaml_path).map_err(|e| e.to_string())?;
    for want in ["--- !Passed", "--- !Missed", "Pass:            wholeprogramdevirt", "DebugLoc:        { File: "] {
        if !yaml.contains(want) {
            return Err(format!("remarks.yaml lacks {want:?}:\n{yaml}"));
        }
    }
    let records = yaml.matches("\n...\n").count();
    if records != passed.len() + missed.len() {
        return Err(format!("remarks.yaml has {records} records, stderr {} remarks", passed.len() + missed.len()));
    }
    // LLVM's reader accepts it (and rejects a damaged copy, so the check
    // means something).
    run(Command::new("llvm-opt-report-19").arg(&yaml_path).arg("-r").arg(repo_root()))?;
    let bad = b.dir.join("bad.yaml");
    std::fs::write(&bad, yaml.replacen("Pass:            wholeprogramdevirt", "Pass: [", 1))
        .map_err(|e| e.to_string())?;
    if run_raw(Command::new("llvm-opt-report-19").arg(&bad))?.status.success() {
        return Err("llvm-opt-report-19 accepted a damaged YAML file".into());
    }
    Ok(())
}

fn formats(b: &Builds) -> Check {
    let text = stdout(&wpd(&["report", p(&b.good)])?);
    for want in [
        "virtual call sites:",
        "left indirect, by reason",
        "Shape::scale() const",
        "_ZTS5Shape",
        ".text",
        "without devirtualization",
    ] {
        if !text.contains(want) {
            return Err(format!("text report lacks {want:?}:\n{text}"));
        }
    }
    let md = stdout(&wpd(&["report", p(&b.good), "--format", "markdown"])?);
    for want in ["| kind | call sites | share |", "### Why calls stayed indirect", "`Shape`", "`_ZTS5Shape`"] {
        if !md.contains(want) {
            return Err(format!("markdown report lacks {want:?}:\n{md}"));
        }
    }
    // The text report lists under "left indirect, by reason" the same rows
    // as the markdown's table (a heading with nothing under it once
    // shipped in the demo's report, issue 42).
    let md_rows: Vec<(String, String)> = md
        .split("### Why calls stayed indirect")
        .nth(1)
        .unwrap_or("")
        .lines()
        .skip_while(|l| !l.starts_with("|---"))
        .skip(1)
        .take_while(|l| l.starts_with('|'))
        .filter_map(|l| {
            let cells: Vec<&str> = l.trim_matches('|').split('|').map(str::trim).collect();
            (cells.len() == 2).then(|| (cells[0].to_string(), cells[1].to_string()))
        })
        .collect();
    let text_rows: Vec<(String, String)> = text
        .split("left indirect, by reason (call sites):\n")
        .nth(1)
        .unwrap_or("")
        .lines()
        .take_while(|l| !l.trim().is_empty())
        .filter_map(|l| l.trim().split_once("  ").map(|(n, r)| (n.to_string(), r.trim().to_string())))
        .collect();
    if md_rows.is_empty() || md_rows != text_rows {
        return Err(format!("reasons: markdown lists {md_rows:?}, text {text_rows:?}"));
    }
    let json: serde_json::Value = serde_json::from_str(&stdout(&wpd(&["report", p(&b.good), "--format", "json"])?))
        .map_err(|e| format!("json report is not JSON: {e}"))?;
    let target = json.pointer("/slots/0/targets/0").ok_or("json report has no slot targets")?;
    if target["mangled"].as_str().is_none_or(|m| !m.starts_with("_Z"))
        || target["name"].as_str().is_none_or(|n| n.starts_with("_Z"))
    {
        return Err(format!("json target is not mangled + demangled: {target}"));
    }
    let html = stdout(&wpd(&["report", p(&b.good), "--format", "html"])?);
    if !html.starts_with("<!doctype html>")
        || !html.contains("<svg")
        || html.contains("http://")
        || html.contains("https://")
    {
        return Err("html report is not one self-contained page with inline SVG".into());
    }
    let page = b.dir.join("report.html");
    std::fs::write(&page, &html).map_err(|e| e.to_string())?;
    screenshot_not_blank(&page, &b.dir.join("report.png"))?;
    // Bad input: exit 2, one line naming the file.
    let notes = b.dir.join("notes.json");
    std::fs::write(&notes, "{\"schema\": \"something/9\"}").map_err(|e| e.to_string())?;
    let o = wpd(&["report", p(&notes)])?;
    expect_status(&o, 2, "wpd report on a non-report")?;
    if !String::from_utf8_lossy(&o.stderr).contains("notes.json: not a wpd report") {
        return Err(format!("unclear error: {}", String::from_utf8_lossy(&o.stderr)));
    }
    Ok(())
}

/// Chromium draws the page; the PNG must have ink on it and several colors.
fn screenshot_not_blank(page: &Path, png: &Path) -> Check {
    let chromium = ["chromium", "chromium-browser"]
        .into_iter()
        .find(|c| Command::new(c).arg("--version").output().is_ok_and(|o| o.status.success()))
        .ok_or("chromium not found (Debian package chromium; make toolchain installs it)")?;
    run(Command::new(chromium)
        .args(["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--window-size=1100,1400"])
        .arg(format!("--screenshot={}", png.display()))
        .arg(format!("file://{}", page.display())))?;
    let file = std::fs::File::open(png).map_err(|e| format!("{}: {e}", png.display()))?;
    let mut reader = png::Decoder::new(std::io::BufReader::new(file)).read_info().map_err(|e| e.to_string())?;
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).map_err(|e| e.to_string())?;
    let channels = info.color_type.samples();
    let pixels = &buf[..info.buffer_size()];
    let mut colors = std::collections::HashSet::new();
    let mut ink = 0usize;
    let total = pixels.len() / channels;
    for px in pixels.chunks(channels) {
        colors.insert(px[..3.min(channels)].to_vec());
        // Far from the page background (#f7f9fb) and from white.
        if px[..3.min(channels)].iter().any(|&c| c < 200) {
            ink += 1;
        }
    }
    if colors.len() < 8 || ink * 100 < total {
        return Err(format!("the screenshot looks blank: {} colors, {ink} of {total} pixels inked", colors.len()));
    }
    Ok(())
}

fn diff_and_gates(b: &Builds) -> Check {
    let (good, plain) = (p(&b.good), p(&b.plain));
    // Losing whole-program visibility: fewer devirtualized, more indirect.
    let o = wpd(&["report", "diff", good, plain, "--fail-on", "fewer-devirtualized"])?;
    expect_status(&o, 1, "diff good -> plain with fewer-devirtualized")?;
    if !String::from_utf8_lossy(&o.stderr).contains("gate tripped: fewer-devirtualized") {
        return Err(format!("the tripped gate is not named: {}", String::from_utf8_lossy(&o.stderr)));
    }
    let text = stdout(&o);
    for want in ["slots whose resolution changed:", "call sites", ".text", "link time:"] {
        if !text.contains(want) {
            return Err(format!("diff lacks {want:?}:\n{text}"));
        }
    }
    expect_status(&wpd(&["report", "diff", good, plain, "--fail-on", "more-indirect"])?, 1, "more-indirect")?;
    // The other way round nothing got worse; generous size gates hold.
    expect_status(
        &wpd(&["report", "diff", plain, good, "--fail-on", "fewer-devirtualized", "--fail-on", "more-indirect"])?,
        0,
        "diff plain -> good",
    )?;
    expect_status(
        &wpd(&["report", "diff", good, good, "--fail-on", "text-growth=0", "--fail-on", "size-growth=0"])?,
        0,
        "same build",
    )?;
    // The growth gates trip on real growth: the plain build against its
    // own report with a smaller .text.
    let mut shrunk: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&b.plain).map_err(|e| e.to_string())?).map_err(|e| e.to_string())?;
    let text_size = shrunk.pointer("/size/output/sections/.text").and_then(|v| v.as_u64()).ok_or("no .text size")?;
    shrunk["size"]["output"]["sections"][".text"] = (text_size / 2).into();
    let smaller = b.dir.join("smaller.json");
    std::fs::write(&smaller, shrunk.to_string()).map_err(|e| e.to_string())?;
    expect_status(
        &wpd(&["report", "diff", p(&smaller), plain, "--fail-on", "text-growth=5"])?,
        1,
        "text-growth=5 on a doubled .text",
    )?;
    // Bad input and bad gates: 2.
    expect_status(&wpd(&["report", "diff", good, p(&b.dir.join("missing.json"))])?, 2, "missing report")?;
    expect_status(&wpd(&["report", "diff", good, plain, "--fail-on", "faster"])?, 2, "unknown gate")?;
    // The previous schema is read: good's report as wpd-report/1 wrote it.
    let mut v1: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&b.good).map_err(|e| e.to_string())?).map_err(|e| e.to_string())?;
    let file = v1.pointer("/size/output/file").cloned().unwrap_or_default();
    v1["schema"] = "wpd-report/1".into();
    v1["size"] = serde_json::json!({ "output_bytes": file });
    v1.as_object_mut().map(|o| o.remove("calls"));
    let old = b.dir.join("v1.json");
    std::fs::write(&old, v1.to_string()).map_err(|e| e.to_string())?;
    expect_status(&wpd(&["report", p(&old)])?, 0, "render a wpd-report/1 file")?;
    let o = wpd(&["report", "diff", p(&old), good, "--fail-on", "fewer-devirtualized", "--fail-on", "size-growth=0"])?;
    expect_status(&o, 0, "diff wpd-report/1 -> /2")?;
    Ok(())
}

/// The plain shell step of docs/cli.md, run as written (wpd and wpd-ld on
/// PATH, in the folder of the objects, the previous build's report as
/// main.json).
fn documented_shell_step(b: &Builds) -> Check {
    let doc = std::fs::read_to_string(repo_root().join("docs/cli.md")).map_err(|e| e.to_string())?;
    let after = doc.split("as a plain shell step").nth(1).ok_or("docs/cli.md has no plain shell step")?;
    let script = after
        .split("```sh\n")
        .nth(1)
        .and_then(|s| s.split("```").next())
        .ok_or("docs/cli.md: the shell step is not in a ```sh block")?;
    let work = b.dir.join("ci");
    std::fs::create_dir_all(&work).map_err(|e| e.to_string())?;
    for o in &b.objects {
        std::fs::copy(o, work.join(o.file_name().unwrap_or_default())).map_err(|e| e.to_string())?;
    }
    std::fs::copy(&b.plain, work.join("main.json")).map_err(|e| e.to_string())?;
    let bin = wpd_bin()?.parent().map(Path::to_path_buf).unwrap_or_default();
    let ld_bin = wpd_ld_bin()?.parent().map(Path::to_path_buf).unwrap_or_default();
    let path = format!("{}:{}:{}", bin.display(), ld_bin.display(), std::env::var("PATH").unwrap_or_default());
    let o = run_raw(Command::new("sh").arg("-ec").arg(script).current_dir(&work).env("PATH", &path))?;
    expect_status(&o, 0, "the documented CI step")?;
    let md = std::fs::read_to_string(work.join("wpd-diff.md")).map_err(|e| format!("no wpd-diff.md: {e}"))?;
    if !md.contains("| call sites | old | new | delta |") {
        return Err(format!("wpd-diff.md is not the markdown diff:\n{md}"));
    }
    Ok(())
}

/// On a terminal (`script` gives the link one) wpd-ld shows its phases and
/// modules done; not with --wpd-quiet, and never into a pipe.
fn progress_on_a_terminal(b: &Builds) -> Check {
    let objects: Vec<String> = b.objects.iter().map(|o| p(o).to_string()).collect();
    let link = |extra: &str| -> Check<String> {
        let cmd = format!(
            "{CLANGXX} -flto=thin --ld-path={} {extra} {} -o {}",
            wpd_ld_bin()?.display(),
            objects.join(" "),
            b.dir.join("tty-prog").display()
        );
        let o = run(Command::new("script").args(["-qec", &cmd, "/dev/null"]))?;
        Ok(String::from_utf8_lossy(&o.stdout).into_owned())
    };
    let shown = link("")?;
    for want in ["wpd-ld: summarize 2/2", "wpd-ld: rewrite 2/2", "wpd-ld: backend 2/2"] {
        if !shown.contains(want) {
            return Err(format!("no {want:?} on the terminal: {shown:?}"));
        }
    }
    let quiet = link("-Wl,--wpd-quiet")?;
    if quiet.contains("wpd-ld: summarize") {
        return Err(format!("--wpd-quiet still shows progress: {quiet:?}"));
    }
    if b.good_stderr.contains("wpd-ld: summarize") {
        return Err("progress written to a pipe".into());
    }
    Ok(())
}

fn main() {
    let args = libtest_mimic::Arguments::from_args();
    let builds = std::sync::Arc::new(std::sync::OnceLock::<Result<Builds, String>>::new());
    let with = |f: fn(&Builds) -> Check| {
        let builds = builds.clone();
        move || -> Result<(), libtest_mimic::Failed> {
            match builds.get_or_init(build) {
                Ok(b) => f(b).map_err(Into::into),
                Err(e) => Err(format!("building the demo twice: {e}").into()),
            }
        }
    };
    let trials = vec![
        libtest_mimic::Trial::test("remarks_with_locations_and_yaml", with(remarks_and_yaml)),
        libtest_mimic::Trial::test("report_formats_and_html_screenshot", with(formats)),
        libtest_mimic::Trial::test("diff_and_gates", with(diff_and_gates)),
        libtest_mimic::Trial::test("documented_shell_step", with(documented_shell_step)),
        libtest_mimic::Trial::test("progress_on_a_terminal", with(progress_on_a_terminal)),
    ];
    libtest_mimic::run(&args, trials).exit();
}
