//! JUnit XML for CI dashboards: one `<testcase>` per seed (classname = the
//! configuration, name = `seed N`), a `<failure>` for a mismatch with the
//! report and the paths of its repro and minimal program, an `<error>` for
//! the seed at which an infrastructure error stopped the campaign; made
//! from the records (`results::CampaignFile`), as `--json` is.

use crate::regress::results::{CampaignFile, SeedRecord, SeedVerdict};
use crate::triage::shrink::ProgramSize;
use std::fmt::Write;

/// The whole document, made from a report's records.
pub fn render(report: &CampaignFile) -> String {
    let config = report.config.as_str();
    let s = &report.summary;
    // An error before any seed (no DUT) has no record: it is a testcase
    // of its own.
    let unrecorded_error = s
        .stopped
        .as_ref()
        .filter(|e| !report.results.iter().any(|r| r.seed == e.seed));
    let errors = s.errors + u64::from(unrecorded_error.is_some());
    let failures = s.mismatched + s.timeouts;
    let tests = report.results.len() as u64 + u64::from(unrecorded_error.is_some());
    let mut x = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        x,
        "<testsuites name=\"pccx-cosim\" tests=\"{tests}\" failures=\"{failures}\" \
         errors=\"{errors}\" time=\"{:.3}\">",
        s.wall_seconds
    );
    let _ = writeln!(
        x,
        "  <testsuite name=\"{}\" tests=\"{tests}\" failures=\"{failures}\" errors=\"{errors}\" \
         skipped=\"0\" time=\"{:.3}\">",
        escape(&format!("pccx-cosim {config}")),
        s.wall_seconds
    );
    let _ = writeln!(x, "    <properties>");
    let mut properties = vec![
        ("config", config.to_string()),
        ("reference", report.reference.clone()),
        ("dut", report.dut.clone()),
        ("first_seed", report.first_seed.to_string()),
        ("count", report.count.to_string()),
        ("instrs", report.instrs.to_string()),
    ];
    if let Some(shard) = &report.shard {
        properties.push(("shard", shard.clone()));
    }
    if !report.missing_seeds.is_empty() {
        properties.push(("missing_seeds", report.missing_seeds.len().to_string()));
    }
    if report.interrupted {
        properties.push(("interrupted", "true".into()));
    }
    for (name, value) in properties {
        let _ = writeln!(
            x,
            "      <property name=\"{}\" value=\"{}\"/>",
            escape(name),
            escape(&value)
        );
    }
    let _ = writeln!(x, "    </properties>");
    for r in &report.results {
        testcase(&mut x, config, r);
    }
    if let Some(e) = unrecorded_error {
        let _ = writeln!(
            x,
            "    <testcase classname=\"{}\" name=\"seed {}\" time=\"0.000\">\n      \
             <error message=\"{}\" type=\"infrastructure\">{}</error>\n    </testcase>",
            escape(config),
            e.seed,
            escape(&e.error),
            escape_text(&format!(
                "the campaign stopped at seed {} by an infrastructure error: {}",
                e.seed, e.error
            ))
        );
    }
    x.push_str("  </testsuite>\n</testsuites>\n");
    x
}

fn testcase(x: &mut String, config: &str, r: &SeedRecord) {
    let open = format!(
        "    <testcase classname=\"{}\" name=\"seed {}\" time=\"{:.3}\"",
        escape(config),
        r.seed,
        r.wall_seconds
    );
    let message = r.error.clone().unwrap_or_default();
    let (element, kind, mut body) = match (r.verdict, &r.mismatch) {
        (SeedVerdict::Match, _) => {
            let _ = writeln!(x, "{open}/>");
            return;
        }
        (SeedVerdict::Mismatch, Some(m)) => (
            "failure",
            r.signature
                .as_ref()
                .map(|s| s.text.clone())
                .unwrap_or_default(),
            m.to_string(),
        ),
        (SeedVerdict::Timeout, _) => ("failure", "timeout".to_string(), message.clone()),
        _ => (
            "error",
            "infrastructure".to_string(),
            format!(
                "the campaign stopped at seed {} by an infrastructure error: {message}",
                r.seed
            ),
        ),
    };
    if let Some(a) = &r.artefacts {
        if let Some(p) = &a.repro {
            let _ = write!(body, "\nrepro: {p}");
            let _ = write!(body, "\nreplay: pccx-cosim replay {p}");
        }
        if let Some(p) = &a.min_asm {
            let _ = write!(body, "\nmin.asm: {p}");
        }
        if let Some(s) = &a.shrink {
            let size = |instructions, items| ProgramSize {
                instructions,
                items,
            };
            let _ = write!(
                body,
                "\nshrunk: {} -> {} in {} runs",
                size(s.before_instructions, s.before_items),
                size(s.after_instructions, s.after_items),
                s.runs
            );
        }
        for problem in &a.problems {
            let _ = write!(body, "\nnote: {problem}");
        }
    }
    let headline = r.outcome();
    let _ = writeln!(
        x,
        "{open}>\n      <{element} message=\"{}\" type=\"{}\">{}</{element}>\n    </testcase>",
        escape(&headline),
        escape(&kind),
        escape_text(&body)
    );
}

/// Text made safe for an XML 1.0 attribute value: the five markup
/// characters as entities, tabs and line breaks as character references (an
/// XML reader would turn them into spaces otherwise), and the control
/// characters XML 1.0 forbids, even as references, shown as `\xNN`.
pub fn escape(s: &str) -> String {
    escape_with(s, true)
}

/// [`escape`] for element content, where line breaks and tabs stay as
/// they are (a report reads better that way).
pub fn escape_text(s: &str) -> String {
    escape_with(s, false)
}

fn escape_with(s: &str, attribute: bool) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\n' | '\t' if !attribute => out.push(c),
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\n' => out.push_str("&#10;"),
            '\r' => out.push_str("&#13;"),
            '\t' => out.push_str("&#9;"),
            c if (c as u32) < 0x20 || c == '\u{FFFE}' || c == '\u{FFFF}' => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markup_and_forbidden_characters_are_escaped() {
        assert_eq!(
            escape("a<b & \"c\" 'd'>\n\x01\u{FFFF}é"),
            "a&lt;b &amp; &quot;c&quot; &apos;d&apos;&gt;&#10;\\x01\\xffffé"
        );
        assert_eq!(escape("plain text"), "plain text");
        assert_eq!(escape_text("a\n\tb & <c>\r"), "a\n\tb &amp; &lt;c&gt;&#13;");
    }
}
