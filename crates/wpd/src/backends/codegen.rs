//! Optimization and code generation of one rewritten module: LLVM's ThinLTO
//! post-link pipeline (`thinlto<On>`, as lld runs it), then an ELF object,
//! with the link's code generation flags, profile and split DWARF applied
//! as lld's LTO backends apply them.

use crate::error::{Error, Result};
use std::path::PathBuf;
use wpd_llvm::{Module, Reloc, Sections, TargetMachine};

/// Code generation options of the link (`-plugin-opt=O2`, `mcpu=`, ...).
#[derive(Clone, Debug)]
pub struct CodegenOptions {
    /// 0 to 3.
    pub opt_level: u8,
    /// Code generation's own level (lld's `--lto-CGO<n>`); `None`: as lld,
    /// 3 when `opt_level` is 3, else 2 ([`CodegenOptions::codegen_level`]).
    pub cg_opt_level: Option<u8>,
    pub cpu: String,
    /// Run the LLVM verifier on each rewritten module before it is written
    /// or optimized (debug builds, `wpd backend --verify`).
    pub verify: bool,
    /// LLVM's ThinLTO verifies its input modules, as lld's does unless
    /// `--disable-verify`.
    pub lto_verify: bool,
    /// A section per function / per datum (lld's LTO default: both).
    pub sections: Sections,
    /// LLVM's tool-only code generation flags (`-plugin-opt=-emulated-tls`).
    pub machine: MachineFlags,
    /// Profile-guided optimization of the backends.
    pub profile: Profile,
    /// `-plugin-opt=dwo_dir=`: split DWARF, one `.dwo` per module there.
    pub dwo_dir: Option<PathBuf>,
    /// One module on its own (`wpd backend --split-dwarf-file`): its
    /// `.dwo`. (wpd-ld's ThinLTO backends use `dwo_dir`, as lld does.)
    pub split_dwarf_file: Option<PathBuf>,
    /// The link's relocation model (ThinLTO backends; lld: PIC for `-pie`
    /// and `-shared`, static otherwise, each module's own for `-r`). The
    /// one-module backend follows each module's `PIC Level`.
    pub reloc: wpd_llvm::LtoReloc,
}

impl CodegenOptions {
    /// The level code generation runs at, 0 to 3: `cg_opt_level`, else
    /// lld's default (3 for an `-O3` link, else 2, whatever the lower
    /// optimization level).
    pub fn codegen_level(&self) -> u8 {
        self.cg_opt_level.unwrap_or(if self.opt_level >= 3 { 3 } else { 2 }).min(3)
    }
}

impl Default for CodegenOptions {
    fn default() -> Self {
        CodegenOptions {
            opt_level: 2,
            cg_opt_level: None,
            cpu: "x86-64".into(),
            verify: cfg!(debug_assertions),
            lto_verify: true,
            sections: Sections::default(),
            machine: MachineFlags::default(),
            profile: Profile::default(),
            dwo_dir: None,
            split_dwarf_file: None,
            reloc: wpd_llvm::LtoReloc::Pic,
        }
    }
}

/// Code generation flags that clang passes as `-plugin-opt=-<flag>` (users:
/// `-mllvm -<flag>`). LLVM registers them only in its tools
/// (`codegen::RegisterCodeGenFlags`), so wpd maps them onto the target
/// machine itself, as lld does through `initTargetOptionsFromCodeGenFlags`.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct MachineFlags {
    /// `-debugger-tune=` (`-ggdb`, `-glldb`, `-gsce`, `-gdbx`); `None`: the
    /// target's default.
    pub debugger_tuning: Option<DebuggerTuning>,
    /// `-emulated-tls` (`-femulated-tls`).
    pub emulated_tls: bool,
    /// `-enable-tlsdesc` (`-mtls-dialect=gnu2`).
    pub tls_descriptors: bool,
    /// `-stack-size-section` (`-fstack-size-section`).
    pub stack_size_section: bool,
    /// `-split-machine-functions` (`-fsplit-machine-functions`).
    pub split_machine_functions: bool,
    /// `-enable-jmc-instrument` (`-fjmc`).
    pub jmc_instrument: bool,
}

/// The debugger that debug information is tuned for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DebuggerTuning {
    Gdb,
    Lldb,
    Sce,
    Dbx,
}

impl DebuggerTuning {
    /// From LLVM's spelling (`-debugger-tune=gdb`).
    pub fn from_llvm(name: &str) -> Option<DebuggerTuning> {
        Some(match name {
            "gdb" => DebuggerTuning::Gdb,
            "lldb" => DebuggerTuning::Lldb,
            "sce" => DebuggerTuning::Sce,
            "dbx" => DebuggerTuning::Dbx,
            _ => return None,
        })
    }

    /// LLVM's spelling.
    pub fn llvm_name(self) -> &'static str {
        match self {
            DebuggerTuning::Gdb => "gdb",
            DebuggerTuning::Lldb => "lldb",
            DebuggerTuning::Sce => "sce",
            DebuggerTuning::Dbx => "dbx",
        }
    }
}

/// The profile the backends optimize with, as lld's LTO `Config` has it.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Profile {
    /// `-plugin-opt=sample-profile=` (`-fprofile-sample-use=`).
    pub sample: Option<PathBuf>,
    /// `-plugin-opt=cs-profile-path=`: the context-sensitive profile to use
    /// (`-fprofile-use=`), or where instrumented programs write theirs.
    pub cs_profile: Option<PathBuf>,
    /// `-plugin-opt=cs-profile-generate` (`-fcs-profile-generate`):
    /// context-sensitive instrumentation.
    pub cs_generate: bool,
}

/// Optimizes `module` and emits it as a relocatable object.
pub fn emit(module: &Module<'_>, opts: &CodegenOptions) -> Result<Vec<u8>> {
    // The reader's own check may be off (wpd_llvm's set_llvm_options).
    if let Some(warning) = module.check_debug_info()? {
        eprintln!("wpd: warning: {warning}");
    }
    if opts.verify {
        module.verify().map_err(|e| Error::msg(format!("invalid IR after rewriting: {}", e.message)))?;
    }
    // clang's default is PIE (PIC level 2); a module without the flag was
    // built for static code.
    let reloc = if module.flag_int("PIC Level").unwrap_or(0) > 0 { Reloc::Pic } else { Reloc::Static };
    let mut machine = TargetMachine::new(&module.triple(), &opts.cpu, "", opts.codegen_level(), reloc, opts.sections)?;
    let flags = &opts.machine;
    if let Some(tuning) = flags.debugger_tuning {
        machine.set_debugger_tuning(tuning.llvm_name())?;
    }
    // Off is the x86-64 default of each; only a flag given changes it.
    if flags.emulated_tls {
        machine.set_emulated_tls(true);
    }
    if flags.tls_descriptors {
        machine.set_tls_descriptors(true);
    }
    if flags.stack_size_section {
        machine.set_stack_size_section(true);
    }
    if flags.split_machine_functions {
        machine.set_split_machine_functions(true);
    }
    if flags.jmc_instrument {
        machine.set_jmc_instrument(true);
    }
    let profile = &opts.profile;
    machine.set_profile(profile.sample.as_deref(), profile.cs_profile.as_deref(), profile.cs_generate)?;
    machine.set_split_dwarf_file(opts.split_dwarf_file.as_deref())?;
    let level = opts.opt_level.min(3);
    module.run_passes(&format!("thinlto<O{level}>"), &machine, level > 1)?;
    machine.emit_object(module)
}
