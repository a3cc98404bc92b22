//! `pccx-cosim plot-coverage`: coverage against programs, one line per
//! curve file (`--coverage-curve`), as an SVG drawn with plotters.

use crate::regress::steer::{CurveFile, CurvePoint};
use plotters::prelude::*;
use std::path::Path;

/// Which count of a curve a panel shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Metric {
    Bins,
    Line,
    Branch,
    Toggle,
}

impl Metric {
    pub fn title(self) -> &'static str {
        match self {
            Metric::Bins => "functional bins hit",
            Metric::Line => "RTL line points hit",
            Metric::Branch => "RTL branch points hit",
            Metric::Toggle => "RTL toggle points hit",
        }
    }

    fn of(self, p: &CurvePoint) -> usize {
        match self {
            Metric::Bins => p.bins,
            Metric::Line => p.line,
            Metric::Branch => p.branch,
            Metric::Toggle => p.toggle,
        }
    }
}

/// How a curve is named in the legend: steered or plain, its configuration
/// and first seed.
pub fn label(c: &CurveFile) -> String {
    format!(
        "{} ({}, seeds {}..)",
        if c.steer { "steered" } else { "plain" },
        c.config,
        c.first_seed
    )
}

/// Draws one panel per metric, side by side, every curve in each, into an
/// SVG file at `out`. The RTL panels are drawn only when every curve
/// measured them.
pub fn plot(curves: &[CurveFile], out: &Path) -> Result<Vec<Metric>, String> {
    let (text, metrics) = svg(curves).map_err(|e| format!("{}: {e}", out.display()))?;
    std::fs::write(out, text).map_err(|e| format!("{}: cannot write: {e}", out.display()))?;
    Ok(metrics)
}

/// The drawing of [`plot`] as SVG text (for a page that carries it inline).
pub fn svg(curves: &[CurveFile]) -> Result<(String, Vec<Metric>), String> {
    let mut text = String::new();
    let metrics = draw(curves, &mut text)?;
    Ok((text, metrics))
}

fn draw(curves: &[CurveFile], out: &mut String) -> Result<Vec<Metric>, String> {
    let mut metrics = vec![Metric::Bins];
    if !curves.is_empty() && curves.iter().all(|c| c.rtl) {
        metrics.extend([Metric::Line, Metric::Branch, Metric::Toggle]);
    }
    let (w, h) = (
        560 * metrics.len().min(2) as u32,
        380 * metrics.len().div_ceil(2) as u32,
    );
    let root = SVGBackend::with_string(out, (w, h)).into_drawing_area();
    let fail = |e: &dyn std::fmt::Display| format!("coverage curve plot: {e}");
    root.fill(&WHITE).map_err(|e| fail(&e))?;
    let cols = metrics.len().min(2);
    let panels = root.split_evenly((metrics.len().div_ceil(2), cols));
    for (panel, &metric) in panels.iter().zip(&metrics) {
        let x_max = curves
            .iter()
            .flat_map(|c| c.points.last())
            .map(|p| p.programs)
            .max()
            .unwrap_or(1)
            .max(1);
        let y_max = curves
            .iter()
            .flat_map(|c| c.points.iter().map(|p| metric.of(p)))
            .max()
            .unwrap_or(1)
            .max(1);
        let mut chart = ChartBuilder::on(panel)
            .caption(metric.title(), ("sans-serif", 18))
            .margin(12)
            .x_label_area_size(36)
            .y_label_area_size(56)
            .build_cartesian_2d(0u64..x_max, 0usize..y_max + y_max / 20 + 1)
            .map_err(|e| fail(&e))?;
        chart
            .configure_mesh()
            .x_desc("programs")
            .y_desc(metric.title())
            .draw()
            .map_err(|e| fail(&e))?;
        for (i, c) in curves.iter().enumerate() {
            let colour = Palette99::pick(i).to_rgba();
            let series = std::iter::once((0u64, 0usize))
                .chain(c.points.iter().map(|p| (p.programs, metric.of(p))));
            chart
                .draw_series(LineSeries::new(series, colour.stroke_width(2)))
                .map_err(|e| fail(&e))?
                .label(label(c))
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 18, y)], colour.stroke_width(2))
                });
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::LowerRight)
            .background_style(WHITE.mix(0.9))
            .border_style(BLACK)
            .draw()
            .map_err(|e| fail(&e))?;
    }
    root.present().map_err(|e| fail(&e))?;
    Ok(metrics)
}
