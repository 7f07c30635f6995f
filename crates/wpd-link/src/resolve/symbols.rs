//! Symbol tables of link inputs, reduced to what resolution reads: each
//! global symbol's name (in `wpd_summary::name`'s lossless text form),
//! whether it is defined, weak or common, its visibility and its comdat
//! group. Native ELF tables are read in `elf.rs`; bitcode tables come from
//! the caller (LLVM's irsymtab, through `wpd-llvm`).

/// How a symbol is defined in its file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Definition {
    Undefined,
    Defined,
    /// A common symbol (`-fcommon` tentative definition): the largest wins.
    Common {
        size: u64,
    },
}

/// ELF symbol visibility (`STV_*`; LLVM's `GlobalValue::VisibilityTypes`
/// maps onto it).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Visibility {
    #[default]
    Default,
    Protected,
    Hidden,
    Internal,
}

/// One global (or weak) symbol of an input.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Symbol {
    pub name: String,
    pub definition: Definition,
    pub weak: bool,
    pub visibility: Visibility,
    /// A function (`STT_FUNC`; LLVM's executable flag in bitcode), which
    /// `-Bsymbolic-functions` binds.
    pub function: bool,
    /// Thread-local storage (`STT_TLS`; LLVM's TLS flag in bitcode): a
    /// reference restored for archive extraction must say so, or GNU ld
    /// and gold reject it against the TLS definition.
    pub tls: bool,
    /// Index into [`SymbolTable::comdats`] when the definition belongs to a
    /// comdat group.
    pub comdat: Option<u32>,
    /// A bitcode definition LLVM may leave out of the symbol table
    /// (`linkonce_odr` and `unnamed_addr`: nothing may rely on its
    /// address), which `-shared` and `--export-dynamic` do not export by
    /// themselves ([`super::exports::exported_by_all`]). Always false in
    /// native files.
    pub may_omit: bool,
    /// A bitcode definition's section, when its name is a C identifier
    /// (`wpd_llvm::BitcodeSymbol::start_stop_section`): a `__start_` or
    /// `__stop_` reference anywhere in the link keeps the definition. Always
    /// `None` in native files, which the real linker handles itself.
    pub section: Option<Box<str>>,
}

impl Symbol {
    /// A strong defined symbol of default visibility.
    pub fn defined(name: &str) -> Symbol {
        Symbol {
            name: name.to_string(),
            definition: Definition::Defined,
            weak: false,
            visibility: Visibility::Default,
            function: false,
            tls: false,
            comdat: None,
            may_omit: false,
            section: None,
        }
    }

    /// A strong undefined reference.
    pub fn undefined(name: &str) -> Symbol {
        Symbol { definition: Definition::Undefined, ..Symbol::defined(name) }
    }

    /// The same symbol, weak.
    pub fn weak(self) -> Symbol {
        Symbol { weak: true, ..self }
    }

    pub fn is_undefined(&self) -> bool {
        self.definition == Definition::Undefined
    }
}

/// A comdat group: the first input that defines one keeps it; the group's
/// definitions in later inputs are discarded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Comdat {
    pub name: String,
    /// `false` for LLVM's `nodeduplicate` comdats, which are never merged.
    pub deduplicate: bool,
}

/// The global symbols of one input, in the file's own order (the order the
/// linker visits them in, which decides which archive member a reference
/// extracts first).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SymbolTable {
    pub symbols: Vec<Symbol>,
    pub comdats: Vec<Comdat>,
}

impl SymbolTable {
    pub fn new(symbols: Vec<Symbol>) -> SymbolTable {
        SymbolTable { symbols, comdats: Vec::new() }
    }
}
