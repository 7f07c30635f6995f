//! Finding files as the linker finds them: `-l` through the `-L` paths
//! (`=` and `$SYSROOT` prefixes relative to `--sysroot`), and the files a
//! linker script names (lld's `ScriptParser::addFile` order).

use super::source::Source;
use std::path::{Path, PathBuf};

/// The library search paths and sysroot of a link.
pub struct Search<'a> {
    pub lib_paths: Vec<String>,
    pub sysroot: Option<&'a str>,
}

impl Search<'_> {
    /// `=dir` and `$SYSROOT/dir` are relative to the sysroot.
    fn dir(&self, dir: &str) -> PathBuf {
        let rest = dir.strip_prefix('=').or_else(|| dir.strip_prefix("$SYSROOT"));
        match (rest, self.sysroot) {
            (Some(r), Some(root)) => Path::new(root).join(r.trim_start_matches('/')),
            (Some(r), None) => PathBuf::from(r),
            (None, _) => PathBuf::from(dir),
        }
    }

    /// `-l<spec>`: per directory, `lib<spec>.so` then `lib<spec>.a` (only
    /// the archive under `-Bstatic`); `-l:<file>` looks for the file name.
    pub fn library(&self, source: &dyn Source, spec: &str, static_only: bool) -> Option<PathBuf> {
        let names: Vec<String> = match spec.strip_prefix(':') {
            Some(exact) => vec![exact.to_string()],
            None if static_only => vec![format!("lib{spec}.a")],
            None => vec![format!("lib{spec}.so"), format!("lib{spec}.a")],
        };
        for dir in &self.lib_paths {
            let dir = self.dir(dir);
            for n in &names {
                let p = dir.join(n);
                if source.is_file(&p) {
                    return Some(p);
                }
            }
        }
        None
    }

    /// A file a linker script names: an absolute path (under the sysroot
    /// when the script is), `=path` relative to the sysroot, a path relative
    /// to the script's directory, then to the working directory, then
    /// through the `-L` paths.
    pub fn script_file(&self, source: &dyn Source, script: &Path, name: &str) -> Option<PathBuf> {
        if name.starts_with('/') {
            if let Some(root) = self.sysroot
                && script.starts_with(root)
            {
                let p = Path::new(root).join(name.trim_start_matches('/'));
                if source.is_file(&p) {
                    return Some(p);
                }
            }
            return Some(PathBuf::from(name));
        }
        if let Some(rest) = name.strip_prefix('=') {
            return Some(match self.sysroot {
                Some(root) => Path::new(root).join(rest.trim_start_matches('/')),
                None => PathBuf::from(rest),
            });
        }
        if let Some(dir) = script.parent().filter(|d| !d.as_os_str().is_empty()) {
            let p = dir.join(name);
            if source.is_file(&p) {
                return Some(p);
            }
        }
        if source.is_file(Path::new(name)) {
            return Some(PathBuf::from(name));
        }
        self.library(source, &format!(":{name}"), false)
    }
}
