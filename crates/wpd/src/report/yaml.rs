//! LLVM's optimization-record YAML (`-fsave-optimization-record`), so that
//! `llvm-opt-report` and opt-viewer read wpd's remarks: one `!Passed` record
//! per call wpd rewrote, one `!Missed` per call left indirect (with its
//! reason), pass `wholeprogramdevirt` as LLVM's own pass is named.

use std::fmt::Write;

/// One remark.
pub struct Record<'a> {
    pub passed: bool,
    /// `file:line:col`, when the call has a debug location.
    pub location: Option<&'a str>,
    /// The mangled function containing the call.
    pub function: &'a str,
    pub message: String,
}

/// YAML single-quoted scalar.
fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

/// Splits `file:line:col` (the file may contain ':').
fn split_location(loc: &str) -> Option<(&str, u32, u32)> {
    let (rest, col) = loc.rsplit_once(':')?;
    let (file, line) = rest.rsplit_once(':')?;
    Some((file, line.parse().ok()?, col.parse().ok()?))
}

/// The records as one YAML stream.
pub fn write(records: &[Record<'_>]) -> String {
    let mut o = String::new();
    for r in records {
        let _ = writeln!(o, "--- !{}", if r.passed { "Passed" } else { "Missed" });
        let _ = writeln!(o, "Pass:            wholeprogramdevirt");
        let _ = writeln!(o, "Name:            {}", if r.passed { "Devirtualized" } else { "NotDevirtualized" });
        if let Some((file, line, col)) = r.location.and_then(split_location) {
            let _ = writeln!(o, "DebugLoc:        {{ File: {}, Line: {line}, Column: {col} }}", quote(file));
        }
        let _ = writeln!(o, "Function:        {}", quote(r.function));
        let _ = writeln!(o, "Args:");
        let _ = writeln!(o, "  - String:          {}", quote(&r.message));
        let _ = writeln!(o, "...");
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records() {
        let y = write(&[Record {
            passed: true,
            location: Some("a/b.cpp:12:7"),
            function: "main",
            message: "it's done".into(),
        }]);
        assert!(y.starts_with("--- !Passed\nPass:            wholeprogramdevirt\n"));
        assert!(y.contains("DebugLoc:        { File: 'a/b.cpp', Line: 12, Column: 7 }"));
        assert!(y.contains("'it''s done'"));
        assert_eq!(split_location("c:/x.cpp:3:4"), Some(("c:/x.cpp", 3, 4)));
        assert_eq!(split_location("nowhere"), None);
    }
}
