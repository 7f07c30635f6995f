//! The plugin's options (`-plugin-opt=…`, which the linker hands to
//! `onload` one by one): the ones clang passes to `LLVMgold.so`, and wpd's
//! own (`wpd-…`). An option the plugin does not know is an error naming it.

use std::path::PathBuf;
use wpd::report::Remarks;

/// What the options ask for.
#[derive(Clone, Debug)]
pub struct Options {
    pub opt_level: u8,
    pub cpu: String,
    pub jobs: Option<usize>,
    /// `whole-program-visibility`: the user's promise, as lld's
    /// `--lto-whole-program-visibility`.
    pub whole_program_visibility: bool,
    /// `save-temps`: keep the native objects (their folder is printed).
    pub save_temps: bool,
    /// `-<llvm option>`: LLVM's own options.
    pub llvm_options: Vec<String>,
    pub dwo_dir: Option<PathBuf>,
    pub sample_profile: Option<PathBuf>,
    pub cs_profile: Option<PathBuf>,
    pub cs_generate: bool,
    /// `wpd-report=FILE`.
    pub report: Option<PathBuf>,
    /// `wpd-remarks[=passed|missed|all]`.
    pub remarks: Remarks,
    /// `wpd-speculate=off|1|2`.
    pub speculate: u8,
    /// `wpd-no-validate`: trust the visibility as LLVM does.
    pub validate: bool,
    pub known_safe: Vec<String>,
    pub open: Vec<String>,
    /// `fat-lto-objects` (`Some(true)`: claim fat LTO objects as their
    /// bitcode) and `no-fat-lto-objects` (`Some(false)`: leave them to the
    /// linker as native objects); neither: a fat object is an error.
    pub fat_lto_objects: Option<bool>,
    /// `-function-sections[=0|1]`, `-data-sections[=0|1]`: one section per
    /// function / data object (LLVMgold's and lld's default: on).
    pub function_sections: bool,
    pub data_sections: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            opt_level: 2,
            cpu: "x86-64".into(),
            jobs: None,
            whole_program_visibility: false,
            save_temps: false,
            llvm_options: Vec::new(),
            dwo_dir: None,
            sample_profile: None,
            cs_profile: None,
            cs_generate: false,
            report: None,
            remarks: Remarks::default(),
            speculate: 1,
            validate: true,
            known_safe: Vec::new(),
            open: Vec::new(),
            fat_lto_objects: None,
            function_sections: true,
            data_sections: true,
        }
    }
}

impl Options {
    /// Takes one option (the text after `-plugin-opt=`).
    pub fn take(&mut self, opt: &str) -> Result<(), String> {
        let value = |v: &str| -> Result<String, String> {
            if v.is_empty() { Err(format!("plugin option {opt} needs a value")) } else { Ok(v.to_string()) }
        };
        if let Some(level) = opt.strip_prefix('O').and_then(|l| l.parse::<u8>().ok()) {
            self.opt_level = level.min(3);
        } else if let Some(cpu) = opt.trim_start_matches('-').strip_prefix("mcpu=") {
            // `mcpu=` and LLVM's `-mcpu=` are one setting, the last one
            // winning (as wpd-ld and lld read them): the backends compile
            // for `self.cpu`, never for LLVM's own `-mcpu` option.
            self.cpu = value(cpu)?;
        } else if let Some(j) = opt.strip_prefix("jobs=") {
            self.jobs = Some(wpd::parse_jobs(j).map_err(|e| format!("invalid plugin option {opt}: {e}"))?);
        } else if opt == "thinlto" {
            // "Use ThinLTO": wpd always compiles through LLVM's ThinLTO.
        } else if opt == "whole-program-visibility" {
            self.whole_program_visibility = true;
        } else if opt == "save-temps" {
            self.save_temps = true;
        } else if let Some(d) = opt.strip_prefix("dwo_dir=") {
            self.dwo_dir = Some(PathBuf::from(value(d)?));
        } else if let Some(f) = opt.strip_prefix("sample-profile=") {
            self.sample_profile = Some(PathBuf::from(value(f)?));
        } else if opt == "cs-profile-generate" {
            self.cs_generate = true;
        } else if let Some(f) = opt.strip_prefix("cs-profile-path=") {
            self.cs_profile = Some(PathBuf::from(value(f)?));
        } else if let Some(f) = opt.strip_prefix("wpd-report=") {
            self.report = Some(PathBuf::from(value(f)?));
        } else if opt == "wpd-remarks" {
            self.remarks = Remarks::Passed;
        } else if let Some(r) = opt.strip_prefix("wpd-remarks=") {
            self.remarks = Remarks::parse(r)
                .ok_or_else(|| format!("invalid plugin option {opt} (passed, missed, all or none)"))?;
        } else if let Some(s) = opt.strip_prefix("wpd-speculate=") {
            self.speculate =
                wpd::parse_speculate(s).ok_or_else(|| format!("invalid plugin option {opt} (off, 1 or 2)"))?;
        } else if opt == "wpd-no-validate" {
            self.validate = false;
        } else if let Some(g) = opt.strip_prefix("wpd-known-safe=") {
            self.known_safe.push(value(g)?);
        } else if let Some(g) = opt.strip_prefix("wpd-open=") {
            self.open.push(value(g)?);
        } else if opt == "fat-lto-objects" {
            self.fat_lto_objects = Some(true);
        } else if opt == "no-fat-lto-objects" {
            self.fat_lto_objects = Some(false);
        } else if let Some((sections, on)) = section_option(opt)? {
            match sections {
                "function-sections" => self.function_sections = on,
                _ => self.data_sections = on,
            }
        } else if let Some(llvm) = opt.strip_prefix('-') {
            // LLVM's parser checks these when the link runs (all at once).
            self.llvm_options.push(format!("-{}", llvm.trim_start_matches('-')));
        } else {
            return Err(format!("unsupported plugin option {opt}"));
        }
        Ok(())
    }
}

/// `-function-sections` or `-data-sections` (any number of leading dashes,
/// `=1`/`=true` or `=0`/`=false`), which become code generation options
/// as lld maps them, not LLVM options: the option's name and value.
fn section_option(opt: &str) -> Result<Option<(&str, bool)>, String> {
    let body = opt.trim_start_matches('-');
    let (name, value) = body.split_once('=').map_or((body, None), |(n, v)| (n, Some(v)));
    if !opt.starts_with('-') || !matches!(name, "function-sections" | "data-sections") {
        return Ok(None);
    }
    let on = match value {
        None | Some("1" | "true" | "TRUE" | "True") => true,
        Some("0" | "false" | "FALSE" | "False") => false,
        Some(_) => return Err(format!("invalid value in plugin option {opt}")),
    };
    Ok(Some((name, on)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clang_and_wpd_options() {
        let mut o = Options::default();
        for opt in ["O3", "mcpu=znver3", "jobs=3", "thinlto", "whole-program-visibility", "wpd-report=r.json"] {
            o.take(opt).unwrap();
        }
        assert_eq!((o.opt_level, o.cpu.as_str(), o.jobs), (3, "znver3", Some(3)));
        assert!(o.whole_program_visibility);
        assert_eq!(o.report, Some(PathBuf::from("r.json")));
        o.take("wpd-speculate=off").unwrap();
        o.take("-x86-asm-syntax=intel").unwrap();
        assert_eq!((o.speculate, o.llvm_options.as_slice()), (0, &["-x86-asm-syntax=intel".to_string()][..]));
        o.take("--mcpu=haswell").unwrap();
        assert_eq!((o.cpu.as_str(), o.llvm_options.len()), ("haswell", 1));
        assert!(o.function_sections && o.data_sections && o.fat_lto_objects.is_none());
        for opt in ["-function-sections=0", "--data-sections=false", "fat-lto-objects"] {
            o.take(opt).unwrap();
        }
        assert!(!o.function_sections && !o.data_sections && o.fat_lto_objects == Some(true));
        assert_eq!(o.llvm_options.len(), 1, "section options are not LLVM options");
        o.take("-function-sections").unwrap();
        assert!(o.function_sections);
        for bad in [
            "-function-sections=2",
            "wpd-bogus",
            "cache-dir=x",
            "jobs=0",
            "wpd-speculate=3",
            "wpd-report=",
            "opt-remarks-filename=x",
        ] {
            assert!(Options::default().take(bad).unwrap_err().contains(bad.split('=').next().unwrap()), "{bad}");
        }
    }
}
