//! The merged view of all summaries: symbols (global by name, local per
//! module), the reference graph and its live part, and the index from type id
//! to the vtables (and address points) compatible with it.

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use std::collections::{BTreeMap, BTreeSet};
use wpd_summary::ids::modules;
use wpd_summary::{
    FunctionFacts, Linkage, ModuleIdx, ModuleSummary, PerModule, Slot, TypeId, Visibility, Vtable, VtableIdx,
};

/// A symbol of the link: global by name, or local to one module.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
pub struct SymKey<'a> {
    /// The defining module for local symbols.
    pub module: Option<ModuleIdx>,
    pub name: &'a str,
}

/// A vtable of the link: `summaries[module].vtables[index]`.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
pub struct VtableId {
    pub module: ModuleIdx,
    pub index: VtableIdx,
}

/// What the link looks like from outside the bitcode.
#[derive(Clone, Debug, Default)]
pub struct LinkFacts {
    /// Output is a shared library.
    pub shared: bool,
    /// `--export-dynamic`.
    pub export_dynamic: bool,
    /// Some symbols are exported by name (`--dynamic-list`,
    /// `--export-dynamic-symbol`); `exported` says which when it is known.
    pub partial_export: bool,
    /// The symbols the output exports to the dynamic linker, when the link
    /// model knows them exactly (version scripts, dynamic lists,
    /// `--exclude-libs`). `None`: every default-visibility symbol is
    /// exported when `shared`, `export_dynamic` or `partial_export`.
    pub exported: Option<BTreeSet<String>>,
    /// Symbols referenced from native objects, shared libraries or the
    /// command line (`-u`, `-e`). `None` when unknown: then every externally
    /// visible symbol counts as referenced.
    pub external_refs: Option<BTreeSet<String>>,
    /// The exported definitions the dynamic linker may bind elsewhere at
    /// run time (the link model's `preemptible`). `None` when the link
    /// model is not known: then, in a shared output, every exported
    /// default-visibility definition.
    pub preemptible: Option<BTreeSet<String>>,
    /// Names some bitcode module defines whose kept copy is not bitcode,
    /// each with what keeps it (the link model's `kept_elsewhere`).
    pub kept_elsewhere: BTreeMap<String, String>,
    /// Names the link references and nothing in it defines (the link
    /// model's `unresolved`): a weak reference left null, or one a shared
    /// output leaves to the dynamic linker. Empty without a link model.
    pub undefined: BTreeSet<String>,
}

impl LinkFacts {
    /// Whether the output exports the non-local definition `name` to the
    /// dynamic linker: as the link model says, or, when it does not know,
    /// every definition that is not hidden in a shared or
    /// `--export-dynamic` output.
    pub fn exports(&self, name: &str, visibility: Visibility) -> bool {
        match &self.exported {
            Some(set) => set.contains(name),
            None => (self.shared || self.export_dynamic || self.partial_export) && visibility != Visibility::Hidden,
        }
    }
}

/// Why the program may run another body than the bitcode's for a
/// function ([`Hierarchy::unknown_body`]); the reason reports give is its
/// `Display`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnknownBody<'a> {
    /// The link keeps a copy that is not bitcode, in this unit or option
    /// (`LinkModel::kept_elsewhere`).
    KeptElsewhere { name: &'a str, keeper: &'a str },
    /// The dynamic linker may preempt it at run time.
    Preemptible { name: &'a str },
}

impl std::fmt::Display for UnknownBody<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            UnknownBody::KeptElsewhere { name, keeper } => {
                write!(f, "the link keeps the definition of {name} in {keeper}, not the bitcode one")
            }
            UnknownBody::Preemptible { name } => write!(
                f,
                "{name} may be preempted at run time (a default-visibility definition a shared library exports; -Bsymbolic-functions or hidden or protected visibility binds it)"
            ),
        }
    }
}

/// [`Hierarchy::vtables`] and [`Hierarchy::by_type_id`], made together.
type VtableIndex<'a> = (Vec<(SymKey<'a>, VtableId)>, HashMap<&'a TypeId, Vec<(VtableId, u64)>>);

/// All summaries of one link, indexed.
pub struct Hierarchy<'a> {
    pub summaries: &'a [ModuleSummary],
    locals: PerModule<HashSet<&'a str>>,
    /// One representative definition per vtable symbol.
    pub vtables: Vec<(SymKey<'a>, VtableId)>,
    /// Type id → (vtable, address point offset), in input order.
    pub by_type_id: HashMap<&'a TypeId, Vec<(VtableId, u64)>>,
    /// Function facts by symbol: of the copy the link keeps
    /// ([`Hierarchy::function_facts`] gives them only where the program runs
    /// that body).
    facts: HashMap<SymKey<'a>, &'a FunctionFacts>,
    /// Non-local functions with a bitcode body that the program does not
    /// (or may not) run, with why (see [`Hierarchy::unknown_body`]).
    unknown_bodies: HashMap<&'a str, UnknownBody<'a>>,
    /// Live symbols, as nodes of `graph`.
    live: Live,
    /// The reference graph liveness walked (`Scope::ref_graph`).
    pub graph: RefGraph<'a>,
    /// For each non-local name, the module (and linkage) of the copy the
    /// link keeps (see [`Hierarchy::kept_copy`]).
    kept: HashMap<&'a str, (ModuleIdx, Linkage)>,
    /// What the link references and does not define ([`LinkFacts::undefined`]).
    undefined: &'a BTreeSet<String>,
}

impl<'a> Hierarchy<'a> {
    /// Indexes `summaries` and computes liveness from the link's roots.
    pub fn new(summaries: &'a [ModuleSummary], facts: &'a LinkFacts) -> Hierarchy<'a> {
        let locals: PerModule<HashSet<&str>> = summaries
            .iter()
            .map(|s| s.globals.iter().filter(|g| g.linkage.is_local()).map(|g| g.name.as_str()).collect())
            .collect();
        // Three independent walks over every summary, on the pool's
        // threads: the reference graph; the vtables; the kept copies, then
        // what depends on them. Each is made as one thread would make it,
        // from the summaries and the modules' local names only (`Scope`).
        let scope = Scope { summaries, locals: &locals };
        let (graph, ((vtables, by_type_id), (kept, function_facts, unknown_bodies))) = rayon::join(
            || scope.ref_graph(facts),
            || {
                rayon::join(
                    || scope.index_vtables(),
                    || {
                        let kept = scope.kept_copies();
                        let function_facts = scope.function_facts(&kept);
                        let unknown_bodies = scope.unknown_bodies(facts, &kept);
                        (kept, function_facts, unknown_bodies)
                    },
                )
            },
        );
        let live = graph.live_without(&HashSet::default(), &RefEdges::default());
        Hierarchy {
            summaries,
            locals,
            vtables,
            by_type_id,
            facts: function_facts,
            unknown_bodies,
            live,
            graph,
            kept,
            undefined: &facts.undefined,
        }
    }

    /// Whether `key` names a function no module of the link defines and the
    /// link leaves undefined: a weak declaration (`__attribute__((weak))`
    /// on a member never defined), whose vtable entry is null, or a
    /// definition only the dynamic linker finds. No call may name it
    /// directly.
    pub fn defined_nowhere(&self, key: SymKey<'a>) -> bool {
        key.module.is_none() && self.kept_copy(key.name).is_none() && self.undefined.contains(key.name)
    }

    /// Why the program may run another body than the bitcode's for the
    /// non-local function `name`, if it may: the link keeps a copy that is
    /// not bitcode, or the dynamic linker may preempt the name at run time
    /// (unless the kept copy is an ODR one, `linkonce_odr`/`weak_odr`,
    /// which the language makes interchangeable with any other). Nothing about such a function's body
    /// may be used: not its result, not its purity, not a direct call
    /// that LLVM could inline or fold with the bitcode body.
    pub fn unknown_body(&self, key: SymKey<'a>) -> Option<UnknownBody<'a>> {
        if key.module.is_some() {
            return None;
        }
        self.unknown_bodies.get(key.name).copied()
    }

    /// The key of `name` as module `module` sees it.
    pub fn key(&self, module: ModuleIdx, name: &'a str) -> SymKey<'a> {
        Scope { summaries: self.summaries, locals: &self.locals }.key(module, name)
    }

    /// The summary of module `m`.
    pub fn summary(&self, m: ModuleIdx) -> &'a ModuleSummary {
        &self.summaries[m.index()]
    }

    /// Every module's summary with its index, in input order.
    pub fn modules(
        &self,
    ) -> impl DoubleEndedIterator<Item = (ModuleIdx, &'a ModuleSummary)> + ExactSizeIterator + use<'a> {
        modules(self.summaries)
    }

    pub fn vtable(&self, v: VtableId) -> &'a Vtable {
        &self.summary(v.module).vtables[v.index.index()]
    }

    pub fn is_live(&self, key: SymKey<'a>) -> bool {
        self.graph.is_live(&self.live, key)
    }

    /// What the link's liveness reaches, as a walk of [`Hierarchy::graph`].
    pub fn live(&self) -> &Live {
        &self.live
    }

    /// Whether module `module`'s definition of `function` is code of the
    /// program: something live reaches it, and (for a non-local function)
    /// it is the copy the linker keeps. The counts in reports depend on it,
    /// and so do dead slots (`dead_slots.rs`): a call site outside the
    /// program reads no slot. Liveness has the roots and edges of LLVM's own
    /// dead stripping, which drops those functions too.
    pub fn in_program(&self, module: ModuleIdx, function: &'a str) -> bool {
        self.program_node(module, function).is_some()
    }

    /// The graph node of module `module`'s `function` when it is code of
    /// the program ([`Hierarchy::in_program`]).
    pub fn program_node(&self, module: ModuleIdx, function: &'a str) -> Option<RefNode> {
        self.graph.get(self.key(module, function)).filter(|&n| self.live.has(n) && self.is_kept_copy(module, function))
    }

    /// [`Hierarchy::program_node`] for the functions of module `module`,
    /// asked in an order where one function's questions are consecutive (a
    /// summary's call sites and reads are sorted by function): each
    /// function is looked up once.
    pub fn program_nodes(&self, module: ModuleIdx) -> impl FnMut(&'a str) -> Option<RefNode> + '_ {
        let mut last: Option<(&'a str, Option<RefNode>)> = None;
        move |function| match last {
            Some((f, n)) if f == function => n,
            _ => {
                let n = self.program_node(module, function);
                last = Some((function, n));
                n
            }
        }
    }

    /// Whether module `module`'s definition of `function` is the copy the
    /// link keeps (always, for a local function).
    pub fn is_kept_copy(&self, module: ModuleIdx, function: &'a str) -> bool {
        self.key(module, function).module.is_some() || self.kept_copy(function).is_none_or(|(m, _)| m == module)
    }

    /// The copy of the non-local definition `name` the link keeps, as its
    /// module and linkage: a strong definition; else the first one that is
    /// always emitted (`weak`, `common`); else the first discardable one
    /// (`linkonce`), in link order; else the first `available_externally`
    /// one. A `linkonce` answer means every definition may be dropped by
    /// its own module's optimizer.
    pub fn kept_copy(&self, name: &str) -> Option<(ModuleIdx, Linkage)> {
        self.kept.get(name).copied()
    }

    /// The facts about `key`'s body, where the program runs the body they
    /// describe (never for a function [`Hierarchy::unknown_body`] names).
    pub fn function_facts(&self, key: SymKey<'a>) -> Option<&'a FunctionFacts> {
        if self.unknown_body(key).is_some() {
            return None;
        }
        self.facts.get(&key).copied()
    }

    /// The facts of the bitcode copy the link keeps, whether or not the
    /// program runs that body: only for what holds of every definition of
    /// the name (that it is clang's deleting destructor of an abstract
    /// class, which no vtable call can reach whatever its body).
    pub fn bitcode_facts(&self, key: SymKey<'a>) -> Option<&'a FunctionFacts> {
        self.facts.get(&key).copied()
    }

    /// The slot at byte `offset` of a vtable.
    pub fn slot(&self, v: VtableId, offset: u64) -> Option<&'a Slot> {
        let slots = &self.vtable(v).slots;
        slots.binary_search_by_key(&offset, |s| s.offset).ok().map(|i| &slots[i])
    }
}

/// What the walks that build a [`Hierarchy`] read: the summaries and the
/// names local to each module. They run side by side before the hierarchy
/// exists, so none of them can ask it for what another one makes.
struct Scope<'s, 'a> {
    summaries: &'a [ModuleSummary],
    locals: &'s PerModule<HashSet<&'a str>>,
}

impl<'a> Scope<'_, 'a> {
    /// The key of `name` as module `module` sees it.
    fn key(&self, module: ModuleIdx, name: &'a str) -> SymKey<'a> {
        if self.locals[module].contains(name) {
            SymKey { module: Some(module), name }
        } else {
            SymKey { module: None, name }
        }
    }

    fn modules(&self) -> impl Iterator<Item = (ModuleIdx, &'a ModuleSummary)> + use<'a> {
        modules(self.summaries)
    }

    fn vtable(&self, v: VtableId) -> &'a Vtable {
        &self.summaries[v.module.index()].vtables[v.index.index()]
    }

    /// Each function's facts: of the copy the link keeps (`kept`, see
    /// [`Hierarchy::kept_copy`]); without one (only `available_externally`
    /// copies), the first real one.
    fn function_facts(&self, kept: &HashMap<&'a str, (ModuleIdx, Linkage)>) -> HashMap<SymKey<'a>, &'a FunctionFacts> {
        let mut out: HashMap<SymKey<'a>, &'a FunctionFacts> = HashMap::default();
        for (m, s) in self.modules() {
            for f in &s.functions {
                let key = self.key(m, &f.name);
                let is_kept = key.module.is_none() && kept.get(f.name.as_str()).is_some_and(|&(k, _)| k == m);
                let better = match out.get(&key) {
                    None => true,
                    Some(old) => {
                        is_kept
                            || old.linkage == Linkage::AvailableExternally && f.linkage != Linkage::AvailableExternally
                    }
                };
                if better {
                    out.insert(key, f);
                }
            }
        }
        out
    }

    fn unknown_bodies(
        &self,
        facts: &'a LinkFacts,
        kept: &HashMap<&'a str, (ModuleIdx, Linkage)>,
    ) -> HashMap<&'a str, UnknownBody<'a>> {
        let mut out = HashMap::default();
        for f in self.summaries.iter().flat_map(|s| &s.functions).filter(|f| !f.linkage.is_local()) {
            let name = f.name.as_str();
            // ODR copies (inline functions, templates) are the same
            // function wherever they come from, native or preempting.
            let odr = kept.get(name).is_some_and(|(_, l)| matches!(l, Linkage::LinkonceOdr | Linkage::WeakOdr));
            if odr || out.contains_key(name) {
                continue;
            }
            let why = if let Some((name, keeper)) = facts.kept_elsewhere.get_key_value(name) {
                Some(UnknownBody::KeptElsewhere { name, keeper })
            } else {
                let preemptible = match &facts.preemptible {
                    Some(set) => set.contains(name),
                    None => facts.shared && f.visibility == Visibility::Default && facts.exports(name, f.visibility),
                };
                preemptible.then_some(UnknownBody::Preemptible { name })
            };
            if let Some(why) = why {
                out.insert(name, why);
            }
        }
        out
    }

    /// One representative definition per vtable symbol, and the index
    /// from type id to those vtables ([`Hierarchy::vtables`],
    /// [`Hierarchy::by_type_id`]).
    fn index_vtables(&self) -> VtableIndex<'a> {
        // Representative per symbol: a definition with slots beats an
        // available_externally copy; otherwise the first in input order.
        let mut chosen: HashMap<SymKey<'a>, VtableId> = HashMap::default();
        let mut order: Vec<SymKey<'a>> = Vec::new();
        for (m, s) in self.modules() {
            for (i, v) in s.vtables.iter().enumerate() {
                let key = self.key(m, &v.symbol);
                let r = VtableId { module: m, index: VtableIdx::new(i) };
                match chosen.get(&key) {
                    None => {
                        chosen.insert(key, r);
                        order.push(key);
                    }
                    Some(&old) => {
                        let o = self.vtable(old);
                        if o.available_externally && !v.available_externally && !v.slots.is_empty() {
                            chosen.insert(key, r);
                        }
                    }
                }
            }
        }
        let mut vtables = Vec::with_capacity(order.len());
        let mut by_type_id: HashMap<&'a TypeId, Vec<(VtableId, u64)>> = HashMap::default();
        for key in order {
            let r = chosen[&key];
            vtables.push((key, r));
            for t in &self.vtable(r).type_ids {
                by_type_id.entry(&t.type_id).or_default().push((r, t.offset));
            }
        }
        (vtables, by_type_id)
    }

    fn kept_copies(&self) -> HashMap<&'a str, (ModuleIdx, Linkage)> {
        // Lower rank wins, then link order.
        let rank = |l: Linkage| match l {
            Linkage::External => 0,
            Linkage::LinkonceAny | Linkage::LinkonceOdr => 2,
            Linkage::AvailableExternally => 3,
            _ => 1,
        };
        let mut best: HashMap<&'a str, (ModuleIdx, Linkage)> = HashMap::default();
        for (m, s) in self.modules() {
            for g in s.globals.iter().filter(|g| !g.linkage.is_local()) {
                best.entry(g.name.as_str())
                    .and_modify(|b| {
                        if (rank(g.linkage), m, g.linkage) < (rank(b.1), b.0, b.1) {
                            *b = (m, g.linkage);
                        }
                    })
                    .or_insert((m, g.linkage));
            }
        }
        best
    }

    /// The reference graph liveness walks: every defined global's
    /// references, and the roots: `main`, symbols referenced from outside
    /// the bitcode (all externally visible ones when that is unknown),
    /// dynamically exported symbols, and each module's `llvm.used`,
    /// `llvm.compiler.used` and constructor/destructor lists. Built once
    /// ([`Hierarchy::graph`]); walked again with references added or taken
    /// away ([`RefGraph::live_without`]).
    fn ref_graph(&self, facts: &LinkFacts) -> RefGraph<'a> {
        let mut g = RefGraph::default();
        let main = g.node(SymKey { module: None, name: "main" });
        g.roots.push(main);
        for (m, s) in self.modules() {
            for gl in &s.globals {
                let from = g.node(self.key(m, &gl.name));
                for r in &gl.refs {
                    let to = g.node(self.key(m, r));
                    g.edges[from.index()].push(to);
                }
                if !gl.linkage.is_local() {
                    let exported = facts.exports(&gl.name, gl.visibility);
                    let external = match &facts.external_refs {
                        None => true,
                        Some(refs) => refs.contains(gl.name.as_str()),
                    };
                    if exported || external {
                        g.roots.push(from);
                    }
                }
            }
            let r = &s.roots;
            for name in r.used.iter().chain(&r.compiler_used).chain(&r.global_ctors).chain(&r.global_dtors) {
                let root = g.node(self.key(m, name));
                g.roots.push(root);
            }
        }
        g
    }
}

/// A node of a [`RefGraph`]: one symbol key, numbered densely.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RefNode(u32);

impl RefNode {
    fn index(self) -> usize {
        self.0 as usize
    }
}

/// The reference graph of a link's bitcode (made by `Scope::ref_graph`):
/// symbol keys numbered once, so that walking it again without some
/// references compares numbers, not names.
#[derive(Default)]
pub struct RefGraph<'a> {
    ids: HashMap<SymKey<'a>, RefNode>,
    edges: Vec<Vec<RefNode>>,
    roots: Vec<RefNode>,
}

impl<'a> RefGraph<'a> {
    fn node(&mut self, key: SymKey<'a>) -> RefNode {
        if let Some(&n) = self.ids.get(&key) {
            return n;
        }
        let n = RefNode(u32::try_from(self.edges.len()).expect("fewer than 2^32 symbols"));
        self.ids.insert(key, n);
        self.edges.push(Vec::new());
        n
    }

    /// The node of `key`, if the graph has it.
    pub fn get(&self, key: SymKey<'a>) -> Option<RefNode> {
        self.ids.get(&key).copied()
    }

    /// Everything reachable from the roots with the references in `extra`
    /// too (what the plan's rewrites make a function name: a direct call,
    /// a compared vtable, which its summary does not show) and without
    /// those in `skip` (from, to): a vtable's references to the functions
    /// only its dead slots named.
    pub fn live_without(&self, skip: &HashSet<(RefNode, RefNode)>, extra: &RefEdges) -> Live {
        let mut live = vec![false; self.edges.len()];
        // The few nodes `skip` and `extra` concern, marked, so that the
        // others' edges are followed without a hash lookup.
        let mut special = vec![false; self.edges.len()];
        for &(from, _) in skip {
            special[from.index()] = true;
        }
        for from in extra.keys() {
            special[from.index()] = true;
        }
        let mut work: Vec<RefNode> = self.roots.clone();
        while let Some(n) = work.pop() {
            if std::mem::replace(&mut live[n.index()], true) {
                continue;
            }
            let edges = &self.edges[n.index()];
            if !special[n.index()] {
                work.extend(edges.iter().copied().filter(|&t| !live[t.index()]));
                continue;
            }
            let added = extra.get(&n).map_or(&[][..], Vec::as_slice);
            work.extend(edges.iter().chain(added).copied().filter(|&t| !live[t.index()] && !skip.contains(&(n, t))));
        }
        Live(live)
    }

    /// Whether `key` is in `live`.
    pub fn is_live(&self, live: &Live, key: SymKey<'a>) -> bool {
        self.get(key).is_some_and(|n| live.has(n))
    }
}

/// References added to a [`RefGraph`] for one walk, by the node they leave.
pub type RefEdges = HashMap<RefNode, Vec<RefNode>>;

/// The nodes of a [`RefGraph`] reachable from its roots.
pub struct Live(Vec<bool>);

impl Live {
    /// Whether `n` is reachable.
    pub fn has(&self, n: RefNode) -> bool {
        self.0[n.index()]
    }

    /// Whether every node reachable in `other` (a walk of the same graph)
    /// is reachable here.
    pub fn includes(&self, other: &Live) -> bool {
        self.0.len() == other.0.len() && self.0.iter().zip(&other.0).all(|(&here, &there)| here || !there)
    }
}
