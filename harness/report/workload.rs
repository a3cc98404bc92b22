//! The page's workload section: cycles per layer as bars, each engine's
//! utilisation per layer, and the error table against the f64 reference
//! (docs/workloads.md).

use super::charts::{Bars, Series};
use super::html::{esc, figure, table};
use crate::workload::WorkloadReport;
use pccx_golden::Engine;
use std::fmt::Write as _;
use std::path::Path;

/// The section for one workload run.
pub fn section(w: &WorkloadReport, page_dir: &Path) -> String {
    let mut out = String::from("<section id=\"workload\"><h2>Workload</h2>");
    let d = &w.dims;
    let _ = write!(
        out,
        "<p>{} on {} (DUT: {}, seed {}): d_model {}, {} heads, {} tokens, MLP {}, INT4 groups of {}. \
         Verdict: <b class=\"{}\">{}</b>.</p>",
        esc(w.workload.name()),
        esc(&w.config),
        esc(w.dut.name()),
        w.seed,
        d.d_model,
        d.heads,
        d.tokens,
        d.hidden,
        d.group,
        if w.verdict == "ok" { "pass" } else { "fail" },
        esc(&w.verdict),
    );
    if let Some(f) = &w.failure {
        let link = |p: &Option<std::path::PathBuf>| match p {
            Some(p) => format!(
                "<a href=\"{}\">{}</a>",
                esc(&super::html::relative_href(page_dir, p)),
                esc(&p.display().to_string())
            ),
            None => "-".into(),
        };
        let _ = write!(
            out,
            "<p class=\"fail\">{}: {}</p><p>repro: {}, waveform: {}, shrunk program: {}</p>",
            esc(&f.layer),
            esc(&f.mismatch.to_string()),
            link(&f.repro),
            link(&f.wave),
            link(&f.min_asm)
        );
    }
    let pct = |v: f64| format!("{:.1} %", 100.0 * v);
    let rows: Vec<Vec<String>> = w
        .layers
        .iter()
        .map(|l| {
            let mut row = vec![
                esc(&l.name),
                l.instructions.to_string(),
                l.cycles.to_string(),
            ];
            row.extend(Engine::ALL.iter().map(|&e| pct(l.utilisation(e))));
            row.push(l.host_ops.to_string());
            for e in [l.error, l.error_alone] {
                match e {
                    Some(e) => {
                        row.push(format!("{:.3e}", e.max_rel));
                        row.push(format!("{:.3e}", e.mean_rel));
                    }
                    None => row.extend(["-".to_string(), "-".to_string()]),
                }
            }
            row
        })
        .collect();
    let mut head = vec!["layer", "instructions", "cycles"];
    head.extend(Engine::ALL.iter().map(|e| e.name()));
    head.extend([
        "host ops",
        "max rel. error, end to end",
        "mean rel. error, end to end",
        "max rel. error, layer alone",
        "mean rel. error, layer alone",
    ]);
    out += &table("workload", &head, &rows);
    out += "<p class=\"small\">Engine columns: busy cycles (start to retire) over the layer's cycles. \
            Errors are normwise against f64 with the same weights: \
            max |npu - f64| / max |f64| and sum |npu - f64| / sum |f64|; end to end against the block in f64 \
            from its input, alone against the layer in f64 on the NPU's own inputs to it (docs/workloads.md).</p>";
    let names: Vec<String> = w.layers.iter().map(|l| l.name.clone()).collect();
    let cycles = Bars {
        title: "Cycles per layer",
        categories: names.clone(),
        series: vec![Series {
            name: "cycles",
            values: w.layers.iter().map(|l| l.cycles as f64).collect(),
        }],
        x_desc: "layer",
        y_desc: "cycles",
        percent: false,
        size: (900, 360),
    };
    let utilisation = Bars {
        title: "Engine utilisation per layer",
        categories: names,
        series: Engine::ALL
            .iter()
            .map(|&e| Series {
                name: e.name(),
                values: w.layers.iter().map(|l| 100.0 * l.utilisation(e)).collect(),
            })
            .collect(),
        x_desc: "layer",
        y_desc: "% of the layer's cycles",
        percent: true,
        size: (900, 360),
    };
    out += "<div class=\"plots\">";
    out += &figure(
        "plot-workload-cycles",
        &cycles.svg(),
        "Cycles from reset to the last retire of each layer's program (host-only layers have none).",
    );
    out += &figure(
        "plot-workload-utilisation",
        &utilisation.svg(),
        "Share of each layer's cycles each engine was busy.",
    );
    out + "</div></section>"
}
