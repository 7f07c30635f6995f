//! Readable names for reports: Itanium C++ names demangled with the
//! `cpp_demangle` crate, type ids (`_ZTS5Shape`) shown as their class.
//! Anything that does not demangle is shown as it is.

/// `mangled` demangled (`_ZNK5Shape4areaEv` → `Shape::area() const`). A
/// suffix that only makes a local name unique (`.llvm.123`, `.wpd.abc`,
/// clang's module hash) is left out: the mangled name has it.
pub fn name(mangled: &str) -> String {
    let base = mangled.split_once('.').map_or(mangled, |(b, _)| b);
    demangle(base).unwrap_or_else(|| mangled.to_string())
}

/// A type id as the class it names: `_ZTS5Shape` → `Shape`; other ids
/// (local ones, numbered by module) as they are.
pub fn type_id(id: &str) -> String {
    if let Some(rest) = id.strip_prefix("_ZTS")
        && let Some(d) = demangle(&format!("_Z{rest}"))
    {
        return d;
    }
    name(id)
}

fn demangle(s: &str) -> Option<String> {
    if !s.starts_with("_Z") {
        return None;
    }
    let sym = cpp_demangle::Symbol::new(s.as_bytes()).ok()?;
    sym.demangle(&cpp_demangle::DemangleOptions::default()).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_type_ids() {
        assert_eq!(name("_ZNK5Shape4areaEv"), "Shape::area() const");
        assert_eq!(name("main"), "main");
        assert_eq!(name("_ZN12_GLOBAL__N_16CircleD0Ev.wpd.0c5b"), "(anonymous namespace)::Circle::~Circle()");
        assert_eq!(type_id("_ZTS5Shape"), "Shape");
        assert_eq!(type_id("_ZTSN12_GLOBAL__N_14StepE"), "(anonymous namespace)::Step");
        assert_eq!(type_id("local.4b6cfc88.0"), "local.4b6cfc88.0");
    }
}
