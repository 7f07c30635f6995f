//! Linker scripts, as far as they choose inputs: `INPUT`, `GROUP` and
//! `AS_NEEDED` lists (such as glibc's `libc.so`), `SEARCH_DIR`, `ENTRY`, and
//! the commands that change nothing about symbols (`OUTPUT_FORMAT`,
//! `OUTPUT_ARCH`, `TARGET`, `OUTPUT`). Any other command (assignments,
//! `SECTIONS`, `PROVIDE`, `INCLUDE`, …) may define or keep symbols: it makes
//! the outside references unknown. The names a script assigns (outside
//! `PROVIDE`) are also the command line's definitions: no file's copy of
//! them prevails, so no body wpd read stands for them.

/// What a script contributes to the link, in order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Script {
    pub commands: Vec<Command>,
    /// The first command wpd does not model.
    pub unknown: Option<String>,
    /// The symbols the script assigns (`NAME = EXPR;`, `NAME += 4;`, in
    /// `SECTIONS` or outside): the script's value replaces any file's
    /// definition of them ([`assignments`]).
    pub assigned: Vec<String>,
}

/// A command wpd models.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Command {
    /// `INPUT(...)` (`group` false) or `GROUP(...)`.
    Inputs {
        group: bool,
        entries: Vec<Entry>,
    },
    SearchDir(String),
    Entry(String),
    /// `OUTPUT_FORMAT`, `OUTPUT_ARCH`, `TARGET`, `OUTPUT`: kept as written.
    Keep {
        name: String,
        args: Vec<String>,
    },
}

/// A file of an `INPUT` or `GROUP` list.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Entry {
    File { name: String, as_needed: bool },
    Library { spec: String, as_needed: bool },
}

impl Script {
    /// The file entries, in order.
    pub fn entries(&self) -> impl Iterator<Item = &Entry> {
        self.commands.iter().flat_map(|c| match c {
            Command::Inputs { entries, .. } => entries.as_slice(),
            _ => &[],
        })
    }
}

/// The token syntax of one kind of linker-script text.
pub(super) struct Syntax {
    /// Characters that are tokens of their own.
    pub punct: &'static [char],
    /// `#` starts a comment to the end of the line (version scripts).
    pub hash_comments: bool,
    /// Quoted strings stay one token with their quotes (version-script
    /// patterns); else quotes only group.
    pub keep_quotes: bool,
    /// `global:` and `local:` are one token each (version scripts), while
    /// other colons (`ns::f*`) stay inside words.
    pub labels: bool,
}

/// Input scripts: words and `(`, `)`, `{`, `}`, `;`, `,`, `=`; `#` starts
/// a comment, as lld, GNU ld and gold read it.
const SCRIPT: Syntax =
    Syntax { punct: &['(', ')', '{', '}', ';', ',', '='], hash_comments: true, keep_quotes: false, labels: false };

/// Splits script text into words and the punctuation of `syntax`; `/* */`
/// comments are dropped and quotes group.
pub(super) fn tokens(text: &str, syntax: &Syntax) -> Vec<String> {
    scan(text, syntax).0
}

/// [`tokens`], and whether the text ended inside a comment or a string
/// (what is unterminated).
fn scan(text: &str, syntax: &Syntax) -> (Vec<String>, Option<&'static str>) {
    let mut unterminated = None;
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut chars = text.chars().peekable();
    let flush = |cur: &mut String, out: &mut Vec<String>| {
        if !cur.is_empty() {
            out.push(std::mem::take(cur));
        }
    };
    while let Some(c) = chars.next() {
        match c {
            '#' if syntax.hash_comments => {
                flush(&mut cur, &mut out);
                chars.by_ref().find(|&c| c == '\n');
            }
            '/' if chars.peek() == Some(&'*') => {
                flush(&mut cur, &mut out);
                chars.next();
                let mut prev = ' ';
                let closed = chars.by_ref().any(|c| {
                    let end = prev == '*' && c == '/';
                    prev = c;
                    end
                });
                if !closed {
                    unterminated = Some("a comment");
                }
            }
            '"' => {
                if syntax.keep_quotes {
                    flush(&mut cur, &mut out);
                    cur.push('"');
                }
                let closed = chars.by_ref().any(|c| {
                    let end = c == '"';
                    if !end {
                        cur.push(c);
                    }
                    end
                });
                if !closed {
                    unterminated = Some("a string");
                }
                if syntax.keep_quotes {
                    cur.push('"');
                    flush(&mut cur, &mut out);
                }
            }
            ':' if syntax.labels && (cur == "global" || cur == "local") => {
                cur.push(':');
                flush(&mut cur, &mut out);
            }
            c if syntax.punct.contains(&c) => {
                flush(&mut cur, &mut out);
                out.push(c.to_string());
            }
            c if c.is_whitespace() => flush(&mut cur, &mut out),
            c => cur.push(c),
        }
    }
    flush(&mut cur, &mut out);
    (out, unterminated)
}

/// The symbols a linker script (or any text in its syntax) assigns over
/// every file's definition: the word before each `=` or compound `op=`
/// that is not part of `==`, `<=`, `>=` or `!=`. `PROVIDE(NAME = ...)` and
/// `PROVIDE_HIDDEN` are left out: they define a name only where no file
/// does.
pub fn assignments(text: &str) -> Vec<String> {
    assigned(&tokens(text, &SCRIPT))
}

/// [`assignments`] over a script's tokens.
fn assigned(toks: &[String]) -> Vec<String> {
    let symbol =
        |w: &str| !w.is_empty() && w.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '$'));
    let op = |c: char| matches!(c, '+' | '-' | '*' | '/' | '&' | '|');
    let mut out = Vec::new();
    for (i, t) in toks.iter().enumerate() {
        if t != "=" || toks.get(i + 1).is_some_and(|n| n == "=") || (i > 0 && toks[i - 1] == "=") {
            continue;
        }
        // `NAME =`, `NAME+=` (one word) or `NAME += ` (the operator alone).
        let (mut k, mut name) = match i.checked_sub(1).map(|p| (p, toks[p].as_str())) {
            Some((p, w)) => (p, w),
            None => continue,
        };
        if name.len() == 1 && name.chars().all(op) && k > 0 {
            k -= 1;
            name = &toks[k];
        } else if let Some(stripped) = name.strip_suffix(op) {
            name = stripped;
        }
        let provided = k >= 2 && toks[k - 1] == "(" && matches!(toks[k - 2].as_str(), "PROVIDE" | "PROVIDE_HIDDEN");
        if symbol(name) && name != "." && !provided {
            out.push(name.to_string());
        }
    }
    out
}

/// Where script text is not well formed, what is wrong: it ends inside
/// a comment or string (`unterminated`), or its tokens `toks` close a `(`
/// or `{` never opened or leave one open. lld and GNU ld stop on these;
/// wpd-ld must not read such a script as a shorter one.
fn syntax_error(toks: &[String], unterminated: Option<&str>) -> Option<String> {
    if let Some(what) = unterminated {
        return Some(format!("unexpected end of file in {what}"));
    }
    let mut closing = Vec::new();
    for t in toks {
        match t.as_str() {
            "(" => closing.push(")"),
            "{" => closing.push("}"),
            ")" | "}" if closing.pop() != Some(t.as_str()) => return Some(format!("unexpected `{t}`")),
            _ => {}
        }
    }
    closing.last().map(|c| format!("unexpected end of file (`{c}` expected)"))
}

/// Parses a script; `shown` names it in the reason of an unknown command
/// and in the error for text that is not well formed ([`syntax_error`]).
pub fn parse(text: &str, shown: &str) -> crate::error::Result<Script> {
    let (toks, unterminated) = scan(text, &SCRIPT);
    if let Some(e) = syntax_error(&toks, unterminated) {
        return Err(crate::error::Error::at(shown, format!("not a well-formed linker script: {e}")));
    }
    let mut s = Script { assigned: assigned(&toks), ..Script::default() };
    let mut i = 0;
    // The parenthesized words after toks[i] (the command), nested lists kept
    // as their own words.
    let args = |i: &mut usize| -> Vec<String> {
        let mut words = Vec::new();
        if toks.get(*i + 1).map(String::as_str) != Some("(") {
            *i += 1;
            return words;
        }
        let mut depth = 0;
        *i += 1;
        while let Some(t) = toks.get(*i) {
            *i += 1;
            match t.as_str() {
                "(" => {
                    depth += 1;
                    if depth > 1 {
                        words.push(t.clone());
                    }
                }
                ")" => {
                    depth -= 1;
                    if depth == 0 {
                        break;
                    }
                    words.push(t.clone());
                }
                "," => {}
                _ => words.push(t.clone()),
            }
        }
        words
    };
    while i < toks.len() {
        let cmd = toks[i].clone();
        match cmd.as_str() {
            "INPUT" | "GROUP" | "STARTUP" => {
                let words = args(&mut i);
                let mut entries = Vec::new();
                let mut as_needed = false;
                let mut k = 0;
                while k < words.len() {
                    let w = &words[k];
                    match w.as_str() {
                        "AS_NEEDED" => {
                            as_needed = true;
                            k += 1; // its "("
                        }
                        ")" => as_needed = false,
                        "(" => {}
                        _ => entries.push(match w.strip_prefix("-l") {
                            Some(spec) => Entry::Library { spec: spec.to_string(), as_needed },
                            None => Entry::File { name: w.clone(), as_needed },
                        }),
                    }
                    k += 1;
                }
                s.commands.push(Command::Inputs { group: cmd == "GROUP", entries });
            }
            "SEARCH_DIR" => s.commands.extend(args(&mut i).into_iter().map(Command::SearchDir)),
            "ENTRY" => s.commands.extend(args(&mut i).into_iter().take(1).map(Command::Entry)),
            "OUTPUT_FORMAT" | "OUTPUT_ARCH" | "TARGET" | "OUTPUT" => {
                let args = args(&mut i);
                s.commands.push(Command::Keep { name: cmd, args });
            }
            ";" => i += 1,
            _ => {
                s.unknown.get_or_insert_with(|| format!("linker script {shown} (command {cmd})"));
                i += 1;
            }
        }
    }
    Ok(s)
}

/// Writes a script back (only the commands wpd models), with each file
/// entry spelled as `spell` says (`None`: as written; `Some(words)`: those
/// files in its place, none to leave it out, two for a split unit's two
/// objects).
pub fn write(script: &Script, mut spell: impl FnMut(usize, &Entry) -> Option<Vec<String>>) -> String {
    let quote = |w: &str| {
        if w.chars().any(|c| c.is_whitespace() || "(),;=\"".contains(c)) { format!("\"{w}\"") } else { w.to_string() }
    };
    let mut out = String::new();
    let mut n = 0;
    for c in &script.commands {
        match c {
            Command::Inputs { group, entries } => {
                out.push_str(if *group { "GROUP(" } else { "INPUT(" });
                let mut in_as_needed = false;
                for e in entries {
                    let (word, as_needed) = match e {
                        Entry::File { name, as_needed } => (name.clone(), *as_needed),
                        Entry::Library { spec, as_needed } => (format!("-l{spec}"), *as_needed),
                    };
                    let words = spell(n, e).unwrap_or_else(|| vec![word]);
                    n += 1;
                    if words.is_empty() {
                        continue;
                    }
                    if as_needed != in_as_needed {
                        out.push_str(if as_needed { " AS_NEEDED(" } else { " )" });
                        in_as_needed = as_needed;
                    }
                    for w in words {
                        out.push(' ');
                        out.push_str(&quote(&w));
                    }
                }
                if in_as_needed {
                    out.push_str(" )");
                }
                out.push_str(" )\n");
            }
            Command::SearchDir(d) => out.push_str(&format!("SEARCH_DIR({})\n", quote(d))),
            Command::Entry(e) => out.push_str(&format!("ENTRY({})\n", quote(e))),
            Command::Keep { name, args } => {
                let args: Vec<String> = args.iter().map(|a| quote(a)).collect();
                out.push_str(&format!("{name}({})\n", args.join(", ")));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn glibc_scripts() {
        let libc = "/* GNU ld script\n   Use the shared library. */\nOUTPUT_FORMAT(elf64-x86-64)\nGROUP ( /lib/x86_64-linux-gnu/libc.so.6 /usr/lib/x86_64-linux-gnu/libc_nonshared.a  AS_NEEDED ( /lib64/ld-linux-x86-64.so.2 ) )\n";
        let s = parse(libc, "libc.so").unwrap();
        assert_eq!(s.unknown, None);
        assert_eq!(
            s.entries().cloned().collect::<Vec<_>>(),
            vec![
                Entry::File { name: "/lib/x86_64-linux-gnu/libc.so.6".into(), as_needed: false },
                Entry::File { name: "/usr/lib/x86_64-linux-gnu/libc_nonshared.a".into(), as_needed: false },
                Entry::File { name: "/lib64/ld-linux-x86-64.so.2".into(), as_needed: true },
            ]
        );
        assert!(matches!(s.commands[1], Command::Inputs { group: true, .. }));
        let gcc_s = parse("/* GNU ld script */\nGROUP ( libgcc_s.so.1 -lgcc )", "libgcc_s.so").unwrap();
        assert_eq!(gcc_s.entries().nth(1), Some(&Entry::Library { spec: "gcc".into(), as_needed: false }));
        // Written back, it reads the same.
        let again = parse(&write(&s, |_, _| None), "again").unwrap();
        assert_eq!(again, s);
        let renamed = write(&s, |n, _| (n == 1).then(|| vec!["/tmp/x y/native.a".to_string()]));
        assert!(renamed.contains("\"/tmp/x y/native.a\" AS_NEEDED( /lib64"), "{renamed}");
        let two =
            write(&s, |n, _| (n == 1).then(|| vec!["/tmp/a.o".to_string(), "/tmp/x y/a.o.vtables.o".to_string()]));
        assert!(two.contains(" /tmp/a.o \"/tmp/x y/a.o.vtables.o\" AS_NEEDED( /lib64"), "{two}");
        let dropped = write(&s, |n, _| (n == 1).then(Vec::new));
        assert!(dropped.contains("GROUP( /lib/x86_64-linux-gnu/libc.so.6 AS_NEEDED( /lib64"), "{dropped}");
    }

    #[test]
    fn other_commands_are_unknown() {
        let s = parse(
            "SEARCH_DIR(\"=/usr/lib\") ENTRY(go) INPUT(a.o, b.o) foo = bar; SECTIONS { .text : { *(.text) } }",
            "t.ld",
        )
        .unwrap();
        assert_eq!(s.commands[0], Command::SearchDir("=/usr/lib".into()));
        assert_eq!(s.commands[1], Command::Entry("go".into()));
        assert_eq!(s.entries().count(), 2);
        assert_eq!(s.unknown.as_deref(), Some("linker script t.ld (command foo)"));
    }

    /// Text lld and GNU ld stop on is an error, not a shorter script;
    /// comments and strings hide what they hold.
    #[test]
    fn malformed_scripts_are_errors() {
        for (text, what) in [
            ("INPUT(a.o b.o\n", "`)` expected"),
            ("GROUP ( a.o AS_NEEDED ( b.so )", "`)` expected"),
            ("SECTIONS { .text : { *(.text) }", "`}` expected"),
            ("INPUT(a.o))", "unexpected `)`"),
            ("INPUT(a.o) }", "unexpected `}`"),
            ("INPUT(a.o) /* never closed", "in a comment"),
            ("INPUT(\"a.o)", "in a string"),
        ] {
            let e = parse(text, "t.ld").unwrap_err().to_string();
            assert!(e.contains(what) && e.contains("t.ld"), "{text:?}: {e}");
        }
        let s = parse("/* ( { */ INPUT(\"a(1).o\" b.o) /* ) */", "t.ld").unwrap();
        assert_eq!(s.entries().count(), 2);
        // A `#` comment runs to the end of its line (lld, GNU ld and gold).
        let s = parse("# the inputs (two of them\nINPUT(a.o b.o) # and no more\n", "t.ld").unwrap();
        assert_eq!((s.entries().count(), s.unknown), (2, None));
    }
}
