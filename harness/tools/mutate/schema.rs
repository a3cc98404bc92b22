//! Mutant schemata: every mutation site of hw/rtl compiled into one model,
//! each guarded by a run-time selector (docs/mutation.md, "Schemata").
//!
//! A site's token sits inside an expression that can be repeated: a
//! parenthesised or bracketed group, one element of a list, the right-hand
//! side of an assignment, a `return` value. That expression `E` becomes
//! `((pccx_mutant_pkg::active == 16'dK) ? (E') : (E))`, where `E'` is `E`
//! with mutant K's one change, so the model with `active == K` computes
//! what mutant K built alone computes and with `active == 0` the RTL as
//! written. Sites sharing an expression share one chain of guards; an
//! expression inside another is guarded inside the other's original arm.
//! A site whose token is not in such an expression (a left-hand side, a
//! case label, a constant that must stay constant) has no guard: it is
//! built alone, as before.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::sites::{code_text, is_ident_char, is_nba, Mutant};

/// The package that holds the selector, compiled first.
pub const SELECTOR_PACKAGE: &str = "pccx_mutant_pkg";
/// The selector as the guards read it.
pub const SELECTOR: &str = "pccx_mutant_pkg::active";
/// Its width: selectors run from 1 to the number of sites.
pub const SELECTOR_BITS: u32 = 16;

/// The metacomment that keeps a function out of line.
const NO_INLINE: &str = "/*verilator no_inline_task*/";

/// The selector package's source.
pub fn selector_package() -> String {
    format!(
        "// {SELECTOR_PACKAGE}.sv: written by `pccx-cosim mutate` for a mutant schema.\n\
         // The number of the active mutant (0: none), set by the harness through\n\
         // the shim before reset and never written by the design.\n\
         package {SELECTOR_PACKAGE};\n\
         \x20 logic [{}:0] active /*verilator public_flat_rw*/;\n\
         endpackage\n",
        SELECTOR_BITS - 1
    )
}

/// The byte range `[start, end)` of the expression a site's guard repeats.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Span {
    pub start: usize,
    pub end: usize,
}

/// What bounds a span on its left.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Left {
    /// The opening bracket at this offset (`(`, `[` or `{`).
    Open(u8, usize),
    /// A `,` between elements.
    Comma,
    /// An assignment's `=` or `<=`, a `return`, or a `;` of a `for` header.
    Value,
}

/// Statement keywords: walking left from a token onto one of these means
/// the token is not inside an expression the walk can bound.
const STATEMENT_WORDS: &[&str] = &[
    "if",
    "else",
    "begin",
    "end",
    "case",
    "casez",
    "unique",
    "priority",
    "endcase",
    "default",
    "assign",
    "always_comb",
    "always_ff",
    "always_latch",
    "initial",
    "while",
    "for",
    "foreach",
    "endfunction",
    "function",
    "module",
    "endmodule",
];

fn left_boundary(code: &str, from: usize) -> Result<(usize, Left), &'static str> {
    let b = code.as_bytes();
    let mut depth = 0usize;
    let mut i = from;
    while i > 0 {
        i -= 1;
        let c = b[i];
        match c {
            b')' | b']' | b'}' => depth += 1,
            b'(' | b'[' | b'{' => {
                if depth == 0 {
                    return Ok((i + 1, Left::Open(c, i)));
                }
                depth -= 1;
            }
            _ if depth > 0 => {}
            b',' => return Ok((i + 1, Left::Comma)),
            b';' if inside_for_header(code, i) => return Ok((i + 1, Left::Value)),
            b';' => return Err("a statement's target or label"),
            b'`' => return Err("a macro"),
            b'=' => {
                // Walking left, the right character of `==`, `<=`... comes
                // first: take the whole operator.
                let mut j = i;
                while j > 0 && b"=!<>".contains(&b[j - 1]) {
                    j -= 1;
                }
                let op = &code[j..=i];
                match op {
                    "=" => return Ok((i + 1, Left::Value)),
                    "<=" if is_nba(code, j) => return Ok((i + 1, Left::Value)),
                    _ => {}
                }
                if j > 0 && b"+-|&^*/".contains(&b[j - 1]) && op == "=" {
                    return Ok((i + 1, Left::Value));
                }
                i = j;
            }
            c if is_ident_char(c) => {
                let mut j = i;
                while j > 0 && is_ident_char(b[j - 1]) {
                    j -= 1;
                }
                let word = &code[j..=i];
                if word == "return" {
                    return Ok((i + 1, Left::Value));
                }
                if STATEMENT_WORDS.contains(&word) {
                    return Err("a statement's target or label");
                }
                i = j;
            }
            _ => {}
        }
    }
    Err("no enclosing expression")
}

fn right_boundary(code: &str, from: usize) -> Result<usize, &'static str> {
    let b = code.as_bytes();
    let mut depth = 0usize;
    for (i, &c) in b.iter().enumerate().skip(from) {
        match c {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => {
                if depth == 0 {
                    return Ok(i);
                }
                depth -= 1;
            }
            _ if depth > 0 => {}
            b',' | b';' => return Ok(i),
            b'`' => return Err("a macro"),
            _ => {}
        }
    }
    Err("no end of the expression")
}

/// The first `:` (with `+:`/`-:` reported as such) at depth 0 in
/// `code[from..to]` that is not the `:` of a `?:`.
fn top_level_colon(code: &str, from: usize, to: usize) -> Option<(usize, &'static str)> {
    let b = code.as_bytes();
    let (mut depth, mut questions) = (0usize, 0usize);
    for i in from..to {
        match b[i] {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => depth = depth.saturating_sub(1),
            _ if depth > 0 => {}
            b'?' => questions += 1,
            b':' if b.get(i + 1) == Some(&b':') || (i > 0 && b[i - 1] == b':') => {}
            b':' if questions > 0 => questions -= 1,
            b':' => {
                let kind = match b.get(i.wrapping_sub(1)) {
                    Some(b'+') => "+:",
                    Some(b'-') => "-:",
                    _ => ":",
                };
                return Some((i, kind));
            }
            _ => {}
        }
    }
    None
}

/// Types: a `[hi:lo]` after one of these is a declaration's width.
const TYPE_WORDS: &[&str] = &["logic", "bit", "reg", "wire", "int", "integer", "byte"];

/// Whether offset `at` lies inside the parenthesised header of a `for`.
pub fn inside_for_header(code: &str, at: usize) -> bool {
    let b = code.as_bytes();
    let mut depth = 0usize;
    let mut i = at;
    while i > 0 {
        i -= 1;
        match b[i] {
            b')' | b']' | b'}' => depth += 1,
            b'(' | b'[' | b'{' if depth > 0 => depth -= 1,
            b'(' => return code[..i].trim_end().ends_with("for"),
            b'[' | b'{' => return false,
            _ => {}
        }
    }
    false
}

/// The span a site's guard repeats, in `code` (the file's text with
/// comments blanked); `at` is the site's byte offset.
pub fn span_of(code: &str, site: &Mutant, at: usize) -> Result<Span, &'static str> {
    let token_end = at + site.original.len();
    // An `if` condition's inversion: the site is the parenthesised
    // condition itself, already an expression.
    if site.original.starts_with('(') && site.original.ends_with(')') {
        return Ok(Span {
            start: at,
            end: token_end,
        });
    }
    span_around(code, at, token_end, 0)
}

/// The start of the primary whose select opens at `open` (`name`,
/// `a.b`, `p::x`, `x[i]` before a further select).
fn primary_start(code: &str, open: usize) -> usize {
    let b = code.as_bytes();
    let mut i = open;
    loop {
        while i > 0 && b[i - 1].is_ascii_whitespace() {
            i -= 1;
        }
        if i > 0 && b[i - 1] == b']' {
            // An earlier select of the same primary.
            let mut depth = 0usize;
            while i > 0 {
                i -= 1;
                match b[i] {
                    b']' => depth += 1,
                    b'[' => {
                        depth -= 1;
                        if depth == 0 {
                            break;
                        }
                    }
                    _ => {}
                }
            }
            continue;
        }
        let mut j = i;
        while j > 0 && (is_ident_char(b[j - 1]) || b[j - 1] == b'.' || b[j - 1] == b':') {
            j -= 1;
        }
        return j;
    }
}

/// The smallest expression around `code[from..to]` that a guard can
/// repeat. A constant part of a larger primary (a cast's width, a part
/// select's bounds) is repeated with its whole primary.
fn span_around(code: &str, from: usize, to: usize, depth: usize) -> Result<Span, &'static str> {
    let b = code.as_bytes();
    if depth > 4 {
        return Err("nested constant contexts");
    }
    let (mut start, left) = left_boundary(code, from)?;
    let mut end = right_boundary(code, to)?;
    if let Left::Open(b'(', open) = left {
        // `(W)'(x)`: the group is a cast's width, a constant; the whole
        // cast is the expression.
        let close = right_boundary(code, open + 1)?;
        if b.get(close + 1) == Some(&b'\'') {
            if b.get(close + 2) != Some(&b'(') {
                return Err("a cast's width");
            }
            let operand_end = right_boundary(code, close + 3)? + 1;
            return span_around(code, open, operand_end, depth + 1);
        }
    }
    if let Left::Open(b'[', open) = left {
        // A select: an index is an expression, a part select's bounds and
        // an indexed part select's width are constants (the whole select
        // is the expression then).
        let close = right_boundary(code, open + 1)?;
        if let Some((colon, kind)) = top_level_colon(code, open + 1, close) {
            if kind == ":" || to > colon - 1 {
                let primary = primary_start(code, open);
                let word = code[primary..open].trim();
                if primary == open || TYPE_WORDS.contains(&word) {
                    return Err("a part select's bound or width");
                }
                return span_around(code, primary, close + 1, depth + 1);
            }
            end = colon - 1;
        }
    }
    if matches!(left, Left::Open(b'{', _) | Left::Comma) {
        // An assignment pattern's `name:` label is not part of the value.
        if let Some((colon, ":")) = top_level_colon(code, start, end) {
            let label = code[start..colon].trim();
            if !label.is_empty() && label.bytes().all(is_ident_char) && colon < from {
                start = colon + 1;
            } else {
                return Err("a case label or a range");
            }
        }
        // A replication's count must stay constant.
        if code[end..].trim_start().starts_with('{') {
            return Err("a replication count");
        }
    } else if let Some((_, ":")) = top_level_colon(code, start, end) {
        return Err("a case label or a range");
    }
    while start < end && b[start].is_ascii_whitespace() {
        start += 1;
    }
    while end > start && b[end - 1].is_ascii_whitespace() {
        end -= 1;
    }
    if !(start <= from && to <= end) {
        return Err("the token is not inside the expression found");
    }
    Ok(Span { start, end })
}

/// One guarded site: its selector number, the site, its byte offset.
#[derive(Clone, Debug)]
pub struct Guarded {
    pub selector: u32,
    pub mutant: Mutant,
    pub at: usize,
}

/// A span and the sites guarded on it; the spans inside it.
#[derive(Clone, Debug)]
struct Node {
    span: Span,
    sites: Vec<Guarded>,
    children: Vec<Node>,
}

/// The mutant schema of one file: its text, and which output ranges hold
/// which sites' guards (to tell which site a compiler error is about).
#[derive(Clone, Debug)]
pub struct SchemaFile {
    pub text: String,
    /// `(output range, selectors)`: a guard chain and every site on it,
    /// or one site's mutated copy and that site.
    pub regions: Vec<(std::ops::Range<usize>, Vec<u32>)>,
    /// The guards in `for` headers: their line (1-based) and selectors. A
    /// loop whose bound is not constant cannot be unrolled, and Verilator
    /// refuses some loop bodies then (non-blocking writes to an array),
    /// at a line of the body rather than of the guard.
    pub loop_bounds: Vec<(usize, Vec<u32>)>,
}

impl SchemaFile {
    /// The selectors a compiler message at `line` (1-based) and `column`
    /// (1-based, bytes) is about: those of the innermost region there.
    pub fn selectors_at(&self, line: usize, column: usize) -> Vec<u32> {
        let mut offset = 0;
        for (n, l) in self.text.split_inclusive('\n').enumerate() {
            if n + 1 == line {
                offset += column.saturating_sub(1).min(l.len());
                break;
            }
            offset += l.len();
        }
        self.regions
            .iter()
            .filter(|(r, _)| r.contains(&offset))
            .min_by_key(|(r, _)| r.len())
            .map(|(_, s)| s.clone())
            .unwrap_or_default()
    }
}

/// The schema of one file's `sites` (each with its selector): the file's
/// text with every site that has a span guarded. Returns the text and the
/// sites that could not be guarded, with the reason.
pub fn schema_file(
    source: &str,
    sites: &[(u32, Mutant)],
) -> (SchemaFile, Vec<(u32, &'static str)>) {
    let code = code_text(source);
    let line_starts: Vec<usize> = std::iter::once(0)
        .chain(source.match_indices('\n').map(|(i, _)| i + 1))
        .collect();
    let mut unguarded = Vec::new();
    let mut by_span: BTreeMap<(usize, std::cmp::Reverse<usize>), Vec<Guarded>> = BTreeMap::new();
    for (selector, m) in sites {
        let Some(&line_start) = line_starts.get(m.line - 1) else {
            unguarded.push((*selector, "the line is not in the file"));
            continue;
        };
        let at = line_start + m.column - 1;
        if code.get(at..at + m.original.len()) != Some(m.original.as_str()) {
            unguarded.push((*selector, "the token is not where the site says"));
            continue;
        }
        match span_of(&code, m, at) {
            Ok(span) => by_span
                .entry((span.start, std::cmp::Reverse(span.end)))
                .or_default()
                .push(Guarded {
                    selector: *selector,
                    mutant: m.clone(),
                    at,
                }),
            Err(why) => unguarded.push((*selector, why)),
        }
    }
    // Nest the spans (sorted by start, longest first): each is inside the
    // one before it that still covers it, or beside it.
    let mut roots: Vec<Node> = Vec::new();
    let mut stack: Vec<Node> = Vec::new();
    fn close_into(stack: &mut Vec<Node>, roots: &mut Vec<Node>) {
        let node = stack.pop().expect("a node to close");
        match stack.last_mut() {
            Some(parent) => parent.children.push(node),
            None => roots.push(node),
        }
    }
    for ((start, std::cmp::Reverse(end)), sites) in by_span {
        let span = Span { start, end };
        while stack.last().is_some_and(|top| top.span.end <= start) {
            close_into(&mut stack, &mut roots);
        }
        if stack.last().is_some_and(|top| end > top.span.end) {
            // Overlaps its neighbour without nesting: no guard can hold it.
            unguarded.extend(sites.iter().map(|g| (g.selector, "overlapping spans")));
            continue;
        }
        stack.push(Node {
            span,
            sites,
            children: Vec::new(),
        });
    }
    while !stack.is_empty() {
        close_into(&mut stack, &mut roots);
    }
    let mut out = SchemaFile {
        text: String::with_capacity(source.len() * 2),
        regions: Vec::new(),
        loop_bounds: Vec::new(),
    };
    fn loops(code: &str, line_starts: &[usize], nodes: &[Node], out: &mut Vec<(usize, Vec<u32>)>) {
        for n in nodes {
            if inside_for_header(code, n.span.start) {
                let line = line_starts.partition_point(|&s| s <= n.span.start);
                out.push((line, n.sites.iter().map(|g| g.selector).collect()));
            }
            loops(code, line_starts, &n.children, out);
        }
    }
    loops(&code, &line_starts, &roots, &mut out.loop_bounds);
    render(source, &code, 0, source.len(), &roots, &mut out);
    (out, unguarded)
}

fn render(source: &str, code: &str, from: usize, to: usize, nodes: &[Node], out: &mut SchemaFile) {
    let mut at = from;
    for node in nodes {
        out.text.push_str(&source[at..node.span.start]);
        wrap(source, code, node, out);
        at = node.span.end;
    }
    out.text.push_str(&source[at..to]);
}

/// `((sel == K1) ? (E1') : (sel == K2) ? (E2') : ... (E))`, where `E` is
/// the span with the spans inside it guarded in turn. The mutated copies
/// are of the comment-free text on one line, so the file keeps its lines.
fn wrap(source: &str, code: &str, node: &Node, out: &mut SchemaFile) {
    let begin = out.text.len();
    let Span { start, end } = node.span;
    out.text.push('(');
    for g in &node.sites {
        let rel = g.at - start;
        let text = &code[start..end];
        let mutated = format!(
            "{}{}{}",
            &text[..rel],
            g.mutant.replacement,
            &text[rel + g.mutant.original.len()..]
        )
        .replace(['\n', '\r'], " ");
        out.text.push_str(&format!(
            "({SELECTOR} == {SELECTOR_BITS}'d{}) ? (",
            g.selector
        ));
        let copy = out.text.len();
        out.text.push_str(&mutated);
        out.regions.push((copy..out.text.len(), vec![g.selector]));
        out.text.push_str(") : ");
    }
    out.text.push('(');
    render(source, code, start, end, &node.children, out);
    out.text.push_str("))");
    out.regions.push((
        begin..out.text.len(),
        node.sites.iter().map(|g| g.selector).collect(),
    ));
}

/// The schema of all of hw/rtl: each file of the manifest with its sites
/// guarded, and the sites that are not, with the reason.
#[derive(Clone, Debug)]
pub struct Schema {
    /// In manifest order.
    pub files: Vec<(String, SchemaFile)>,
    /// Selector -> why that site is built alone.
    pub unguarded: BTreeMap<u32, String>,
}

/// A site's selector: its position in the list of all sites, from 1 (0 is
/// the RTL as written).
pub fn selector_of(index: usize) -> u32 {
    index as u32 + 1
}

impl Schema {
    /// The schema of `all` (every site of hw/rtl, in order) over the sources
    /// under `root`, leaving out the sites of `excluded` (with its reasons).
    pub fn generate(
        root: &Path,
        all: &[Mutant],
        excluded: &BTreeMap<u32, String>,
    ) -> Result<Schema, String> {
        let rtl = root.join("hw/rtl");
        let mut unguarded = excluded.clone();
        // A guard in a package function reaches every caller, an
        // out-of-line one included (in a schema of a few sites, the only
        // case where a file without a guard keeps them out of line).
        let package_guarded = all
            .iter()
            .enumerate()
            .any(|(k, m)| m.file.ends_with("_pkg.sv") && !excluded.contains_key(&selector_of(k)));
        let mut files = Vec::new();
        for name in super::manifest_files(&rtl)? {
            let source = std::fs::read_to_string(rtl.join(&name))
                .map_err(|e| format!("cannot read hw/rtl/{name}: {e}"))?;
            let here: Vec<(u32, Mutant)> = all
                .iter()
                .enumerate()
                .filter(|(k, m)| m.file == name && !excluded.contains_key(&selector_of(*k)))
                .map(|(k, m)| (selector_of(k), m.clone()))
                .collect();
            let (mut file, left) = schema_file(&source, &here);
            // A function kept out of line may not read the selector, a
            // variable outside it (Verilator: IMPURE); inlined, it computes
            // the same, only slower. A file without a guard (in a schema of
            // a few sites) keeps them out of line, unless a package it may
            // call has one.
            if !here.is_empty() || package_guarded {
                file.text = file.text.replace(NO_INLINE, &" ".repeat(NO_INLINE.len()));
            }
            unguarded.extend(left.into_iter().map(|(k, why)| (k, why.to_string())));
            files.push((name, file));
        }
        if all.len() >= 1 << SELECTOR_BITS {
            return Err(format!(
                "{} sites do not fit the {SELECTOR_BITS}-bit mutant selector",
                all.len()
            ));
        }
        Ok(Schema { files, unguarded })
    }

    /// Writes the schema's sources to `dir` as a copy of hw/: `rtl/` with
    /// the selector package first in its manifest, and `verilator.f`.
    pub fn write(&self, root: &Path, dir: &Path) -> Result<(), String> {
        let rtl = dir.join("rtl");
        let _ = std::fs::remove_dir_all(&rtl);
        std::fs::create_dir_all(&rtl).map_err(|e| format!("{}: {e}", rtl.display()))?;
        let put = |path: PathBuf, text: &str| {
            std::fs::write(&path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))
        };
        put(
            rtl.join(format!("{SELECTOR_PACKAGE}.sv")),
            &selector_package(),
        )?;
        let mut manifest = format!("{SELECTOR_PACKAGE}.sv\n");
        for (name, file) in &self.files {
            put(rtl.join(name), &file.text)?;
            manifest += &format!("{name}\n");
        }
        put(rtl.join("manifest.txt"), &manifest)?;
        std::fs::copy(root.join("hw/verilator.f"), dir.join("verilator.f"))
            .map_err(|e| format!("cannot copy hw/verilator.f: {e}"))?;
        Ok(())
    }

    /// The selectors a compiler message about `file` at `line`, `column`
    /// concerns (none if the place holds no guard).
    pub fn selectors_at(&self, file: &str, line: usize, column: usize) -> Vec<u32> {
        self.files
            .iter()
            .find(|(name, _)| name == file)
            .map(|(_, f)| f.selectors_at(line, column))
            .unwrap_or_default()
    }

    /// The selectors of the guards in `for` headers of `file` on the lines
    /// `line - 6 ..= line`: the suspects of an error Verilator reports in
    /// a loop's body.
    pub fn loop_bounds_before(&self, file: &str, line: usize) -> Vec<u32> {
        self.files
            .iter()
            .filter(|(name, _)| name == file)
            .flat_map(|(_, f)| f.loop_bounds.iter())
            .filter(|(l, _)| *l <= line && line <= l + 6)
            .flat_map(|(_, k)| k.iter().copied())
            .collect()
    }

    /// Every guarded selector.
    pub fn guarded(&self, all: usize) -> Vec<u32> {
        (1..=all as u32)
            .filter(|k| !self.unguarded.contains_key(k))
            .collect()
    }
}

/// The places of Verilator's `%Error` messages: `(file name, line,
/// column, message)`, the file name without its directory.
pub fn error_places(output: &str) -> Vec<(String, usize, usize, String)> {
    let mut out = Vec::new();
    for line in output.lines() {
        let Some(rest) = line.strip_prefix("%Error") else {
            continue;
        };
        // `%Error: path:line:col: message` or `%Error-CODE: path:...`.
        let Some((_, rest)) = rest.split_once(": ") else {
            continue;
        };
        let mut parts = rest.splitn(4, ':');
        let (Some(path), Some(l), Some(c)) = (parts.next(), parts.next(), parts.next()) else {
            continue;
        };
        let (Ok(l), Ok(c)) = (l.trim().parse(), c.trim().parse()) else {
            continue;
        };
        let name = Path::new(path.trim())
            .file_name()
            .map_or(String::new(), |n| n.to_string_lossy().into_owned());
        out.push((name, l, c, parts.next().unwrap_or("").trim().to_string()));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::mutate::sites::sites;

    const SRC: &str = "module m;\n  logic [3:0] a, b;\n  assign y = (a == b) ? a + 4'd1 : b;\n  always_ff @(posedge clk) if (a < b) q <= a; // a == b\n  assign z = {a[1:0], b[c +: 2]};\nendmodule\n";

    type Made = (SchemaFile, Vec<(u32, &'static str)>, Vec<(u32, Mutant)>);

    fn schema(src: &str) -> Made {
        let numbered: Vec<(u32, Mutant)> = sites("m.sv", src)
            .into_iter()
            .enumerate()
            .map(|(k, m)| (k as u32 + 1, m))
            .collect();
        let (file, unguarded) = schema_file(src, &numbered);
        (file, unguarded, numbered)
    }

    #[test]
    fn each_guard_holds_its_mutant_and_the_original() {
        let (file, unguarded, numbered) = schema(SRC);
        let line = file.text.lines().nth(2).unwrap();
        let plus = numbered.iter().find(|(_, m)| m.original == "+").unwrap().0;
        // The `+` site: the whole right-hand side, with `-`, then as written.
        assert!(
            line.contains(&format!(
                "({SELECTOR} == 16'd{plus}) ? ((a == b) ? a - 4'd1 : b)"
            )),
            "{line}"
        );
        // The `==` site is guarded inside the condition's group.
        assert!(line.contains("? (a != b) :"), "{line}");
        assert_eq!(file.text.lines().count(), SRC.lines().count());
        // The target of the non-blocking assignment is not an expression.
        assert!(
            unguarded.iter().all(|(k, _)| {
                let m = &numbered[*k as usize - 1].1;
                m.line == 4 && m.original == "q" || m.line == 5
            }),
            "{unguarded:?}"
        );
    }

    #[test]
    fn a_part_select_bound_is_left_alone_and_an_index_base_is_not() {
        let code = code_text(SRC);
        let line5 = SRC.lines().take(4).map(|l| l.len() + 1).sum::<usize>();
        let c = line5 + SRC.lines().nth(4).unwrap().find("c +:").unwrap();
        let m = Mutant {
            file: "m.sv".into(),
            line: 5,
            column: c - line5 + 1,
            class: crate::tools::mutate::MutantClass::SignalMixUp,
            original: "c".into(),
            replacement: "a".into(),
        };
        let span = span_of(&code, &m, c).unwrap();
        assert_eq!(&code[span.start..span.end], "c");
    }

    #[test]
    fn a_compiler_error_maps_to_its_site() {
        let (file, _, numbered) = schema(SRC);
        let (plus, _) = numbered.iter().find(|(_, m)| m.original == "+").unwrap();
        let line = file.text.lines().nth(2).unwrap();
        let col = line.find("a - 4'd1").unwrap() + 1;
        assert_eq!(file.selectors_at(3, col), vec![*plus]);
    }
}
