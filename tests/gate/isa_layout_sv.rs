//! The SystemVerilog's instruction fields sit where the Rust ISA puts them.
//!
//! `golden/src/isa/layout.rs` is the one table of bit positions on the Rust
//! side; `hw/rtl/pccx_pkg.sv` declares the same fields as packed structs
//! (`instr_t`, its union `body_t` and one `*_body_t` per format). This test
//! reads the package's text (no RTL build), works out every member's bits
//! from the declaration order and widths, and checks them against
//! layout.rs: every field of every format, the flag bits, and the `// [h:l]`
//! comment on each member. The shape-table entry id the harness exchanges
//! with the RTL (`entry_id_t`, layout.rs's `entry_id`) is checked the same
//! way. It needs no Verilator.
//!
//! (pccx_pkg.sv's comment still calls this file `tests/isa_layout_sv.rs`,
//! its name before the gate became one binary: any edit of hw/rtl, a
//! comment too, makes the equivalence evidence of hw/mutants/evidence.json
//! stale, so the comment waits for the next real change of that file.)

use pccx_golden::isa::layout::{self, Field};
use std::collections::BTreeMap;
use std::path::Path;

const PKG: &str = "hw/rtl/pccx_pkg.sv";

/// One member of a packed struct or union, as written.
#[derive(Clone, Debug)]
struct Member {
    name: String,
    ty: String,
    /// The `// [h:l]` or `// [b]` comment's bits, if the line has one.
    comment: Option<(u32, u32)>,
    line: usize,
}

#[derive(Clone, Debug)]
struct Aggregate {
    union: bool,
    members: Vec<Member>,
}

/// The types the package declares: `typedef logic [h:l] NAME;` widths and
/// `typedef struct|union packed { ... } NAME;` member lists.
#[derive(Default, Debug)]
struct Types {
    vectors: BTreeMap<String, u32>,
    aggregates: BTreeMap<String, Aggregate>,
}

fn strip_comment(line: &str) -> (&str, Option<&str>) {
    match line.find("//") {
        Some(at) => (&line[..at], Some(&line[at + 2..])),
        None => (line, None),
    }
}

/// `[h:l]` or `[b]` at the start of `s` (after blanks): (h, l).
fn bit_range(s: &str) -> Option<(u32, u32)> {
    let s = s.trim_start().strip_prefix('[')?;
    let inner = &s[..s.find(']')?];
    match inner.split_once(':') {
        Some((h, l)) => Some((h.trim().parse().ok()?, l.trim().parse().ok()?)),
        None => {
            let b = inner.trim().parse().ok()?;
            Some((b, b))
        }
    }
}

/// The width of `logic`, `logic [h:l]` or a named type.
fn width_of(ty: &str, types: &Types) -> Result<u32, String> {
    let ty = ty.trim();
    if ty == "logic" {
        return Ok(1);
    }
    if let Some(range) = ty.strip_prefix("logic") {
        let (h, l) = bit_range(range).ok_or_else(|| format!("cannot read the range of `{ty}`"))?;
        return Ok(h - l + 1);
    }
    if let Some(w) = types.vectors.get(ty) {
        return Ok(*w);
    }
    let agg = types
        .aggregates
        .get(ty)
        .ok_or_else(|| format!("unknown type `{ty}`"))?;
    let widths = agg
        .members
        .iter()
        .map(|m| width_of(&m.ty, types))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(if agg.union {
        widths.iter().copied().max().unwrap_or(0)
    } else {
        widths.iter().sum()
    })
}

fn parse(text: &str) -> Result<Types, String> {
    let mut types = Types::default();
    let mut open: Option<Aggregate> = None;
    for (n, raw) in text.lines().enumerate() {
        let line = n + 1;
        let (code, comment) = strip_comment(raw);
        let code = code.trim();
        if let Some(agg) = open.as_mut() {
            if let Some(rest) = code.strip_prefix('}') {
                let name = rest.trim().trim_end_matches(';').trim().to_string();
                types.aggregates.insert(name, open.take().unwrap());
                continue;
            }
            if code.is_empty() {
                continue;
            }
            let decl = code
                .strip_suffix(';')
                .ok_or_else(|| format!("{PKG}:{line}: a member line without `;`: `{code}`"))?;
            let (ty, name) = decl
                .rsplit_once(char::is_whitespace)
                .ok_or_else(|| format!("{PKG}:{line}: cannot split `{decl}` into type and name"))?;
            agg.members.push(Member {
                name: name.trim().to_string(),
                ty: ty.trim().to_string(),
                comment: comment.and_then(bit_range),
                line,
            });
            continue;
        }
        if code.starts_with("typedef struct packed") || code.starts_with("typedef union packed") {
            if !code.ends_with('{') {
                return Err(format!(
                    "{PKG}:{line}: expected `{{` at the end of `{code}`"
                ));
            }
            open = Some(Aggregate {
                union: code.starts_with("typedef union"),
                members: Vec::new(),
            });
        } else if let Some(rest) = code.strip_prefix("typedef logic") {
            // `typedef logic [h:l] NAME;` (a one-bit `typedef logic NAME;` too).
            let rest = rest.trim().trim_end_matches(';');
            let (w, name) = match bit_range(rest) {
                Some((h, l)) => (h - l + 1, rest[rest.find(']').unwrap() + 1..].trim()),
                None => (1, rest.trim()),
            };
            if name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                types.vectors.insert(name.to_string(), w);
            }
        }
    }
    if open.is_some() {
        return Err(format!("{PKG}: a typedef struct/union is never closed"));
    }
    Ok(types)
}

/// Every leaf member under `ty`, laid out from bit `hi` down: (dotted path,
/// lo, width, line, comment).
type Leaf = (String, u32, u32, usize, Option<(u32, u32)>);

fn layout_of(
    ty: &str,
    prefix: &str,
    hi: u32,
    types: &Types,
    out: &mut Vec<Leaf>,
) -> Result<(), String> {
    let Some(agg) = types.aggregates.get(ty) else {
        return Ok(());
    };
    let mut top = hi + 1;
    for m in &agg.members {
        let w = width_of(&m.ty, types)
            .map_err(|e| format!("{PKG}:{}: {prefix}{}: {e}", m.line, m.name))?;
        let lo = if agg.union {
            // Every member of a packed union spans all of it.
            let all = width_of(ty, types)?;
            if w != all {
                return Err(format!(
                    "{PKG}:{}: {prefix}{} is {w} bits wide, its union {ty} {all}",
                    m.line, m.name
                ));
            }
            hi + 1 - w
        } else {
            top - w
        };
        let path = format!("{prefix}{}", m.name);
        out.push((path.clone(), lo, w, m.line, m.comment));
        layout_of(&m.ty, &format!("{path}."), lo + w - 1, types, out)?;
        if !agg.union {
            top = lo;
        }
    }
    Ok(())
}

/// Every member of the package's type `ty`, which must be `width` bits wide.
fn sv_layout_of(ty: &str, width: u32) -> SvLayout {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(root.join(PKG))
        .unwrap_or_else(|e| panic!("cannot read {PKG}: {e}"));
    let types = parse(&text).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        width_of(ty, &types).unwrap_or_else(|e| panic!("{PKG}: {ty}: {e}")),
        width,
        "{PKG}: {ty} is not {width} bits wide"
    );
    let mut leaves = Vec::new();
    layout_of(ty, "", width - 1, &types, &mut leaves).unwrap_or_else(|e| panic!("{e}"));
    leaves
        .into_iter()
        .map(|(path, lo, w, line, comment)| (path, (lo, w, line, comment)))
        .collect()
}

fn sv_layout() -> SvLayout {
    sv_layout_of("instr_t", 64)
}

fn bits(lo: u32, width: u32) -> String {
    if width == 1 {
        format!("[{lo}]")
    } else {
        format!("[{}:{lo}]", lo + width - 1)
    }
}

/// The formats: the union member of `body_t` and layout.rs's fields.
fn formats() -> Vec<(&'static str, &'static [Field])> {
    vec![
        ("mat", &layout::mat::ALL[..]),
        ("memcpy", &layout::memcpy::ALL[..]),
        ("memset", &layout::memset::ALL[..]),
        ("cvo", &layout::cvo::ALL[..]),
    ]
}

type SvLayout = BTreeMap<String, (u32, u32, usize, Option<(u32, u32)>)>;

/// `field` of layout.rs against the SV member at `path`.
fn check(sv: &SvLayout, errors: &mut Vec<String>, path: &str, field: &Field) {
    match sv.get(path) {
        None => errors.push(format!(
            "{path}: layout.rs has `{}` at {}, {PKG} has no member `{path}`",
            field.name,
            bits(field.lo, field.width)
        )),
        Some(&(lo, w, line, _)) if (lo, w) != (field.lo, field.width) => errors.push(format!(
            "{path}: {PKG}:{line} puts it at {} (lo {lo}, width {w}), layout.rs at {} (lo {}, width {})",
            bits(lo, w),
            bits(field.lo, field.width),
            field.lo,
            field.width
        )),
        Some(_) => {}
    }
}

/// The bits of flag `mask` of a flags field, as a field of the word.
fn flag(flags: Field, mask: u8) -> Field {
    Field {
        name: flags.name,
        lo: flags.lo + mask.trailing_zeros(),
        width: mask.count_ones(),
    }
}

/// Every difference between the SV layout and layout.rs, one line each,
/// naming the field.
fn differences() -> Vec<String> {
    let sv = sv_layout();
    let mut errors = Vec::new();
    check(&sv, &mut errors, "opcode", &layout::OPCODE);
    check(&sv, &mut errors, "body", &layout::BODY);
    check(&sv, &mut errors, "body.raw", &layout::BODY);
    for (format, fields) in formats() {
        check(&sv, &mut errors, &format!("body.{format}"), &layout::BODY);
        for f in fields {
            check(&sv, &mut errors, &format!("body.{format}.{}", f.name), f);
        }
        // No member that layout.rs does not have.
        let prefix = format!("body.{format}.");
        for path in sv.keys() {
            if let Some(name) = path.strip_prefix(&prefix) {
                let top = name.split('.').next().unwrap();
                if !fields.iter().any(|f| f.name == top) {
                    errors.push(format!(
                        "{path}: {PKG} has it, layout.rs's {format} format does not"
                    ));
                }
            }
        }
    }
    // The flag bits (layout.rs gives them as masks of the flags field).
    use layout::{cvo, mat};
    let flags = [
        (
            "body.mat.flags.findemax",
            flag(mat::FLAGS, mat::FLAG_FINDEMAX),
        ),
        ("body.mat.flags.accm", flag(mat::FLAGS, mat::FLAG_ACCM)),
        (
            "body.mat.flags.w_scale",
            flag(mat::FLAGS, mat::FLAG_W_SCALE),
        ),
        (
            "body.mat.flags.reserved",
            flag(mat::FLAGS, mat::FLAGS_RESERVED),
        ),
        (
            "body.cvo.flags.sub_emax",
            flag(cvo::FLAGS, cvo::FLAG_SUB_EMAX),
        ),
        (
            "body.cvo.flags.recip_scale",
            flag(cvo::FLAGS, cvo::FLAG_RECIP_SCALE),
        ),
        ("body.cvo.flags.accm", flag(cvo::FLAGS, cvo::FLAG_ACCM)),
        (
            "body.cvo.flags.reserved",
            flag(cvo::FLAGS, cvo::FLAGS_RESERVED),
        ),
    ];
    for (path, f) in &flags {
        check(&sv, &mut errors, path, f);
    }
    for path in sv.keys() {
        let is_flag = path.starts_with("body.mat.flags.") || path.starts_with("body.cvo.flags.");
        if is_flag && !flags.iter().any(|(p, _)| p == path) {
            errors.push(format!(
                "{path}: {PKG} has this flag bit, layout.rs has no such flag"
            ));
        }
    }
    comments_match(&sv, &mut errors);
    errors
}

/// The comments say the same bits as the declarations.
fn comments_match(sv: &SvLayout, errors: &mut Vec<String>) {
    for (path, &(lo, w, line, comment)) in sv {
        if let Some((h, l)) = comment {
            if (l, h - l + 1) != (lo, w) {
                errors.push(format!(
                    "{path}: the comment at {PKG}:{line} says {}, the declaration gives {}",
                    bits(l, h - l + 1),
                    bits(lo, w)
                ));
            }
        }
    }
}

/// Every difference between `entry_id_t` and layout.rs's `entry_id`.
fn entry_id_differences() -> Vec<String> {
    let fields = &layout::entry_id::ALL;
    let width = fields.iter().map(|f| f.lo + f.width).max().unwrap();
    let sv = sv_layout_of("entry_id_t", width);
    let mut errors = Vec::new();
    for f in fields {
        check(&sv, &mut errors, f.name, f);
    }
    for path in sv.keys() {
        if !fields.iter().any(|f| f.name == path) {
            errors.push(format!(
                "entry_id_t.{path}: {PKG} has it, layout.rs's entry_id does not"
            ));
        }
    }
    for (path, &(_, _, line, comment)) in &sv {
        if comment.is_none() {
            errors.push(format!(
                "entry_id_t.{path} ({PKG}:{line}) has no `// [h:l]` comment"
            ));
        }
    }
    comments_match(&sv, &mut errors);
    errors
}

#[test]
fn sv_fields_match_layout_rs() {
    let errors = differences();
    assert!(
        errors.is_empty(),
        "{} field(s) of {PKG} differ from golden/src/isa/layout.rs:\n  {}",
        errors.len(),
        errors.join("\n  ")
    );
}

#[test]
fn the_entry_id_matches_layout_rs() {
    let errors = entry_id_differences();
    assert!(
        errors.is_empty(),
        "{} difference(s) between entry_id_t in {PKG} and layout.rs's entry_id:\n  {}",
        errors.len(),
        errors.join("\n  ")
    );
}

#[test]
fn every_member_has_its_bits_in_a_comment() {
    // The comments are what a reader of the RTL sees; keep them complete.
    let missing: Vec<String> = sv_layout()
        .into_iter()
        .filter(|(_, (_, _, _, comment))| comment.is_none())
        .map(|(path, (_, _, line, _))| format!("{path} ({PKG}:{line})"))
        .collect();
    assert!(
        missing.is_empty(),
        "members without a `// [h:l]` comment: {missing:?}"
    );
}

#[test]
fn the_parser_reads_a_small_package() {
    let text = "typedef logic [3:0] nib_t;\n\
                typedef struct packed {\n  logic a;  // [5]\n  nib_t b;  // [4:1]\n  logic c;\n} inner_t;\n\
                typedef struct packed {\n  logic [1:0] top;\n  inner_t in;\n} outer_t;\n";
    let types = parse(text).unwrap();
    assert_eq!(width_of("outer_t", &types).unwrap(), 8);
    let mut leaves = Vec::new();
    layout_of("outer_t", "", 7, &types, &mut leaves).unwrap();
    let got: Vec<(String, u32, u32)> = leaves
        .into_iter()
        .map(|(p, lo, w, _, _)| (p, lo, w))
        .collect();
    let want = [
        ("top", 6, 2),
        ("in", 0, 6),
        ("in.a", 5, 1),
        ("in.b", 1, 4),
        ("in.c", 0, 1),
    ];
    assert_eq!(
        got,
        want.iter()
            .map(|(p, lo, w)| (p.to_string(), *lo, *w))
            .collect::<Vec<_>>()
    );
}
