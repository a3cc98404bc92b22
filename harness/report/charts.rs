//! The page's plots, drawn with plotters into SVG text that the page
//! carries inline: bars by category, histograms over power-of-two buckets.

use plotters::prelude::*;

/// One series of a bar chart: a name and a value per category.
pub struct Series<'a> {
    pub name: &'a str,
    pub values: Vec<f64>,
}

/// A bar chart: `categories` along x, each with one bar per series side by
/// side. `y_desc` names the values; `percent` scales y to 0..100.
pub struct Bars<'a> {
    pub title: &'a str,
    pub categories: Vec<String>,
    pub series: Vec<Series<'a>>,
    pub x_desc: &'a str,
    pub y_desc: &'a str,
    pub percent: bool,
    pub size: (u32, u32),
}

/// The colours of the series, in order (plotters' palette).
fn colour(i: usize) -> RGBAColor {
    Palette99::pick(i).to_rgba()
}

impl Bars<'_> {
    /// The chart as an SVG document.
    pub fn svg(&self) -> Result<String, String> {
        let mut out = String::new();
        {
            let root = SVGBackend::with_string(&mut out, self.size).into_drawing_area();
            let fail = |e: &dyn std::fmt::Display| format!("plot `{}`: {e}", self.title);
            root.fill(&WHITE).map_err(|e| fail(&e))?;
            let n = self.categories.len().max(1);
            let top = if self.percent {
                100.0
            } else {
                let max = self
                    .series
                    .iter()
                    .flat_map(|s| s.values.iter().copied())
                    .fold(0.0f64, f64::max);
                if max > 0.0 {
                    max * 1.08
                } else {
                    1.0
                }
            };
            let categories = self.categories.clone();
            let mut chart = ChartBuilder::on(&root)
                .caption(self.title, ("sans-serif", 17))
                .margin(10)
                .x_label_area_size(44)
                .y_label_area_size(64)
                .build_cartesian_2d(-0.5f64..n as f64 - 0.5, 0f64..top)
                .map_err(|e| fail(&e))?;
            chart
                .configure_mesh()
                .disable_x_mesh()
                .x_labels(n + 1)
                .x_label_formatter(&move |x: &f64| {
                    let k = x.round();
                    if (x - k).abs() < 1e-6 && k >= 0.0 {
                        categories.get(k as usize).cloned().unwrap_or_default()
                    } else {
                        String::new()
                    }
                })
                .x_desc(self.x_desc)
                .y_desc(self.y_desc)
                .draw()
                .map_err(|e| fail(&e))?;
            let width = 0.8 / self.series.len().max(1) as f64;
            for (i, s) in self.series.iter().enumerate() {
                let c = colour(i);
                let offset = -0.4 + width * i as f64;
                let bars = s.values.iter().enumerate().map(move |(k, &v)| {
                    let x0 = k as f64 + offset;
                    Rectangle::new([(x0, 0.0), (x0 + width * 0.92, v)], c.filled())
                });
                let drawn = chart.draw_series(bars).map_err(|e| fail(&e))?;
                if self.series.len() > 1 {
                    drawn.label(s.name).legend(move |(x, y)| {
                        Rectangle::new([(x, y - 5), (x + 12, y + 5)], c.filled())
                    });
                }
            }
            if self.series.len() > 1 {
                chart
                    .configure_series_labels()
                    .position(SeriesLabelPosition::UpperRight)
                    .background_style(WHITE.mix(0.9))
                    .border_style(BLACK)
                    .draw()
                    .map_err(|e| fail(&e))?;
            }
            root.present().map_err(|e| fail(&e))?;
        }
        Ok(out)
    }
}

/// The label of power-of-two bucket `b` (0; 1; 2-3; 4-7; ...), given its
/// smallest and largest value.
pub fn bucket_label(lo: u64, hi: u64) -> String {
    if lo == hi {
        lo.to_string()
    } else {
        format!("{lo}-{hi}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bar_chart_has_one_bar_per_value_and_its_labels() {
        let svg = Bars {
            title: "utilisation",
            categories: vec!["GEMV".into(), "GEMM".into()],
            series: vec![Series {
                name: "busy",
                values: vec![25.0, 50.0],
            }],
            x_desc: "engine",
            y_desc: "% of cycles",
            percent: true,
            size: (400, 300),
        }
        .svg()
        .unwrap();
        assert!(svg.starts_with("<svg"), "{}", &svg[..60]);
        // plotters writes each text on a line of its own.
        let texts: Vec<&str> = svg.lines().map(str::trim).collect();
        for label in ["GEMV", "GEMM", "utilisation", "engine"] {
            assert!(texts.contains(&label), "no text {label}");
        }
        // Two bars, filled: plotters draws a filled rectangle as <rect>.
        assert!(svg.matches("<rect").count() >= 2);
        assert_eq!(bucket_label(4, 7), "4-7");
        assert_eq!(bucket_label(1, 1), "1");
    }
}
