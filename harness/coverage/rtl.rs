//! RTL code coverage (`--rtl-coverage FILE`): reading and summarising the
//! coverage file the RTL coverage build writes (docs/coverage.md); the DUT
//! itself is opened by `env::models::Setup` with `rtl_coverage` set.

use std::collections::BTreeMap;
use std::path::Path;

/// Hit and total coverage points of one kind.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Points {
    pub hit: u64,
    pub total: u64,
}

impl Points {
    fn add(&mut self, count: u64) {
        self.total += 1;
        if count > 0 {
            self.hit += 1;
        }
    }

    pub fn percent(&self) -> f64 {
        if self.total == 0 {
            100.0
        } else {
            100.0 * self.hit as f64 / self.total as f64
        }
    }
}

/// What a Verilator coverage file holds, per kind of point (`line`,
/// `toggle`, ...) and per module.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RtlCoverage {
    pub by_kind: BTreeMap<String, Points>,
    /// (module, kind) -> points.
    pub by_module: BTreeMap<(String, String), Points>,
}

impl RtlCoverage {
    pub fn kind(&self, kind: &str) -> Points {
        self.by_kind.get(kind).copied().unwrap_or_default()
    }
}

/// Reads a coverage file (`# SystemC::Coverage-3`, one `C '<keys>' count`
/// line per point; keys and values separated by the control characters
/// 0x01 and 0x02). The point's kind is the `page` key's prefix
/// (`v_line/pccx_l2` is a line point of module pccx_l2).
pub fn read(path: &Path) -> Result<RtlCoverage, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    parse(&text).map_err(|e| format!("{}: {e}", path.display()))
}

pub fn parse(text: &str) -> Result<RtlCoverage, String> {
    let mut cov = RtlCoverage::default();
    for_each_point(text, |_, kind, module, count| {
        cov.by_kind.entry(kind.to_string()).or_default().add(count);
        cov.by_module
            .entry((module.to_string(), kind.to_string()))
            .or_default()
            .add(count);
    })?;
    Ok(cov)
}

/// Every point of a coverage file's text: its keys (which name it
/// uniquely), its kind (`line`, `branch`, `toggle`), its module and its
/// count, for a steered campaign that compares one case's counts with the
/// last.
pub fn point_counts(text: &str) -> Result<Vec<(String, String, u64)>, String> {
    let mut points = Vec::new();
    for_each_point(text, |keys, kind, _, count| {
        points.push((keys.to_string(), kind.to_string(), count))
    })?;
    Ok(points)
}

/// Calls `f(keys, kind, module, count)` for every point of the text.
fn for_each_point(text: &str, mut f: impl FnMut(&str, &str, &str, u64)) -> Result<(), String> {
    let mut lines = text.lines();
    match lines.next() {
        Some(first) if first.starts_with("# SystemC::Coverage") => {}
        _ => return Err("not a Verilator coverage file (no `# SystemC::Coverage` header)".into()),
    }
    for (n, line) in lines.enumerate() {
        let line = line.trim_end();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let bad = || format!("line {}: expected `C '<keys>' <count>`", n + 2);
        let rest = line.strip_prefix("C '").ok_or_else(bad)?;
        let (keys, count) = rest.rsplit_once("' ").ok_or_else(bad)?;
        let count: u64 = count.trim().parse().map_err(|_| bad())?;
        let mut page = None;
        for pair in keys.split('\u{1}').filter(|p| !p.is_empty()) {
            if let Some(("page", value)) = pair.split_once('\u{2}') {
                page = Some(value);
            }
        }
        let page = page.ok_or_else(|| format!("line {}: a point without a `page` key", n + 2))?;
        let (kind, module) = page.split_once('/').unwrap_or((page, ""));
        let kind = kind.strip_prefix("v_").unwrap_or(kind);
        f(keys, kind, module, count);
    }
    Ok(())
}

impl RtlCoverage {
    /// The summary the campaign prints: each kind's points hit of total,
    /// then per module, then how to look at it line by line.
    pub fn text(&self, path: &Path) -> String {
        use std::fmt::Write as _;
        let kinds: Vec<String> = self
            .by_kind
            .iter()
            .map(|(k, p)| format!("{k} points {}/{} ({:.1}%)", p.hit, p.total, p.percent()))
            .collect();
        let mut s = format!(
            "RTL coverage ({}): {}",
            path.display(),
            if kinds.is_empty() {
                "no coverage points".to_string()
            } else {
                kinds.join(", ")
            }
        );
        let modules: std::collections::BTreeSet<&String> =
            self.by_module.keys().map(|(m, _)| m).collect();
        let width = modules.iter().map(|m| m.len()).max().unwrap_or(0);
        for module in modules {
            let per: Vec<String> = self
                .by_kind
                .keys()
                .filter_map(|k| {
                    self.by_module
                        .get(&(module.clone(), k.clone()))
                        .map(|p| format!("{k} {}/{} ({:.1}%)", p.hit, p.total, p.percent()))
                })
                .collect();
            let _ = write!(s, "\n  {module:<width$}  {}", per.join(", "));
        }
        let p = path.display();
        let _ = write!(
            s,
            "\n  source annotated per line: verilator_coverage --annotate cov-annotated {p}\
             \n  for lcov viewers: verilator_coverage --write-info cov.info {p} && \
             genhtml cov.info -o cov-html"
        );
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(page: &str, line: u32, count: u64) -> String {
        format!("C '\u{1}f\u{2}a.sv\u{1}l\u{2}{line}\u{1}page\u{2}{page}\u{1}o\u{2}x' {count}\n")
    }

    #[test]
    fn points_are_counted_per_kind_and_module() {
        let text = format!(
            "# SystemC::Coverage-3\n{}{}{}{}",
            point("v_line/pccx_l2", 1, 0),
            point("v_line/pccx_l2", 2, 7),
            point("v_toggle/pccx_top", 3, 1),
            point("v_branch/pccx_top", 4, 0),
        );
        let c = parse(&text).unwrap();
        assert_eq!(c.kind("line"), Points { hit: 1, total: 2 });
        assert_eq!(c.kind("toggle"), Points { hit: 1, total: 1 });
        assert_eq!(c.kind("branch"), Points { hit: 0, total: 1 });
        assert_eq!(c.kind("user"), Points::default());
        assert_eq!(
            c.by_module[&("pccx_l2".to_string(), "line".to_string())],
            Points { hit: 1, total: 2 }
        );
        let s = c.text(Path::new("cov.dat"));
        assert!(
            s.starts_with(
                "RTL coverage (cov.dat): branch points 0/1 (0.0%), line points 1/2 (50.0%)"
            ),
            "{s}"
        );
        assert!(s.contains("\n  pccx_l2   line 1/2 (50.0%)"), "{s}");
    }

    #[test]
    fn malformed_files_are_errors() {
        assert!(parse("C 'x' 1\n")
            .unwrap_err()
            .contains("not a Verilator coverage file"));
        let e = parse("# SystemC::Coverage-3\nC 'page\u{2}v_line/a' many\n").unwrap_err();
        assert!(e.contains("line 2"), "{e}");
        let e = parse("# SystemC::Coverage-3\nC '\u{1}f\u{2}a.sv' 3\n").unwrap_err();
        assert!(e.contains("without a `page`"), "{e}");
        assert!(read(Path::new("/nonexistent/cov.dat"))
            .unwrap_err()
            .contains("cannot read"));
    }
}

/// Writes to `out` the coverage of several runs of one design: the points
/// of the `parts` (files in Verilator's coverage.dat format, one per
/// campaign worker) with their counts summed point by point, in the order
/// the points first appear. What `verilator_coverage --write` does, kept
/// here so a campaign needs no tool beyond the binary.
pub fn merge_files(parts: &[std::path::PathBuf], out: &Path) -> Result<(), String> {
    let mut header: Option<String> = None;
    let mut order: Vec<String> = Vec::new();
    let mut counts: std::collections::HashMap<String, u64> = std::collections::HashMap::new();
    for part in parts {
        let text = std::fs::read_to_string(part)
            .map_err(|e| format!("cannot read {}: {e}", part.display()))?;
        let mut lines = text.lines();
        match lines.next() {
            Some(first) if first.starts_with("# SystemC::Coverage") => {
                header.get_or_insert_with(|| first.to_string());
            }
            _ => {
                return Err(format!(
                    "{}: not a Verilator coverage file (no `# SystemC::Coverage` header)",
                    part.display()
                ))
            }
        }
        for (n, line) in lines.enumerate() {
            let line = line.trim_end();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let bad = || {
                format!(
                    "{}: line {}: expected `C '<keys>' <count>`",
                    part.display(),
                    n + 2
                )
            };
            let (point, count) = line.rsplit_once("' ").ok_or_else(bad)?;
            let count: u64 = count.trim().parse().map_err(|_| bad())?;
            match counts.get_mut(point) {
                Some(total) => *total += count,
                None => {
                    order.push(point.to_string());
                    counts.insert(point.to_string(), count);
                }
            }
        }
    }
    let mut text = header.unwrap_or_else(|| "# SystemC::Coverage-3".into()) + "\n";
    for point in &order {
        text += &format!("{point}' {}\n", counts[point]);
    }
    std::fs::write(out, text).map_err(|e| format!("cannot write {}: {e}", out.display()))
}

#[cfg(test)]
mod merge_tests {
    use super::*;

    #[test]
    fn parts_are_summed_point_by_point() {
        let dir = std::env::temp_dir().join(format!("pccx-covmerge-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let a = dir.join("a.dat");
        let b = dir.join("b.dat");
        let key = |l: &str| format!("C '\u{1}page\u{2}v_line/top\u{1}l\u{2}{l}'");
        std::fs::write(
            &a,
            format!("# SystemC::Coverage-3\n{} 2\n{} 0\n", key("1"), key("2")),
        )
        .unwrap();
        std::fs::write(
            &b,
            format!(
                "# SystemC::Coverage-3\n{} 0\n{} 5\n{} 1\n",
                key("2"),
                key("1"),
                key("3")
            ),
        )
        .unwrap();
        let out = dir.join("out.dat");
        merge_files(&[a, b], &out).unwrap();
        let merged = parse(&std::fs::read_to_string(&out).unwrap()).unwrap();
        let line = merged.kind("line");
        assert_eq!((line.hit, line.total), (2, 3));
        let text = std::fs::read_to_string(&out).unwrap();
        assert!(text.contains(&format!("{} 7\n", key("1"))), "{text}");
        std::fs::remove_dir_all(&dir).ok();
    }
}
