//! What the output exports to the dynamic linker, symbol by symbol: every
//! default-visibility definition of a `-shared` output except those a
//! version script makes local (`local:`) or `--exclude-libs` hides; in an
//! executable, everything with `--export-dynamic`, else what
//! `--dynamic-list` / `--export-dynamic-symbol(-list)` name. Patterns are
//! globs; `extern "C++"` ones match demangled names (the caller's
//! demangler; without one, a C++ pattern is assumed to match when that
//! exports more, never when it would hide). `-shared` and
//! `--export-dynamic` alone leave out a bitcode definition LLVM may omit
//! from the symbol table ([`exported_by_all`]).

use super::glob_match;
use super::script::Syntax;

/// Whether `-shared` or `--export-dynamic` alone (no dynamic list naming
/// it, no native file naming it) exports a bitcode definition: not when
/// LLVM may omit it from the symbol table (`may_omit`: `linkonce_odr` and
/// `unnamed_addr`, an inline function every user may keep a copy of), as
/// lld and LLVMgold leave it out, except a vtable or type info (`_ZTV`,
/// `_ZTI`, `_ZTS`, `_ZTT`, `_ZTC`): exported, it keeps its class open for
/// code loaded at run time (`thin_link::policy`).
pub fn exported_by_all(name: &str, may_omit: bool) -> bool {
    !may_omit || ["_ZTV", "_ZTI", "_ZTS", "_ZTT", "_ZTC"].iter().any(|p| name.starts_with(p))
}

/// One pattern of a version script or dynamic list.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pattern {
    pub text: String,
    /// Inside `extern "C++" { ... }`: matches the demangled name.
    pub cpp: bool,
    /// Quoted: an exact name, no glob.
    pub exact: bool,
}

impl Pattern {
    /// A C name spelled out, no glob: the one symbol it names.
    pub fn exact_c_name(&self) -> Option<&str> {
        (!self.cpp && !self.is_wildcard()).then_some(self.text.as_str())
    }

    fn is_wildcard(&self) -> bool {
        !self.exact && self.text.contains(['*', '?', '['])
    }

    /// Whether the pattern matches (`None`: a C++ pattern and no demangled
    /// name).
    fn matches(&self, name: &str, demangled: Option<&str>) -> Option<bool> {
        let subject = if self.cpp { demangled? } else { name };
        Some(if self.exact || !self.is_wildcard() { subject == self.text } else { glob_match(&self.text, subject) })
    }
}

/// The `global:` and `local:` patterns of a version script (all versions
/// together), or the patterns of a dynamic list (all global).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PatternList {
    pub global: Vec<Pattern>,
    pub local: Vec<Pattern>,
}

/// How a linker reads a quoted pattern outside `extern "C++"`: GNU ld and
/// gold as an exact name, lld (`ScriptParser::readSymbols`) as the glob it
/// spells once unquoted. Inside `extern "C++"` every linker takes a quoted
/// pattern as an exact demangled name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Quoted {
    Exact,
    Glob,
}

impl Quoted {
    /// The rule of `flavor`'s linker.
    pub fn of(flavor: super::Flavor) -> Quoted {
        match flavor {
            super::Flavor::Lld => Quoted::Glob,
            _ => Quoted::Exact,
        }
    }
}

/// Parses a version script or dynamic list, reading quoted patterns as
/// `quoted` says. Errors name what is malformed.
pub fn parse(text: &str, quoted: Quoted) -> Result<PatternList, crate::Error> {
    let toks = tokens(text);
    let mut out = PatternList::default();
    let mut local = false;
    let mut cpp = false;
    let mut depth = 0usize;
    let mut i = 0;
    while i < toks.len() {
        let t = toks[i].as_str();
        match t {
            "{" => {
                depth += 1;
                if depth == 1 {
                    local = false;
                }
            }
            "}" => {
                if cpp && depth == 2 {
                    cpp = false;
                }
                depth = depth.checked_sub(1).ok_or_else(|| crate::Error::msg("unbalanced '}'"))?;
            }
            ";" => {}
            "global:" => local = false,
            "local:" => local = true,
            "extern" => {
                let lang = toks.get(i + 1).map(String::as_str).unwrap_or("");
                cpp = lang == "\"C++\"";
                if lang != "\"C++\"" && lang != "\"C\"" {
                    return Err(crate::Error::msg(format!("unknown language {lang} after extern")));
                }
                i += 1;
            }
            _ if depth == 0 => {} // a version name or dependency
            _ => {
                let (text, exact) = match t.strip_prefix('"').and_then(|r| r.strip_suffix('"')) {
                    Some(q) => (q.to_string(), cpp || quoted == Quoted::Exact),
                    None => (t.to_string(), false),
                };
                let p = Pattern { text, cpp, exact };
                if local { out.local.push(p) } else { out.global.push(p) }
            }
        }
        i += 1;
    }
    if depth != 0 {
        return Err(crate::Error::msg("unbalanced '{'"));
    }
    Ok(out)
}

/// Words, `{`, `}`, `;`, labels with their colon, quoted strings (kept
/// with their quotes); `#` and `/* */` comments dropped.
fn tokens(text: &str) -> Vec<String> {
    const VERSION_SCRIPT: Syntax =
        Syntax { punct: &['{', '}', ';'], hash_comments: true, keep_quotes: true, labels: true };
    super::script::tokens(text, &VERSION_SCRIPT)
}

/// Whether a version script leaves `name` global: exact patterns first
/// (global before local), then wildcards other than a lone `*`, then `*`
/// (lld's order); a name no pattern matches stays global.
pub fn version_global(list: &PatternList, name: &str, demangled: Option<&str>) -> bool {
    // None (cannot tell) counts as a match for global patterns only.
    let any = |ps: &[Pattern], pick: &dyn Fn(&Pattern) -> bool, unknown: bool| {
        ps.iter().filter(|p| pick(p)).any(|p| p.matches(name, demangled).unwrap_or(unknown))
    };
    let exact = |p: &Pattern| !p.is_wildcard();
    let wild = |p: &Pattern| p.is_wildcard() && p.text != "*";
    let star = |p: &Pattern| p.is_wildcard() && p.text == "*";
    for pick in [&exact as &dyn Fn(&Pattern) -> bool, &wild, &star] {
        if any(&list.global, pick, true) {
            return true;
        }
        if any(&list.local, pick, false) {
            return false;
        }
    }
    true
}

/// Whether a dynamic list (or `--export-dynamic-symbol` patterns) names
/// `name`; an unknown C++ match counts as a match.
pub fn listed(list: &PatternList, name: &str, demangled: Option<&str>) -> bool {
    list.global.iter().any(|p| p.matches(name, demangled).unwrap_or(true))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_script_with_cpp_patterns() {
        let text = r#"
            VERS_1 {
              global:
                extern "C++" {
                  PublicShape::*;
                  "vtable for PublicShape";
                };
                api_*;   # C names
              local: *;
            };"#;
        let l = parse(text, Quoted::Exact).unwrap();
        assert_eq!(l.global.len(), 3);
        assert_eq!(l.local, vec![Pattern { text: "*".into(), cpp: false, exact: false }]);
        let g = |name: &str, d: Option<&str>| version_global(&l, name, d);
        assert!(g("_ZTV11PublicShape", Some("vtable for PublicShape")));
        assert!(g("_ZNK11PublicShape5sidesEv", Some("PublicShape::sides() const")));
        assert!(g("api_open", None));
        assert!(!g("_ZTV6Helper", Some("vtable for Helper")));
        // Without a demangler a C++ global pattern may match: exported.
        assert!(g("_ZTV6Helper", None));
        // Exact local beats wildcard global.
        let l2 = parse("{ global: f*; local: foo; };", Quoted::Exact).unwrap();
        assert!(!version_global(&l2, "foo", None) && version_global(&l2, "fab", None));
    }

    #[test]
    fn dynamic_list() {
        let l = parse("{ main_hook; extern \"C++\" { \"ns::f(int)\"; }; };", Quoted::Exact).unwrap();
        assert!(listed(&l, "main_hook", None));
        assert!(listed(&l, "_ZN2ns1fEi", Some("ns::f(int)")));
        assert!(!listed(&l, "_ZN2ns1gEi", Some("ns::g(int)")));
        assert!(parse("{ a; ", Quoted::Exact).is_err());
        // A quoted glob: an exact name to GNU ld and gold, a glob to lld;
        // inside extern "C++" an exact demangled name to every linker.
        let text = "{ \"_ZNK4Base*\"; extern \"C++\" { \"ns::*\"; }; };";
        let gnu = parse(text, Quoted::Exact).unwrap();
        let lld = parse(text, Quoted::Glob).unwrap();
        let f = Some("Base::f() const");
        assert!(!listed(&gnu, "_ZNK4Base1fEv", f) && listed(&gnu, "_ZNK4Base*", Some("?")));
        assert!(listed(&lld, "_ZNK4Base1fEv", f));
        assert!(!listed(&lld, "_ZN2ns1fEv", Some("ns::f()")) && listed(&lld, "_ZN2ns1fEv", Some("ns::*")));
    }
}
