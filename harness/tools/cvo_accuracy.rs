//! `pccx-cosim cvo-accuracy`: the golden CVO functions against the exact
//! functions over every BF16 input, and REDUCE_SUM against an exact sum
//! (the checks are `pccx_golden::numerics::cvo::accuracy`; this module
//! prints them, writes them as JSON, and draws one SVG plot per function).
//! docs/cvo.md section 6 shows the results.

use pccx_golden::isa::CvoFunc;
use pccx_golden::numerics::cvo::accuracy::{
    self, FunctionReport, Method, Record, SumReport, AMBIGUOUS_MARGIN, FUNCTIONS,
};
use pccx_golden::numerics::Bf16;
use serde_json::{json, Value};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The REDUCE_SUM check's seed and number of random vectors (the
/// adversarial vectors come on top). Fixed, so two runs print the same.
pub const SUM_SEED: u64 = 1;
pub const SUM_RANDOM_VECTORS: usize = 1000;

/// Inputs listed per category in the JSON (the counts are always whole).
const LISTED: usize = 64;

/// Every check's result.
pub struct Accuracy {
    pub functions: Vec<FunctionReport>,
    pub sum: SumReport,
}

impl Accuracy {
    /// Runs every check (about a second in a release build).
    pub fn measure() -> Accuracy {
        Accuracy {
            functions: FUNCTIONS.iter().map(|&f| accuracy::report(f)).collect(),
            sum: accuracy::reduce_sum_report(SUM_SEED, SUM_RANDOM_VECTORS),
        }
    }

    pub fn passed(&self) -> bool {
        self.functions.iter().all(FunctionReport::passed) && self.sum.passed()
    }

    /// The printed report: one block per function, REDUCE_SUM, a verdict.
    pub fn text(&self) -> String {
        let mut t = String::new();
        let _ = writeln!(
            t,
            "cvo-accuracy: golden CVO against the exact functions, every one of the 65536 BF16 \
             inputs (docs/cvo.md section 6)"
        );
        for r in &self.functions {
            let _ = writeln!(
                t,
                "{:<6} {}  bound {} ULP, {}",
                upper(r.func),
                verdict(r.passed()),
                r.bound,
                match r.method {
                    Method::Exact => "correct rounding proven with exact integer arithmetic",
                    Method::F64 => "f64 reference rounded once",
                }
            );
            let at = if r.max_steps == 0 {
                String::new()
            } else {
                format!(" at {}", input_text(r.max_steps_input))
            };
            let _ = writeln!(
                t,
                "       {} inputs: max {} ULP from the correctly rounded result{at}; \
                 max |error| {:.4} ULP at {}",
                r.inputs,
                r.max_steps,
                r.max_error_ulp,
                input_text(r.max_error_input)
            );
            let margin = match r.method {
                Method::Exact => String::new(),
                Method::F64 => format!(
                    " (smallest margin 2^{:.1} at {}; ambiguous below 2^{:.0})",
                    r.min_margin.log2(),
                    hex(r.min_margin_input),
                    AMBIGUOUS_MARGIN.log2()
                ),
            };
            let _ = writeln!(
                t,
                "       not correctly rounded: {}; beyond the bound: {}; special values: {} ({} wrong); \
                 ambiguous: {}{margin}",
                r.not_correctly_rounded,
                r.out_of_bound.len(),
                r.special_cases,
                r.special_mismatches.len(),
                r.ambiguous.len()
            );
            for rec in wrong(r).take(8) {
                let _ = writeln!(t, "         {}", record_text(rec));
            }
        }
        let s = &self.sum;
        let _ = writeln!(
            t,
            "REDUCE_SUM {}  exact, one rounding: {} vectors ({} terms, up to {} per vector; seed {}), \
             each summed whole and split in 2 and 4 parts (interleaved, contiguous)",
            verdict(s.passed()),
            s.vectors,
            s.terms,
            accuracy::MAX_TERMS,
            s.seed
        );
        let _ = writeln!(
            t,
            "       not exact: {}; splits disagreeing: {}; results NaN {}, Inf {}, zero {}",
            s.mismatches.len(),
            s.split_disagreements,
            s.nan_results,
            s.inf_results,
            s.zero_results
        );
        for case in s.mismatches.iter().take(8) {
            let results: Vec<String> = case
                .results
                .iter()
                .map(|(split, r)| format!("{split}: {}", hex(*r)))
                .collect();
            let _ = writeln!(
                t,
                "         {} ({} terms): exact {}, got {}",
                case.kind,
                case.terms,
                hex(case.expected),
                results.join(", ")
            );
        }
        let failed: Vec<String> = self
            .functions
            .iter()
            .filter(|r| !r.passed())
            .map(|r| upper(r.func))
            .chain((!self.sum.passed()).then(|| "REDUCE_SUM".to_string()))
            .collect();
        if failed.is_empty() {
            let _ = write!(t, "cvo-accuracy: PASS, every function within its bound");
        } else {
            let _ = write!(t, "cvo-accuracy: FAIL: {}", failed.join(", "));
        }
        t
    }

    pub fn to_json(&self) -> Value {
        json!({
            "inputs_per_function": 65536,
            "ambiguous_margin": AMBIGUOUS_MARGIN,
            "functions": self.functions.iter().map(function_json).collect::<Vec<_>>(),
            "reduce_sum": sum_json(&self.sum),
            "pass": self.passed(),
        })
    }
}

fn verdict(pass: bool) -> &'static str {
    if pass {
        "PASS"
    } else {
        "FAIL"
    }
}

fn upper(func: CvoFunc) -> String {
    func.name().to_ascii_uppercase()
}

fn hex(b: Bf16) -> String {
    format!("{:#06x}", b.0)
}

/// A BF16 value for people: short decimals, scientific when long.
fn value_text(b: Bf16) -> String {
    let v = b.to_f64();
    let plain = format!("{v}");
    if plain.len() <= 12 {
        plain
    } else {
        format!("{v:.5e}")
    }
}

fn input_text(b: Bf16) -> String {
    format!("{} ({})", hex(b), value_text(b))
}

/// The inputs a reader wants to see: not correctly rounded, or failing.
fn wrong(r: &FunctionReport) -> impl Iterator<Item = &Record> {
    r.records.iter().filter(|rec| !rec.correctly_rounded())
}

fn record_text(rec: &Record) -> String {
    let steps = rec
        .steps
        .map_or("not comparable".to_string(), |s| format!("{s} ULP"));
    format!(
        "x = {}: golden {} ({}), correctly rounded {} ({}), {steps}, error {:.4} ULP{}",
        input_text(rec.input),
        hex(rec.golden),
        value_text(rec.golden),
        hex(rec.reference),
        value_text(rec.reference),
        rec.error_ulp,
        if rec.special { ", special value" } else { "" }
    )
}

/// A finite f64 as JSON, anything else as null (JSON has no Inf or NaN).
fn number(v: f64) -> Value {
    if v.is_finite() {
        json!(v)
    } else {
        Value::Null
    }
}

fn inputs_json(inputs: &[Bf16]) -> Value {
    json!(inputs
        .iter()
        .take(LISTED)
        .map(|&b| hex(b))
        .collect::<Vec<_>>())
}

fn record_json(rec: &Record) -> Value {
    json!({
        "input": hex(rec.input),
        "input_value": number(rec.input.to_f64()),
        "golden": hex(rec.golden),
        "reference": hex(rec.reference),
        "ulp": rec.steps,
        "error_ulp": number(rec.error_ulp),
        "special": rec.special,
    })
}

fn function_json(r: &FunctionReport) -> Value {
    json!({
        "func": r.func.name(),
        "bound_ulp": r.bound,
        "method": r.method.name(),
        "inputs": r.inputs,
        "max_ulp": r.max_steps,
        "max_ulp_input": (r.max_steps > 0).then(|| hex(r.max_steps_input)),
        "max_ulp_input_value": (r.max_steps > 0).then(|| number(r.max_steps_input.to_f64())),
        "max_error_ulp": r.max_error_ulp,
        "max_error_input": hex(r.max_error_input),
        "max_error_input_value": number(r.max_error_input.to_f64()),
        "not_correctly_rounded": r.not_correctly_rounded,
        "not_correctly_rounded_records":
            wrong(r).take(LISTED).map(record_json).collect::<Vec<_>>(),
        "special_cases": r.special_cases,
        "special_mismatches": r.special_mismatches.len(),
        "special_mismatch_inputs": inputs_json(&r.special_mismatches),
        "out_of_bound": r.out_of_bound.len(),
        "out_of_bound_inputs": inputs_json(&r.out_of_bound),
        "ambiguous": r.ambiguous.len(),
        "ambiguous_inputs": inputs_json(&r.ambiguous),
        "min_margin": number(r.min_margin),
        "min_margin_input": (r.method == Method::F64).then(|| hex(r.min_margin_input)),
        "pass": r.passed(),
    })
}

fn sum_json(s: &SumReport) -> Value {
    json!({
        "seed": s.seed,
        "vectors": s.vectors,
        "terms": s.terms,
        "splits": accuracy::SPLITS.iter().map(|(name, _, _)| *name).collect::<Vec<_>>(),
        "mismatches": s.mismatches.len(),
        "mismatch_cases": s.mismatches.iter().take(LISTED).map(|c| json!({
            "kind": c.kind,
            "terms": c.terms,
            "exact": hex(c.expected),
            "results": c.results.iter().map(|(split, r)| json!({"split": split, "result": hex(*r)}))
                .collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
        "split_disagreements": s.split_disagreements,
        "nan_results": s.nan_results,
        "inf_results": s.inf_results,
        "zero_results": s.zero_results,
        "pass": s.passed(),
    })
}

// ----- plots ---------------------------------------------------------------------

/// The file a function's plot goes to in `dir`.
pub fn plot_path(dir: &Path, func: CvoFunc) -> PathBuf {
    dir.join(format!("cvo-{}-ulp.svg", func.name()))
}

/// Writes every function's plot into `dir` (created if missing).
pub fn write_plots(dir: &Path, a: &Accuracy) -> Result<Vec<PathBuf>, String> {
    prepare_plot_dir(dir)?;
    let mut written = Vec::new();
    for r in &a.functions {
        let path = plot_path(dir, r.func);
        std::fs::write(&path, svg(r))
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        written.push(path);
    }
    Ok(written)
}

/// Creates the plot directory, or says why it cannot be one; called before
/// the measurement too, so a bad `--plots` fails at once.
pub fn prepare_plot_dir(dir: &Path) -> Result<(), String> {
    if dir.exists() && !dir.is_dir() {
        return Err(format!(
            "--plots {}: exists and is not a directory",
            dir.display()
        ));
    }
    std::fs::create_dir_all(dir)
        .map_err(|e| format!("--plots {}: cannot create: {e}", dir.display()))
}

const WIDTH: f64 = 960.0;
const HEIGHT: f64 = 380.0;
const LEFT: f64 = 64.0;
const RIGHT: f64 = 16.0;
const TOP: f64 = 48.0;
const BOTTOM: f64 = 56.0;

/// The finite inputs in the order of their values (-MAX .. -0, +0 .. MAX):
/// the plot's x axis, one slot per input. An axis by ordering index is
/// logarithmic in the magnitude, so every binade gets the same width.
fn finite_by_value() -> Vec<u16> {
    let negative = (0x8000..=0xFF7Fu16).rev();
    let positive = 0x0000..=0x7F7Fu16;
    negative.chain(positive).collect()
}

/// One function's plot: the signed error in ULP of the exact value against
/// the input, drawn per pixel column as the range (min to max) of the
/// errors of the inputs in it, one polyline per run of columns that have a
/// non-special input. The bound, the half-ULP of correct rounding, and the
/// inputs not correctly rounded (red dots) are marked.
pub fn svg(r: &FunctionReport) -> String {
    let order = finite_by_value();
    let plot_w = WIDTH - LEFT - RIGHT;
    let plot_h = HEIGHT - TOP - BOTTOM;
    let columns = plot_w as usize;
    let limit = r.bound as f64 + 0.5;
    // Symmetric y range: the bound with room, or the largest error.
    let y_max = (limit.max(r.max_error_ulp) * 1.15 * 2.0).ceil() / 2.0;
    let x_of = |index: usize| LEFT + plot_w * (index as f64 + 0.5) / order.len() as f64;
    let y_of = |e: f64| TOP + plot_h / 2.0 - (e / y_max) * (plot_h / 2.0);

    let mut s = String::new();
    let _ = writeln!(
        s,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{WIDTH}\" height=\"{HEIGHT}\" \
         viewBox=\"0 0 {WIDTH} {HEIGHT}\" font-family=\"sans-serif\" font-size=\"11\">"
    );
    let _ = writeln!(s, "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>");
    let at = if r.max_steps > 0 {
        format!(" at {}", input_text(r.max_steps_input))
    } else {
        String::new()
    };
    let title = format!(
        "{}: max |error| {:.4} ULP at {}; max {} ULP from correctly rounded{at}; bound {} ULP",
        upper(r.func),
        r.max_error_ulp,
        input_text(r.max_error_input),
        r.max_steps,
        r.bound
    );
    let _ = writeln!(
        s,
        "<text x=\"{}\" y=\"20\" text-anchor=\"middle\" font-size=\"13\">{}</text>",
        WIDTH / 2.0,
        escape(&title)
    );
    let _ = writeln!(
        s,
        "<text x=\"{}\" y=\"36\" text-anchor=\"middle\" fill=\"#555\">{}</text>",
        WIDTH / 2.0,
        escape(&format!(
            "golden - exact, in ULP of the exact value, over the {} finite inputs; \
             not correctly rounded: {}; special values (not plotted): {}",
            order.len(),
            r.not_correctly_rounded,
            r.special_cases
        ))
    );
    // Frame, zero line, the half ULP and the bound.
    let _ = writeln!(
        s,
        "<rect x=\"{LEFT}\" y=\"{TOP}\" width=\"{plot_w}\" height=\"{plot_h}\" fill=\"none\" \
         stroke=\"#333\"/>"
    );
    let hline = |s: &mut String, e: f64, style: &str| {
        let y = y_of(e);
        let _ = writeln!(
            s,
            "<line x1=\"{LEFT}\" y1=\"{y:.1}\" x2=\"{:.1}\" y2=\"{y:.1}\" {style}/>",
            LEFT + plot_w
        );
    };
    hline(&mut s, 0.0, "stroke=\"#bbb\"");
    if r.bound > 0 {
        for e in [-0.5, 0.5] {
            hline(&mut s, e, "stroke=\"#999\" stroke-dasharray=\"4 3\"");
        }
    }
    for e in [-limit, limit] {
        hline(&mut s, e, "stroke=\"#c00\" stroke-dasharray=\"8 4\"");
    }
    let _ = writeln!(
        s,
        "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\" fill=\"#c00\">bound: {} ULP from \
         correctly rounded (|error| &lt;= {})</text>",
        LEFT + plot_w - 4.0,
        y_of(limit) - 4.0,
        r.bound,
        limit
    );
    // y ticks every half ULP.
    let mut e = -y_max;
    while e <= y_max + 1e-9 {
        let y = y_of(e);
        let _ = writeln!(
            s,
            "<line x1=\"{:.1}\" y1=\"{y:.1}\" x2=\"{LEFT}\" y2=\"{y:.1}\" stroke=\"#333\"/>\
             <text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{e}</text>",
            LEFT - 4.0,
            LEFT - 6.0,
            y + 4.0
        );
        e += 0.5;
    }
    let _ = writeln!(
        s,
        "<text transform=\"translate(16 {:.1}) rotate(-90)\" text-anchor=\"middle\">error (ULP)</text>",
        TOP + plot_h / 2.0
    );
    // x ticks at round values; an input's slot is its place in `order`.
    for (value, label) in X_TICKS {
        let index = order.partition_point(|&b| Bf16(b).to_f64() < *value);
        let x = x_of(index.min(order.len() - 1));
        let _ = writeln!(
            s,
            "<line x1=\"{x:.1}\" y1=\"{:.1}\" x2=\"{x:.1}\" y2=\"{:.1}\" stroke=\"#333\"/>\
             <text x=\"{x:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{label}</text>",
            TOP + plot_h,
            TOP + plot_h + 4.0,
            TOP + plot_h + 16.0
        );
    }
    let _ = writeln!(
        s,
        "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">input x (every finite BF16, in \
         order: each binade the same width)</text>",
        LEFT + plot_w / 2.0,
        HEIGHT - 12.0
    );
    // The data: per column, the range of errors.
    let mut runs: Vec<Vec<(f64, f64)>> = Vec::new();
    let mut current: Vec<(f64, f64)> = Vec::new();
    for c in 0..columns {
        let from = c * order.len() / columns;
        let to = (c + 1) * order.len() / columns;
        let (lo, hi) = order[from..to]
            .iter()
            .map(|&b| r.records[usize::from(b)].error_ulp)
            .filter(|e| !e.is_nan())
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), e| {
                (lo.min(e), hi.max(e))
            });
        if lo > hi {
            if !current.is_empty() {
                runs.push(std::mem::take(&mut current));
            }
            continue;
        }
        let x = LEFT + c as f64 + 0.5;
        current.push((x, y_of(lo)));
        current.push((x, y_of(hi)));
    }
    if !current.is_empty() {
        runs.push(current);
    }
    for run in &runs {
        let points: Vec<String> = run.iter().map(|(x, y)| format!("{x:.1},{y:.1}")).collect();
        let _ = writeln!(
            s,
            "<polyline fill=\"none\" stroke=\"#1f5fa8\" stroke-width=\"1\" points=\"{}\"/>",
            points.join(" ")
        );
    }
    for (index, &b) in order.iter().enumerate() {
        let rec = &r.records[usize::from(b)];
        if !rec.correctly_rounded() && !rec.error_ulp.is_nan() {
            let _ = writeln!(
                s,
                "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"3\" fill=\"none\" stroke=\"#c00\">\
                 <title>{}</title></circle>",
                x_of(index),
                y_of(rec.error_ulp),
                escape(&record_text(rec))
            );
        }
    }
    s.push_str("</svg>\n");
    s
}

/// x-axis ticks: (value, label).
const X_TICKS: &[(f64, &str)] = &[
    (-1e30, "-1e30"),
    (-1e20, "-1e20"),
    (-1e10, "-1e10"),
    (-1.0, "-1"),
    (-1e-10, "-1e-10"),
    (-1e-20, "-1e-20"),
    (-1e-30, "-1e-30"),
    (0.0, "0"),
    (1e-30, "1e-30"),
    (1e-20, "1e-20"),
    (1e-10, "1e-10"),
    (1.0, "1"),
    (1e10, "1e10"),
    (1e20, "1e20"),
    (1e30, "1e30"),
];

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_axis_is_every_finite_input_in_order() {
        let order = finite_by_value();
        assert_eq!(order.len(), 2 * 0x7F80);
        assert!(order
            .windows(2)
            .all(|w| Bf16(w[0]).to_f64() <= Bf16(w[1]).to_f64()));
    }

    /// A failing function is printed as FAIL, named in the verdict, its
    /// inputs listed, and the JSON says so.
    #[test]
    fn a_failure_is_reported() {
        let wrong_sqrt = |x: Bf16| {
            let y = pccx_golden::numerics::cvo::sqrt(x);
            if x == Bf16(0x4000) {
                Bf16(y.0 + 1)
            } else {
                y
            }
        };
        let mut a = Accuracy {
            functions: vec![accuracy::check(CvoFunc::Sqrt, 0, wrong_sqrt)],
            sum: accuracy::reduce_sum_report(1, 0),
        };
        assert!(!a.passed());
        let text = a.text();
        assert!(text.contains("SQRT   FAIL"), "{text}");
        assert!(text.contains("x = 0x4000 (2): golden 0x3fb6"), "{text}");
        assert!(text.ends_with("cvo-accuracy: FAIL: SQRT"), "{text}");
        let doc = a.to_json();
        assert_eq!(doc["pass"], false);
        assert_eq!(doc["functions"][0]["out_of_bound_inputs"][0], "0x4000");
        a.functions = vec![accuracy::report(CvoFunc::Sqrt)];
        assert!(a.passed());
    }

    #[test]
    fn a_plot_is_svg_with_the_data() {
        let r = accuracy::report(CvoFunc::Gelu);
        let s = svg(&r);
        assert!(s.starts_with("<svg"));
        assert!(s.trim_end().ends_with("</svg>"));
        assert!(s.contains("<polyline"));
        // GELU's three inputs that are not correctly rounded are marked.
        assert_eq!(s.matches("<circle").count(), r.not_correctly_rounded);
        assert!(s.len() < 200_000);
    }
}
