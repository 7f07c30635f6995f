//! Resolution rules on synthetic symbol tables, one test per rule, each in
//! the flavors where the linkers differ.

use super::*;
use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::rc::Rc;

/// Files as a map from path to content.
#[derive(Default)]
struct Fake {
    files: HashMap<PathBuf, Content>,
}

impl Source for Fake {
    fn is_file(&self, path: &Path) -> bool {
        self.files.contains_key(path)
    }

    fn load(&mut self, path: &Path, _binary: bool) -> Result<Content, Error> {
        self.files.get(path).cloned().ok_or_else(|| Error::at(path.display().to_string(), "cannot open: not found"))
    }
}

fn def(name: &str) -> Symbol {
    Symbol::defined(name)
}

fn undef(name: &str) -> Symbol {
    Symbol::undefined(name)
}

fn common(name: &str, size: u64) -> Symbol {
    Symbol { definition: Definition::Common { size }, ..def(name) }
}

fn table(symbols: Vec<Symbol>) -> Rc<SymbolTable> {
    Rc::new(SymbolTable::new(symbols))
}

fn bc(symbols: Vec<Symbol>) -> Content {
    Content::Bitcode(table(symbols))
}

fn obj(symbols: Vec<Symbol>) -> Content {
    Content::Object(table(symbols))
}

fn shared(symbols: Vec<Symbol>) -> Content {
    Content::Shared { soname: None, symbols: table(symbols) }
}

fn archive(members: Vec<(&str, Content)>) -> Content {
    Content::Archive {
        thin: false,
        members: members
            .into_iter()
            .map(|(name, c)| MemberContent {
                name: name.to_string(),
                kind: match c {
                    Content::Bitcode(t) => MemberKind::Bitcode(t),
                    Content::Object(t) => MemberKind::Object(t),
                    _ => MemberKind::Other,
                },
            })
            .collect(),
    }
}

impl Fake {
    fn with(mut self, path: &str, c: Content) -> Fake {
        self.files.insert(PathBuf::from(path), c);
        self
    }
}

fn file(path: &str) -> Item {
    Item::File { path: path.to_string(), state: InputState::default() }
}

fn line(flavor: Flavor, items: Vec<Item>) -> LinkLine {
    LinkLine { flavor, items, entry: Some("main".into()), ..LinkLine::default() }
}

fn names(m: &LinkModel) -> Vec<&str> {
    m.loaded.iter().map(|l| l.name.as_str()).collect()
}

fn run(line: &LinkLine, fake: &mut Fake) -> LinkModel {
    resolve(line, fake).unwrap()
}

fn prevailing<'m>(m: &'m LinkModel, name: &str) -> &'m BTreeSet<String> {
    &m.loaded.iter().find(|l| l.name == name).unwrap().prevailing
}

/// main.o needs `a`; lib.a: a.o (defines a, needs b), b.o (defines b),
/// c.o (defines c, a self-registering plugin nobody needs).
fn plugin_lib() -> Fake {
    Fake::default().with("main.o", bc(vec![def("main"), undef("a")])).with(
        "lib.a",
        archive(vec![
            ("a.o", bc(vec![def("a"), undef("b")])),
            ("b.o", obj(vec![def("b")])),
            ("c.o", bc(vec![def("c"), def("_ZTV6Plugin"), undef("register")])),
        ]),
    )
}

#[test]
fn extraction_reaches_a_fixpoint_and_skips_unreferenced_members() {
    for flavor in [Flavor::Lld, Flavor::Bfd, Flavor::Gold] {
        let m = run(&line(flavor, vec![file("main.o"), file("lib.a")]), &mut plugin_lib());
        assert_eq!(names(&m), vec!["main.o", "lib.a(a.o)", "lib.a(b.o)"], "{flavor:?}");
        assert!(!m.member_loaded(InputId(1), MemberId(2)));
        assert_eq!(m.bitcode().count(), 2);
    }
}

#[test]
fn lld_extracts_depth_first() {
    // main needs a and c; a needs b. With the archive first, lld reads b.o
    // (pulled by a.o) before c.o (pulled by main.o's next reference); with
    // the archive after main.o, the members come in member order, as GNU ld
    // scans them (checked against ld.lld-19 and gold with --trace).
    let mut fake = Fake::default().with("main.o", bc(vec![def("main"), undef("a"), undef("c")])).with(
        "lib.a",
        archive(vec![
            ("c.o", obj(vec![def("c")])),
            ("a.o", obj(vec![def("a"), undef("b")])),
            ("b.o", obj(vec![def("b")])),
        ]),
    );
    let m = run(&line(Flavor::Lld, vec![file("lib.a"), file("main.o")]), &mut fake);
    assert_eq!(names(&m), vec!["main.o", "lib.a(a.o)", "lib.a(b.o)", "lib.a(c.o)"]);
    let after = vec![file("main.o"), file("lib.a")];
    for flavor in [Flavor::Lld, Flavor::Bfd, Flavor::Gold] {
        let g = run(&line(flavor, after.clone()), &mut fake);
        assert_eq!(names(&g), vec!["main.o", "lib.a(c.o)", "lib.a(a.o)", "lib.a(b.o)"], "{flavor:?}");
    }
}

#[test]
fn archive_before_its_user_depends_on_the_flavor() {
    let items = vec![file("lib.a"), file("main.o")];
    let m = run(&line(Flavor::Lld, items.clone()), &mut plugin_lib());
    assert_eq!(names(&m), vec!["main.o", "lib.a(a.o)", "lib.a(b.o)"]);
    for flavor in [Flavor::Bfd, Flavor::Gold] {
        let g = run(&line(flavor, items.clone()), &mut plugin_lib());
        assert_eq!(names(&g), vec!["main.o"], "{flavor:?}");
    }
}

#[test]
fn groups_rescan_in_gnu_flavors() {
    // liba.a defines b and needs nothing; libb.a defines a, which needs b.
    let mut fake = Fake::default()
        .with("main.o", bc(vec![def("main"), undef("a")]))
        .with("liba.a", archive(vec![("b.o", bc(vec![def("b")]))]))
        .with("libb.a", archive(vec![("a.o", bc(vec![def("a"), undef("b")]))]));
    let plain = vec![file("main.o"), file("liba.a"), file("libb.a")];
    let grouped = vec![file("main.o"), Item::GroupStart, file("liba.a"), file("libb.a"), Item::GroupEnd];
    for flavor in [Flavor::Bfd, Flavor::Gold] {
        assert_eq!(names(&run(&line(flavor, plain.clone()), &mut fake)), vec!["main.o", "libb.a(a.o)"]);
        assert_eq!(
            names(&run(&line(flavor, grouped.clone()), &mut fake)),
            vec!["main.o", "libb.a(a.o)", "liba.a(b.o)"],
            "{flavor:?}"
        );
    }
    // lld remembers lazy symbols across the line: groups change nothing.
    for items in [plain, grouped] {
        assert_eq!(names(&run(&line(Flavor::Lld, items), &mut fake)), vec!["main.o", "libb.a(a.o)", "liba.a(b.o)"]);
    }
}

#[test]
fn weak_references_do_not_extract() {
    let mut fake = Fake::default()
        .with("main.o", bc(vec![def("main"), undef("hook").weak()]))
        .with("late.o", obj(vec![undef("hook")]))
        .with("lib.a", archive(vec![("hook.o", bc(vec![def("hook")]))]));
    for flavor in [Flavor::Lld, Flavor::Bfd, Flavor::Gold] {
        let m = run(&line(flavor, vec![file("main.o"), file("lib.a")]), &mut fake);
        assert_eq!(names(&m), vec!["main.o"], "{flavor:?}");
    }
    // A strong reference later on the line extracts it in lld only.
    let m = run(&line(Flavor::Lld, vec![file("main.o"), file("lib.a"), file("late.o")]), &mut fake);
    assert_eq!(names(&m), vec!["main.o", "late.o", "lib.a(hook.o)"]);
    let g = run(&line(Flavor::Bfd, vec![file("main.o"), file("lib.a"), file("late.o")]), &mut fake);
    assert_eq!(names(&g), vec!["main.o", "late.o"]);
}

#[test]
fn strong_definitions_beat_weak_and_the_first_of_equals_wins() {
    let mut fake = Fake::default()
        .with("a.o", bc(vec![def("main"), def("f").weak(), def("g").weak(), def("h")]))
        .with("b.o", bc(vec![def("f"), def("g").weak(), def("h").weak()]));
    for flavor in [Flavor::Lld, Flavor::Bfd] {
        let m = run(&line(flavor, vec![file("a.o"), file("b.o")]), &mut fake);
        assert_eq!(prevailing(&m, "a.o"), &["g", "h", "main"].map(String::from).into());
        assert_eq!(prevailing(&m, "b.o"), &["f"].map(String::from).into());
    }
}

#[test]
fn commons() {
    let mut fake = Fake::default()
        .with("a.o", bc(vec![def("main"), common("x", 4), common("y", 4)]))
        .with("b.o", bc(vec![common("x", 8), def("y").weak()]))
        .with("c.o", obj(vec![def("y")]))
        .with("lib.a", archive(vec![("x.o", bc(vec![def("x")]))]));
    let m = run(&line(Flavor::Lld, vec![file("a.o"), file("b.o"), file("c.o")]), &mut fake);
    // The largest common wins; a common beats a weak definition and loses
    // to a strong one.
    assert_eq!(prevailing(&m, "a.o"), &["main".to_string()].into());
    assert_eq!(prevailing(&m, "b.o"), &["x".to_string()].into());
    // An archive definition does not replace a common in lld or gold; GNU
    // ld extracts it.
    let items = vec![file("a.o"), file("lib.a")];
    assert_eq!(names(&run(&line(Flavor::Lld, items.clone()), &mut fake)), vec!["a.o"]);
    assert_eq!(names(&run(&line(Flavor::Gold, items.clone()), &mut fake)), vec!["a.o"]);
    let g = run(&line(Flavor::Bfd, items), &mut fake);
    assert_eq!(names(&g), vec!["a.o", "lib.a(x.o)"]);
    assert_eq!(prevailing(&g, "lib.a(x.o)"), &["x".to_string()].into());
}

#[test]
fn comdat_first_copy_wins() {
    let in_comdat = |name: &str| Symbol { comdat: Some(0), ..def(name).weak() };
    let comdat = |name: &str| SymbolTable {
        symbols: vec![in_comdat("_ZN1S1fEv"), in_comdat("_ZTV1S"), def(name)],
        comdats: vec![Comdat { name: "_ZN1S1fEv".into(), deduplicate: true }],
    };
    let mut fake = Fake::default()
        .with("a.o", Content::Bitcode(Rc::new(comdat("main"))))
        .with("b.o", Content::Bitcode(Rc::new(comdat("other"))));
    let m = run(&line(Flavor::Lld, vec![file("a.o"), file("b.o")]), &mut fake);
    assert_eq!(prevailing(&m, "a.o"), &["_ZN1S1fEv", "_ZTV1S", "main"].map(String::from).into());
    assert_eq!(prevailing(&m, "b.o"), &["other".to_string()].into());
}

/// A bitcode table defining `groups` (signature, members) as comdats of
/// weak definitions, plus `own`.
fn with_groups(groups: &[(&str, &[&str])], own: &str) -> Content {
    let mut symbols = vec![def(own)];
    let mut comdats = Vec::new();
    for (c, (sig, members)) in groups.iter().enumerate() {
        comdats.push(Comdat { name: sig.to_string(), deduplicate: true });
        symbols.extend(members.iter().map(|m| Symbol { comdat: Some(c as u32), ..def(m).weak() }));
    }
    Content::Bitcode(Rc::new(SymbolTable { symbols, comdats }))
}

fn movable(m: &LinkModel) -> Vec<(&str, Vec<usize>)> {
    m.movable.iter().map(|g| (g.signature.as_str(), g.modules.clone())).collect()
}

#[test]
fn comdat_groups_movable_between_modules_on_the_line() {
    let tpl: (&str, &[&str]) = ("_Z3tplIiEvv", &["_Z3tplIiEvv"]);
    let ctor: (&str, &[&str]) = ("_ZN1SC5Ev", &["_ZN1SC1Ev", "_ZN1SC2Ev"]);
    let mut fake = Fake::default()
        .with("main.o", with_groups(&[tpl, ctor], "main"))
        .with("a.o", with_groups(&[tpl, ctor], "a"))
        .with("b.o", with_groups(&[tpl, ("_ZN1SC5Ev", &["_ZN1SC2Ev"])], "b"))
        .with("only.o", with_groups(&[("_Z4solov", &["_Z4solov"])], "c"));
    let items = vec![file("main.o"), file("a.o"), file("b.o"), file("only.o")];
    for flavor in [Flavor::Lld, Flavor::Bfd] {
        let m = run(&line(flavor, items.clone()), &mut fake);
        // The template is defined alike by three modules; the constructor
        // group's members differ in b.o (it stays); a group defined once
        // has nowhere else to go.
        assert_eq!(movable(&m), vec![("_Z3tplIiEvv", vec![0, 1, 2])], "{flavor:?}");
    }
}

#[test]
fn comdat_groups_stay_where_extraction_or_outside_code_could_tell() {
    let tpl: (&str, &[&str]) = ("_Z3tplIiEvv", &["_Z3tplIiEvv"]);
    let with_needs = |own: &str, need: &str| match with_groups(&[tpl], own) {
        Content::Bitcode(t) => {
            let mut t = (*t).clone();
            t.symbols.push(undef(need));
            Content::Bitcode(Rc::new(t))
        }
        c => c,
    };
    // A member of an archive defines it too (loaded or not): taking the
    // copy from elsewhere could change what is extracted.
    let mut in_archive = Fake::default()
        .with("main.o", with_needs("main", "x"))
        .with("a.o", with_groups(&[tpl], "a"))
        .with("lib.a", archive(vec![("x.o", with_groups(&[tpl], "x"))]));
    let items = vec![file("main.o"), file("a.o"), file("lib.a")];
    assert!(run(&line(Flavor::Lld, items.clone()), &mut in_archive).movable.is_empty());
    let mut unloaded = Fake::default()
        .with("main.o", with_groups(&[tpl], "main"))
        .with("a.o", with_groups(&[tpl], "a"))
        .with("lib.a", archive(vec![("x.o", with_groups(&[tpl], "x"))]));
    assert!(run(&line(Flavor::Lld, items), &mut unloaded).movable.is_empty());
    // A native object or a shared library defines a member.
    for other in [obj(vec![def("_Z3tplIiEvv").weak()]), shared(vec![def("_Z3tplIiEvv")])] {
        let mut fake = Fake::default()
            .with("main.o", with_groups(&[tpl], "main"))
            .with("a.o", with_groups(&[tpl], "a"))
            .with("/d/other", other);
        let m = run(&line(Flavor::Lld, vec![file("main.o"), file("a.o"), file("/d/other")]), &mut fake);
        assert!(m.movable.is_empty(), "{:?}", m.movable);
    }
    // --wrap and --defsym bind the name in the linker; -r links again later.
    let mut fake = Fake::default().with("main.o", with_groups(&[tpl], "main")).with("a.o", with_groups(&[tpl], "a"));
    let items = vec![file("main.o"), file("a.o")];
    assert_eq!(movable(&run(&line(Flavor::Lld, items.clone()), &mut fake)).len(), 1);
    let wrapped = LinkLine { wraps: vec!["_Z3tplIiEvv".into()], ..line(Flavor::Lld, items.clone()) };
    assert!(run(&wrapped, &mut fake).movable.is_empty());
    let relocatable = LinkLine { relocatable: true, ..line(Flavor::Lld, items.clone()) };
    assert!(run(&relocatable, &mut fake).movable.is_empty());
    // --start-lib objects are lazy like archive members.
    let lib = vec![file("main.o"), Item::LibStart, file("a.o"), Item::LibEnd];
    assert!(run(&line(Flavor::Lld, lib), &mut fake).movable.is_empty());
}

#[test]
fn whole_archive_loads_every_member_in_order() {
    let state = InputState { whole_archive: true, ..InputState::default() };
    let items = vec![file("main.o"), Item::File { path: "lib.a".into(), state }];
    for flavor in [Flavor::Lld, Flavor::Bfd] {
        let m = run(&line(flavor, items.clone()), &mut plugin_lib());
        assert_eq!(names(&m), vec!["main.o", "lib.a(a.o)", "lib.a(b.o)", "lib.a(c.o)"]);
    }
}

#[test]
fn shared_definitions_answer_references() {
    let mut fake = Fake::default()
        .with("main.o", bc(vec![def("main"), undef("greet")]))
        .with("/d/libgreet.so", shared(vec![def("greet"), undef("log_line")]))
        .with("/d/libgreet.a", archive(vec![("greet.o", bc(vec![def("greet")]))]))
        .with("/d/liblog.a", archive(vec![("log.o", obj(vec![def("log_line")]))]));
    let as_needed = InputState { as_needed: true, ..InputState::default() };
    let items = vec![
        file("main.o"),
        Item::Library { spec: "greet".into(), state: as_needed },
        Item::File { path: "/d/libgreet.a".into(), state: InputState::default() },
        Item::Library { spec: "log".into(), state: InputState::default() },
    ];
    for flavor in [Flavor::Lld, Flavor::Bfd] {
        let mut l = line(flavor, items.clone());
        l.lib_paths = vec!["/d".into()];
        let m = run(&l, &mut fake);
        // The shared library (found first by -l, loaded although
        // --as-needed) defines greet: the archive copy stays out; its own
        // reference to log_line extracts log.o.
        assert_eq!(names(&m), vec!["main.o", "/d/libgreet.so", "/d/liblog.a(log.o)"], "{flavor:?}");
        let refs = m.outside_refs.known().unwrap();
        assert!(refs.contains("log_line") && !refs.contains("greet"));
    }
}

#[test]
fn push_and_pop_state_restore_bstatic() {
    let mut stack = StateStack::default();
    let mut stamped = Vec::new();
    let item = |s: &StateStack, spec: &str| Item::Library { spec: spec.into(), state: s.current };
    stack.apply(StateChange::Push).unwrap();
    stack.apply(StateChange::Static(true)).unwrap();
    stack.apply(StateChange::WholeArchive(true)).unwrap();
    stamped.push(item(&stack, "helper"));
    stack.apply(StateChange::Pop).unwrap();
    stamped.push(item(&stack, "greet"));
    assert_eq!(stack.current, InputState::default());
    assert!(stack.apply(StateChange::Pop).is_err());

    let mut fake = Fake::default()
        .with("main.o", bc(vec![def("main"), undef("greet"), undef("helper")]))
        .with("/d/libgreet.so", shared(vec![def("greet")]))
        .with("/d/libgreet.a", archive(vec![("greet.o", bc(vec![def("greet")]))]))
        .with("/d/libhelper.so", shared(vec![def("helper")]))
        .with("/d/libhelper.a", archive(vec![("helper.o", bc(vec![def("helper")])), ("x.o", bc(vec![def("x")]))]));
    let mut l = line(Flavor::Lld, std::iter::once(file("main.o")).chain(stamped).collect());
    l.lib_paths = vec!["/d".into()];
    let m = run(&l, &mut fake);
    assert_eq!(names(&m), vec!["main.o", "/d/libhelper.a(helper.o)", "/d/libhelper.a(x.o)", "/d/libgreet.so"]);
}

#[test]
fn wrap() {
    // main calls make (wrapped); the test double __wrap_make is in an
    // archive, and so is the real make.
    let mut fake = Fake::default().with("main.o", bc(vec![def("main"), undef("make")])).with(
        "lib.a",
        archive(vec![
            ("real.o", bc(vec![def("make")])),
            ("mock.o", bc(vec![def("__wrap_make"), undef("__real_make")])),
        ]),
    );
    let mut l = line(Flavor::Lld, vec![file("main.o"), file("lib.a")]);
    l.wraps = vec!["make".into()];
    // lld resolves first (main's reference extracts real.o), then wraps.
    let m = run(&l, &mut fake);
    assert_eq!(names(&m), vec!["main.o", "lib.a(real.o)", "lib.a(mock.o)"]);
    let refs = m.outside_refs.known().unwrap();
    for s in ["make", "__wrap_make", "__real_make"] {
        assert!(refs.contains(s), "{s}");
    }
    assert_eq!(m.wrapped("make"), "__wrap_make");
    assert_eq!(m.wrapped("__real_make"), "make");
    // GNU ld renames references as it reads them: main needs __wrap_make,
    // mock.o needs make (through __real_make).
    l.flavor = Flavor::Bfd;
    let g = run(&l, &mut fake);
    assert_eq!(names(&g), vec!["main.o", "lib.a(mock.o)", "lib.a(real.o)"]);
}

#[test]
fn defsym() {
    let mut fake = Fake::default()
        .with("main.o", bc(vec![def("main"), undef("make")]))
        .with("widget.o", bc(vec![def("make")]))
        .with("lib.a", archive(vec![("mock.o", bc(vec![def("mock_make")]))]));
    for flavor in [Flavor::Lld, Flavor::Bfd] {
        let mut l = line(flavor, vec![file("main.o"), file("widget.o"), file("lib.a")]);
        l.defsyms = vec![("make".into(), "mock_make + 0".into())];
        let m = run(&l, &mut fake);
        assert_eq!(names(&m), vec!["main.o", "widget.o", "lib.a(mock.o)"], "{flavor:?}");
        // The command line's definition beats widget.o's.
        assert!(prevailing(&m, "widget.o").is_empty());
        let refs = m.outside_refs.known().unwrap();
        assert!(refs.contains("make") && refs.contains("mock_make"));
    }
    assert_eq!(expression_symbols("ALIGN(foo + 0x10, 8) - bar"), vec!["foo", "bar"]);
}

#[test]
fn undefined_entry_and_globs_extract() {
    let mut fake = Fake::default().with("main.o", bc(vec![def("main")])).with(
        "lib.a",
        archive(vec![
            ("u.o", bc(vec![def("forced")])),
            ("g1.o", bc(vec![def("plugin_one")])),
            ("g2.o", bc(vec![def("plugin_two")])),
            ("e.o", bc(vec![def("start_here")])),
        ]),
    );
    let mut l = line(Flavor::Lld, vec![file("main.o"), file("lib.a")]);
    l.undefined = vec!["forced".into()];
    l.undefined_globs = vec!["plugin_t*".into()];
    l.entry = Some("start_here".into());
    let m = run(&l, &mut fake);
    assert_eq!(names(&m), vec!["main.o", "lib.a(u.o)", "lib.a(e.o)", "lib.a(g2.o)"]);
    let refs = m.outside_refs.known().unwrap();
    assert!(refs.contains("forced") && refs.contains("plugin_two") && refs.contains("start_here"));
    assert!(!refs.contains("plugin_one"));
    // GNU ld: -u and -e are references before any input.
    l.flavor = Flavor::Bfd;
    l.undefined_globs.clear();
    assert_eq!(names(&run(&l, &mut fake)), vec!["main.o", "lib.a(u.o)", "lib.a(e.o)"]);
}

#[test]
fn start_lib_objects_are_lazy() {
    let mut fake = Fake::default()
        .with("main.o", bc(vec![def("main"), undef("a")]))
        .with("a.o", bc(vec![def("a")]))
        .with("b.o", bc(vec![def("b")]));
    let items = vec![file("main.o"), Item::LibStart, file("a.o"), file("b.o"), Item::LibEnd];
    for flavor in [Flavor::Lld, Flavor::Gold] {
        assert_eq!(names(&run(&line(flavor, items.clone()), &mut fake)), vec!["main.o", "a.o"]);
    }
}

#[test]
fn scripts_name_inputs_and_groups() {
    let mut fake = Fake::default()
        .with("main.o", bc(vec![def("main"), undef("a")]))
        .with("/d/libx.so", Content::Script("/* GNU ld script */ GROUP ( liba.a libb.a AS_NEEDED ( -lz ) )".into()))
        .with("/d/liba.a", archive(vec![("b.o", bc(vec![def("b")]))]))
        .with("/d/libb.a", archive(vec![("a.o", bc(vec![def("a"), undef("b")]))]))
        .with("/d/libz.so", shared(vec![def("z")]));
    let mut l =
        line(Flavor::Bfd, vec![file("main.o"), Item::Library { spec: "x".into(), state: InputState::default() }]);
    l.lib_paths = vec!["/d".into()];
    let m = run(&l, &mut fake);
    assert_eq!(names(&m), vec!["main.o", "/d/libb.a(a.o)", "/d/libz.so", "/d/liba.a(b.o)"]);
    assert!(m.outside_refs.is_known());
    assert!(m.inputs.iter().any(|i| i.from_script && i.path == Path::new("/d/libz.so")));
}

#[test]
fn what_cannot_be_seen_makes_outside_refs_unknown() {
    let mut fake = Fake::default()
        .with("main.o", bc(vec![def("main")]))
        .with("t.ld", Content::Script("SECTIONS { .text : { *(.text) } }".into()));
    let l =
        line(Flavor::Lld, vec![file("main.o"), Item::Library { spec: "missing".into(), state: InputState::default() }]);
    let m = run(&l, &mut fake);
    assert!(matches!(&m.outside_refs, OutsideRefs::Unknown(r) if r.contains("-lmissing")), "{:?}", m.outside_refs);
    let t = line(Flavor::Lld, vec![file("main.o"), Item::Script { path: "t.ld".into(), state: InputState::default() }]);
    assert!(matches!(&run(&t, &mut fake).outside_refs, OutsideRefs::Unknown(r) if r.contains("SECTIONS")));
    let r = LinkLine { relocatable: true, ..line(Flavor::Lld, vec![file("main.o")]) };
    assert!(!run(&r, &mut fake).outside_refs.is_known());
}

#[test]
fn outside_refs_come_from_loaded_native_code_only() {
    let mut fake = Fake::default()
        .with("crt1.o", obj(vec![def("_start"), undef("main")]))
        .with("main.o", bc(vec![def("main"), def("helper"), undef("native_fn")]))
        .with("native.o", obj(vec![def("native_fn"), undef("helper")]))
        .with("lib.a", archive(vec![("unused.o", obj(vec![def("unused"), undef("secret")]))]))
        .with("libc.so", shared(vec![def("printf"), undef("main"), def("helper")]));
    let l = line(Flavor::Lld, vec![file("crt1.o"), file("main.o"), file("native.o"), file("lib.a"), file("libc.so")]);
    let m = run(&l, &mut fake);
    let refs = m.outside_refs.known().unwrap();
    assert!(refs.contains("main") && refs.contains("helper"));
    // An unloaded member's references do not count.
    assert!(!refs.contains("secret"));
}

#[test]
fn a_native_copy_of_a_bitcode_definition_is_an_outside_reference() {
    // b.o (native) defines the inline class's vtable too, after the
    // bitcode copy that prevails: LTO must keep that copy global (lld marks
    // it used in a regular object), or each would keep its own.
    let mut fake = Fake::default()
        .with("a.o", bc(vec![def("main"), def("_ZTV1E").weak(), undef("_Z6make_Ev")]))
        .with("b.o", obj(vec![def("_Z6make_Ev"), def("_ZTV1E").weak()]));
    let m = run(&line(Flavor::Lld, vec![file("a.o"), file("b.o")]), &mut fake);
    assert!(m.outside_refs.known().unwrap().contains("_ZTV1E"));
}

#[test]
fn missing_file_is_an_error_naming_it() {
    let e = resolve(&line(Flavor::Lld, vec![file("nope.o")]), &mut Fake::default()).unwrap_err();
    assert_eq!(e.to_string(), "nope.o: cannot open: not found");
}

#[test]
fn flavor_from_linker_path() {
    assert_eq!(Flavor::from_linker_path(Path::new("/usr/bin/ld.lld-19")), Flavor::Lld);
    assert_eq!(Flavor::from_linker_path(Path::new("ld.gold")), Flavor::Gold);
    assert_eq!(Flavor::from_linker_path(Path::new("/usr/bin/ld.bfd")), Flavor::Bfd);
    assert_eq!(Flavor::from_linker_path(Path::new("/usr/bin/ld")), Flavor::Bfd);
    assert_eq!(Flavor::from_linker_path(Path::new("x86_64-linux-gnu-ld")), Flavor::Bfd);
}

#[test]
fn exports_follow_version_scripts_lists_and_exclude_libs() {
    let hidden = |n: &str| Symbol { visibility: Visibility::Hidden, ..def(n) };
    let mut fake = Fake::default()
        .with("a.o", bc(vec![def("api_open"), def("_ZTV6Helper"), hidden("secret"), undef("lib_fn")]))
        .with("lib.a", archive(vec![("m.o", bc(vec![def("lib_fn")]))]))
        .with("v.map", Content::Script("{ global: api_*; local: *; };".into()))
        .with("d.list", Content::Script("{ _ZTV6Helper; };".into()));
    let mut l = line(Flavor::Lld, vec![file("a.o"), file("lib.a")]);
    l.exports.shared = true;
    let all = run(&l, &mut fake).exported;
    assert_eq!(all, ["api_open", "_ZTV6Helper", "lib_fn"].map(String::from).into());
    l.exports.version_scripts = vec!["v.map".into()];
    assert_eq!(run(&l, &mut fake).exported, ["api_open".to_string()].into());
    l.exports.version_scripts.clear();
    l.exports.exclude_libs = vec!["lib.a".into()];
    let m = run(&l, &mut fake);
    assert!(!m.exported.contains("lib_fn") && m.exported.contains("api_open"));
    // An executable exports what a dynamic list names (and exports are
    // outside references).
    let mut e = line(Flavor::Lld, vec![file("a.o"), file("lib.a")]);
    e.exports.dynamic_lists = vec!["d.list".into()];
    let m = run(&e, &mut fake);
    assert_eq!(m.exported, ["_ZTV6Helper".to_string()].into());
    assert!(m.outside_refs.known().unwrap().contains("_ZTV6Helper"));
}

#[test]
fn export_all_leaves_out_what_llvm_may_omit() {
    // Inline functions (linkonce_odr, unnamed_addr) are not exported by
    // --export-dynamic or -shared alone, as lld leaves them out; a dynamic
    // list or a native file naming one exports it; vtables and type info
    // stay exported.
    let omit = |n: &str| Symbol { may_omit: true, ..def(n) };
    let mut fake = Fake::default()
        .with("a.o", bc(vec![def("main"), omit("_Z6inlinev"), omit("_Z6listedv"), omit("_Z5namedv"), omit("_ZTV1A")]))
        .with("libn.so", shared(vec![undef("_Z5namedv")]))
        .with("d.list", Content::Script("{ _Z6listedv; };".into()));
    let want = |names: &[&str]| names.iter().map(|n| n.to_string()).collect::<BTreeSet<String>>();
    let mut l = line(Flavor::Lld, vec![file("a.o"), file("libn.so")]);
    l.exports.export_dynamic = true;
    assert_eq!(run(&l, &mut fake).exported, want(&["main", "_Z5namedv", "_ZTV1A"]));
    l.exports.dynamic_lists = vec!["d.list".into()];
    assert_eq!(run(&l, &mut fake).exported, want(&["main", "_Z5namedv", "_Z6listedv", "_ZTV1A"]));
    let mut so = line(Flavor::Bfd, vec![file("a.o")]);
    so.exports.shared = true;
    assert_eq!(run(&so, &mut fake).exported, want(&["main", "_ZTV1A"]));
}

#[test]
fn duplicate_soname_adds_nothing() {
    // lld loads a second library with the same soname (it prints it with
    // --trace) but takes nothing from it.
    let so = |d: &str| Content::Shared { soname: Some("libx.so.1".into()), symbols: table(vec![def(d)]) };
    let mut fake = Fake::default()
        .with("main.o", bc(vec![def("main"), undef("f"), undef("g")]))
        .with("a/libx.so", so("f"))
        .with("b/libx.so", so("g"))
        .with("lib.a", archive(vec![("g.o", bc(vec![def("g")]))]));
    let m =
        run(&line(Flavor::Lld, vec![file("main.o"), file("a/libx.so"), file("b/libx.so"), file("lib.a")]), &mut fake);
    assert_eq!(names(&m), vec!["main.o", "a/libx.so", "b/libx.so", "lib.a(g.o)"]);
}

#[test]
fn names_nothing_defines_are_unresolved() {
    // A plugin's link: its subclass's typeinfo names its host's base class,
    // which no input defines; a shared library answers another reference,
    // and a member asked for by a weak reference only stays in its archive.
    let weak_ref = Symbol { weak: true, ..undef("_Z8optionalv") };
    let mut fake = Fake::default()
        .with("plugin.o", bc(vec![def("consume"), undef("_ZTI4Host"), undef("puts"), weak_ref]))
        .with("libc.so", shared(vec![def("puts")]))
        .with("lib.a", archive(vec![("opt.o", bc(vec![def("_Z8optionalv")]))]));
    for flavor in [Flavor::Lld, Flavor::Bfd] {
        let mut l = line(flavor, vec![file("plugin.o"), file("libc.so"), file("lib.a")]);
        l.exports.shared = true;
        l.entry = None;
        l.defsyms = vec![("by_line".into(), "consume".into())];
        let m = run(&l, &mut fake);
        let want: BTreeSet<String> = ["_Z8optionalv", "_ZTI4Host"].iter().map(|s| s.to_string()).collect();
        assert_eq!(m.unresolved, want, "{flavor:?}");
    }
}

#[test]
fn a_script_assignment_defines_over_the_bitcode() {
    let mut fake = Fake::default()
        .with("main.o", bc(vec![def("main"), def("_ZNK5Large5scaleEi"), def("_ZNK5Small5scaleEi"), def("kept")]))
        .with("assign.ld", Content::Script("_ZNK5Large5scaleEi = _ZNK5Small5scaleEi;\nPROVIDE(kept = main);\n".into()));
    let l = line(Flavor::Lld, vec![file("main.o"), file("assign.ld")]);
    let m = run(&l, &mut fake);
    // The script's value replaces the bitcode copy; PROVIDE yields to it.
    assert!(!prevailing(&m, "main.o").contains("_ZNK5Large5scaleEi"));
    assert!(prevailing(&m, "main.o").contains("kept") && prevailing(&m, "main.o").contains("_ZNK5Small5scaleEi"));
    assert!(m.defined_by_command_line.contains("_ZNK5Large5scaleEi") && !m.defined_by_command_line.contains("kept"));
    assert!(m.kept_elsewhere()["_ZNK5Large5scaleEi"].contains("linker script"));
}

#[test]
fn strong_bitcode_references_an_as_needed_library_answers() {
    // `hook` comes from a library read under --as-needed, `puts` from one
    // read without it; a weak reference and a native object's reference
    // to the as-needed library do not count.
    let weak_ref = Symbol { weak: true, ..undef("optional_hook") };
    let mut fake = Fake::default()
        .with("main.o", bc(vec![def("main"), undef("hook"), undef("puts"), weak_ref]))
        .with("native.o", obj(vec![def("other"), undef("native_hook")]))
        .with("libhook.so", shared(vec![def("hook"), def("optional_hook"), def("native_hook")]))
        .with("libc.so", shared(vec![def("puts")]));
    let as_needed = InputState { as_needed: true, ..InputState::default() };
    let items = vec![
        file("main.o"),
        file("native.o"),
        Item::File { path: "libhook.so".into(), state: as_needed },
        file("libc.so"),
    ];
    for flavor in [Flavor::Lld, Flavor::Bfd] {
        let m = run(&line(flavor, items.clone()), &mut fake);
        assert_eq!(m.as_needed_refs, BTreeSet::from(["hook".to_string()]), "{flavor:?}");
    }
}
