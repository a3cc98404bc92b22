//! JUnit XML for CI dashboards: one `<testcase>` per seed (classname = the
//! configuration, name = `seed N`), a `<failure>` for a mismatch with the
//! report and the paths of its repro and minimal program, an `<error>` for
//! the seed at which an infrastructure error stopped the campaign.

use crate::regress::campaign::{CampaignReport, SeedResult};
use std::fmt::Write;

/// The whole document.
pub fn render(report: &CampaignReport) -> String {
    let config = report.options.config.name;
    let s = &report.summary;
    let errors = usize::from(s.stopped.is_some());
    let tests = report.results.len() + errors;
    let mut x = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        x,
        "<testsuites name=\"pccx-cosim\" tests=\"{tests}\" failures=\"{}\" errors=\"{errors}\" \
         time=\"{:.3}\">",
        s.mismatched,
        s.wall.as_secs_f64()
    );
    let _ = writeln!(
        x,
        "  <testsuite name=\"{}\" tests=\"{tests}\" failures=\"{}\" errors=\"{errors}\" \
         skipped=\"0\" time=\"{:.3}\">",
        escape(&format!("pccx-cosim {config}")),
        s.mismatched,
        s.wall.as_secs_f64()
    );
    let _ = writeln!(x, "    <properties>");
    for (name, value) in [
        ("config", config.to_string()),
        ("reference", report.reference_model.clone()),
        ("dut", report.dut_model.clone()),
        ("first_seed", report.options.first_seed.to_string()),
        ("count", report.options.count.to_string()),
        ("instrs", report.options.instrs.to_string()),
    ] {
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
    if let Some(e) = &s.stopped {
        let _ = writeln!(
            x,
            "    <testcase classname=\"{}\" name=\"seed {}\" time=\"0.000\">\n      \
             <error message=\"{}\" type=\"infrastructure\">{}</error>\n    </testcase>",
            escape(config),
            e.seed,
            escape(&e.message),
            escape_text(&format!(
                "the campaign stopped at seed {} by an infrastructure error: {}",
                e.seed, e.message
            ))
        );
    }
    x.push_str("  </testsuite>\n</testsuites>\n");
    x
}

fn testcase(x: &mut String, config: &str, r: &SeedResult) {
    let open = format!(
        "    <testcase classname=\"{}\" name=\"seed {}\" time=\"{:.3}\"",
        escape(config),
        r.seed,
        r.wall.as_secs_f64()
    );
    let Some(m) = &r.mismatch else {
        let _ = writeln!(x, "{open}/>");
        return;
    };
    let mut body = m.to_string();
    let a = &r.artefacts;
    if let Some(p) = &a.repro {
        let _ = write!(body, "\nrepro: {}", p.display());
        let _ = write!(body, "\nreplay: pccx-cosim replay {}", p.display());
    }
    if let Some(p) = &a.min_asm {
        let _ = write!(body, "\nmin.asm: {}", p.display());
    }
    if let Some((before, after, runs)) = a.shrink {
        let _ = write!(body, "\nshrunk: {before} -> {after} in {runs} runs");
    }
    for problem in &a.problems {
        let _ = write!(body, "\nnote: {problem}");
    }
    let signature = r.signature().map(|s| s.to_string()).unwrap_or_default();
    let at = m.seq.map(|s| format!(" at seq {s}")).unwrap_or_default();
    let _ = writeln!(
        x,
        "{open}>\n      <failure message=\"{}\" type=\"{}\">{}</failure>\n    </testcase>",
        escape(&format!("MISMATCH {}{at}: {}", m.kind, m.detail())),
        escape(&signature),
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
