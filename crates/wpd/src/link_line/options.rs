//! The one table of ld options `wpd-ld` accepts (GNU ld, gold and lld
//! spellings): each option's names, how it takes a value, what it does to
//! resolution, and what the scanner does with it. The scanner (`args.rs`)
//! parses with this table, and `docs/cli.md` lists it (a test keeps the two
//! in step). An option that is not here may change symbols: `wpd-ld`
//! refuses it (or, with `--wpd-unknown-options=unknown-refs`, passes it on
//! and treats every outside reference as unknown).

/// How an option takes its value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arity {
    /// No value.
    Flag,
    /// A value: joined (`--opt=v`, `-ov`) or the next argument.
    Value,
    /// An optional value, joined with `=` only (`--build-id[=sha1]`).
    Optional,
    /// The name is a prefix and the rest of the argument is the value
    /// (`--lto-O2`).
    Prefix,
}

/// What an option does to the link, as resolution sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Effect {
    /// Names an input or where inputs are found: wpd resolves it.
    Input,
    /// Changes how later inputs are read (`-Bstatic`, `--as-needed`,
    /// `--whole-archive`, `--push-state`, groups, `--start-lib`,
    /// `--format`): wpd keeps the same state.
    InputState,
    /// Defines, references, renames or exports symbols: modelled by
    /// resolution (or, where marked, it makes outside references unknown).
    Symbols,
    /// Changes only the output file (layout, format, metadata, stripping):
    /// passed on.
    Output,
    /// Diagnostics and the linker's own behaviour: passed on.
    Harmless,
    /// wpd's own options: consumed.
    Wpd,
    /// LTO and plugin options: consumed by wpd's backends, or refused.
    Lto,
}

impl Effect {
    pub fn describe(self) -> &'static str {
        match self {
            Effect::Input => "input",
            Effect::InputState => "input state",
            Effect::Symbols => "symbols",
            Effect::Output => "output only",
            Effect::Harmless => "harmless",
            Effect::Wpd => "wpd",
            Effect::Lto => "LTO",
        }
    }
}

/// What the scanner does with an option.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    /// Passed on; nothing to model.
    Pass,
    Output,
    Library,
    LibraryPath,
    Sysroot,
    Script,
    Static(bool),
    AsNeeded(bool),
    WholeArchive(bool),
    PushState,
    PopState,
    GroupStart,
    GroupEnd,
    LibStart,
    LibEnd,
    Format,
    Entry,
    Undefined,
    UndefinedGlob,
    RequireDefined,
    Init,
    Fini,
    Wrap,
    Defsym,
    Shared,
    Relocatable,
    /// `-pie` / `-no-pie`: position-independent executable (PIC code).
    Pie(bool),
    ExportDynamic(bool),
    /// `--dynamic-list` and the like: some symbols are exported (and, when
    /// `true`, `--dynamic-list` proper: a shared output binds the others
    /// inside it).
    DynamicList(bool),
    /// `-Bsymbolic` and its kin.
    Symbolic(Symbolic),
    /// `--fat-lto-objects` (`true`: link the bitcode of fat LTO objects)
    /// and `--no-fat-lto-objects` (their native code).
    FatLtoObjects(bool),
    ExcludeLibs,
    ExportDynamicSymbol,
    VersionScript,
    /// Changes symbols in a way wpd does not model: passed on, and every
    /// outside reference is unknown.
    UnknownRefs,
    /// Cannot be honoured: an error with this reason.
    Refuse(&'static str),
    /// `-z KEYWORD`: see [`Z_KEYWORDS`].
    Z,
    /// `--allow-multiple-definition` (`true`, as `-z muldefs`) and
    /// `--no-allow-multiple-definition`.
    MultipleDefinitions(bool),
    /// `--noinhibit-exec`: errors such as duplicate symbols are warnings.
    NoInhibitExec,
    Plugin,
    PluginOpt,
    Mllvm,
    LtoO,
    LtoCgo,
    /// `--lto-partitions=N`: wpd's regular LTO is one partition.
    LtoPartitions,
    LtoWholeProgramVisibility(bool),
    LtoValidate(bool),
    LtoKnownSafe,
    LtoSampleProfile,
    LtoCsGenerate,
    LtoCsFile,
    ThinltoJobs,
    /// `--thinlto-cache-dir=`, `--wpd-cache-dir=`: the link cache.
    CacheDir,
    /// `--thinlto-cache-policy=`: how the cache is pruned.
    CachePolicy,
    /// An LTO option with nothing for wpd's backends to do.
    LtoIgnored,
    /// `--disable-verify`: LLVM's ThinLTO skips verifying the modules.
    LtoDisableVerify,
    WpdLinker,
    WpdReport,
    WpdJobs,
    WpdRemarks,
    /// `--wpd-remarks-file=FILE.yaml`: LLVM optimization records.
    WpdRemarksFile,
    /// `--wpd-size-baseline`: also link without devirtualization, for sizes.
    WpdSizeBaseline,
    /// `--wpd-quiet`: no progress line on a terminal.
    WpdQuiet,
    WpdSaveTemps,
    WpdSpawnLinker,
    /// `--wpd-low-memory`: freed memory goes back to the system at once.
    WpdLowMemory,
    WpdNoValidate,
    /// `--wpd-no-dead-slots`: keep every vtable slot.
    WpdNoDeadSlots,
    WpdKnownSafe,
    WpdOpen,
    WpdSpeculate,
    WpdClosedSet,
    WpdUnknownOptions,
    /// `--wpd-index-only=DIR`: distributed backends; stop after the thin
    /// link and write the jobs into DIR.
    WpdIndexOnly,
    /// `--wpd-from-index=DIR`: the final link of a distributed link, on the
    /// objects its jobs wrote into DIR.
    WpdFromIndex,
    /// `--thinlto-index-only[=FILE]`: index files for clang's backends
    /// (and the list of objects to link) instead of a link.
    ThinltoIndexOnly,
    /// `--thinlto-emit-imports-files`: `.imports` files beside them.
    ThinltoEmitImports,
    /// `--thinlto-prefix-replace=OLD;NEW[;NATIVE]`.
    ThinltoPrefixReplace,
    /// `--thinlto-object-suffix-replace=OLD;NEW`.
    ThinltoObjectSuffixReplace,
    /// `--lto-obj-path=FILE`: the regular LTO object of an index-only link.
    LtoObjPath,
    /// `--thinlto-distributor=PATH`: integrated distributed ThinLTO
    /// (DTLTO): the backend jobs go to this program.
    ThinltoDistributor,
    /// `--thinlto-distributor-arg=ARG`: an argument for the distributor.
    ThinltoDistributorArg,
    /// `--thinlto-remote-compiler=PATH`: what runs each job remotely.
    ThinltoRemoteCompiler,
    /// `--thinlto-remote-compiler-arg=ARG`: an argument for it.
    ThinltoRemoteCompilerArg,
}

/// One option: its names (one character: a short option, `-x`; longer: a
/// long option, with one or two dashes), value form, effect and action.
#[derive(Clone, Copy, Debug)]
pub struct Spec {
    pub names: &'static [&'static str],
    pub arity: Arity,
    pub effect: Effect,
    pub action: Action,
}

const fn o(names: &'static [&'static str], arity: Arity, effect: Effect, action: Action) -> Spec {
    Spec { names, arity, effect, action }
}

use Action as A;
use Arity::{Flag, Optional, Prefix, Value};
use Effect::{Harmless, Input, InputState, Lto, Output, Symbols, Wpd};
use wpd_link::resolve::Symbolic;

/// Every ld option wpd-ld accepts.
pub const OPTIONS: &[Spec] = &[
    // Inputs and where they are found.
    o(&["l", "library"], Value, Input, A::Library),
    o(&["L", "library-path"], Value, Input, A::LibraryPath),
    o(&["sysroot"], Value, Input, A::Sysroot),
    o(&["T", "script"], Value, Input, A::Script),
    o(&["dT", "default-script"], Value, Input, A::Script),
    o(&["nostdlib"], Flag, Input, A::Pass),
    o(&["Y"], Value, Input, A::Pass),
    o(&["accept-unknown-input-arch", "no-accept-unknown-input-arch"], Flag, Input, A::Pass),
    o(&["rpath-link"], Value, Input, A::Pass),
    o(&["just-symbols"], Value, Input, A::UnknownRefs),
    o(&["remap-inputs", "remap-inputs-file"], Value, Input, A::Refuse("it replaces input files")),
    o(&["c", "mri-script"], Value, Input, A::Refuse("MRI scripts are not read by wpd")),
    o(&["dependent-libraries", "no-dependent-libraries"], Flag, Input, A::Pass),
    // The state later inputs are read in.
    o(&["Bstatic", "static", "dn", "non_shared"], Flag, InputState, A::Static(true)),
    o(&["Bdynamic", "dy", "call_shared"], Flag, InputState, A::Static(false)),
    o(&["as-needed"], Flag, InputState, A::AsNeeded(true)),
    o(&["no-as-needed"], Flag, InputState, A::AsNeeded(false)),
    o(&["whole-archive"], Flag, InputState, A::WholeArchive(true)),
    o(&["no-whole-archive"], Flag, InputState, A::WholeArchive(false)),
    o(&["push-state"], Flag, InputState, A::PushState),
    o(&["pop-state"], Flag, InputState, A::PopState),
    o(&["(", "start-group"], Flag, InputState, A::GroupStart),
    o(&[")", "end-group"], Flag, InputState, A::GroupEnd),
    o(&["start-lib"], Flag, InputState, A::LibStart),
    o(&["end-lib"], Flag, InputState, A::LibEnd),
    o(&["b", "format"], Value, InputState, A::Format),
    o(
        &["copy-dt-needed-entries", "add-needed"],
        Flag,
        InputState,
        A::UnknownRefs, // libraries needed by shared libraries answer references too
    ),
    o(&["no-copy-dt-needed-entries", "no-add-needed"], Flag, InputState, A::Pass),
    // Symbols: defined, referenced, renamed, exported.
    o(&["e", "entry"], Value, Symbols, A::Entry),
    o(&["u", "undefined"], Value, Symbols, A::Undefined),
    o(&["undefined-glob"], Value, Symbols, A::UndefinedGlob),
    o(&["require-defined"], Value, Symbols, A::RequireDefined),
    o(&["init"], Value, Symbols, A::Init),
    o(&["fini"], Value, Symbols, A::Fini),
    o(&["wrap"], Value, Symbols, A::Wrap),
    o(&["defsym"], Value, Symbols, A::Defsym),
    o(&["shared", "Bshareable"], Flag, Symbols, A::Shared),
    o(&["r", "relocatable", "i", "Ur"], Flag, Symbols, A::Relocatable),
    o(&["E", "export-dynamic"], Flag, Symbols, A::ExportDynamic(true)),
    o(&["no-export-dynamic"], Flag, Symbols, A::ExportDynamic(false)),
    o(&["dynamic-list"], Value, Symbols, A::DynamicList(true)),
    o(&["export-dynamic-symbol-list"], Value, Symbols, A::DynamicList(false)),
    // GNU ld: export all data / operator new and delete / typeinfos;
    // modelled as exporting everything.
    o(
        &["dynamic-list-data", "dynamic-list-cpp-new", "dynamic-list-cpp-typeinfo"],
        Flag,
        Symbols,
        A::DynamicList(false),
    ),
    o(&["export-dynamic-symbol"], Value, Symbols, A::ExportDynamicSymbol),
    o(&["version-script"], Value, Symbols, A::VersionScript),
    // These bind a shared output's references to its own definitions
    // inside it: what is exported does not change, what may be preempted
    // at run time does.
    o(&["Bsymbolic"], Flag, Symbols, A::Symbolic(Symbolic::All)),
    o(&["Bsymbolic-functions"], Flag, Symbols, A::Symbolic(Symbolic::Functions)),
    o(&["Bsymbolic-non-weak"], Flag, Symbols, A::Symbolic(Symbolic::NonWeak)),
    o(&["Bsymbolic-non-weak-functions"], Flag, Symbols, A::Symbolic(Symbolic::NonWeakFunctions)),
    o(&["Bno-symbolic"], Flag, Symbols, A::Symbolic(Symbolic::None)),
    o(&["exclude-libs"], Value, Symbols, A::ExcludeLibs),
    o(&["retain-symbols-file"], Value, Symbols, A::Pass),
    o(&["default-symver", "default-imported-symver"], Flag, Symbols, A::Pass),
    // Two strong definitions: the first wins, without an error.
    o(&["allow-multiple-definition"], Flag, Symbols, A::MultipleDefinitions(true)),
    o(&["no-allow-multiple-definition"], Flag, Symbols, A::MultipleDefinitions(false)),
    o(&["no-fortran-common"], Flag, Symbols, A::Pass),
    o(
        &["fortran-common"],
        Flag,
        Symbols,
        A::Refuse("it extracts archive members to replace common symbols, which wpd does not model for lld"),
    ),
    o(&["fat-lto-objects"], Flag, Lto, A::FatLtoObjects(true)),
    o(&["no-fat-lto-objects"], Flag, Lto, A::FatLtoObjects(false)),
    // Output only.
    o(&["o", "output"], Value, Output, A::Output),
    o(&["pie", "pic-executable"], Flag, Output, A::Pie(true)),
    o(&["no-pie", "no-pic-executable"], Flag, Output, A::Pie(false)),
    o(&["m"], Value, Output, A::Pass),
    o(&["A", "architecture", "G", "gpsize", "hash-size", "spare-dynamic-tags"], Value, Output, A::Pass),
    o(&["EL", "EB"], Flag, Output, A::Pass),
    o(&["oformat"], Value, Output, A::Pass),
    o(&["soname", "h"], Value, Output, A::Pass),
    o(&["rpath", "R"], Value, Output, A::Pass),
    o(&["dynamic-linker", "I"], Value, Output, A::Pass),
    o(&["no-dynamic-linker"], Flag, Output, A::Pass),
    o(&["hash-style"], Value, Output, A::Pass),
    o(&["build-id"], Optional, Output, A::Pass),
    o(&["eh-frame-hdr", "no-eh-frame-hdr"], Flag, Output, A::Pass),
    o(&["ld-generated-unwind-info", "no-ld-generated-unwind-info"], Flag, Output, A::Pass),
    o(&["enable-new-dtags", "disable-new-dtags"], Flag, Output, A::Pass),
    o(&["auxiliary", "f", "filter", "F"], Value, Output, A::Pass),
    o(&["gc-sections", "no-gc-sections", "gc-keep-exported"], Flag, Output, A::Pass),
    o(&["icf"], Value, Output, A::Pass),
    o(&["keep-unique"], Value, Output, A::Pass),
    o(&["ignore-data-address-equality", "ignore-function-address-equality"], Flag, Output, A::Pass),
    o(
        &["strip-all", "s", "strip-debug", "S", "discard-all", "x", "discard-locals", "X", "discard-none"],
        Flag,
        Output,
        A::Pass,
    ),
    o(&["emit-relocs", "q"], Flag, Output, A::Pass),
    o(&["relax", "no-relax", "relax-gp", "no-relax-gp"], Flag, Output, A::Pass),
    o(&["rosegment", "no-rosegment", "execute-only", "no-execute-only"], Flag, Output, A::Pass),
    o(&["nmagic", "n", "no-nmagic", "omagic", "N", "no-omagic"], Flag, Output, A::Pass),
    o(&["image-base", "section-start"], Value, Output, A::Pass),
    o(&["Ttext", "Tdata", "Tbss", "Ttext-segment", "Trodata-segment", "Tldata-segment"], Value, Output, A::Pass),
    o(&["pack-dyn-relocs"], Value, Output, A::Pass),
    o(&["use-android-relr-tags", "no-use-android-relr-tags"], Flag, Output, A::Pass),
    o(&["apply-dynamic-relocs", "no-apply-dynamic-relocs"], Flag, Output, A::Pass),
    o(&["compress-debug-sections", "compress-sections"], Value, Output, A::Pass),
    o(&["gdb-index", "no-gdb-index", "debug-names", "no-debug-names"], Flag, Output, A::Pass),
    o(&["gnu-unique", "no-gnu-unique"], Flag, Output, A::Pass),
    o(&["Map"], Value, Output, A::Pass),
    o(&["M", "print-map"], Flag, Output, A::Pass),
    o(&["cref"], Flag, Output, A::Pass),
    o(&["symbol-ordering-file", "call-graph-ordering-file", "print-symbol-order"], Value, Output, A::Pass),
    o(&["call-graph-profile-sort"], Optional, Output, A::Pass),
    o(&["no-call-graph-profile-sort"], Flag, Output, A::Pass),
    o(&["sort-section", "shuffle-sections", "orphan-handling"], Value, Output, A::Pass),
    o(&["sort-common"], Optional, Output, A::Pass),
    o(&["unique"], Optional, Output, A::Pass),
    o(&["check-sections", "no-check-sections"], Flag, Output, A::Pass),
    o(&["package-metadata"], Value, Output, A::Pass),
    o(&["optimize-bb-jumps", "no-optimize-bb-jumps"], Flag, Output, A::Pass),
    o(&["O"], Value, Output, A::Pass),
    o(&["z"], Value, Output, A::Z),
    o(&["fix-cortex-a53-843419", "fix-cortex-a8", "be8", "target1-abs", "target1-rel"], Flag, Output, A::Pass),
    o(&["target2"], Value, Output, A::Pass),
    o(&["merge-exidx-entries", "no-merge-exidx-entries", "pic-veneer"], Flag, Output, A::Pass),
    o(&["pcrel-optimize", "no-pcrel-optimize", "toc-optimize", "no-toc-optimize"], Flag, Output, A::Pass),
    o(&["power10-stubs"], Optional, Output, A::Pass),
    o(&["no-power10-stubs"], Flag, Output, A::Pass),
    o(&["split-stack-adjust-size"], Value, Output, A::Pass),
    o(&["android-memtag-heap", "android-memtag-stack"], Flag, Output, A::Pass),
    o(&["android-memtag-mode"], Value, Output, A::Pass),
    o(&["cmse-implib"], Flag, Output, A::Pass),
    o(&["in-implib", "out-implib"], Value, Output, A::Pass),
    o(&["force-group-allocation", "enable-non-contiguous-regions"], Flag, Output, A::Pass),
    o(&["mmap-output-file", "no-mmap-output-file"], Flag, Output, A::Pass),
    o(&["warn-rwx-segments", "no-warn-rwx-segments", "warn-execstack", "no-warn-execstack"], Flag, Output, A::Pass),
    o(&["enable-linker-version", "disable-linker-version"], Flag, Output, A::Pass),
    o(&["Bgroup", "traditional-format", "strip-discarded", "no-strip-discarded"], Flag, Output, A::Pass),
    o(&["d", "dc", "dp", "no-define-common"], Flag, Output, A::Pass),
    o(&["split-by-file", "split-by-reloc"], Optional, Output, A::Pass),
    o(&["P", "depaudit", "audit"], Value, Output, A::Pass),
    o(&["ctf-variables", "no-ctf-variables"], Flag, Output, A::Pass),
    o(&["ctf-share-types"], Value, Output, A::Pass),
    o(&["save-temps"], Optional, Output, A::Pass),
    // Diagnostics and the linker's own behaviour.
    o(&["t", "trace"], Flag, Harmless, A::Pass),
    o(&["g"], Flag, Harmless, A::Pass),
    o(&["y", "trace-symbol"], Value, Harmless, A::Pass),
    o(&["v", "V", "version", "verbose", "help"], Flag, Harmless, A::Pass),
    o(&["fatal-warnings", "no-fatal-warnings", "no-warnings", "w"], Flag, Harmless, A::Pass),
    o(&["warn-common", "no-warn-common", "warn-once", "warn-constructors", "warn-textrel"], Flag, Harmless, A::Pass),
    o(&["warn-mismatch", "no-warn-mismatch", "no-warn-search-mismatch", "warn-section-align"], Flag, Harmless, A::Pass),
    o(&["warn-backrefs", "no-warn-backrefs"], Flag, Harmless, A::Pass),
    o(&["warn-backrefs-exclude"], Value, Harmless, A::Pass),
    o(
        &["warn-ifunc-textrel", "no-warn-ifunc-textrel", "warn-symbol-ordering", "no-warn-symbol-ordering"],
        Flag,
        Harmless,
        A::Pass,
    ),
    o(&["warn-unresolved-symbols", "error-unresolved-symbols", "no-undefined"], Flag, Harmless, A::Pass),
    o(&["unresolved-symbols"], Value, Harmless, A::Pass),
    o(&["allow-shlib-undefined", "no-allow-shlib-undefined"], Flag, Harmless, A::Pass),
    o(&["undefined-version", "no-undefined-version"], Flag, Harmless, A::Pass),
    o(&["noinhibit-exec"], Flag, Symbols, A::NoInhibitExec),
    o(&["error-limit", "error-handling-script"], Value, Harmless, A::Pass),
    o(&["color-diagnostics"], Optional, Harmless, A::Pass),
    o(&["no-color-diagnostics", "vs-diagnostics"], Flag, Harmless, A::Pass),
    o(&["demangle", "no-demangle"], Flag, Harmless, A::Pass),
    o(&["stats", "no-keep-memory", "reduce-memory-overheads", "print-memory-usage"], Flag, Harmless, A::Pass),
    o(
        &["print-gc-sections", "no-print-gc-sections", "print-icf-sections", "no-print-icf-sections"],
        Flag,
        Harmless,
        A::Pass,
    ),
    o(&["print-archive-stats", "why-extract", "dependency-file", "reproduce"], Value, Harmless, A::Pass),
    o(&["time-trace"], Optional, Harmless, A::Pass),
    o(&["time-trace-granularity", "threads", "thread-count", "rsp-quoting"], Value, Harmless, A::Pass),
    o(&["no-threads"], Flag, Harmless, A::Pass),
    o(
        &["map-whole-files", "no-map-whole-files", "print-map-discarded", "no-print-map-discarded"],
        Flag,
        Harmless,
        A::Pass,
    ),
    o(
        &["warn-alternate-em", "warn-multiple-gp", "enable-non-contiguous-regions-warnings", "Qy"],
        Flag,
        Harmless,
        A::Pass,
    ),
    o(&["print-output-format", "print-sysroot", "target-help"], Flag, Harmless, A::Pass),
    o(&["ignore-unresolved-symbol", "assert"], Value, Harmless, A::Pass),
    // LTO and the gold plugin interface: for wpd's backends.
    o(&["plugin"], Value, Lto, A::Plugin),
    o(&["plugin-opt"], Value, Lto, A::PluginOpt),
    o(&["mllvm"], Value, Lto, A::Mllvm),
    o(&["lto-O"], Prefix, Lto, A::LtoO),
    o(&["lto-CGO"], Prefix, Lto, A::LtoCgo),
    o(&["lto-partitions"], Value, Lto, A::LtoPartitions),
    o(&["lto-whole-program-visibility"], Flag, Lto, A::LtoWholeProgramVisibility(true)),
    o(&["no-lto-whole-program-visibility"], Flag, Lto, A::LtoWholeProgramVisibility(false)),
    o(&["lto-validate-all-vtables-have-type-infos"], Flag, Lto, A::LtoValidate(true)),
    o(&["lto-known-safe-vtables"], Value, Lto, A::LtoKnownSafe),
    o(&["lto-sample-profile"], Value, Lto, A::LtoSampleProfile),
    o(&["lto-cs-profile-generate"], Flag, Lto, A::LtoCsGenerate),
    o(&["lto-cs-profile-file"], Value, Lto, A::LtoCsFile),
    o(&["thinlto-jobs"], Value, Lto, A::ThinltoJobs),
    o(&["thinlto-cache-dir"], Value, Lto, A::CacheDir),
    o(&["thinlto-cache-policy"], Value, Lto, A::CachePolicy),
    o(&["disable-verify"], Flag, Lto, A::LtoDisableVerify),
    o(&["lto-pgo-warn-mismatch", "no-lto-pgo-warn-mismatch"], Flag, Lto, A::LtoIgnored),
    // lld's defaults spelled out; wpd validates whatever they say.
    o(
        &[
            "no-lto-validate-all-vtables-have-type-infos",
            "no-lto-basic-block-address-map",
            "no-lto-unique-basic-block-section-names",
        ],
        Flag,
        Lto,
        A::LtoIgnored,
    ),
    o(&["load-pass-plugin"], Value, Lto, A::Refuse("wpd-ld does not load LLVM pass plugins")),
    // lld's distributed ThinLTO for clang's own backends (Bazel-style):
    // index files that carry wpd's decisions as LLVM's resolutions.
    o(&["thinlto-index-only"], Optional, Lto, A::ThinltoIndexOnly),
    o(&["thinlto-emit-imports-files"], Flag, Lto, A::ThinltoEmitImports),
    o(&["thinlto-prefix-replace"], Value, Lto, A::ThinltoPrefixReplace),
    o(&["thinlto-object-suffix-replace"], Value, Lto, A::ThinltoObjectSuffixReplace),
    o(&["lto-obj-path"], Value, Lto, A::LtoObjPath),
    // lld's integrated distributed ThinLTO (DTLTO): wpd's own jobs, handed
    // to the user's distributor in LLVM's job description format.
    o(&["thinlto-distributor"], Value, Lto, A::ThinltoDistributor),
    o(&["thinlto-distributor-arg"], Value, Lto, A::ThinltoDistributorArg),
    o(&["thinlto-remote-compiler"], Value, Lto, A::ThinltoRemoteCompiler),
    o(&["thinlto-remote-compiler-arg"], Value, Lto, A::ThinltoRemoteCompilerArg),
    // wpd's own.
    o(&["wpd-linker"], Value, Wpd, A::WpdLinker),
    o(&["wpd-report"], Value, Wpd, A::WpdReport),
    o(&["wpd-jobs"], Value, Wpd, A::WpdJobs),
    o(&["wpd-cache-dir"], Value, Wpd, A::CacheDir),
    o(&["wpd-remarks"], Optional, Wpd, A::WpdRemarks),
    o(&["wpd-remarks-file"], Value, Wpd, A::WpdRemarksFile),
    o(&["wpd-size-baseline"], Flag, Wpd, A::WpdSizeBaseline),
    o(&["wpd-quiet"], Flag, Wpd, A::WpdQuiet),
    o(&["wpd-save-temps"], Flag, Wpd, A::WpdSaveTemps),
    o(&["wpd-spawn-linker"], Flag, Wpd, A::WpdSpawnLinker),
    o(&["wpd-low-memory"], Flag, Wpd, A::WpdLowMemory),
    o(&["wpd-no-validate"], Flag, Wpd, A::WpdNoValidate),
    o(&["wpd-no-dead-slots"], Flag, Wpd, A::WpdNoDeadSlots),
    o(&["wpd-known-safe"], Value, Wpd, A::WpdKnownSafe),
    o(&["wpd-open"], Value, Wpd, A::WpdOpen),
    o(&["wpd-speculate"], Value, Wpd, A::WpdSpeculate),
    o(&["wpd-closed-set"], Value, Wpd, A::WpdClosedSet),
    o(&["wpd-unknown-options"], Value, Wpd, A::WpdUnknownOptions),
    o(&["wpd-index-only"], Value, Wpd, A::WpdIndexOnly),
    o(&["wpd-from-index"], Value, Wpd, A::WpdFromIndex),
];

/// `-z` keywords (a trailing `=` takes a value) and their effect. Any other
/// keyword is an unknown option.
pub const Z_KEYWORDS: &[(&str, Effect)] = &[
    ("now", Output),
    ("lazy", Output),
    ("relro", Output),
    ("norelro", Output),
    ("execstack", Output),
    ("noexecstack", Output),
    ("text", Output),
    ("notext", Output),
    ("textoff", Output),
    ("max-page-size=", Output),
    ("common-page-size=", Output),
    ("separate-code", Output),
    ("noseparate-code", Output),
    ("separate-loadable-segments", Output),
    ("origin", Output),
    ("nodelete", Output),
    ("nodlopen", Output),
    ("initfirst", Output),
    ("global", Output),
    ("combreloc", Output),
    ("nocombreloc", Output),
    ("copyreloc", Output),
    ("nocopyreloc", Output),
    ("noextern-protected-data", Output),
    ("rodynamic", Output),
    ("keep-text-section-prefix", Output),
    ("nokeep-text-section-prefix", Output),
    ("shstk", Output),
    ("ibt", Output),
    ("ibtplt", Output),
    ("cet-report=", Output),
    ("force-bti", Output),
    ("force-ibt", Output),
    ("bti-report=", Output),
    ("pac-plt", Output),
    ("pack-relative-relocs", Output),
    ("nopack-relative-relocs", Output),
    ("start-stop-gc", Output),
    ("nostart-stop-gc", Output),
    ("start-stop-visibility=", Output),
    ("dead-reloc-in-nonalloc=", Output),
    ("stack-size=", Output),
    ("nognustack", Output),
    ("nodefaultlib", Output),
    ("interpose", Output),
    ("dynamic-undefined-weak", Output),
    ("nodynamic-undefined-weak", Output),
    ("retpolineplt", Output),
    ("mark-plt", Output),
    ("nomark-plt", Output),
    ("sectionheader", Output),
    ("nosectionheader", Output),
    ("lrodata-after-bss", Output),
    ("nolrodata-after-bss", Output),
    ("report-relative-reloc", Harmless),
    ("defs", Harmless),
    ("undefs", Harmless),
    // Two strong definitions: the first wins, without an error
    // (`--allow-multiple-definition`).
    ("muldefs", Symbols),
];

/// The option a long name (without dashes, more than one character) names.
pub fn long(name: &str) -> Option<&'static Spec> {
    if name.chars().count() < 2 {
        return None;
    }
    OPTIONS.iter().find(|s| s.arity != Arity::Prefix && s.names.contains(&name))
}

/// The prefix option `body` starts with (`lto-O2` → `lto-O`).
pub fn prefix(body: &str) -> Option<(&'static Spec, &str)> {
    OPTIONS.iter().filter(|s| s.arity == Arity::Prefix).find_map(|s| {
        s.names.iter().find_map(|n| body.strip_prefix(n).filter(|rest| !rest.is_empty()).map(|rest| (s, rest)))
    })
}

/// The short option `c` (`-c`).
pub fn short(c: char) -> Option<&'static Spec> {
    let mut buf = [0u8; 4];
    let name: &str = c.encode_utf8(&mut buf);
    OPTIONS.iter().find(|s| s.names.contains(&name))
}

/// The effect of `-z KEYWORD`, if wpd knows the keyword.
pub fn z_keyword(keyword: &str) -> Option<Effect> {
    Z_KEYWORDS.iter().find_map(|(k, e)| match k.strip_suffix('=') {
        Some(stem) => keyword.strip_prefix(stem).is_some_and(|r| r.starts_with('=')).then_some(*e),
        None => (keyword == *k).then_some(*e),
    })
}
