//! The link line as data: the ordered inputs with the state each is read
//! in, and the options that name, redirect or export symbols. `wpd-ld`
//! builds it from the ld command line; tests build it by hand.

/// The linker that will run: where they differ, resolution follows it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Flavor {
    /// lld: archive members are lazy across the whole command line, and a
    /// reference anywhere extracts them.
    #[default]
    Lld,
    /// GNU ld: an archive is scanned at its position; groups rescan their
    /// archives until nothing new is extracted.
    Bfd,
    /// gold: as GNU ld, except that it does not extract an archive member to
    /// replace a common symbol.
    Gold,
}

impl Flavor {
    /// The flavor of a linker executable, from its file name: `gold` in the
    /// name is gold, `ld.bfd` or plain `ld` is GNU ld, anything else lld.
    pub fn from_linker_path(path: &std::path::Path) -> Flavor {
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        if name.contains("gold") {
            Flavor::Gold
        } else if name.contains("lld") {
            Flavor::Lld
        } else if name.contains("ld.bfd") || name == "ld" || name.ends_with("-ld") {
            Flavor::Bfd
        } else {
            Flavor::Lld
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Flavor::Lld => "lld",
            Flavor::Bfd => "bfd",
            Flavor::Gold => "gold",
        }
    }
}

/// The positional state an input is read in.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct InputState {
    /// `-Bstatic` (`-static`, `-dn`, `-non_shared`): `-l` finds archives only.
    pub static_only: bool,
    /// `--as-needed`: a shared library is recorded only if referenced (it
    /// still takes part in resolution).
    pub as_needed: bool,
    /// `--whole-archive`: every member of an archive is loaded.
    pub whole_archive: bool,
    /// `--format=binary` (`-b binary`): inputs are raw data, not objects.
    pub binary: bool,
}

/// A change of [`InputState`] on the command line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StateChange {
    Static(bool),
    AsNeeded(bool),
    WholeArchive(bool),
    Binary(bool),
    /// `--push-state`: save the state (lld and GNU ld save `-Bstatic`,
    /// `--as-needed` and `--whole-archive`; GNU ld also the input format).
    Push,
    /// `--pop-state`: restore the last saved state.
    Pop,
}

/// The current state and the `--push-state` stack.
#[derive(Clone, Debug, Default)]
pub struct StateStack {
    pub current: InputState,
    saved: Vec<InputState>,
}

impl StateStack {
    /// Applies one change. `--pop-state` without a matching `--push-state`
    /// is an error, as in lld and GNU ld.
    pub fn apply(&mut self, change: StateChange) -> Result<(), crate::Error> {
        let c = &mut self.current;
        match change {
            StateChange::Static(on) => c.static_only = on,
            StateChange::AsNeeded(on) => c.as_needed = on,
            StateChange::WholeArchive(on) => c.whole_archive = on,
            StateChange::Binary(on) => c.binary = on,
            StateChange::Push => self.saved.push(*c),
            StateChange::Pop => {
                *c = self.saved.pop().ok_or_else(|| {
                    crate::Error::msg("unbalanced --push-state/--pop-state (--pop-state without --push-state)")
                })?
            }
        }
        Ok(())
    }
}

/// One input-related item of the link line, in order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Item {
    /// A positional file (object, archive, shared library or linker script).
    File {
        path: String,
        state: InputState,
    },
    /// `-l<spec>` (`spec` is `name` or `:file`).
    Library {
        spec: String,
        state: InputState,
    },
    /// `-T <script>` (`--script`): its `INPUT`/`GROUP` lists are inputs
    /// here; any other command makes outside references unknown.
    Script {
        path: String,
        state: InputState,
    },
    /// `--start-group` / `-(`.
    GroupStart,
    /// `--end-group` / `-)`.
    GroupEnd,
    /// `--start-lib`: objects up to `--end-lib` are read as archive members.
    LibStart,
    LibEnd,
}

/// What the output exports to the dynamic linker, and so what code outside
/// the link can reference at run time.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Exports {
    /// `-shared`.
    pub shared: bool,
    /// `-E` / `--export-dynamic`.
    pub export_dynamic: bool,
    /// `--export-dynamic-symbol=GLOB`.
    pub dynamic_symbols: Vec<String>,
    /// `--dynamic-list` and `--export-dynamic-symbol-list` files.
    pub dynamic_lists: Vec<String>,
    /// `--version-script` files: their `local:` patterns hide symbols.
    pub version_scripts: Vec<String>,
    /// `--exclude-libs=LIB,...` (`ALL`): definitions from these archives
    /// are not exported.
    pub exclude_libs: Vec<String>,
    /// `-Bsymbolic` and its kin: which of a shared output's own
    /// definitions its references bind to at link time.
    pub symbolic: Symbolic,
    /// A `--dynamic-list` (not `--export-dynamic-symbol-list`) was given:
    /// in a shared output it binds every definition it does not list, as
    /// `-Bsymbolic` would (lld, GNU ld and gold alike).
    pub dynamic_list_binds: bool,
}

/// `-Bsymbolic`, `-Bsymbolic-functions`, `-Bsymbolic-non-weak`,
/// `-Bsymbolic-non-weak-functions`; the last one on the line wins and
/// `-Bno-symbolic` resets. In a shared output, a definition these cover is
/// bound inside the output: the dynamic linker cannot preempt it unless a
/// dynamic list or `--export-dynamic-symbol` names it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Symbolic {
    #[default]
    None,
    All,
    Functions,
    NonWeak,
    NonWeakFunctions,
}

impl Symbolic {
    /// Whether the option binds a definition (a function or not, weak or
    /// not) inside the output.
    pub fn binds(self, function: bool, weak: bool) -> bool {
        match self {
            Symbolic::None => false,
            Symbolic::All => true,
            Symbolic::Functions => function,
            Symbolic::NonWeak => !weak,
            Symbolic::NonWeakFunctions => function && !weak,
        }
    }
}

/// What the linker does with two strong definitions of one name.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Duplicates {
    /// An error (`duplicate symbol`, `multiple definition of`).
    #[default]
    Error,
    /// A warning, the first definition kept (`--noinhibit-exec`).
    Warn,
    /// The first definition kept, silently (`-z muldefs`,
    /// `--allow-multiple-definition`).
    Allow,
}

/// The whole link line.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LinkLine {
    pub flavor: Flavor,
    pub items: Vec<Item>,
    /// `-L` directories, in order (all of them apply to every `-l`).
    pub lib_paths: Vec<String>,
    pub sysroot: Option<String>,
    /// `-u` / `--undefined`.
    pub undefined: Vec<String>,
    /// `--require-defined`.
    pub require_defined: Vec<String>,
    /// `--undefined-glob`.
    pub undefined_globs: Vec<String>,
    /// `-e` / `--entry` (default `_start` for an executable).
    pub entry: Option<String>,
    /// `-init` / `-fini` (default `_init` / `_fini`).
    pub init: Option<String>,
    pub fini: Option<String>,
    /// `--wrap=SYMBOL`, in order.
    pub wraps: Vec<String>,
    /// `--defsym=SYMBOL=EXPRESSION`.
    pub defsyms: Vec<(String, String)>,
    pub exports: Exports,
    /// `-r`: the output is linked again later.
    pub relocatable: bool,
    /// Two strong definitions of one name: an error unless the line says
    /// otherwise.
    pub duplicates: Duplicates,
    /// Set by the caller when it knows the outside references cannot be
    /// known (an option it passes on without modelling it).
    pub unknown: Option<String>,
}
