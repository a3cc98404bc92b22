//! The page's sections, each a `<section>` with an id the tests look for:
//! summary, failures, engines, coverage, mutation, shards, notes.

use super::charts::{bucket_label, Bars, Series};
use super::html::{command, esc, figure, percent, table, table_with_id, Link};
use super::{Baseline, CampaignPart, Cluster, Inputs, MutationPart};
use crate::coverage::CoverageFile;
use crate::regress::identity::{shell_word, IoMode, RunEnded};
use crate::regress::journal::RunEntry;
use crate::regress::merge::ranges;
use crate::regress::results::{SeedRecord, SeedVerdict};
use crate::scoreboard::RetireLatency;
use crate::scoreboard::TimingMode;
use crate::tools::mutants::{summarize, KillRow, Verdict};
use pccx_golden::{Engine, PerEngine};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The page's title and body.
pub fn body(inputs: &Inputs, page_dir: &Path) -> (String, String) {
    let mut title = String::from("pccx-cosim report");
    let mut b = String::new();
    let cluster = inputs
        .campaign
        .as_ref()
        .and_then(|c| c.cluster.as_ref())
        .or(inputs.mutation.as_ref().and_then(|m| m.cluster.as_ref()));
    if let Some(c) = &inputs.campaign {
        let f = &c.file;
        title = format!(
            "pccx-cosim: campaign {}, seeds {}",
            f.config,
            crate::regress::merge::span_of(f.first_seed, f.count)
        );
        b += &campaign_summary(c);
        if let Some(cl) = cluster {
            b += &shards(cl, inputs, page_dir);
        }
        b += &failures(c, inputs.baseline.as_ref(), page_dir);
        b += &engines(c);
    }
    if let Some(m) = &inputs.mutation {
        if inputs.campaign.is_none() {
            title = format!("pccx-cosim: mutation run, {}", m.report.config);
        }
        b += &mutation(
            m,
            cluster.filter(|_| inputs.campaign.is_none()),
            inputs,
            page_dir,
        );
    }
    if let Some(w) = &inputs.workload {
        if inputs.campaign.is_none() && inputs.mutation.is_none() {
            title = format!("pccx-cosim: workload {} on {}", w.workload.name(), w.config);
        }
        b += &super::workload::section(w, page_dir);
    }
    if inputs.coverage.is_some() || !inputs.curves.is_empty() {
        b += &coverage(inputs.coverage.as_ref(), inputs);
    }
    if !inputs.notes.is_empty() {
        b += "<section id=\"notes\"><h2>Notes</h2><ul>";
        for n in &inputs.notes {
            let _ = write!(b, "<li>{}</li>", esc(n));
        }
        b += "</ul></section>";
    }
    let head = format!(
        "<h1>{}</h1><p class=\"small\">Made by pccx-cosim {} (docs/report.md).</p>",
        esc(&title),
        env!("CARGO_PKG_VERSION")
    );
    (title, head + &b)
}

/// PASS, FAIL or INCOMPLETE, and why, for a campaign.
fn campaign_verdict(c: &CampaignPart) -> (&'static str, String) {
    let s = &c.file.summary;
    let last_ended = c.runs.last().and_then(|r| r.ended);
    let failed = s.mismatched + s.timeouts;
    if failed > 0 {
        let groups = c.file.failures_by_signature.len();
        return (
            "fail",
            format!(
                "{failed} of {} seeds failed, {groups} failure signature{}",
                s.seeds,
                if groups == 1 { "" } else { "s" }
            ),
        );
    }
    let missing = c.file.missing_seeds.len();
    if missing > 0 || s.errors > 0 || c.file.interrupted || s.stopped.is_some() {
        let mut why = Vec::new();
        if missing > 0 {
            why.push(format!("{missing} seeds have no record"));
        }
        if let Some(st) = &s.stopped {
            why.push(format!("a model failed at seed {}", st.seed));
        }
        if c.file.interrupted || last_ended == Some(RunEnded::Interrupted) {
            why.push("the run was interrupted".into());
        }
        return ("incomplete", why.join("; "));
    }
    (
        "pass",
        format!("all {} seeds matched on every check", s.seeds),
    )
}

fn verdict_badge(kind: &str) -> String {
    format!(
        "<span id=\"verdict\" class=\"verdict {kind}\">{}</span>",
        kind.to_ascii_uppercase()
    )
}

fn row(name: &str, value: String) -> Vec<String> {
    vec![esc(name), value]
}

fn campaign_summary(c: &CampaignPart) -> String {
    let f = &c.file;
    let s = &f.summary;
    let (kind, why) = campaign_verdict(c);
    let mut out = format!(
        "<section id=\"summary\"><h2>Run</h2><p>{} <span id=\"verdict-why\">{}</span></p>",
        verdict_badge(kind),
        esc(&why)
    );
    let mut rows = vec![row("configuration", esc(&f.config))];
    if let Some(id) = &c.identity {
        rows.push(row("host I/O", esc(id.io.name())));
        let timing = id.timing.unwrap_or(match id.io {
            IoMode::Stall => TimingMode::Order,
            IoMode::Ideal => TimingMode::Exact,
        });
        rows.push(row("timing check", esc(timing.name())));
        rows.push(row("initial state", esc(id.initial_state.name())));
        rows.push(row("steered", (if id.steer { "yes" } else { "no" }).into()));
        if let Some(fault) = &id.inject_fault {
            rows.push(row("injected fault", esc(fault.name())));
        }
        rows.push(row(
            "DUT",
            match &id.dut_manifest {
                Some(m) => format!("the DUT of {} (docs/dut-contract.md)", esc(m)),
                None => "the repository's own RTL (hw/dut.json)".into(),
            },
        ));
        if !id.numerics.is_declared() {
            rows.push(row(
                "numerics",
                "exact (the DUT's numerics profile ignored)".into(),
            ));
        }
        let unmade: Vec<&str> = crate::scoreboard::out_of_reach(id.observe)
            .into_iter()
            .map(|k| k.name())
            .collect();
        rows.push(row(
            "observation level",
            if unmade.is_empty() {
                esc(id.observe.name())
            } else {
                format!(
                    "{} (docs/dut-contract.md); checks it cannot make: {}",
                    esc(id.observe.name()),
                    esc(&unmade.join(", "))
                )
            },
        ));
    }
    rows.push(row(
        "models",
        format!("reference {}, DUT {}", esc(&f.reference), esc(&f.dut)),
    ));
    rows.push(row(
        "seeds",
        format!(
            "{} ({} in the run, {} recorded{})",
            crate::regress::merge::span_of(f.first_seed, f.count),
            f.count,
            s.seeds,
            f.shard
                .as_deref()
                .map_or(String::new(), |sh| format!(", shard {}", esc(sh)))
        ),
    ));
    rows.push(row(
        "verdicts",
        format!(
            "{} matched, {} mismatched, {} timed out, {} model errors",
            s.matched, s.mismatched, s.timeouts, s.errors
        ),
    ));
    rows.push(row("instructions per program", f.instrs.to_string()));
    rows.push(row("instructions", s.instructions.to_string()));
    rows.push(row(
        "simulated cycles",
        s.cycles
            .map_or("none reported (the DUT has no clock)".into(), |c| {
                c.to_string()
            }),
    ));
    rows.push(row("wall time", seconds(s.wall_seconds)));
    let per = |n: f64| {
        if s.wall_seconds > 0.0 {
            format!("{:.0}", n / s.wall_seconds)
        } else {
            "n/a".into()
        }
    };
    rows.push(row(
        "throughput",
        format!(
            "{} simulated cycles/s, {} instructions/s, {} seeds/s",
            s.cycles_per_second
                .map_or("n/a".into(), |r| format!("{r:.0}")),
            per(s.instructions as f64),
            if s.wall_seconds > 0.0 {
                format!("{:.2}", s.seeds as f64 / s.wall_seconds)
            } else {
                "n/a".into()
            }
        ),
    ));
    out += &table_with_id(Some("run-facts"), "facts", &["", ""], &rows);
    out += &provenance(&c.runs);
    out += "</section>";
    out
}

/// The build behind the runs: the last run's, and a warning when the
/// runs were not all of one commit.
fn provenance(runs: &[RunEntry]) -> String {
    let Some(last) = runs.iter().rev().find(|r| r.provenance.is_some()) else {
        return "<p class=\"small\">No build provenance recorded (a run from before it was).</p>"
            .into();
    };
    let p = last.provenance.as_ref().expect("found with one");
    let field = |k: &str| match p.get(k) {
        Some(serde_json::Value::String(s)) => s.clone(),
        Some(v) => v.to_string(),
        None => "unknown".into(),
    };
    let mut rows = vec![
        row(
            "pccx-cosim",
            esc(&format!(
                "{} ({})",
                field("pccx_cosim_version"),
                field("build_profile")
            )),
        ),
        row(
            "git commit",
            format!("<code>{}</code>", esc(&field("git_commit"))),
        ),
        row(
            "hw/rtl",
            format!(
                "last commit <code>{}</code>, uncommitted edits: {}",
                esc(&field("rtl_last_commit")),
                esc(&field("rtl_dirty"))
            ),
        ),
        row("Verilator", esc(&field("verilator"))),
        row("rustc", esc(&field("rustc_on_path"))),
        row("command", command(&field("command_line"))),
    ];
    let mut hosts: Vec<&str> = runs.iter().map(|r| r.host.as_str()).collect();
    hosts.sort_unstable();
    hosts.dedup();
    rows.push(row("hosts", esc(&hosts.join(", "))));
    if let (Some(first), Some(last)) = (runs.first(), runs.last()) {
        rows.push(row(
            "runs",
            format!(
                "{} process run{}, first started {}, last started {}",
                runs.len(),
                if runs.len() == 1 { "" } else { "s" },
                utc(first.started_unix),
                utc(last.started_unix)
            ),
        ));
    }
    let commits: std::collections::BTreeSet<String> = runs
        .iter()
        .filter_map(|r| r.provenance.as_ref())
        .filter_map(|p| {
            p.get("git_commit")
                .and_then(|v| v.as_str())
                .map(String::from)
        })
        .collect();
    let mut out = String::from("<h3>Build</h3>");
    if commits.len() > 1 {
        let _ = write!(
            out,
            "<p class=\"missing\">The runs were built from {} different commits: {}.</p>",
            commits.len(),
            esc(&commits.into_iter().collect::<Vec<_>>().join(", "))
        );
    }
    out + &table_with_id(Some("provenance"), "facts", &["", ""], &rows)
}

pub(super) use crate::regress::journal::utc;

fn seconds(s: f64) -> String {
    if s >= 3600.0 {
        format!(
            "{:.0} h {:.0} min",
            (s / 3600.0).floor(),
            (s % 3600.0) / 60.0
        )
    } else if s >= 60.0 {
        format!("{:.0} min {:.0} s", (s / 60.0).floor(), s % 60.0)
    } else {
        format!("{s:.2} s")
    }
}

/// Where the file a record names is: the path as given (the run's working
/// directory was this one), else by its name in each of the run's
/// directories.
fn artefact(page_dir: &Path, dirs: &[PathBuf], given: &str) -> Link {
    let path = Path::new(given);
    let mut candidates = vec![path.to_path_buf()];
    if let Some(name) = path.file_name() {
        candidates.extend(dirs.iter().map(|d| d.join(name)));
    }
    Link::to_first(page_dir, given, &candidates)
}

fn failures(c: &CampaignPart, baseline: Option<&Baseline>, page_dir: &Path) -> String {
    let f = &c.file;
    let mut out = String::from("<section id=\"failures\"><h2>Failures by signature</h2>");
    if let Some(b) = baseline {
        out += &baseline_summary(c, b);
    }
    if f.failures_by_signature.is_empty() {
        out += "<p id=\"no-failures\">No seed failed.</p>";
    }
    let record = |seed: u64| f.results.iter().find(|r| r.seed == seed);
    for (k, g) in f.failures_by_signature.iter().enumerate() {
        let first = g.seeds.first().copied();
        let _ = write!(
            out,
            "<div class=\"group\" id=\"group-{k}\" data-signature=\"{}\">\
             <h3><span class=\"signature\">{}</span> &times; <span class=\"count\">{}</span>{}</h3>\
             <p>first seed <span class=\"first-seed\">{}</span>; seeds {}</p>",
            esc(&g.signature.text),
            esc(&g.signature.text),
            g.seeds.len(),
            baseline.map_or(String::new(), |b| {
                match b.signatures.get(&g.signature.text) {
                    None => " <span class=\"since new\">new since the baseline</span>".into(),
                    Some(n) => format!(
                        " <span class=\"since known\">also in the baseline ({n} seed{})</span>",
                        if *n == 1 { "" } else { "s" }
                    ),
                }
            }),
            first.map_or("?".into(), |s| s.to_string()),
            esc(&ranges(&g.seeds)),
        );
        if let Some(r) = first.and_then(record) {
            out += &failure_detail(r, &c.dirs, page_dir);
        }
        out += "</div>";
    }
    let errors: Vec<&SeedRecord> = f
        .results
        .iter()
        .filter(|r| r.verdict == SeedVerdict::Error)
        .collect();
    if !errors.is_empty() {
        out += "<h3>Model errors (the campaign stopped)</h3>";
        let rows: Vec<Vec<String>> = errors
            .iter()
            .map(|r| {
                vec![
                    r.seed.to_string(),
                    format!("<pre>{}</pre>", esc(r.error.as_deref().unwrap_or(""))),
                ]
            })
            .collect();
        out += &table("errors", &["seed", "error"], &rows);
    }
    out + "</section>"
}

/// The baseline, and the signatures it had that this run no longer has.
fn baseline_summary(c: &CampaignPart, b: &Baseline) -> String {
    let now: std::collections::BTreeSet<&str> = c
        .file
        .failures_by_signature
        .iter()
        .map(|g| g.signature.text.as_str())
        .collect();
    let new = now
        .iter()
        .filter(|s| !b.signatures.contains_key(**s))
        .count();
    let gone: Vec<(&String, &usize)> = b
        .signatures
        .iter()
        .filter(|(s, _)| !now.contains(s.as_str()))
        .collect();
    let dirs: Vec<String> = b.dirs.iter().map(|d| d.display().to_string()).collect();
    let mut out = format!(
        "<p id=\"baseline\">Against the baseline {} ({} seeds, {} failure signature{}{}{}): \
         <span id=\"new-signatures\">{new}</span> new, \
         <span id=\"gone-signatures\">{}</span> no longer seen.</p>",
        esc(&dirs.join(", ")),
        b.seeds,
        b.signatures.len(),
        if b.signatures.len() == 1 { "" } else { "s" },
        b.commit.as_deref().map_or(String::new(), |c| format!(
            ", built from <code>{}</code>",
            esc(c)
        )),
        b.started_unix
            .map_or(String::new(), |t| format!(", started {}", utc(t))),
        gone.len()
    );
    if !gone.is_empty() {
        out += "<h3>No longer seen</h3><ul id=\"gone\">";
        for (s, n) in gone {
            let _ = write!(
                out,
                "<li><span class=\"signature\">{}</span> ({n} seed{} in the baseline)</li>",
                esc(s),
                if *n == 1 { "" } else { "s" }
            );
        }
        out += "</ul>";
    }
    out
}

/// The first failing seed of a group: what differed, and its files.
fn failure_detail(r: &SeedRecord, dirs: &[PathBuf], page_dir: &Path) -> String {
    let mut out = String::new();
    if let Some(m) = &r.mismatch {
        let _ = write!(out, "<pre class=\"mismatch\">{}</pre>", esc(&m.to_string()));
    } else if let Some(e) = &r.error {
        let _ = write!(out, "<pre class=\"mismatch\">{}</pre>", esc(e));
    }
    let Some(a) = &r.artefacts else {
        return out;
    };
    let mut rows = Vec::new();
    if let Some(p) = &a.repro {
        let link = artefact(page_dir, dirs, p);
        rows.push(vec![
            "repro".into(),
            format!("<span class=\"link repro\">{}</span>", link.html()),
            command(&format!("pccx-cosim replay {}", shell_word(p))),
        ]);
    }
    if let Some(p) = &a.min_asm {
        let sizes = a.shrink.map_or(String::new(), |s| {
            format!(
                " ({} instructions from {}, {} runs)",
                s.after_instructions, s.before_instructions, s.runs
            )
        });
        let link = artefact(page_dir, dirs, p);
        rows.push(vec![
            "shrunk program".into(),
            format!(
                "<span class=\"link min-asm\">{}</span>{}",
                link.html(),
                esc(&sizes)
            ),
            a.repro.as_ref().map_or(String::new(), |repro| {
                command(&format!("pccx-cosim replay --min {}", shell_word(repro)))
            }),
        ]);
    }
    if let Some(p) = &a.wave {
        let link = artefact(page_dir, dirs, p);
        rows.push(vec![
            "waveform".into(),
            format!("<span class=\"link wave\">{}</span>", link.html()),
            format!(
                "{} or {}",
                command(&format!("gtkwave {}", shell_word(p))),
                command(&format!("surfer {}", shell_word(p)))
            ),
        ]);
    }
    out += &table("artefacts", &["file", "path", "open with"], &rows);
    for problem in &a.problems {
        let _ = write!(out, "<p class=\"missing\">{}</p>", esc(problem));
    }
    out
}

fn engines(c: &CampaignPart) -> String {
    let s = &c.file.summary;
    let mut out = String::from("<section id=\"engines\"><h2>Engines</h2>");
    let Some(cycles) = s.cycles.filter(|&c| c > 0) else {
        return out
            + "<p>The DUT reported no cycles: no utilisation or latency to show.</p></section>";
    };
    let busy = PerEngine::from_fn(|e| s.engine_busy_cycles.get(e.name()).copied().unwrap_or(0));
    let latency = &s.retire_latency;
    let retired = PerEngine::from_fn(|e| latency.of(e).iter().sum::<u64>());
    let rows: Vec<Vec<String>> = Engine::ALL
        .into_iter()
        .map(|e| {
            let buckets = latency.of(e);
            let lo = buckets.iter().position(|&n| n > 0);
            let hi = buckets.iter().rposition(|&n| n > 0);
            let range = match (lo, hi) {
                (Some(lo), Some(hi)) => format!(
                    "{} .. {}",
                    RetireLatency::bucket_range(lo).0,
                    RetireLatency::bucket_range(hi).1
                ),
                _ => "-".into(),
            };
            vec![
                esc(e.name()),
                busy[e].to_string(),
                percent(busy[e] as f64, cycles as f64),
                retired[e].to_string(),
                range,
            ]
        })
        .collect();
    out += &table(
        "engines",
        &[
            "engine",
            "busy cycles",
            "utilisation",
            "instructions retired",
            "latch-to-retire cycles (bucket bounds)",
        ],
        &rows,
    );
    let names: Vec<String> = Engine::ALL.iter().map(|e| e.name().to_string()).collect();
    let utilisation = Bars {
        title: "Utilisation: busy cycles / simulated cycles",
        categories: names,
        series: vec![Series {
            name: "busy",
            values: busy
                .values()
                .map(|&b| 100.0 * b as f64 / cycles as f64)
                .collect(),
        }],
        x_desc: "engine",
        y_desc: "% of simulated cycles",
        percent: true,
        size: (520, 340),
    };
    let buckets = latency.0.values().map(Vec::len).max().unwrap_or(0);
    let latency_chart = Bars {
        title: "Retire latency (latch to retire), per engine",
        categories: (0..buckets)
            .map(|b| RetireLatency::bucket_range(b).0.to_string())
            .collect(),
        series: Engine::ALL
            .into_iter()
            .map(|e| Series {
                name: e.name(),
                values: (0..buckets)
                    .map(|b| latency.of(e).get(b).copied().unwrap_or(0) as f64)
                    .collect(),
            })
            .collect(),
        x_desc: "cycles, in buckets from each value to the next",
        y_desc: "instructions",
        percent: false,
        size: (640, 340),
    };
    out += "<div class=\"plots\">";
    out += &figure(
        "plot-utilisation",
        &utilisation.svg(),
        "Share of simulated cycles each engine was busy (start to retire).",
    );
    if buckets > 0 {
        out += &figure(
            "plot-latency",
            &latency_chart.svg(),
            "Instructions by cycles from latch to retire, in power-of-two buckets.",
        );
    } else {
        out += "<p>No instruction reported both its latch and its retire cycle.</p>";
    }
    out + "</div></section>"
}

fn coverage(c: Option<&CoverageFile>, inputs: &Inputs) -> String {
    let mut out = String::from("<section id=\"coverage\"><h2>Functional coverage</h2>");
    if let Some(c) = c {
        let _ = write!(
            out,
            "<p><span id=\"coverage-total\">{} of {} bins hit</span> over {} cases and {} instructions; {}.</p>",
            c.hit,
            c.total,
            c.cases,
            c.instructions,
            c.closed_after_cases
                .map_or("not closed".into(), |n| format!("closed after case {n}"))
        );
        out += &curve_plot(inputs);
        if !c.holes.is_empty() {
            let _ = write!(
                out,
                "<h3>Holes ({})</h3><p id=\"holes\">{}</p>",
                c.holes.len(),
                c.holes
                    .iter()
                    .map(|h| format!("<span class=\"hole-name\">{}</span>", esc(h)))
                    .collect::<Vec<_>>()
                    .join("; ")
            );
        }
        let rows: Vec<Vec<String>> = c
            .groups
            .iter()
            .map(|g| {
                vec![
                    esc(&g.group),
                    g.hit.to_string(),
                    g.total.to_string(),
                    g.excluded.to_string(),
                    percent(g.hit as f64, g.total as f64),
                ]
            })
            .collect();
        out += &table(
            "coverage-groups",
            &["group", "hit", "bins", "excluded", "hit"],
            &rows,
        );
        for g in &c.groups {
            let bins: Vec<_> = c.bins.iter().filter(|b| b.group == g.group).collect();
            let holes = bins
                .iter()
                .filter(|b| b.count == 0 && b.excluded.is_none())
                .count();
            let _ = write!(
                out,
                "<details{}><summary>{} ({} of {} hit{})</summary><table class=\"bins\"><thead><tr>\
                 <th>bin</th><th>hits</th><th>first case</th><th>excluded</th></tr></thead><tbody>",
                if holes > 0 { " open" } else { "" },
                esc(&g.group),
                g.hit,
                g.total,
                if holes > 0 {
                    format!(", {holes} holes")
                } else {
                    String::new()
                }
            );
            for b in bins {
                let class = match (&b.excluded, b.count) {
                    (Some(_), _) => " class=\"excluded\"",
                    (None, 0) => " class=\"hole\"",
                    _ => "",
                };
                let _ = write!(
                    out,
                    "<tr{class}><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td>{}</td></tr>",
                    esc(&b.name),
                    b.count,
                    b.first_case.map_or("-".into(), |n| n.to_string()),
                    esc(b.excluded.as_deref().unwrap_or(""))
                );
            }
            out += "</tbody></table></details>";
        }
    } else {
        out += "<p>The run did not sample functional coverage (<code>--coverage</code>).</p>";
        out += &curve_plot(inputs);
    }
    out + "</section>"
}

/// The coverage-against-programs plot, when the run sampled a curve.
fn curve_plot(inputs: &Inputs) -> String {
    if inputs.curves.is_empty() {
        return String::new();
    }
    String::from("<h3>Coverage against programs</h3>")
        + &figure(
            "plot-coverage-curve",
            &crate::tools::plot::svg(&inputs.curves).map(|(svg, _)| svg),
            "Bins (and RTL points, when measured) hit after each program.",
        )
}

fn mutation(
    m: &MutationPart,
    cluster: Option<&Cluster>,
    inputs: &Inputs,
    page_dir: &Path,
) -> String {
    let r = &m.report;
    let s = summarize(&r.mutants);
    let survivors = r.survivors.len();
    let (kind, why) = if survivors > 0 {
        ("fail", format!("{survivors} mutants survived"))
    } else if !r.missing.is_empty() || r.interrupted {
        (
            "incomplete",
            format!("{} mutants have no record", r.missing.len()),
        )
    } else {
        (
            "pass",
            "every mutant that compiles was killed or is listed as equivalent".into(),
        )
    };
    let mut out = String::from("<section id=\"mutation\"><h2>Mutation</h2>");
    let _ = write!(
        out,
        "<p>{} <span id=\"verdict-why\">{}</span></p>",
        verdict_badge(kind),
        esc(&why)
    );
    let mut rows = vec![
        row("configuration", esc(&r.config)),
        row("random seeds per mutant", r.seeds.to_string()),
        row("instructions per program", r.instrs.to_string()),
        row("sites in hw/rtl", r.sites.to_string()),
        row(
            "mutants",
            format!(
                "{} (killed {}, survived {}, timed out {}, not compiling {}, equivalent {})",
                s.total, s.killed, s.survived, s.timed_out, s.not_compiling, s.equivalent
            ),
        ),
        row(
            "kill rate",
            format!(
                "<span id=\"kill-rate\">{}</span> = killed / (all - equivalent - not compiling)",
                s.kill_rate
                    .map_or("n/a".into(), |k| format!("{:.1} %", 100.0 * k))
            ),
        ),
        row(
            "median to kill",
            format!(
                "{}, {} instructions",
                s.median_seconds_to_kill
                    .map_or("n/a".into(), |t| format!("{t:.2} s")),
                s.median_instructions_to_kill
                    .map_or("n/a".into(), |n| n.to_string())
            ),
        ),
    ];
    if let Some(h) = &m.header {
        let id = &h.identity;
        rows.insert(1, row("selection", esc(&id.selection.to_string())));
        rows.insert(
            3,
            row("steered programs per survivor", id.steered.to_string()),
        );
        rows.push(row("budget per mutant", format!("{} s", id.budget_seconds)));
        let wall: f64 = h.runs.iter().filter_map(|r| r.wall_seconds).sum();
        rows.push(row(
            "wall time",
            format!(
                "{} over {} process run{}",
                seconds(wall),
                h.runs.len(),
                if h.runs.len() == 1 { "" } else { "s" }
            ),
        ));
    }
    out += &table_with_id(Some("mutation-facts"), "facts", &["", ""], &rows);
    if let Some(h) = &m.header {
        out += &provenance(&h.runs);
    }
    if let Some(cl) = cluster {
        out += &shards(cl, inputs, page_dir);
    }
    for (id, title, rows) in [
        ("kills-by-class", "Kill table per class", &r.by_class),
        ("kills-by-file", "Kill table per file", &r.by_file),
    ] {
        let _ = write!(out, "<h3>{title}</h3>");
        out += &kill_table(id, rows);
    }
    out += "<h3>Survivors</h3>";
    if r.survivors.is_empty() {
        out += "<p id=\"no-survivors\">None.</p>";
    } else {
        out += "<table id=\"survivors\"><thead><tr><th>mutant</th><th>change</th><th>verdict</th><th>reproduce</th></tr></thead><tbody>";
        for sv in &r.survivors {
            let _ = write!(
                out,
                "<tr class=\"survivor\"><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                esc(&sv.id),
                esc(&sv.change),
                esc(&sv.verdict),
                command(&sv.reproduce)
            );
        }
        out += "</tbody></table>";
    }
    if !r.slowest_kills.is_empty() {
        out += "<h3>Slowest kills</h3>";
        let rows: Vec<Vec<String>> = r
            .slowest_kills
            .iter()
            .map(|k| {
                vec![
                    esc(&k.id),
                    format!("{:.2} s", k.seconds),
                    k.programs.to_string(),
                    esc(&k.by),
                ]
            })
            .collect();
        out += &table(
            "slowest",
            &["mutant", "time", "programs", "caught by"],
            &rows,
        );
    }
    let kills: Vec<(f64, u64)> = r
        .mutants
        .iter()
        .filter_map(|m| match &m.result {
            Verdict::Killed {
                seconds, programs, ..
            } => Some((*seconds, *programs)),
            _ => None,
        })
        .collect();
    if !kills.is_empty() {
        out += "<div class=\"plots\">";
        out += &figure(
            "plot-time-to-kill",
            &time_to_kill(&kills).svg(),
            "Killed mutants by wall time to the kill (build not included).",
        );
        out += &figure(
            "plot-programs-to-kill",
            &programs_to_kill(&kills).svg(),
            "Killed mutants by programs run up to and including the killing one.",
        );
        out += "</div>";
    }
    out + "</section>"
}

fn kill_table(id: &str, rows: &[KillRow]) -> String {
    let body: Vec<Vec<String>> = rows
        .iter()
        .filter(|r| r.mutants > 0)
        .map(|r| {
            vec![
                esc(&r.name),
                r.mutants.to_string(),
                r.killed.to_string(),
                r.survived.to_string(),
                r.timed_out.to_string(),
                r.not_compiling.to_string(),
                r.equivalent.to_string(),
                r.kill_rate
                    .map_or("n/a".into(), |k| format!("{:.1} %", 100.0 * k)),
            ]
        })
        .collect();
    table_with_id(
        Some(id),
        "kills",
        &[
            "",
            "mutants",
            "killed",
            "survived",
            "timed out",
            "not compiling",
            "equivalent",
            "kill rate",
        ],
        &body,
    )
}

/// Upper bounds of the time-to-kill buckets, in seconds.
const KILL_SECONDS: [f64; 8] = [0.1, 0.3, 1.0, 3.0, 10.0, 30.0, 100.0, f64::INFINITY];

fn time_to_kill(kills: &[(f64, u64)]) -> Bars<'static> {
    let mut counts = [0f64; KILL_SECONDS.len()];
    for &(s, _) in kills {
        let b = KILL_SECONDS
            .iter()
            .position(|&hi| s < hi)
            .unwrap_or(KILL_SECONDS.len() - 1);
        counts[b] += 1.0;
    }
    let mut lo = 0.0;
    let categories = KILL_SECONDS
        .iter()
        .map(|&hi| {
            let label = if hi.is_finite() {
                format!("{lo}-{hi}")
            } else {
                format!(">{lo}")
            };
            lo = hi;
            label
        })
        .collect();
    Bars {
        title: "Time to kill",
        categories,
        series: vec![Series {
            name: "killed",
            values: counts.to_vec(),
        }],
        x_desc: "seconds",
        y_desc: "mutants",
        percent: false,
        size: (520, 320),
    }
}

fn programs_to_kill(kills: &[(f64, u64)]) -> Bars<'static> {
    let mut counts: Vec<f64> = Vec::new();
    for &(_, p) in kills {
        let b = RetireLatency::bucket(p);
        if counts.len() <= b {
            counts.resize(b + 1, 0.0);
        }
        counts[b] += 1.0;
    }
    Bars {
        title: "Programs to kill",
        categories: (0..counts.len())
            .map(|b| {
                let (lo, hi) = RetireLatency::bucket_range(b);
                bucket_label(lo, hi)
            })
            .collect(),
        series: vec![Series {
            name: "killed",
            values: counts,
        }],
        x_desc: "programs (power-of-two buckets)",
        y_desc: "mutants",
        percent: false,
        size: (520, 320),
    }
}

fn shards(cl: &Cluster, inputs: &Inputs, page_dir: &Path) -> String {
    let mut out = String::from("<section id=\"shards\"><h2>Shards</h2>");
    if let Some(job) = &cl.job {
        let _ = write!(
            out,
            "<p>Slurm job <code id=\"job-id\">{}</code>; task states {}.</p>",
            esc(&job.job_id),
            esc(&job.states_from)
        );
    }
    let noun = if inputs.mutation.is_some() && inputs.campaign.is_none() {
        "mutants"
    } else {
        "seeds"
    };
    let rows: Vec<Vec<String>> = cl
        .shards
        .iter()
        .map(|s| {
            let dir = esc(&s.dir.display().to_string());
            let log = s.log.as_ref().map_or(String::new(), |l| {
                Link::to_first(page_dir, &l.display().to_string(), std::slice::from_ref(l)).html()
            });
            vec![
                dir,
                esc(&s.shard.map_or("-".into(), |s| s.to_string())),
                s.records.to_string(),
                if s.missing > 0 {
                    format!("<span class=\"missing\">{}</span>", s.missing)
                } else {
                    "0".into()
                },
                esc(s
                    .last_run
                    .map_or("did not finish (killed, or still running)", |e| e.name())),
                s.scheduler.as_ref().map_or("-".into(), |t| {
                    let state = esc(&t.with_reason());
                    if s.requeued.is_empty() {
                        state
                    } else {
                        let steps: Vec<String> = s
                            .requeued
                            .iter()
                            .map(crate::regress::slurm::TaskState::describe)
                            .collect();
                        format!(
                            "{state}<br><span class=\"requeued\">requeued: {}</span>",
                            esc(&steps.join(" \u{2192} "))
                        )
                    }
                }),
                format!(
                    "<span class=\"hosts\">{}</span>",
                    esc(&s.hosts.join(" \u{2192} "))
                ),
                log,
            ]
        })
        .collect();
    out += &table_with_id(
        Some("shard-table"),
        "shards",
        &[
            "directory",
            "shard",
            "records",
            &format!("{noun} missing"),
            "last run",
            "scheduler",
            "hosts",
            "log",
        ],
        &rows,
    );
    let missing: Vec<String> = match (&inputs.campaign, &inputs.mutation) {
        (Some(c), _) => {
            if c.file.missing_seeds.is_empty() {
                Vec::new()
            } else {
                vec![format!(
                    "{} of {} seeds have no record: {}",
                    c.file.missing_seeds.len(),
                    c.file.count,
                    ranges(&c.file.missing_seeds)
                )]
            }
        }
        (None, Some(m)) if !m.report.missing.is_empty() => vec![format!(
            "{} mutants have no record: {}",
            m.report.missing.len(),
            m.report
                .missing
                .iter()
                .take(24)
                .cloned()
                .collect::<Vec<_>>()
                .join(", ")
        )],
        _ => Vec::new(),
    };
    if missing.is_empty() {
        let _ = write!(
            out,
            "<p id=\"complete\">Complete: every {} of the run has a record.</p>",
            &noun[..noun.len() - 1]
        );
    }
    for m in &missing {
        let _ = write!(out, "<p id=\"missing\" class=\"missing\">{}</p>", esc(m));
    }
    for a in &cl.absent {
        let _ = write!(out, "<p class=\"missing\">{}</p>", esc(a));
    }
    if cl.duplicates > 0 {
        let _ = write!(
            out,
            "<p>{} records repeat one already read (reruns) and were dropped.</p>",
            cl.duplicates
        );
    }
    if !cl.conflicting.is_empty() {
        let _ = write!(
            out,
            "<p class=\"missing\">Records disagree on the verdict of: {} (nondeterminism?).</p>",
            esc(&cl.conflicting.join(", "))
        );
    }
    if !cl.rerun.is_empty() {
        out += "<h3>To run exactly what is missing</h3><ul id=\"rerun\">";
        for c in &cl.rerun {
            let _ = write!(out, "<li>{}</li>", command(c));
        }
        out += "</ul>";
    }
    out + "</section>"
}
