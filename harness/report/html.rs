//! The page's building blocks: escaping, links between files, tables, and
//! the one stylesheet; everything that comes from a file passes through
//! [`esc`] or [`Link`] before it reaches the page.

use std::fmt::Write as _;
use std::path::{Component, Path, PathBuf};

/// Text made safe for an HTML element's content or a quoted attribute:
/// the five characters that can end either are replaced by references.
pub fn esc(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// A file the page links to, as found on disk.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Link {
    /// The file exists: the page links to it by `href`, relative to the
    /// page's own directory, and shows `shown`.
    Found { href: String, shown: String },
    /// The file named by a record is not there (moved, or never written).
    Missing { shown: String },
}

impl Link {
    /// A link from a page in `page_dir` to the first of `candidates` that
    /// exists; `shown` is the path as the record gave it.
    pub fn to_first(page_dir: &Path, shown: &str, candidates: &[PathBuf]) -> Link {
        match candidates.iter().find(|p| p.is_file()) {
            Some(found) => Link::Found {
                href: relative_href(page_dir, found),
                shown: shown.to_string(),
            },
            None => Link::Missing {
                shown: shown.to_string(),
            },
        }
    }

    /// The link as HTML: an anchor, or the path marked missing.
    pub fn html(&self) -> String {
        match self {
            Link::Found { href, shown } => {
                format!("<a href=\"{}\">{}</a>", esc(href), esc(shown))
            }
            Link::Missing { shown } => format!(
                "<span class=\"missing\" title=\"not found on disk\">{} (missing)</span>",
                esc(shown)
            ),
        }
    }
}

/// The URL of `target` relative to the directory `from`, each component
/// percent-encoded and the whole starting with `./` or `../`, so that no
/// file name can read as a scheme (`javascript:`) or a query.
pub fn relative_href(from: &Path, target: &Path) -> String {
    let abs = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| absolute(p));
    let (from, target) = (abs(from), abs(target));
    let from: Vec<Component> = from.components().collect();
    let to: Vec<Component> = target.components().collect();
    let common = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
    let mut parts: Vec<String> = vec![".".into()];
    parts.extend(std::iter::repeat_n("..".to_string(), from.len() - common));
    if parts.len() > 1 {
        parts.remove(0);
    }
    parts.extend(
        to[common..]
            .iter()
            .map(|c| percent_encode(&c.as_os_str().to_string_lossy())),
    );
    parts.join("/")
}

fn absolute(p: &Path) -> PathBuf {
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        std::env::current_dir().unwrap_or_default().join(p)
    }
}

/// A path component with everything but unreserved characters encoded.
fn percent_encode(s: &str) -> String {
    let mut out = String::new();
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(b as char);
        } else {
            let _ = write!(out, "%{b:02X}");
        }
    }
    out
}

/// A table: a header row and rows of cells already made HTML; `class` is
/// the table's own.
pub fn table(class: &str, head: &[&str], rows: &[Vec<String>]) -> String {
    table_with_id(None, class, head, rows)
}

/// [`table`] with an `id` the page's tests and links find it by.
pub fn table_with_id(id: Option<&str>, class: &str, head: &[&str], rows: &[Vec<String>]) -> String {
    let id = id
        .map(|i| format!(" id=\"{}\"", esc(i)))
        .unwrap_or_default();
    let mut s = format!("<table{id} class=\"{}\">", esc(class));
    // A table of facts (name, value) has no header row.
    if head.iter().any(|h| !h.is_empty()) {
        s.push_str("<thead><tr>");
        for h in head {
            let _ = write!(s, "<th>{}</th>", esc(h));
        }
        s.push_str("</tr></thead>");
    }
    s.push_str("<tbody>");
    for row in rows {
        s.push_str("<tr>");
        for cell in row {
            let _ = write!(s, "<td>{cell}</td>");
        }
        s.push_str("</tr>");
    }
    s.push_str("</tbody></table>");
    s
}

/// A command a reader copies into a shell, as code.
pub fn command(text: &str) -> String {
    format!("<code class=\"cmd\">{}</code>", esc(text))
}

/// `a / b` as a percentage with one decimal, or "n/a".
pub fn percent(a: f64, b: f64) -> String {
    if b > 0.0 {
        format!("{:.1} %", 100.0 * a / b)
    } else {
        "n/a".into()
    }
}

/// The page around `body`: no script, no request leaves the page (the
/// Content-Security-Policy allows inline styles and nothing else), one
/// stylesheet inline.
pub fn page(title: &str, body: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; \
         style-src 'unsafe-inline'; img-src data:\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n{body}\n</body>\n</html>\n",
        esc(title)
    )
}

const STYLE: &str = "
body { font: 14px/1.45 system-ui, sans-serif; margin: 0 auto; max-width: 1200px; padding: 0 16px 48px; color: #1d232a; }
h1 { font-size: 22px; margin: 18px 0 6px; }
h2 { font-size: 18px; margin: 28px 0 8px; border-bottom: 1px solid #d0d7de; padding-bottom: 4px; }
h3 { font-size: 15px; margin: 16px 0 6px; }
table { border-collapse: collapse; margin: 6px 0 12px; }
th, td { border: 1px solid #d0d7de; padding: 3px 8px; text-align: left; vertical-align: top; }
th { background: #f3f5f7; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
pre { background: #f6f8fa; border: 1px solid #d0d7de; padding: 8px; overflow-x: auto; white-space: pre-wrap; margin: 4px 0; }
code.cmd { background: #f6f8fa; border: 1px solid #d0d7de; padding: 1px 4px; display: inline-block; }
.verdict { display: inline-block; font-weight: bold; padding: 4px 12px; border-radius: 4px; color: white; margin-right: 8px; }
.verdict.pass { background: #1a7f37; } .verdict.fail { background: #cf222e; } .verdict.incomplete { background: #9a6700; }
.facts td:first-child { font-weight: 600; background: #f9fafb; white-space: nowrap; }
.group { border: 1px solid #d0d7de; border-left: 6px solid #cf222e; padding: 6px 12px; margin: 10px 0; }
.group h3 { margin-top: 4px; }
.hole td { background: #ffebe9; font-weight: 600; }
.excluded td { color: #6e7781; }
.missing { color: #cf222e; }
.since { font-size: 12px; font-weight: normal; padding: 1px 6px; border-radius: 3px; margin-left: 6px; }
.since.new { background: #cf222e; color: white; } .since.known { background: #eaeef2; color: #57606a; }
.hole-name { color: #cf222e; font-weight: 600; white-space: nowrap; }
.survivor td { background: #fff8c5; }
.plots { display: flex; flex-wrap: wrap; gap: 12px; }
.plots figure { margin: 0; }
figcaption { font-size: 12px; color: #57606a; }
details { margin: 4px 0; } summary { cursor: pointer; }
.small { font-size: 12px; color: #57606a; }
";

/// A plot inline, or why it is not there.
pub fn figure(id: &str, svg: &Result<String, String>, caption: &str) -> String {
    match svg {
        Ok(svg) => format!(
            "<figure id=\"{id}\" class=\"plot\">{svg}<figcaption>{}</figcaption></figure>",
            esc(caption)
        ),
        Err(e) => format!("<p class=\"missing\">{}</p>", esc(e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markup_in_text_is_escaped() {
        assert_eq!(
            esc("<script>alert('x')</script> & \"q\""),
            "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &quot;q&quot;"
        );
    }

    #[test]
    fn hrefs_are_relative_encoded_and_never_a_scheme() {
        let from = Path::new("/a/b");
        assert_eq!(relative_href(from, Path::new("/a/b/c.txt")), "./c.txt");
        assert_eq!(relative_href(from, Path::new("/a/x/y z")), "../x/y%20z");
        assert_eq!(
            relative_href(from, Path::new("/a/b/javascript:alert(1)")),
            "./javascript%3Aalert%281%29"
        );
        let link = Link::Found {
            href: "./x\"onload=".into(),
            shown: "<b>".into(),
        };
        assert_eq!(link.html(), "<a href=\"./x&quot;onload=\">&lt;b&gt;</a>");
    }
}
