//! What the link reads again after LLVM's backends, put away while they
//! run.
//!
//! After the rewrite, nothing reads the summaries or the rewrite's call
//! outcomes until the backends are done (the report, remarks and the
//! plan-vs-backend check read them then). Held as values they were the
//! largest things wpd kept through the backends: glslang's summaries
//! 9.9 MB and its 12,802 call outcomes 4.2 MB of the 139 MB heap at the
//! link's peak (heaptrack). Encoded they take a few times less. [`Shelf::put`]
//! encodes them and frees the values, [`Shelf::take`] decodes them
//! again; the round trip gives equal values (`shelved_records_come_back_equal`),
//! so everything made from them afterwards is what it would have been.

use crate::error::{Error, Result};
use crate::rewrite::CallOutcome;
use std::path::Path;
use wpd_summary::ModuleSummary;
use wpd_summary::container::{self, Kind};

/// What the link keeps for after the backends, in link order: each
/// module's summary and what the rewrite did to its call sites
/// ([`crate::rewrite::BackendStats::calls`]).
#[derive(Debug, Default, PartialEq)]
pub struct Kept {
    pub summaries: Vec<ModuleSummary>,
    pub calls: Vec<Vec<CallOutcome>>,
}

/// [`Kept`], encoded: each summary as the `.wpds` file `wpd summarize`
/// writes, each module's call outcomes as bincode.
pub struct Shelf {
    summaries: Vec<Vec<u8>>,
    calls: Vec<Vec<u8>>,
}

fn config() -> impl bincode::config::Config {
    bincode::config::standard()
}

impl Shelf {
    /// Encodes `kept` and drops it.
    pub fn put(kept: Kept) -> Result<Shelf> {
        let Kept { summaries, calls } = kept;
        let mut shelf =
            Shelf { summaries: Vec::with_capacity(summaries.len()), calls: Vec::with_capacity(calls.len()) };
        for s in summaries {
            let bytes = container::encode(Kind::Summary, &s).map_err(|e| e.context(&s.module.name))?;
            shelf.summaries.push(bytes);
        }
        for c in calls {
            let bytes = bincode::serde::encode_to_vec(&c, config())
                .map_err(|e| Error::msg(format!("cannot encode the call outcomes: {e}")))?;
            shelf.calls.push(bytes);
        }
        Ok(shelf)
    }

    /// What [`Shelf::put`] was given.
    pub fn take(self) -> Result<Kept> {
        let broken = |k: usize, what: &str, e: String| Error::msg(format!("{what} {k} did not decode as encoded: {e}"));
        let summaries = self
            .summaries
            .into_iter()
            .enumerate()
            .map(|(k, bytes)| {
                container::decode::<ModuleSummary>(Kind::Summary, &bytes, Path::new("<shelved summary>"))
                    .map_err(|e| broken(k, "summary", e.what))
            })
            .collect::<Result<_>>()?;
        let calls = self
            .calls
            .into_iter()
            .enumerate()
            .map(|(k, bytes)| {
                let (calls, _) = bincode::serde::decode_from_slice(&bytes, config())
                    .map_err(|e| broken(k, "call outcomes of module", e.to_string()))?;
                Ok(calls)
            })
            .collect::<Result<_>>()?;
        Ok(Kept { summaries, calls })
    }

    /// The bytes held (measured for docs/performance.md).
    #[cfg(test)]
    pub fn len_bytes(&self) -> usize {
        self.summaries.iter().chain(&self.calls).map(Vec::len).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::{Kept, Shelf};
    use crate::backends::{Outcome, rewrite_to_bitcode};
    use wpd_summary::ModuleIdx;

    /// A real module's summary and call outcomes (one devirtualized call,
    /// one left indirect) come off the shelf equal to what went on.
    #[test]
    fn shelved_records_come_back_equal() {
        let dir = tempfile::tempdir().unwrap();
        let (_, input) = crate::test_support::thin_module(
            dir.path(),
            "shapes.o",
            "#include <cstdio>\n\
             struct Shape { virtual const char *name() const = 0; virtual int sides() const = 0; virtual ~Shape() {} };\n\
             struct Square : Shape { const char *name() const override { return \"square\"; } int sides() const override { return 4; } };\n\
             struct Line : Shape { const char *name() const override { return \"line\"; } int sides() const override { return 1; } };\n\
             struct Only { virtual int v() const { return 7; } virtual ~Only() {} };\n\
             __attribute__((noinline)) void show(const Shape &s) { std::printf(\"%s %d\\n\", s.name(), s.sides()); }\n\
             __attribute__((noinline)) int only(const Only &o) { return o.v(); }\n\
             int main(int argc, char **) { Square q; Line l; Only o;\n\
               show(argc > 1 ? static_cast<const Shape &>(l) : q); return only(o); }\n",
        );
        let summary = crate::summarize::summarize(&input).unwrap();
        let policy = crate::policy::Policy { whole_program_visibility: true, ..Default::default() };
        let plan = crate::thin_link(std::slice::from_ref(&summary), &policy);
        let rewritten = rewrite_to_bitcode(&input, &summary, &plan, ModuleIdx::new(0), true, false).unwrap();
        let calls = rewritten.stats.calls;
        assert!(calls.iter().any(|c| c.outcome == Outcome::SingleImpl), "{calls:?}");
        assert!(calls.iter().any(|c| c.outcome != Outcome::SingleImpl), "{calls:?}");
        let kept = Kept { summaries: vec![summary.clone(), summary], calls: vec![calls.clone(), Vec::new()] };
        let want = Kept { summaries: kept.summaries.clone(), calls: kept.calls.clone() };
        let shelf = Shelf::put(kept).unwrap();
        assert!(shelf.len_bytes() > 0);
        assert_eq!(shelf.take().unwrap(), want);
    }
}
