//! `pccx-cosim cvo-accuracy`: the golden CVO functions against the exact
//! functions over every BF16 input, and REDUCE_SUM against an exact sum
//! (the checks are `pccx_golden::numerics::cvo::accuracy`; this module
//! prints them, writes them as JSON, and draws one SVG plot per function
//! with plotters).
//! docs/cvo.md section 6 shows the results.

use pccx_golden::isa::CvoFunc;
use pccx_golden::numerics::cvo::accuracy::{
    self, FunctionReport, Method, Record, SumReport, AMBIGUOUS_MARGIN, FUNCTIONS,
};
use pccx_golden::numerics::Bf16;
use plotters::coord::ranged1d::{KeyPointHint, NoDefaultFormatting, Ranged, ValueFormatter};
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use serde_json::{json, Value};
use std::fmt::Write as _;
use std::io;
use std::ops::Range;
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

/// The plot's size in pixels, and the height of its two title lines.
const WIDTH: u32 = 960;
const HEIGHT: u32 = 400;
const HEADER: u32 = 44;

/// Colours: the data, the bound, correct rounding (the half ULP), the zero
/// line, the frame and axes, and the subtitle.
const DATA: RGBColor = RGBColor(0x1f, 0x5f, 0xa8);
const BOUND: RGBColor = RGBColor(0xcc, 0x00, 0x00);
const HALF_ULP: RGBColor = RGBColor(0x99, 0x99, 0x99);
const ZERO: RGBColor = RGBColor(0xbb, 0xbb, 0xbb);
const FRAME: RGBColor = RGBColor(0x33, 0x33, 0x33);
const SUBTITLE: RGBColor = RGBColor(0x55, 0x55, 0x55);

/// The finite inputs in the order of their values (-MAX .. -0, +0 .. MAX):
/// the plot's x axis, one slot per input. An axis by ordering index is
/// logarithmic in the magnitude, so every binade gets the same width.
fn finite_by_value() -> Vec<u16> {
    let negative = (0x8000..=0xFF7Fu16).rev();
    let positive = 0x0000..=0x7F7Fu16;
    negative.chain(positive).collect()
}

/// One function's plot, as an SVG document: the signed error in ULP of the
/// exact value against the input, drawn per pixel column as the range (min
/// to max) of the errors of the inputs in it, one line per run of columns
/// that have a non-special input (a line of 65,280 points would make the
/// file megabytes and show nothing more). The bound, the half-ULP of
/// correct rounding, and the inputs not correctly rounded (red circles) are
/// marked. The caller writes the string to a file or inlines it in a page.
pub fn svg(r: &FunctionReport) -> String {
    let mut s = String::new();
    // The backend writes into the string, so only a layout error could
    // fail, and the layout is fixed: a failure is a bug in this function.
    draw(r, &mut s).expect("the cvo-accuracy plot's fixed layout draws");
    s
}

/// Draws `svg`'s plot into `out`. Font sizes are plotters' (the SVG
/// backend writes a size s as font-size s/1.24): 16 and 14 are 13 and 11 px.
fn draw(r: &FunctionReport, out: &mut String) -> Result<(), DrawingAreaErrorKind<io::Error>> {
    let order = finite_by_value();
    // x: the input's slot in `order`, input i centred on i + 0.5.
    let n = order.len() as f64;
    let limit = r.bound as f64 + 0.5;
    // Symmetric y range: the bound with room, or the largest error; a tick
    // every half ULP.
    let y_max = (limit.max(r.max_error_ulp) * 1.15 * 2.0).ceil() / 2.0;
    let halves = (y_max * 2.0) as i32;
    let y_axis = Axis {
        range: (-y_max..y_max).into(),
        ticks: (-halves..=halves)
            .map(|k| (k as f64 / 2.0, format!("{}", k as f64 / 2.0)))
            .collect(),
    };
    // x ticks at round values, each at the slot of the first input >= it.
    let x_axis = Axis {
        range: (0.0..n).into(),
        ticks: X_TICKS
            .iter()
            .map(|&(value, label)| {
                let index = order.partition_point(|&b| Bf16(b).to_f64() < value);
                (index.min(order.len() - 1) as f64 + 0.5, label.to_string())
            })
            .collect(),
    };

    let root = SVGBackend::with_string(out, (WIDTH, HEIGHT)).into_drawing_area();
    root.fill(&WHITE)?;
    let (header, body) = root.split_vertically(HEADER);
    let centred = |size: f64, colour: &RGBColor| {
        ("sans-serif", size)
            .into_font()
            .color(colour)
            .pos(Pos::new(HPos::Center, VPos::Top))
    };
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
    let subtitle = format!(
        "golden - exact, in ULP of the exact value, over the {} finite inputs; \
         not correctly rounded: {}; special values (not plotted): {}",
        order.len(),
        r.not_correctly_rounded,
        r.special_cases
    );
    let middle = WIDTH as i32 / 2;
    header.draw(&Text::new(title, (middle, 10), centred(16.0, &BLACK)))?;
    header.draw(&Text::new(subtitle, (middle, 28), centred(14.0, &SUBTITLE)))?;

    let mut chart = ChartBuilder::on(&body)
        .margin_left(8)
        .margin_right(16)
        .margin_bottom(4)
        .x_label_area_size(48)
        .y_label_area_size(64)
        .build_cartesian_2d(x_axis, y_axis)?;
    chart
        .configure_mesh()
        .x_desc("input x (every finite BF16, in order: each binade the same width)")
        .y_desc("error (ULP)")
        .label_style(("sans-serif", 14))
        .axis_desc_style(("sans-serif", 14))
        .axis_style(FRAME)
        // A faint grid at the ticks (an `Axis` has no light lines).
        .bold_line_style(BLACK.mix(0.06))
        .draw()?;

    // Frame, zero line, the half ULP (when the bound is 0 ULP, the half ULP
    // is the bound line) and the bound.
    chart.draw_series(std::iter::once(Rectangle::new(
        [(0.0, -y_max), (n, y_max)],
        FRAME.stroke_width(1),
    )))?;
    let across = |e: f64| [(0.0, e), (n, e)];
    chart.draw_series(LineSeries::new(across(0.0), ZERO))?;
    let label = |colour: &RGBColor, h: HPos| {
        ("sans-serif", 14)
            .into_font()
            .color(colour)
            .pos(Pos::new(h, VPos::Bottom))
    };
    if r.bound > 0 {
        for e in [-0.5, 0.5] {
            chart.draw_series(DashedLineSeries::new(across(e), 4, 3, HALF_ULP.into()))?;
        }
        chart.draw_series(std::iter::once(
            EmptyElement::at((0.0, 0.5))
                + Text::new(
                    "correctly rounded: |error| <= 0.5",
                    (4, -3),
                    label(&SUBTITLE, HPos::Left),
                ),
        ))?;
    }
    for e in [-limit, limit] {
        chart.draw_series(DashedLineSeries::new(across(e), 8, 4, BOUND.into()))?;
    }
    chart.draw_series(std::iter::once(
        EmptyElement::at((n, limit))
            + Text::new(
                format!(
                    "bound: {} ULP from correctly rounded (|error| <= {limit})",
                    r.bound
                ),
                (-4, -3),
                label(&BOUND, HPos::Right),
            ),
    ))?;

    // The data: per pixel column, the range of the errors of its inputs.
    let columns = chart.plotting_area().dim_in_pixel().0 as usize;
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
            // Only special values here: the line breaks.
            if !current.is_empty() {
                runs.push(std::mem::take(&mut current));
            }
            continue;
        }
        let x = (c as f64 + 0.5) * n / columns as f64;
        current.push((x, lo));
        current.push((x, hi));
    }
    if !current.is_empty() {
        runs.push(current);
    }
    for run in runs {
        chart.draw_series(LineSeries::new(run, DATA))?;
    }
    chart.draw_series(order.iter().enumerate().filter_map(|(index, &b)| {
        let rec = &r.records[usize::from(b)];
        (!rec.correctly_rounded() && !rec.error_ulp.is_nan()).then(|| {
            Circle::new(
                (index as f64 + 0.5, rec.error_ulp),
                3,
                BOUND.stroke_width(1),
            )
        })
    }))?;
    root.present()
}

/// A linear f64 axis with the ticks given, each with its label. plotters
/// would pick round values itself, but the x axis is an input's slot in
/// `order` (its ticks are the slots of round inputs), and the y axis wants a
/// tick every half ULP, the unit of correct rounding.
struct Axis {
    range: RangedCoordf64,
    ticks: Vec<(f64, String)>,
}

impl Ranged for Axis {
    type FormatOption = NoDefaultFormatting;
    type ValueType = f64;

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        self.range.map(value, limit)
    }

    /// The ticks as the bold key points (labels and grid), no light ones.
    fn key_points<H: KeyPointHint>(&self, hint: H) -> Vec<f64> {
        if hint.weight().allow_light_points() {
            Vec::new()
        } else {
            self.ticks.iter().map(|&(at, _)| at).collect()
        }
    }

    fn range(&self) -> Range<f64> {
        self.range.range()
    }
}

impl ValueFormatter<f64> for Axis {
    fn format_ext(&self, value: &f64) -> String {
        self.ticks
            .iter()
            .find(|(at, _)| at == value)
            .map_or(String::new(), |(_, label)| label.clone())
    }
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

    /// SQRT, wrong by one ULP at 2.
    fn wrong_sqrt(x: Bf16) -> Bf16 {
        let y = pccx_golden::numerics::cvo::sqrt(x);
        if x == Bf16(0x4000) {
            Bf16(y.0 + 1)
        } else {
            y
        }
    }

    /// A failing function is printed as FAIL, named in the verdict, its
    /// inputs listed, and the JSON says so.
    #[test]
    fn a_failure_is_reported() {
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
        assert!(s.contains("GELU: max |error|"), "the title");
        assert!(s.contains("error (ULP)") && s.contains("input x (every finite BF16"));
        assert!(s.contains("bound: 2 ULP from correctly rounded (|error| &lt;= 2.5)"));
        // The data: a line of two points (min, max) per pixel column, over
        // hundreds of columns (the dashed lines are two-point pieces).
        let longest = s
            .split("<polyline")
            .skip(1)
            .map(|line| line.split_once("/>").unwrap().0.matches(',').count())
            .max();
        assert!(longest > Some(400), "{longest:?}");
        // GELU is correctly rounded everywhere: nothing is circled.
        assert_eq!(s.matches("<circle").count(), r.not_correctly_rounded);
        assert!(s.len() < 200_000);
    }

    /// An input not correctly rounded is circled, and the y axis grows to
    /// show it.
    #[test]
    fn a_wrong_result_is_circled() {
        let r = accuracy::check(CvoFunc::Sqrt, 0, wrong_sqrt);
        assert_eq!(r.not_correctly_rounded, 1);
        let s = svg(&r);
        assert_eq!(s.matches("<circle").count(), 1);
        // Its error is 0.98 ULP: the ticks go past it, to 1.5.
        assert!(r.max_error_ulp > 0.9);
        assert!(s.contains(">\n1.5\n</text>"), "a tick at 1.5 ULP");
    }
}
