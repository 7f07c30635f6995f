//! What a link asks of wpd, read once by one parser whichever front end
//! received it: the `-plugin-opt=` strings clang passes to a linker (wpd-ld
//! reads them from its command line, the linker plugin gets them one by one
//! in `onload`), LLVM's own options (`-mllvm X`, `-plugin-opt=-X`), and the
//! lld spellings wpd-ld maps onto the same setters (`--lto-O2`,
//! `--thinlto-jobs=`, `--wpd-report=`, ...). Both front ends then build the
//! code generation options and the policy from these settings alone
//! ([`LinkSettings::codegen`], [`LinkSettings::policy`]).

use crate::backends::clang_indexes::ClangIndexes;
use crate::backends::codegen::{CodegenOptions, DebuggerTuning, MachineFlags, Profile};
use crate::error::{Error, Result};
use crate::report::Remarks;
use std::collections::BTreeSet;
use std::path::PathBuf;
use wpd_link::hierarchy::LinkFacts;
use wpd_link::native::NativeScan;
use wpd_link::policy::{Policy, Validation};
use wpd_link::{LinkModel, OutsideRefs};

/// The settings of one link (defaults: lld's). Reports carry them
/// (`settings`), so two links can be compared.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct LinkSettings {
    /// Backend optimization level, 0 to 3.
    pub opt_level: u8,
    /// Code generation's level, 0 to 3 (lld's `--lto-CGO<n>`); `None`:
    /// lld's default for `opt_level`.
    pub cg_opt_level: Option<u8>,
    pub cpu: String,
    /// Backend worker threads (`None`: one per core).
    pub jobs: Option<usize>,
    /// The user's promise (`--lto-whole-program-visibility`,
    /// `-plugin-opt=whole-program-visibility`).
    pub whole_program_visibility: bool,
    /// Options for LLVM's own parser.
    pub llvm_options: Vec<String>,
    /// A section per function / per datum (lld's LTO default: both).
    pub function_sections: bool,
    pub data_sections: bool,
    /// LLVM's tool-only code generation flags, which lld maps onto
    /// `TargetOptions` (`-plugin-opt=-emulated-tls`, `-debugger-tune=`).
    pub machine: MachineFlags,
    /// `sample-profile=`, `cs-profile-generate`, `cs-profile-path=`.
    pub profile: Profile,
    /// `dwo_dir=`: split DWARF there.
    pub dwo_dir: Option<PathBuf>,
    /// `cache-dir=`: the link cache.
    pub cache_dir: Option<PathBuf>,
    /// `cache-policy=`: its pruning policy (lld's syntax, checked by LLVM).
    pub cache_policy: String,
    /// `disable-verify`: LLVM's ThinLTO does not verify its modules.
    pub disable_verify: bool,
    /// `fat-lto-objects` (`Some(true)`: link fat LTO objects as their
    /// bitcode), `no-fat-lto-objects` (`Some(false)`: as native code);
    /// neither: a fat object is an error.
    pub fat_lto_objects: Option<bool>,
    /// `save-temps`: keep the native objects.
    pub save_temps: bool,
    /// `wpd-report=FILE` (not in the report itself, which is that file).
    #[serde(skip)]
    pub report: Option<PathBuf>,
    /// `wpd-remarks[=passed|missed|all|none]`: which remarks go to stderr.
    pub remarks: Remarks,
    /// `wpd-speculate=off|1|2`: most targets per guarded call (0: off).
    pub speculate: u8,
    /// `wpd-closed-set=off|N`: most targets of a closed-set dispatch (0:
    /// off).
    pub closed_set: u8,
    /// Dead-slot elimination (off with `wpd-no-dead-slots`).
    pub dead_slots: bool,
    /// Validation of the visibility against the native side (off with
    /// `wpd-no-validate`).
    pub validate: bool,
    /// `wpd-known-safe=GLOB` (lld: `--lto-known-safe-vtables=`): vtables
    /// validation never opens.
    pub known_safe: Vec<String>,
    /// `wpd-open=GLOB`: vtables always open.
    pub open: Vec<String>,
    /// `thinlto-index-only` and its companions: index files for clang's own
    /// ThinLTO backends instead of a link.
    pub index_only: ClangIndexes,
}

impl Default for LinkSettings {
    fn default() -> Self {
        LinkSettings {
            opt_level: 2,
            cg_opt_level: None,
            cpu: "x86-64".into(),
            jobs: None,
            whole_program_visibility: false,
            llvm_options: Vec::new(),
            function_sections: true,
            data_sections: true,
            machine: MachineFlags::default(),
            profile: Profile::default(),
            dwo_dir: None,
            cache_dir: None,
            cache_policy: String::new(),
            disable_verify: false,
            fat_lto_objects: None,
            save_temps: false,
            report: None,
            remarks: Remarks::default(),
            speculate: 1,
            closed_set: crate::DEFAULT_CLOSED_SET,
            dead_slots: true,
            validate: true,
            known_safe: Vec::new(),
            open: Vec::new(),
            index_only: ClangIndexes::default(),
        }
    }
}

/// An LTO optimization level as lld and LLVMgold take it: 0 to 3 (both
/// refuse a higher one).
pub fn parse_opt_level(v: &str) -> Option<u8> {
    v.parse::<u8>().ok().filter(|&l| l <= 3)
}

/// Checks an LTO partition count (`--lto-partitions=N`,
/// `-plugin-opt=lto-partitions=N`; `shown` is how the line spelled it).
/// The count splits only regular LTO modules' code generation, which wpd
/// runs as one partition: 1, the default, is what wpd does; 0 is an error
/// in lld too; more than one is refused rather than ignored.
pub fn check_lto_partitions(v: &str, shown: &str) -> Result<()> {
    match v.parse::<u32>() {
        Ok(1) => Ok(()),
        Ok(n) if n > 1 => Err(Error::msg(format!(
            "{shown} is not supported: wpd compiles regular LTO modules as one partition (--lto-partitions=1)"
        ))),
        _ => Err(Error::msg(format!("invalid partition count {shown} (1 or more)"))),
    }
}

/// Plugin options clang 19 passes that wpd refuses, with the clang flag
/// that makes them.
const REFUSED_PLUGIN_OPTIONS: &[(&str, &str)] = &[
    ("opt-remarks-", "from -fsave-optimization-record or -fdiagnostics-show-hotness"),
    ("stats-file=", "from -save-stats"),
];

impl LinkSettings {
    /// Takes one `-plugin-opt=` value (the text after `=`). Every option
    /// clang 19 passes is honoured or refused with an error naming it; none
    /// is dropped silently.
    pub fn plugin_opt(&mut self, v: &str) -> Result<()> {
        let shown = format!("-plugin-opt={v}");
        let text = |value: &str| -> Result<String> {
            if value.is_empty() { Err(Error::msg(format!("{shown} needs a value"))) } else { Ok(value.to_string()) }
        };
        let path = |value: &str| text(value).map(PathBuf::from);
        if let Some(level) = v.strip_prefix('O').filter(|l| l.bytes().all(|b| b.is_ascii_digit())) {
            self.opt_level = parse_opt_level(level)
                .ok_or_else(|| Error::msg(format!("invalid optimization level {shown} (0 to 3)")))?;
        } else if let Some(cpu) = v.strip_prefix("mcpu=") {
            self.cpu = text(cpu)?;
        } else if let Some(j) = v.strip_prefix("jobs=") {
            self.jobs = crate::parse_jobs(j).map_err(|e| Error::msg(format!("{shown}: {e}")))?;
        } else if let Some(n) = v.strip_prefix("lto-partitions=") {
            check_lto_partitions(n, &shown)?;
        } else if v == "thinlto" {
            // "Use ThinLTO": wpd always works on ThinLTO bitcode.
        } else if v == "whole-program-visibility" {
            self.whole_program_visibility = true;
        } else if v == "save-temps" {
            self.save_temps = true;
        } else if v == "disable-verify" {
            self.disable_verify = true;
        } else if v == "fat-lto-objects" {
            self.fat_lto_objects = Some(true);
        } else if v == "no-fat-lto-objects" {
            self.fat_lto_objects = Some(false);
        } else if let Some(dir) = v.strip_prefix("cache-dir=") {
            self.cache_dir = Some(path(dir)?);
        } else if let Some(policy) = v.strip_prefix("cache-policy=") {
            self.set_cache_policy(policy, &shown)?;
        } else if let Some(dir) = v.strip_prefix("dwo_dir=") {
            self.dwo_dir = Some(path(dir)?);
        } else if let Some(file) = v.strip_prefix("sample-profile=") {
            self.profile.sample = Some(path(file)?);
        } else if v == "cs-profile-generate" {
            self.profile.cs_generate = true;
        } else if let Some(file) = v.strip_prefix("cs-profile-path=") {
            self.profile.cs_profile = Some(path(file)?);
        } else if let Some(file) = v.strip_prefix("wpd-report=") {
            self.report = Some(path(file)?);
        } else if v == "wpd-remarks" {
            self.remarks = Remarks::Passed;
        } else if let Some(r) = v.strip_prefix("wpd-remarks=") {
            self.set_remarks(r, &shown)?;
        } else if let Some(s) = v.strip_prefix("wpd-speculate=") {
            self.set_speculate(s, &shown)?;
        } else if let Some(s) = v.strip_prefix("wpd-closed-set=") {
            self.set_closed_set(s, &shown)?;
        } else if v == "wpd-no-dead-slots" {
            self.dead_slots = false;
        } else if v == "wpd-no-validate" {
            self.validate = false;
        } else if let Some(g) = v.strip_prefix("wpd-known-safe=") {
            self.known_safe.push(text(g)?);
        } else if let Some(g) = v.strip_prefix("wpd-open=") {
            self.open.push(text(g)?);
        } else if v == "thinlto-index-only" {
            self.index_only.enabled = true;
        } else if let Some(file) = v.strip_prefix("thinlto-index-only=") {
            self.index_only.enabled = true;
            self.index_only.list = Some(path(file)?);
        } else if v == "thinlto-emit-imports-files" {
            self.index_only.emit_imports = true;
        } else if let Some(r) = v.strip_prefix("thinlto-prefix-replace=") {
            self.index_only.set_prefix_replace(r, &shown)?;
        } else if let Some(r) = v.strip_prefix("thinlto-object-suffix-replace=") {
            self.index_only.set_object_suffix_replace(r, &shown)?;
        } else if let Some(file) = v.strip_prefix("obj-path=") {
            self.index_only.obj_path = Some(path(file)?);
        } else if let Some(rest) = v.strip_prefix('-') {
            self.llvm_option(rest, &shown)?;
        } else if let Some(from) = REFUSED_PLUGIN_OPTIONS.iter().find_map(|(p, from)| v.starts_with(p).then_some(from))
        {
            return Err(Error::msg(format!("plugin option {shown} ({from}) is not supported by wpd")));
        } else {
            return Err(Error::msg(format!("unsupported plugin option {shown}")));
        }
        Ok(())
    }

    /// Takes one LLVM option (`-mllvm OPT`, `-plugin-opt=-OPT`; `shown` is
    /// how the user spelled it). The code generation flags LLVM's tools
    /// register become typed settings, as lld maps them onto
    /// `TargetOptions`; the rest go to LLVM's own option parser, which
    /// refuses options it does not know when the link starts.
    pub fn llvm_option(&mut self, opt: &str, shown: &str) -> Result<()> {
        let opt = opt.trim_start_matches('-');
        let (name, value) = match opt.split_once('=') {
            Some((n, v)) => (n, Some(v)),
            None => (opt, None),
        };
        let flag = |value: Option<&str>| -> Result<bool> {
            match value {
                None | Some("1" | "true" | "TRUE" | "True") => Ok(true),
                Some("0" | "false" | "FALSE" | "False") => Ok(false),
                Some(_) => Err(Error::msg(format!("invalid value in {shown}"))),
            }
        };
        let m = &mut self.machine;
        match name {
            // lld turns -plugin-opt=mcpu= into this very option: the last of
            // the two spellings wins.
            "mcpu" => {
                self.cpu = value
                    .filter(|v| !v.is_empty())
                    .ok_or_else(|| Error::msg(format!("{shown} needs a value")))?
                    .to_string()
            }
            "function-sections" => self.function_sections = flag(value)?,
            "data-sections" => self.data_sections = flag(value)?,
            "emulated-tls" => m.emulated_tls = flag(value)?,
            "enable-tlsdesc" => m.tls_descriptors = flag(value)?,
            "stack-size-section" => m.stack_size_section = flag(value)?,
            "split-machine-functions" => m.split_machine_functions = flag(value)?,
            "enable-jmc-instrument" => m.jmc_instrument = flag(value)?,
            "debugger-tune" => {
                let tuning = value.and_then(DebuggerTuning::from_llvm);
                m.debugger_tuning = Some(
                    tuning.ok_or_else(|| Error::msg(format!("invalid value in {shown} (gdb, lldb, sce or dbx)")))?,
                );
            }
            _ => self.llvm_options.push(format!("-{opt}")),
        }
        Ok(())
    }

    /// `cache-policy=` (lld's `--thinlto-cache-policy=`), checked by LLVM's
    /// own parser now: an invalid policy names the option.
    pub fn set_cache_policy(&mut self, policy: &str, shown: &str) -> Result<()> {
        crate::backends::cache::check_policy(policy).map_err(|e| Error::msg(format!("invalid {shown}: {e}")))?;
        self.cache_policy = policy.to_string();
        Ok(())
    }

    /// `wpd-remarks=WHICH` (`passed`, `missed`, `all`, `none`).
    pub fn set_remarks(&mut self, which: &str, shown: &str) -> Result<()> {
        self.remarks = Remarks::parse(which)
            .ok_or_else(|| Error::msg(format!("invalid {shown} (passed, missed, all or none)")))?;
        Ok(())
    }

    /// `wpd-closed-set=off|N` (N from 2 to 8).
    pub fn set_closed_set(&mut self, value: &str, shown: &str) -> Result<()> {
        self.closed_set =
            crate::parse_closed_set(value).ok_or_else(|| Error::msg(format!("invalid {shown} (off, or 2 to 8)")))?;
        Ok(())
    }

    /// `wpd-speculate=off|1|2`.
    pub fn set_speculate(&mut self, value: &str, shown: &str) -> Result<()> {
        self.speculate =
            crate::parse_speculate(value).ok_or_else(|| Error::msg(format!("invalid {shown} (off, 1 or 2)")))?;
        Ok(())
    }

    /// The backends' code generation options for `output`.
    pub fn codegen(&self, output: &Output) -> CodegenOptions {
        CodegenOptions {
            opt_level: self.opt_level,
            cg_opt_level: self.cg_opt_level,
            cpu: self.cpu.clone(),
            verify: false,
            lto_verify: !self.disable_verify,
            sections: wpd_llvm::Sections { functions: self.function_sections, data: self.data_sections },
            machine: self.machine.clone(),
            profile: self.profile.clone(),
            dwo_dir: self.dwo_dir.clone(),
            split_dwarf_file: None,
            reloc: if output.relocatable {
                wpd_llvm::LtoReloc::Module
            } else if output.pic || output.shared {
                wpd_llvm::LtoReloc::Pic
            } else {
                wpd_llvm::LtoReloc::Static
            },
        }
    }

    /// The link's policy: the promise, what the link model says the
    /// output exports, binds and keeps, and the validation against the
    /// native side (`native`, and why it is not fully known if it is not).
    pub fn policy(&self, model: &LinkModel, native: &NativeScan, output: &Output) -> Policy {
        let unknown = match &model.outside_refs {
            OutsideRefs::Known(_) => None,
            OutsideRefs::Unknown(reason) => Some(reason.clone()),
        };
        let facts = LinkFacts {
            shared: output.shared,
            export_dynamic: output.export_dynamic,
            partial_export: output.partial_export,
            exported: Some(model.exported.clone()),
            external_refs: model.outside_refs.known().cloned(),
            preemptible: Some(model.preemptible.clone()),
            kept_elsewhere: model.kept_elsewhere(),
            undefined: model.unresolved.clone(),
        };
        self.policy_with(facts, native, unknown, output)
    }

    /// The policy of a thin link that has the summaries and no link model
    /// (`wpd thin-link`): `outside_refs` are every reference from outside
    /// the bitcode when the user listed them all. Without a model, every
    /// exported default-visibility definition of a shared output may be
    /// preempted, and every bitcode definition is the one the link keeps.
    pub fn policy_without_model(
        &self,
        native: &NativeScan,
        outside_refs: Option<BTreeSet<String>>,
        output: &Output,
    ) -> Policy {
        let facts = LinkFacts {
            shared: output.shared,
            export_dynamic: output.export_dynamic,
            partial_export: output.partial_export,
            exported: None,
            external_refs: outside_refs,
            preemptible: None,
            kept_elsewhere: Default::default(),
            undefined: Default::default(),
        };
        self.policy_with(facts, native, None, output)
    }

    fn policy_with(&self, facts: LinkFacts, native: &NativeScan, unknown: Option<String>, output: &Output) -> Policy {
        let mut validation = Validation::from_native(native, unknown);
        // A relocatable output is linked again later, with classes wpd
        // cannot see: nothing about its hierarchies or references is final.
        validation.always = output.relocatable;
        validation.enabled = self.validate;
        validation.known_safe = self.known_safe.clone();
        validation.force_open = self.open.clone();
        Policy {
            whole_program_visibility: self.whole_program_visibility,
            facts,
            validation,
            speculate: self.speculate,
            closed_set: self.closed_set,
            dead_slots: self.dead_slots,
        }
    }
}

/// What the link makes, as the policy and code generation need it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Output {
    /// `-shared`.
    pub shared: bool,
    /// `-r`.
    pub relocatable: bool,
    /// Position-independent code (`-pie`).
    pub pic: bool,
    /// `-E`/`--export-dynamic`: every definition is exported.
    pub export_dynamic: bool,
    /// Some definitions are exported (`--dynamic-list`,
    /// `--export-dynamic-symbol`, ...): the policy records the link as
    /// exporting (conservative); LLVM's resolutions say exactly which.
    pub partial_export: bool,
}

impl Output {
    /// LLVM's view of the output, for the symbol resolutions.
    pub fn lto(&self) -> wpd_link::lto::OutputKind {
        wpd_link::lto::OutputKind {
            shared: self.shared,
            relocatable: self.relocatable,
            export_dynamic: self.export_dynamic,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn take(opts: &[&str]) -> Result<LinkSettings> {
        let mut s = LinkSettings::default();
        for o in opts {
            s.plugin_opt(o)?;
        }
        Ok(s)
    }

    #[test]
    fn clang_and_wpd_options() {
        let s =
            take(&["O3", "mcpu=znver3", "jobs=3", "thinlto", "whole-program-visibility", "wpd-report=r.json"]).unwrap();
        assert_eq!((s.opt_level, s.cpu.as_str(), s.jobs), (3, "znver3", Some(3)));
        assert!(s.whole_program_visibility);
        assert_eq!(s.report, Some(PathBuf::from("r.json")));
        let s = take(&["wpd-speculate=off", "-x86-asm-syntax=intel", "--mcpu=haswell"]).unwrap();
        assert_eq!((s.speculate, s.llvm_options.as_slice()), (0, &["-x86-asm-syntax=intel".to_string()][..]));
        assert_eq!(s.cpu, "haswell");
        let s =
            take(&["-function-sections=0", "--data-sections=false", "fat-lto-objects", "-debugger-tune=gdb"]).unwrap();
        assert!(!s.function_sections && !s.data_sections && s.fat_lto_objects == Some(true));
        assert_eq!(s.machine.debugger_tuning, Some(DebuggerTuning::Gdb));
        assert!(s.llvm_options.is_empty(), "code generation flags are settings, not LLVM options");
        let s = take(&["-function-sections"]).unwrap();
        assert!(s.function_sections);
        assert_eq!(take(&["jobs=0"]).unwrap().jobs, None, "clang's -flto-jobs=0: the default");
        assert_eq!(take(&["jobs="]).unwrap().jobs, None);
        for bad in [
            "-function-sections=2",
            "wpd-bogus",
            "jobs=x",
            "jobs=-1",
            "O4",
            "O",
            "wpd-speculate=3",
            "wpd-report=",
            "stats-file=x",
        ] {
            let e = take(&[bad]).unwrap_err();
            assert!(e.to_string().contains(bad.split('=').next().unwrap()), "{bad}: {e}");
        }
        assert!(take(&["opt-remarks-filename=x"]).unwrap_err().to_string().contains("-fsave-optimization-record"));
    }
}
