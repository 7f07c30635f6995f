//! Summary harness: every `fixtures/summarize/<name>/` program is compiled
//! with clang++-19, summarized with `wpd summarize`, dumped with `wpd dump`,
//! compared with its golden JSON (`WPD_BLESS=1` rewrites goldens) and
//! cross-checked against `llvm-dis-19` of the same object. Two more tests:
//! `-j 1` and `-j 2` give byte-identical files, split and unsplit builds
//! of one program give the same vtables and call sites, and summaries made
//! from the bodies the summarizer needs (references from clang's summary
//! index) are byte-identical to those made by reading every body.

use libtest_mimic::{Arguments, Trial};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;
use wpd_tests::disasm::{self, Disasm, TypeRef};
use wpd_tests::{
    Built, Check, Fixture, array, compile, dump, expected_summaries, file_name, fixtures, list_dir, mkdir, normalize,
    object_for_summary, read, run, short_diff, string, summarize, temp_dir, to_golden, uint, wpd_bin, write,
};

/// The fixture built twice for the split/unsplit comparison.
const SPLIT_FIXTURE: &str = "single_inheritance";

fn main() {
    let args = Arguments::from_args();
    let mut trials = Vec::new();
    match fixtures("summarize") {
        Ok(all) => {
            for fx in &all {
                let fx = fx.clone();
                trials.push(Trial::test(fx.name.clone(), move || fixture_test(&fx).map_err(Into::into)));
            }
            let fxs = all.clone();
            trials.push(Trial::test("jobs_1_and_2_are_byte_identical", move || {
                jobs_determinism(&fxs).map_err(Into::into)
            }));
            let fxs = all.clone();
            trials.push(Trial::test("split_and_unsplit_agree", move || split_vs_unsplit(&fxs).map_err(Into::into)));
            let fxs = all;
            trials.push(Trial::test("reading_every_body_agrees", move || every_body_agrees(&fxs).map_err(Into::into)));
        }
        Err(e) => trials.push(Trial::test("fixtures", move || Err(e.into()))),
    }
    libtest_mimic::run(&args, trials).exit();
}

fn blessing() -> bool {
    std::env::var_os("WPD_BLESS").is_some_and(|v| v != "0" && !v.is_empty())
}

/// Compile, summarize, dump; golden comparison and llvm-dis cross-check.
fn fixture_test(fx: &Fixture) -> Check {
    let tmp = temp_dir(&fx.name)?;
    let build = tmp.path().join("build");
    let out = tmp.path().join("out");
    let built = compile(fx, &build, &[])?;
    summarize(&built.inputs, &out, &[])?;
    let names = check_outputs(&built, &out)?;

    let expected_dir = fx.dir.join("expected");
    let mut failures = Vec::new();
    let mut goldens = BTreeSet::new();
    for name in &names {
        let wpds = out.join(name);
        let raw = dump(&wpds)?;
        let obj = object_for_summary(&built, name)?;
        let dis = disasm::disassemble(&obj, &tmp.path().join("dis"))?;
        if let Err(e) = check_module_info(&raw, name, &dis) {
            failures.push(format!("{name}: {e}"));
        }
        if let Err(e) = cross_check(&raw, &dis) {
            failures.push(format!("{name}: llvm-dis cross-check: {e}"));
        }
        let golden_name = format!("{}.json", name.trim_end_matches(".wpds"));
        let golden = expected_dir.join(&golden_name);
        goldens.insert(golden_name);
        let actual = to_golden(&normalize(raw, &build));
        if blessing() {
            mkdir(&expected_dir)?;
            write(&golden, actual.as_bytes())?;
        } else if !golden.is_file() {
            failures.push(format!("missing golden {} (run with WPD_BLESS=1 to create it)", golden.display()));
        } else {
            let expected = String::from_utf8_lossy(&read(&golden)?).into_owned();
            if expected != actual {
                failures.push(format!(
                    "{} differs from the dump (WPD_BLESS=1 to accept)\n{}",
                    golden.display(),
                    short_diff(&expected, &actual)
                ));
            }
        }
    }
    // Goldens for objects that no longer exist are stale.
    if expected_dir.is_dir() {
        for f in list_dir(&expected_dir)? {
            if !goldens.contains(&f) {
                let p = expected_dir.join(&f);
                if blessing() {
                    std::fs::remove_file(&p).map_err(|e| format!("cannot remove {}: {e}", p.display()))?;
                } else {
                    failures.push(format!("stale golden {} (WPD_BLESS=1 removes it)", p.display()));
                }
            }
        }
    }
    if failures.is_empty() { Ok(()) } else { Err(failures.join("\n\n")) }
}

/// The output directory holds exactly the expected `.wpds` files.
fn check_outputs(built: &Built, out: &Path) -> Check<Vec<String>> {
    let expected = expected_summaries(built)?;
    let got = list_dir(out)?;
    if got != expected {
        return Err(format!("wpd summarize wrote {got:?} into {}, expected {expected:?}", out.display()));
    }
    Ok(got)
}

/// `module` fields that can be checked without wpd: split, member.
fn check_module_info(v: &Value, summary_name: &str, dis: &Disasm) -> Check {
    let module = v.get("module").ok_or("no `module` object")?;
    let split = module.get("split").and_then(Value::as_bool);
    if split != Some(dis.modules == 2) {
        return Err(format!("module.split is {split:?} but llvm-dis found {} module(s)", dis.modules));
    }
    let member = module.get("member").cloned().unwrap_or(Value::Null);
    let want = match summary_name.find(".a(") {
        Some(i) => Value::String(summary_name[i + 3..summary_name.len() - ".wpds".len() - 1].into()),
        None => Value::Null,
    };
    if member != want {
        return Err(format!("module.member is {member}, expected {want}"));
    }
    for key in ["triple", "data_layout", "hash"] {
        if string(module, key)?.is_empty() {
            return Err(format!("module.{key} is empty"));
        }
    }
    Ok(())
}

/// A type id as the cross-check compares it: distinct ids only as "local".
fn id_key(id: &str, locals: &BTreeSet<String>) -> String {
    if locals.contains(id) { "<local>".into() } else { id.into() }
}

fn ref_key(r: &TypeRef) -> String {
    match r {
        TypeRef::Name(s) => s.clone(),
        TypeRef::Distinct(..) => "<local>".into(),
    }
}

/// The dump against llvm-dis of the same object.
fn cross_check(v: &Value, dis: &Disasm) -> Check {
    // Type ids the dump declares local (distinct metadata).
    let mut locals = BTreeSet::new();
    for t in array(v, "type_ids") {
        let name = string(t, "name")?;
        let local = t.get("local").and_then(Value::as_bool) == Some(true);
        if local != name.starts_with("local.") {
            return Err(format!("type id {name}: local={local} disagrees with its name"));
        }
        if local {
            locals.insert(name.to_string());
        }
    }
    // Every distinct node is a local id of the dump, but one only tests
    // that guard no call name (tests the dump skips).
    if locals.len() > dis.distinct_ids.len() {
        return Err(format!(
            "dump has {} local type ids, llvm-dis shows only {} distinct type-id nodes",
            locals.len(),
            dis.distinct_ids.len()
        ));
    }

    // Vtables: same symbols, same (offset, id) pairs, same vcall visibility.
    let mut dumped: BTreeMap<String, (BTreeSet<(u64, String)>, String)> = BTreeMap::new();
    for vt in array(v, "vtables") {
        let sym = string(vt, "symbol")?.to_string();
        let mut pairs = BTreeSet::new();
        for t in array(vt, "type_ids") {
            let id = string(t, "type_id")?;
            if id.starts_with("local.") && !locals.contains(id) {
                return Err(format!("vtable {sym}: type id {id} is not listed in type_ids"));
            }
            pairs.insert((uint(t, "offset")?, id.to_string()));
        }
        // Distinct ids compare by (offset, "<local>") multiset: keep a
        // counter so two local ids at one offset stay two entries.
        let pairs: BTreeSet<(u64, String)> =
            number_locals(pairs.into_iter().map(|(o, id)| (o, id_key(&id, &locals), id)));
        let vis = string(vt, "vcall_visibility")?.to_string();
        if dumped.insert(sym.clone(), (pairs, vis)).is_some() {
            return Err(format!("vtable {sym} listed twice"));
        }
    }
    let mut disas: BTreeMap<String, (BTreeSet<(u64, String)>, String)> = BTreeMap::new();
    for (sym, g) in &dis.typed_globals {
        let pairs = number_locals(g.types.iter().map(|(o, r)| (*o, ref_key(r), format!("{r:?}"))));
        let vis = match g.vcall_visibility {
            None | Some(0) => "public",
            Some(1) => "linkage_unit",
            Some(2) => "translation_unit",
            Some(n) => return Err(format!("{sym}: unknown !vcall_visibility {n}")),
        };
        disas.insert(sym.clone(), (pairs, vis.to_string()));
    }
    let a: BTreeSet<_> = dumped.keys().collect();
    let b: BTreeSet<_> = disas.keys().collect();
    if a != b {
        return Err(format!(
            "vtable symbols differ\n  only in dump: {:?}\n  only in llvm-dis: {:?}",
            a.difference(&b).collect::<Vec<_>>(),
            b.difference(&a).collect::<Vec<_>>()
        ));
    }
    for (sym, want) in &disas {
        let got = &dumped[sym];
        if got.0 != want.0 {
            return Err(format!("vtable {sym}: type ids differ\n  dump:     {:?}\n  llvm-dis: {:?}", got.0, want.0));
        }
        if got.1 != want.1 {
            return Err(format!("vtable {sym}: vcall_visibility {} in dump, {} in llvm-dis", got.1, want.1));
        }
    }

    // Call sites: one group per (function, test_index) = one intrinsic call.
    // (kind, type id key, assumed, records)
    type Group = (String, String, bool, Vec<Value>);
    let mut groups: BTreeMap<(String, u64), Group> = BTreeMap::new();
    for cs in array(v, "call_sites") {
        let func = string(cs, "function")?.to_string();
        let idx = uint(cs, "test_index")?;
        let kind = string(cs, "kind")?.to_string();
        let id = string(cs, "type_id")?;
        if id.starts_with("local.") && !locals.contains(id) {
            return Err(format!("call site in {func}: type id {id} is not listed in type_ids"));
        }
        let key = id_key(id, &locals);
        let assumed = cs.get("assumed").and_then(Value::as_bool).ok_or_else(|| format!("no `assumed` in {cs}"))?;
        let g = groups.entry((func.clone(), idx)).or_insert_with(|| (kind.clone(), key.clone(), assumed, Vec::new()));
        if g.0 != kind || g.1 != key || g.2 != assumed {
            return Err(format!(
                "{func} test {idx}: records disagree on kind/type id/assumed ({}/{}/{} vs {kind}/{key}/{assumed})",
                g.0, g.1, g.2
            ));
        }
        g.3.push(cs.clone());
    }
    for ((func, idx), (_, _, _, recs)) in &groups {
        let with_call: Vec<&Value> = recs.iter().filter(|r| !r["offset"].is_null()).collect();
        if with_call.len() != recs.len() && recs.len() != 1 {
            return Err(format!("{func} test {idx}: a record without offset must be the test's only record"));
        }
        for r in &with_call {
            let n = uint(r, "calls_sharing_test")?;
            if n != with_call.len() as u64 {
                return Err(format!(
                    "{func} test {idx}: calls_sharing_test is {n} but the test has {} call records",
                    with_call.len()
                ));
            }
            let call = r.get("call").and_then(Value::as_str);
            if !matches!(call, Some("call" | "invoke")) {
                return Err(format!("{func} test {idx}: call is {call:?} for a record with an offset"));
            }
        }
    }
    // `test_index` counts every test of the function in program order; a
    // test that guards no call and only feeds `llvm.assume` is no call site
    // (nothing to devirtualize), so the dump skips it.
    let describe = |c: &disasm::TestCall| format!("{} {} assumed={}", c.kind, ref_key(&c.type_id), c.assumed);
    for ((func, idx), (kind, key, assumed, _)) in &groups {
        let want = format!("{kind} {key} assumed={assumed}");
        let found = dis.tests.get(func).and_then(|t| t.get(*idx as usize));
        if found.map(describe).as_deref() != Some(want.as_str()) {
            return Err(format!(
                "{func} test {idx}: the dump has `{want}`, llvm-dis has {:?}\n  llvm-dis tests of {func}: {:?}",
                found.map(describe),
                dis.tests.get(func).map(|t| t.iter().map(describe).collect::<Vec<_>>())
            ));
        }
    }
    for (func, tests) in &dis.tests {
        for (idx, t) in tests.iter().enumerate() {
            if !groups.contains_key(&(func.clone(), idx as u64)) && !t.assumed {
                return Err(format!(
                    "{func} test {idx} (`{}`) checks something, but the dump has no record of it",
                    describe(t)
                ));
            }
        }
    }
    Ok(())
}

/// Turns `(offset, key, original id)` triples into a set where every
/// distinct original id keeps its own entry: `(offset, "key#k")`.
fn number_locals(items: impl Iterator<Item = (u64, String, String)>) -> BTreeSet<(u64, String)> {
    let uniq: BTreeSet<(u64, String, String)> = items.collect();
    let mut seen: BTreeMap<(u64, String), usize> = BTreeMap::new();
    let mut out = BTreeSet::new();
    for (o, key, _) in uniq {
        let k = seen.entry((o, key.clone())).or_default();
        *k += 1;
        out.insert((o, format!("{key}#{k}")));
    }
    out
}

/// All fixtures' inputs, renamed `<fixture>-<file>` into one directory.
fn flatten_inputs(fxs: &[Fixture], tmp: &Path) -> Check<Vec<PathBuf>> {
    let flat = tmp.join("flat");
    mkdir(&flat)?;
    let mut inputs = Vec::new();
    for fx in fxs {
        let built = compile(fx, &tmp.join("build").join(&fx.name), &[])?;
        for input in &built.inputs {
            let dst = flat.join(format!("{}-{}", fx.name, file_name(input)));
            std::fs::copy(input, &dst)
                .map_err(|e| format!("cannot copy {} to {}: {e}", input.display(), dst.display()))?;
            inputs.push(dst);
        }
    }
    Ok(inputs)
}

/// `-j 1`, `-j 2` and `-j 2` over the reversed input list write the same files.
fn jobs_determinism(fxs: &[Fixture]) -> Check {
    let tmp = temp_dir("jobs")?;
    let inputs = flatten_inputs(fxs, tmp.path())?;
    let mut reversed = inputs.clone();
    reversed.reverse();
    let runs = [("j1", &inputs, "1"), ("j2", &inputs, "2"), ("j2-reversed", &reversed, "2")];
    let mut results = Vec::new();
    for (label, ins, jobs) in runs {
        let out = tmp.path().join(label);
        summarize(ins, &out, &["-j", jobs])?;
        let names = list_dir(&out)?;
        let mut files = Vec::new();
        for n in &names {
            files.push((n.clone(), read(&out.join(n))?));
        }
        results.push((label, files));
    }
    let (base_label, base) = &results[0];
    if base.len() < inputs.len() {
        return Err(format!("{base_label}: {} summaries for {} inputs", base.len(), inputs.len()));
    }
    for (label, files) in &results[1..] {
        let a: Vec<&String> = base.iter().map(|(n, _)| n).collect();
        let b: Vec<&String> = files.iter().map(|(n, _)| n).collect();
        if a != b {
            return Err(format!("{base_label} wrote {a:?}, {label} wrote {b:?}"));
        }
        for ((n, x), (_, y)) in base.iter().zip(files) {
            if x != y {
                return Err(format!("{n}: {base_label} and {label} outputs differ"));
            }
        }
    }
    thin_link_jobs_determinism(&tmp.path().join("j1"), &base.iter().map(|(n, _)| n.clone()).collect::<Vec<_>>())
}

/// `wpd thin-link` over every fixture's summaries at once (many modules,
/// so its work is split over the threads: the hierarchy's walks, the
/// calls gathered module by module, each slot's members and dispatch
/// counts, the dead-slot reads) writes the same plan with 1, 2 and 3
/// threads, under two policies.
fn thin_link_jobs_determinism(dir: &Path, names: &[String]) -> Check {
    let summaries: Vec<PathBuf> = names.iter().map(|n| dir.join(n)).collect();
    let policies: [&[&str]; 2] =
        [&["--whole-program-visibility", "--speculate", "2", "--closed-set", "5"], &["--speculate", "1"]];
    for (p, policy) in policies.iter().enumerate() {
        let mut plans: Vec<(String, Vec<u8>)> = Vec::new();
        for jobs in ["1", "2", "3"] {
            let plan = dir.join(format!("plan-{p}-j{jobs}.wpdp"));
            run(Command::new(wpd_bin()?)
                .arg("thin-link")
                .args(&summaries)
                .arg("-o")
                .arg(&plan)
                .args(["-j", jobs])
                .args(*policy))?;
            plans.push((jobs.to_string(), read(&plan)?));
        }
        let (j1, base) = &plans[0];
        for (jobs, plan) in &plans[1..] {
            if plan != base {
                return Err(format!("thin-link {policy:?}: the plans of -j {j1} and -j {jobs} differ"));
            }
        }
        // Not a trivially equal pair: the plan decides call sites.
        let v = dump(&dir.join(format!("plan-{p}-j1.wpdp")))?;
        let decided = v["stats"]["call_sites"]
            .as_u64()
            .unwrap_or(0)
            .saturating_sub(v["stats"]["not_devirtualized"].as_u64().unwrap_or(0));
        if decided == 0 {
            return Err(format!("thin-link {policy:?}: the plan devirtualizes nothing, so it shows nothing"));
        }
    }
    Ok(())
}

/// The split build of SPLIT_FIXTURE and its `-fno-split-lto-unit` build give
/// the same vtables and call sites.
fn split_vs_unsplit(fxs: &[Fixture]) -> Check {
    let fx =
        fxs.iter().find(|f| f.name == SPLIT_FIXTURE).ok_or_else(|| format!("fixture {SPLIT_FIXTURE} not found"))?;
    let tmp = temp_dir("split")?;
    let split = compile(fx, &tmp.path().join("split"), &[])?;
    let unsplit = compile(fx, &tmp.path().join("unsplit"), &["-fno-split-lto-unit"])?;
    let (out_s, out_u) = (tmp.path().join("out-split"), tmp.path().join("out-unsplit"));
    summarize(&split.inputs, &out_s, &[])?;
    summarize(&unsplit.inputs, &out_u, &[])?;
    let names = check_outputs(&split, &out_s)?;
    check_outputs(&unsplit, &out_u)?;
    let (mut saw_split, mut saw_content) = (false, false);
    for name in &names {
        let s = dump(&out_s.join(name))?;
        let u = dump(&out_u.join(name))?;
        saw_split |= s["module"]["split"] == Value::Bool(true);
        if u["module"]["split"] != Value::Bool(false) {
            return Err(format!("{name}: -fno-split-lto-unit build has module.split != false"));
        }
        for key in ["vtables", "call_sites"] {
            if s[key] != u[key] {
                let (a, b) = (to_golden(&s[key]), to_golden(&u[key]));
                return Err(format!(
                    "{name}: `{key}` differs between split and unsplit builds\n{}",
                    short_diff(&a, &b)
                ));
            }
        }
        saw_content |= !array(&s, "vtables").is_empty() && !array(&s, "call_sites").is_empty();
    }
    if !saw_split || !saw_content {
        return Err(format!(
            "{SPLIT_FIXTURE} must give a split object with vtables and call sites (split: {saw_split}, content: {saw_content})"
        ));
    }
    Ok(())
}

/// `wpd summarize` reads only the bodies it needs and takes the references
/// of the others from clang's summary index; `--read-all-bodies` walks
/// every body. Every fixture, built split, unsplit and with debug info,
/// must give byte-identical summaries both ways.
fn every_body_agrees(fxs: &[Fixture]) -> Check {
    let tmp = temp_dir("all-bodies")?;
    let (mut files, mut with_calls) = (0, 0);
    for fx in fxs {
        for (k, extra) in [&[][..], &["-fno-split-lto-unit"][..], &["-g"][..]].into_iter().enumerate() {
            // clang refuses CFI without split LTO units.
            if extra == ["-fno-split-lto-unit"] && fx.flags.iter().any(|f| f.starts_with("-fsanitize=cfi")) {
                continue;
            }
            let dir = tmp.path().join(format!("{}-{k}", fx.name));
            let built = compile(fx, &dir.join("build"), extra)?;
            let (needed, all) = (dir.join("needed"), dir.join("all"));
            summarize(&built.inputs, &needed, &[])?;
            summarize(&built.inputs, &all, &["--read-all-bodies"])?;
            for name in check_outputs(&built, &needed)? {
                let (a, b) = (read(&needed.join(&name))?, read(&all.join(&name))?);
                if a != b {
                    let (a, b) = (to_golden(&dump(&needed.join(&name))?), to_golden(&dump(&all.join(&name))?));
                    return Err(format!(
                        "{} {extra:?} {name}: the summary differs when every body is read\n{}",
                        fx.name,
                        short_diff(&a, &b)
                    ));
                }
                files += 1;
                with_calls += usize::from(!array(&dump(&all.join(&name))?, "call_sites").is_empty());
            }
        }
    }
    if with_calls == 0 {
        return Err(format!("none of the {files} summaries compared has a call site"));
    }
    Ok(())
}
