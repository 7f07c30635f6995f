//! A deliberately small reader of `llvm-dis-19` text, independent of wpd, used
//! to cross-check summaries: which globals carry `!type` (with their offsets
//! and ids, plus `!vcall_visibility`) and which type-test intrinsics each
//! function calls, in textual order.

use crate::{Check, LLVM_DIS, run};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;

/// A type id as written in the IR.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum TypeRef {
    /// `!"name"`.
    Name(String),
    /// A `distinct !{}` node, keyed by module index and node number.
    Distinct(usize, u64),
}

/// The `!type` attachments of one global.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TypedGlobal {
    /// `(offset, id)` pairs, deduplicated.
    pub types: BTreeSet<(u64, TypeRef)>,
    /// The `!vcall_visibility` value, when present.
    pub vcall_visibility: Option<u64>,
}

/// One call of a type-test intrinsic.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TestCall {
    /// `type_test`, `public_type_test` or `type_checked_load` (dump spelling).
    pub kind: &'static str,
    /// The tested id.
    pub type_id: TypeRef,
    /// The check result only feeds `llvm.assume` (or is unused); for a
    /// checked load, the `i1` of the pair.
    pub assumed: bool,
}

/// What the cross-checks need from one object (all its modules).
#[derive(Debug, Clone, Default)]
pub struct Disasm {
    /// Number of modules (2 for a split LTO unit).
    pub modules: usize,
    /// Globals carrying `!type`, by symbol.
    pub typed_globals: BTreeMap<String, TypedGlobal>,
    /// Type-test calls per defining function, in textual order.
    pub tests: BTreeMap<String, Vec<TestCall>>,
    /// Distinct nodes used as type ids (by `!type` or by a test).
    pub distinct_ids: BTreeSet<(usize, u64)>,
}

/// Disassembles `obj` into `scratch` and parses every module.
pub fn disassemble(obj: &Path, scratch: &Path) -> Check<Disasm> {
    crate::mkdir(scratch)?;
    let ll = scratch.join(format!("{}.ll", crate::file_name(obj)));
    run(Command::new(LLVM_DIS).arg(obj).arg("-o").arg(&ll))?;
    // llvm-dis writes `X.0`, `X.1`, ... for a file holding several modules.
    let mut files = Vec::new();
    if ll.is_file() {
        files.push(ll.clone());
    } else {
        for i in 0.. {
            let p = scratch.join(format!("{}.{i}", crate::file_name(&ll)));
            if !p.is_file() {
                break;
            }
            files.push(p);
        }
    }
    if files.is_empty() {
        return Err(format!("llvm-dis wrote nothing for {}", obj.display()));
    }
    let mut d = Disasm::default();
    for (i, f) in files.iter().enumerate() {
        let text = String::from_utf8(crate::read(f)?).map_err(|_| format!("{} is not UTF-8", f.display()))?;
        parse_module(&text, i, &mut d).map_err(|e| format!("{}: {e}", f.display()))?;
        d.modules += 1;
    }
    Ok(d)
}

/// Parses one module's text into `d`.
pub fn parse_module(text: &str, module: usize, d: &mut Disasm) -> Check {
    // Metadata nodes are printed at the end; collect them first.
    let mut nodes: BTreeMap<u64, &str> = BTreeMap::new();
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix('!')
            && let Some((num, body)) = rest.split_once(" = ")
            && let Ok(n) = num.parse::<u64>()
        {
            nodes.insert(n, body);
        }
    }
    let resolve_id = |operand: &str| -> Check<TypeRef> {
        // `!"name"` or `!N` naming a `distinct !{}` node.
        if let Some(s) = operand.strip_prefix("!\"") {
            let end = s.find('"').ok_or_else(|| format!("bad metadata string {operand}"))?;
            return Ok(TypeRef::Name(unescape(&s[..end])));
        }
        let n = metadata_ref(operand).ok_or_else(|| format!("bad type id operand {operand}"))?;
        match nodes.get(&n) {
            Some(body) if body.starts_with("distinct !{") => Ok(TypeRef::Distinct(module, n)),
            Some(body) => Err(format!("type id !{n} is neither a string nor distinct: {body}")),
            None => Err(format!("type id !{n} is not defined")),
        }
    };

    let mut function: Option<String> = None;
    let mut body: Vec<&str> = Vec::new();
    for line in text.lines() {
        if line.starts_with("define ") {
            let at = line.find('@').ok_or_else(|| format!("no name in `{line}`"))?;
            function = Some(parse_symbol(&line[at + 1..]).0);
            body.clear();
            continue;
        }
        if line.starts_with('}') {
            if let Some(func) = function.take() {
                scan_tests(&func, &body, &resolve_id, d)?;
            }
            continue;
        }
        if function.is_some() {
            body.push(line);
            continue;
        }
        if let Some(rest) = line.strip_prefix('@') {
            let (name, _) = parse_symbol(rest);
            let mut g = TypedGlobal::default();
            for n in attachments(line, "!type") {
                let body = nodes.get(&n).ok_or_else(|| format!("!type !{n} is not defined"))?;
                let inner = body
                    .strip_prefix("!{i64 ")
                    .and_then(|b| b.strip_suffix('}'))
                    .ok_or_else(|| format!("unexpected !type node !{n} = {body}"))?;
                let (off, id) = inner.split_once(", ").ok_or_else(|| format!("unexpected !type node !{n} = {body}"))?;
                let off: u64 = off.parse().map_err(|_| format!("bad offset in !{n} = {body}"))?;
                let id = resolve_id(id)?;
                if let TypeRef::Distinct(m, k) = id {
                    d.distinct_ids.insert((m, k));
                }
                g.types.insert((off, id));
            }
            if g.types.is_empty() {
                continue;
            }
            if let Some(n) = attachments(line, "!vcall_visibility").first() {
                let body = nodes.get(n).copied().unwrap_or("");
                let v = body
                    .strip_prefix("!{i64 ")
                    .and_then(|b| b.strip_suffix('}'))
                    .and_then(|b| b.parse().ok())
                    .ok_or_else(|| format!("unexpected !vcall_visibility !{n} = {body}"))?;
                g.vcall_visibility = Some(v);
            }
            let prev = d.typed_globals.entry(name).or_default();
            prev.types.extend(g.types);
            prev.vcall_visibility = prev.vcall_visibility.or(g.vcall_visibility);
            continue;
        }
    }
    Ok(())
}

/// Records the type-test intrinsic calls of one function body.
fn scan_tests(func: &str, body: &[&str], resolve_id: &dyn Fn(&str) -> Check<TypeRef>, d: &mut Disasm) -> Check {
    for line in body {
        for (pattern, kind) in [
            ("@llvm.type.test(", "type_test"),
            ("@llvm.public.type.test(", "public_type_test"),
            ("@llvm.type.checked.load(", "type_checked_load"),
        ] {
            let Some(at) = line.find(pattern) else { continue };
            if !line[..at].contains("call ") {
                continue;
            }
            let args = &line[at + pattern.len()..];
            let md = args.find("metadata ").ok_or_else(|| format!("no metadata operand in `{line}`"))?;
            let operand = args[md + "metadata ".len()..].split([',', ')']).next().unwrap_or("");
            // A string operand may contain ',' or ')': take it whole.
            let operand = if operand.starts_with("!\"") {
                let s = &args[md + "metadata ".len()..];
                let end = s[2..].find('"').map_or(s.len(), |e| e + 3);
                &s[..end]
            } else {
                operand
            };
            let type_id = resolve_id(operand)?;
            if let TypeRef::Distinct(m, k) = type_id {
                d.distinct_ids.insert((m, k));
            }
            let result = line.trim_start().split_once(" = ").map(|(r, _)| r).unwrap_or("");
            let assumed = if kind == "type_checked_load" {
                uses(body, result).iter().all(|u| match u.trim_start().split_once(" = ") {
                    Some((bit, rhs)) if rhs.starts_with("extractvalue") && rhs.ends_with(", 1") => {
                        only_assumed(body, bit)
                    }
                    Some((_, rhs)) => rhs.starts_with("extractvalue") && rhs.ends_with(", 0"),
                    None => false,
                })
            } else {
                only_assumed(body, result)
            };
            d.tests.entry(func.to_string()).or_default().push(TestCall { kind, type_id, assumed });
        }
    }
    Ok(())
}

/// The instructions of `body` using local value `name` (debug records and
/// the defining line excluded), with any `!` attachments cut off.
fn uses<'a>(body: &[&'a str], name: &str) -> Vec<&'a str> {
    if name.is_empty() {
        return Vec::new();
    }
    let is_ident = |c: char| c.is_ascii_alphanumeric() || "._$-".contains(c);
    body.iter()
        .map(|l| l.split(", !").next().unwrap_or(l))
        .filter(|l| !l.trim_start().starts_with("#dbg_"))
        .filter(|l| !l.trim_start().starts_with(&format!("{name} = ")))
        .filter(|l| l.match_indices(name).any(|(i, _)| !l[i + name.len()..].starts_with(is_ident)))
        .collect()
}

/// Every use of `name` is `call void @llvm.assume(i1 name)`.
fn only_assumed(body: &[&str], name: &str) -> bool {
    let want = format!("@llvm.assume(i1 {name})");
    uses(body, name).iter().all(|u| u.contains(&want))
}

/// `!N` -> N.
fn metadata_ref(s: &str) -> Option<u64> {
    s.trim().strip_prefix('!')?.parse().ok()
}

/// Numbers of every `<key> !N` attachment on a line.
fn attachments(line: &str, key: &str) -> Vec<u64> {
    let pat = format!(", {key} !");
    let mut out = Vec::new();
    let mut rest = line;
    while let Some(i) = rest.find(&pat) {
        rest = &rest[i + pat.len()..];
        let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
        if let Ok(n) = digits.parse() {
            out.push(n);
        }
    }
    out
}

/// Parses a symbol after its `@`: `name` or `"quoted name"`; returns the
/// unescaped name and the remaining text.
fn parse_symbol(s: &str) -> (String, &str) {
    if let Some(q) = s.strip_prefix('"') {
        let end = q.find('"').unwrap_or(q.len());
        (unescape(&q[..end]), &q[end..])
    } else {
        let end = s.find(|c: char| !(c.is_ascii_alphanumeric() || "._$-".contains(c))).unwrap_or(s.len());
        (s[..end].to_string(), &s[end..])
    }
}

/// Undoes LLVM's `\XX` hex escapes in names and strings.
fn unescape(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\' {
            if b.get(i + 1) == Some(&b'\\') {
                out.push(b'\\');
                i += 2;
                continue;
            }
            if let Some(h) = s.get(i + 1..i + 3).and_then(|h| u8::from_str_radix(h, 16).ok()) {
                out.push(h);
                i += 3;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = r#"
@_ZTV1A = constant { [3 x ptr] } { [3 x ptr] [ptr null, ptr @_ZTI1A, ptr @f] }, align 8, !type !0, !type !1, !vcall_visibility !3
@"quoted\22v" = internal constant { [3 x ptr] } zeroinitializer, !type !2
@plain = global i32 0, !dbg !9
define void @use(ptr %p) {
  %v = load ptr, ptr %p
  %t = tail call i1 @llvm.public.type.test(ptr %v, metadata !"_ZTS1A")
  tail call void @llvm.assume(i1 %t)
    #dbg_value(i1 %u, !7, !DIExpression(), !8)
  %u = call i1 @llvm.type.test(ptr %v, metadata !4)
  br i1 %u, label %ok, label %trap
ok:
  %c = call { ptr, i1 } @llvm.type.checked.load(ptr %v, i32 8, metadata !"_ZTS1A"), !nosanitize !9
  %c0 = extractvalue { ptr, i1 } %c, 0, !nosanitize !9
  %c1 = extractvalue { ptr, i1 } %c, 1
  call void @llvm.assume(i1 %c1)
  %c10 = add i32 1, 2
  %l = call { ptr, i1 } @llvm.type.checked.load(ptr %v, i32 0, metadata !"_ZTS1A")
  %l1 = extractvalue { ptr, i1 } %l, 1
  br i1 %l1, label %ok2, label %trap
ok2:
  ret void
trap:
  unreachable
}
declare i1 @llvm.type.test(ptr, metadata)
!0 = !{i64 16, !"_ZTS1A"}
!1 = !{i64 16, !"_ZTSM1AFvvE.virtual"}
!2 = !{i64 16, !4}
!3 = !{i64 1}
!4 = distinct !{}
"#;

    #[test]
    fn parses_types_and_tests() {
        let mut d = Disasm::default();
        parse_module(SAMPLE, 0, &mut d).unwrap();
        assert_eq!(d.typed_globals.len(), 2);
        let a = &d.typed_globals["_ZTV1A"];
        assert_eq!(a.vcall_visibility, Some(1));
        assert!(a.types.contains(&(16, TypeRef::Name("_ZTS1A".into()))));
        assert_eq!(a.types.len(), 2);
        let q = &d.typed_globals["quoted\"v"];
        assert_eq!(q.types.iter().next().unwrap(), &(16, TypeRef::Distinct(0, 4)));
        let kinds: Vec<_> = d.tests["use"].iter().map(|t| t.kind).collect();
        assert_eq!(kinds, ["public_type_test", "type_test", "type_checked_load", "type_checked_load"]);
        let assumed: Vec<_> = d.tests["use"].iter().map(|t| t.assumed).collect();
        assert_eq!(assumed, [true, false, true, false]);
        assert_eq!(d.distinct_ids.len(), 1);
    }
}
