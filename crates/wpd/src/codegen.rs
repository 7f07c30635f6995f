//! Optimization and code generation of one rewritten module: LLVM's ThinLTO
//! post-link pipeline (`thinlto<On>`, as lld runs it), then an ELF object.

use wpd_llvm::{Module, Reloc, Sections, TargetMachine};

/// Code generation options of the link (`-plugin-opt=O2`, `mcpu=`).
#[derive(Clone, Debug)]
pub struct CodegenOptions {
    /// 0 to 3.
    pub opt_level: u8,
    pub cpu: String,
    /// Run the LLVM verifier before optimizing (tests, `--wpd-verify`).
    pub verify: bool,
    /// A section per function / per datum (lld's LTO default: both).
    pub sections: Sections,
}

impl Default for CodegenOptions {
    fn default() -> Self {
        CodegenOptions {
            opt_level: 2,
            cpu: "x86-64".into(),
            verify: cfg!(debug_assertions),
            sections: Sections::default(),
        }
    }
}

/// Optimizes `module` and emits it as a relocatable object.
pub fn emit(module: &Module<'_>, opts: &CodegenOptions) -> Result<Vec<u8>, String> {
    if opts.verify {
        module.verify().map_err(|e| format!("invalid IR after rewriting: {e}"))?;
    }
    // clang's default is PIE (PIC level 2); a module without the flag was
    // built for static code.
    let reloc = if module.flag_int("PIC Level").unwrap_or(0) > 0 { Reloc::Pic } else { Reloc::Static };
    let machine = TargetMachine::new(&module.triple(), &opts.cpu, "", opts.opt_level, reloc, opts.sections)?;
    let level = opts.opt_level.min(3);
    module.run_passes(&format!("thinlto<O{level}>"), &machine, level > 1)?;
    machine.emit_object(module)
}
