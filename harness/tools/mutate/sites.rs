//! Where a source-level mutant of `hw/rtl` can be made, and what it changes.
//!
//! The classes follow the bugs real RTL has (Encarsia's survey of 177 bugs:
//! mostly signal mix-ups and broken conditionals), plus off-by-one constants
//! and operator swaps. Each site is one token (or one parenthesised
//! condition) of one line, found by a small lexer that skips comments, so a
//! mutant is one readable diff line. Sites are identified by
//! `file:line:column:class`, stable as long as the line is.

use std::collections::BTreeMap;

/// The kinds of mutation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum MutantClass {
    /// A signal replaced by another one of the same declared type.
    SignalMixUp,
    /// A condition inverted, or a relation flipped (`==` / `!=`).
    BrokenConditional,
    /// A comparison made inclusive or exclusive (`<` / `<=`, `>` / `>=`).
    OffByOneCompare,
    /// A sized or plain decimal constant off by one.
    OffByOneConstant,
    /// `+` / `-`, `&&` / `||`, `&` / `|` swapped.
    OperatorSwap,
}

impl MutantClass {
    pub const ALL: [MutantClass; 5] = [
        MutantClass::SignalMixUp,
        MutantClass::BrokenConditional,
        MutantClass::OffByOneCompare,
        MutantClass::OffByOneConstant,
        MutantClass::OperatorSwap,
    ];

    pub fn name(self) -> &'static str {
        match self {
            MutantClass::SignalMixUp => "signal-mix-up",
            MutantClass::BrokenConditional => "broken-conditional",
            MutantClass::OffByOneCompare => "off-by-one-compare",
            MutantClass::OffByOneConstant => "off-by-one-constant",
            MutantClass::OperatorSwap => "operator-swap",
        }
    }
}

/// One mutant: replace `original` at (`line`, `column`) of `file` by
/// `replacement`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mutant {
    pub file: String,
    /// 1-based.
    pub line: usize,
    /// 1-based, in bytes.
    pub column: usize,
    pub class: MutantClass,
    pub original: String,
    pub replacement: String,
}

impl Mutant {
    /// `file:line:column:class`, the name a mutant is known by.
    pub fn id(&self) -> String {
        format!(
            "{}:{}:{}:{}",
            self.file,
            self.line,
            self.column,
            self.class.name()
        )
    }

    /// The mutated text of the file whose text is `source`.
    pub fn apply(&self, source: &str) -> Result<String, String> {
        let mut out = String::with_capacity(source.len() + 8);
        let mut found = false;
        for (n, line) in source.split_inclusive('\n').enumerate() {
            if n + 1 == self.line {
                let at = self.column - 1;
                if line.get(at..at + self.original.len()) != Some(self.original.as_str()) {
                    return Err(format!(
                        "{}: `{}` is not at line {} column {} (has the file changed?)",
                        self.id(),
                        self.original,
                        self.line,
                        self.column
                    ));
                }
                out.push_str(&line[..at]);
                out.push_str(&self.replacement);
                out.push_str(&line[at + self.original.len()..]);
                found = true;
            } else {
                out.push_str(line);
            }
        }
        if !found {
            return Err(format!("{}: the file has no line {}", self.id(), self.line));
        }
        Ok(out)
    }

    /// A one-line description: `file:line: original -> replacement`.
    pub fn describe(&self) -> String {
        format!(
            "{}:{}: `{}` -> `{}` ({})",
            self.file,
            self.line,
            self.original,
            self.replacement,
            self.class.name()
        )
    }
}

/// The code of a line with comments blanked out (same length, so columns
/// stay), given whether a block comment is open at its start; returns the
/// state at its end too.
fn strip_comments(line: &str, mut in_block: bool) -> (String, bool) {
    let b = line.as_bytes();
    let mut out = vec![b' '; b.len()];
    let mut i = 0;
    while i < b.len() {
        if in_block {
            if b[i] == b'*' && b.get(i + 1) == Some(&b'/') {
                in_block = false;
                i += 2;
            } else {
                i += 1;
            }
            continue;
        }
        if b[i] == b'/' && b.get(i + 1) == Some(&b'/') {
            break;
        }
        if b[i] == b'/' && b.get(i + 1) == Some(&b'*') {
            in_block = true;
            i += 2;
            continue;
        }
        if b[i] == b'"' {
            // Strings (only in messages) are left alone entirely.
            let start = i;
            i += 1;
            while i < b.len() && b[i] != b'"' {
                i += 1;
            }
            out[start..=i.min(b.len() - 1)].fill(b' ');
            i += 1;
            continue;
        }
        out[i] = b[i];
        i += 1;
    }
    (String::from_utf8(out).unwrap_or_default(), in_block)
}

/// The whole of `source` with comments and strings blanked out, byte for
/// byte (same offsets, same line ends): what the schema generator walks.
pub fn code_text(source: &str) -> String {
    let mut out = String::with_capacity(source.len());
    let mut in_block = false;
    for line in source.split_inclusive('\n') {
        let body = line.strip_suffix('\n').unwrap_or(line);
        let (code, open) = strip_comments(body, in_block);
        in_block = open;
        out.push_str(&code);
        out.push_str(&line[body.len()..]);
    }
    out
}

pub(super) fn is_ident_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c == b'$'
}

/// Lines that declare things rather than compute them: their operators are
/// widths and ranges, whose mutants mostly fail to compile or change
/// nothing. Sites are taken from statements only.
fn is_declaration(code: &str) -> bool {
    let t = code.trim_start();
    [
        "module",
        "import",
        "input",
        "output",
        "logic",
        "typedef",
        "parameter",
        "localparam",
        "package",
        "function",
        "endfunction",
        "int ",
        "state_e",
        "shape_t",
        "footprint_t",
        "range_t",
        "entry_id_t",
        "word_addr_t",
        "l2_req_t",
        "l2_rsp_t",
        "genvar",
        "for (genvar",
        "`",
    ]
    .iter()
    .any(|k| t.starts_with(k))
        || t.starts_with(')')
        || t.starts_with('.')
}

/// Whether the `<=` at byte `at` of `code` is a non-blocking assignment:
/// what precedes it is an lvalue (names, selects) standing at the start of
/// a statement (line start, `;`, `begin`, `else`, a case label's `:` or the
/// `)` that closes an `if`/`@` condition). A `<=` inside parentheses or
/// after `=` is a comparison.
pub(super) fn is_nba(code: &str, at: usize) -> bool {
    let b = code.as_bytes();
    let mut i = at;
    while i > 0 && (is_ident_char(b[i - 1]) || b"[]:.+-' ".contains(&b[i - 1])) {
        i -= 1;
    }
    let before = code[..i].trim_end();
    let lvalue = code[i..at].trim();
    !lvalue.is_empty()
        && (before.is_empty()
            || before.ends_with(';')
            || before.ends_with(')')
            || before.ends_with("begin")
            || before.ends_with("else"))
}

/// Vector types of pccx_pkg and the `logic` range each names. A signal
/// declared with one groups with the `logic` signals of that range, so
/// naming a signal's type changes none of its mix-ups. Members of a typedef
/// declared with one (the instruction fields) are left out, as they were
/// before the type had a name.
const NAMED_VECTORS: &[(&str, &str)] = &[("word_addr_t", "[16:0]")];

/// Declared signals of one file, grouped by their declared type text.
fn declarations(lines: &[String]) -> BTreeMap<String, Vec<String>> {
    let mut groups: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut in_typedef = false;
    for code in lines {
        let t = code.trim();
        if t.starts_with("typedef struct") || t.starts_with("typedef union") {
            in_typedef = !t.contains('}');
        } else if t.starts_with('}') {
            in_typedef = false;
        }
        let named = t
            .strip_prefix("input ")
            .or_else(|| t.strip_prefix("output "))
            .unwrap_or(t)
            .trim_start();
        let named = NAMED_VECTORS.iter().find_map(|(name, range)| {
            let rest = named.strip_prefix(name)?;
            rest.starts_with(char::is_whitespace)
                .then(|| format!("logic {range}{rest}"))
        });
        let named = named.filter(|_| !in_typedef);
        let t = named.as_deref().unwrap_or(t);
        let rest = ["input  logic", "output logic", "input logic", "logic"]
            .iter()
            .find_map(|p| t.strip_prefix(p));
        let Some(rest) = rest else { continue };
        let rest = rest.trim_start();
        let (ty, names) = match rest.strip_prefix('[') {
            Some(r) => match r.find(']') {
                Some(end) => (format!("[{}]", &r[..end]), &r[end + 1..]),
                None => continue,
            },
            None => ("1".to_string(), rest),
        };
        if ty.contains("signed") || names.contains('[') || names.contains('(') {
            continue; // arrays and signed values: leave them alone
        }
        for name in names.split([',', ';']) {
            let name = name.trim();
            // Clock and reset are not data: mixing them up only breaks the
            // simulation wholesale.
            if !name.is_empty()
                && name.bytes().all(is_ident_char)
                && name != "clk"
                && name != "rst_n"
            {
                groups.entry(ty.clone()).or_default().push(name.to_string());
            }
        }
    }
    groups.retain(|_, v| v.len() >= 2);
    groups
}

/// Every mutation site of one file.
pub fn sites(file: &str, source: &str) -> Vec<Mutant> {
    let mut code_lines = Vec::new();
    let mut in_block = false;
    for line in source.lines() {
        let (code, open) = strip_comments(line, in_block);
        in_block = open;
        code_lines.push(code);
    }
    let groups = declarations(&code_lines);
    let mut out = Vec::new();
    for (n, code) in code_lines.iter().enumerate() {
        // A line continuing the one before (`\` at its end) belongs to a
        // macro definition: its text is not the design's until expanded,
        // and the lines that expand one (the assertions) start with `.
        let continued = n > 0 && code_lines[n - 1].trim_end().ends_with('\\');
        if code.trim().is_empty() || is_declaration(code) || continued {
            continue;
        }
        let mut push = |column: usize, class: MutantClass, original: &str, replacement: String| {
            out.push(Mutant {
                file: file.to_string(),
                line: n + 1,
                column: column + 1,
                class,
                original: original.to_string(),
                replacement,
            });
        };
        let b = code.as_bytes();
        let mut i = 0;
        while i < b.len() {
            let two = code.get(i..i + 2).unwrap_or("");
            let prev = code[..i].trim_end().bytes().last();
            let operand_before = prev.is_some_and(|c| is_ident_char(c) || c == b')' || c == b']');
            match two {
                "==" => push(i, MutantClass::BrokenConditional, "==", "!=".into()),
                "!=" => push(i, MutantClass::BrokenConditional, "!=", "==".into()),
                "&&" => push(i, MutantClass::OperatorSwap, "&&", "||".into()),
                "||" => push(i, MutantClass::OperatorSwap, "||", "&&".into()),
                ">=" => push(i, MutantClass::OffByOneCompare, ">=", ">".into()),
                "<=" if !is_nba(code, i) => push(i, MutantClass::OffByOneCompare, "<=", "<".into()),
                _ => {}
            }
            if [
                "==", "!=", "&&", "||", ">=", "<=", "<<", ">>", "->", "+:", "-:", "++", "--",
            ]
            .contains(&two)
            {
                i += 2;
                continue;
            }
            match b[i] {
                b'<' if operand_before => push(i, MutantClass::OffByOneCompare, "<", "<=".into()),
                b'>' if operand_before => push(i, MutantClass::OffByOneCompare, ">", ">=".into()),
                b'+' if operand_before => push(i, MutantClass::OperatorSwap, "+", "-".into()),
                b'-' if operand_before => push(i, MutantClass::OperatorSwap, "-", "+".into()),
                b'!' => {
                    push(i, MutantClass::BrokenConditional, "!", String::new());
                }
                _ => {}
            }
            // `if (` condition inversion: the whole parenthesised condition.
            if code[i..].starts_with("if (") && (i == 0 || !is_ident_char(b[i - 1])) {
                if let Some(len) = matching_paren(&code[i + 3..]) {
                    let cond = &code[i + 3..i + 3 + len];
                    push(
                        i + 3,
                        MutantClass::BrokenConditional,
                        cond,
                        format!("(!{cond})"),
                    );
                }
            }
            // Constants: N'dV and plain decimals that are operands.
            if b[i].is_ascii_digit() && (i == 0 || !is_ident_char(b[i - 1]) && b[i - 1] != b'\'') {
                let mut j = i;
                while j < b.len() && (b[j].is_ascii_digit() || b[j] == b'_') {
                    j += 1;
                }
                let sized = code[j..].starts_with("'d");
                let (lit_start, lit_end) = if sized {
                    let s = j + 2;
                    let mut e = s;
                    while e < b.len() && b[e].is_ascii_digit() {
                        e += 1;
                    }
                    (s, e)
                } else {
                    (i, j)
                };
                let in_slice = code[..i]
                    .rfind('[')
                    .is_some_and(|o| code[..i].rfind(']').is_none_or(|c| c < o));
                if lit_end > lit_start && (sized || !code[j..].starts_with('\'')) && !in_slice {
                    if let Ok(v) = code[lit_start..lit_end].replace('_', "").parse::<u64>() {
                        push(
                            lit_start,
                            MutantClass::OffByOneConstant,
                            &code[lit_start..lit_end],
                            (v + 1).to_string(),
                        );
                    }
                }
                i = lit_end.max(i + 1);
                continue;
            }
            // Signal mix-ups: a declared signal read on the right-hand side.
            if is_ident_char(b[i]) && (i == 0 || !is_ident_char(b[i - 1])) {
                let mut j = i;
                while j < b.len() && is_ident_char(b[j]) {
                    j += 1;
                }
                let name = &code[i..j];
                let rhs = code[..i].contains('=') || code[..i].contains("if (");
                if rhs {
                    if let Some(group) = groups.values().find(|g| g.iter().any(|x| x == name)) {
                        let at = group.iter().position(|x| x == name).unwrap();
                        let other = &group[(at + 1) % group.len()];
                        push(i, MutantClass::SignalMixUp, name, other.clone());
                    }
                }
                i = j;
                continue;
            }
            i += 1;
        }
    }
    out
}

/// Length of the parenthesised group at the start of `s` (`(` included).
fn matching_paren(s: &str) -> Option<usize> {
    if !s.starts_with('(') {
        return None;
    }
    let mut depth = 0;
    for (i, c) in s.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i + 1);
                }
            }
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    const SRC: &str = "module m;\n  logic [3:0] a, b;\n  // a == b in a comment\n  assign y = (a == b) ? a + 4'd1 : b;\n  always_ff @(posedge clk) if (a < b) q <= a;\nendmodule\n";

    #[test]
    fn macro_definitions_and_their_uses_give_no_sites() {
        let src = "`define CHECK(A) \\\n  assert (A && !b) \\\n    else fail(a == b);\nmodule m;\n  `CHECK(x < y)\n  assign y = !a;\nendmodule\n";
        let s = sites("m.sv", src);
        assert!(!s.is_empty() && s.iter().all(|m| m.line == 6), "{s:#?}");
    }

    #[test]
    fn comments_and_declarations_give_no_sites() {
        let s = sites("m.sv", SRC);
        assert!(s.iter().all(|m| m.line == 4 || m.line == 5), "{s:#?}");
    }

    #[test]
    fn each_class_is_found_and_applies_to_one_token() {
        let s = sites("m.sv", SRC);
        let find = |class, orig: &str| {
            s.iter()
                .find(|m| m.class == class && m.original == orig)
                .unwrap_or_else(|| panic!("no {class:?} on `{orig}` in {s:#?}"))
        };
        let eq = find(MutantClass::BrokenConditional, "==");
        assert_eq!(
            eq.apply(SRC).unwrap().lines().nth(3).unwrap(),
            "  assign y = (a != b) ? a + 4'd1 : b;"
        );
        let one = find(MutantClass::OffByOneConstant, "1");
        assert!(one.apply(SRC).unwrap().contains("a + 4'd2"));
        let plus = find(MutantClass::OperatorSwap, "+");
        assert!(plus.apply(SRC).unwrap().contains("a - 4'd1"));
        let lt = find(MutantClass::OffByOneCompare, "<");
        assert!(lt.apply(SRC).unwrap().contains("if (a <= b) q <= a;"));
        let cond = find(MutantClass::BrokenConditional, "(a < b)");
        assert!(cond.apply(SRC).unwrap().contains("if (!(a < b)) q <= a;"));
        let mix = s
            .iter()
            .find(|m| m.class == MutantClass::SignalMixUp && m.line == 5 && m.original == "a")
            .unwrap();
        assert_eq!(mix.replacement, "b");
        // The non-blocking assignment is not a comparison.
        assert!(!s.iter().any(|m| m.line == 5 && m.original == "<="));
    }

    #[test]
    fn a_named_vector_groups_with_its_range() {
        // `word_addr_t` is `logic [16:0]`: its signals mix with the 17-bit
        // `logic` ones, in declaration order; a struct member of that type
        // is no signal.
        let src = "module m;\n  input  word_addr_t a,\n  logic [16:0] b;\n  word_addr_t c;\n  \
                   typedef struct packed {\n    word_addr_t f;\n  } s_t;\n  \
                   assign y = a + b + c + f;\nendmodule\n";
        let s = sites("m.sv", src);
        let mix: Vec<(&str, &str)> = s
            .iter()
            .filter(|m| m.class == MutantClass::SignalMixUp)
            .map(|m| (m.original.as_str(), m.replacement.as_str()))
            .collect();
        assert_eq!(mix, [("a", "b"), ("b", "c"), ("c", "a")]);
    }

    #[test]
    fn a_stale_site_is_refused() {
        let s = sites("m.sv", SRC);
        let other = SRC.replace("(a == b)", "(b == a) ");
        let m = s.iter().find(|m| m.original == "==").unwrap();
        assert!(m.apply(&other.replace("==", "=!")).is_err());
    }
}
