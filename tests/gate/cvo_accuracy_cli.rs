//! `pccx-cosim cvo-accuracy`: the report, its JSON, its plots, and its
//! usage errors, through the binary.

use serde_json::Value;
use std::path::PathBuf;
use std::process::{Command, Output};

fn cosim(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_pccx-cosim"))
        .args(args)
        .output()
        .expect("the binary runs")
}

/// A directory of this test's own (tests run in parallel), empty.
fn temp_dir(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "pccx-cosim-cvo-accuracy-{}-{test}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

const FUNCS: [&str; 6] = ["exp", "sqrt", "gelu", "sin", "cos", "recip"];

#[test]
fn report_json_and_plots() {
    let dir = temp_dir("full");
    let json = dir.join("acc.json");
    // The plot directory does not exist yet: the command creates it.
    let plots = dir.join("plots/nested");
    let o = cosim(&[
        "cvo-accuracy",
        "--json",
        json.to_str().unwrap(),
        "--plots",
        plots.to_str().unwrap(),
    ]);
    let out = String::from_utf8(o.stdout).unwrap();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{out}\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    for name in ["EXP", "SQRT", "GELU", "SIN", "COS", "RECIP", "REDUCE_SUM"] {
        assert!(
            out.lines()
                .any(|l| l.starts_with(name) && l.contains("PASS")),
            "no PASS line for {name}:\n{out}"
        );
    }
    assert!(out.contains("cvo-accuracy: PASS"));

    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(doc["pass"], true);
    let functions = doc["functions"].as_array().unwrap();
    let names: Vec<&str> = functions
        .iter()
        .map(|f| f["func"].as_str().unwrap())
        .collect();
    assert_eq!(names, FUNCS);
    for f in functions {
        let name = f["func"].as_str().unwrap();
        assert_eq!(f["inputs"], 65536, "{name}");
        assert_eq!(f["pass"], true, "{name}");
        assert_eq!(f["special_mismatches"], 0, "{name}");
        assert_eq!(f["ambiguous"], 0, "{name}");
        assert_eq!(f["out_of_bound"], 0, "{name}");
        let bound = f["bound_ulp"].as_u64().unwrap();
        assert!(f["max_ulp"].as_u64().unwrap() <= bound, "{name}");
        assert!(f["max_error_ulp"].as_f64().unwrap() <= bound as f64 + 0.5 + 1e-9);
        assert!(f["special_cases"].as_u64().unwrap() > 0, "{name}");
        assert_eq!(
            f["not_correctly_rounded"].as_u64().unwrap() as usize,
            f["not_correctly_rounded_records"].as_array().unwrap().len(),
            "{name}: every not correctly rounded input is listed (there are few)"
        );
        let expected_bound = match name {
            "sqrt" | "recip" => 0,
            "gelu" => 2,
            _ => 1,
        };
        assert_eq!(bound, expected_bound, "{name}");
        // Every elementwise function is correctly rounded on every input
        // (GELU since its D table went from every 1/64 to every 1/256:
        // docs/cvo.md section 6).
        assert_eq!(f["not_correctly_rounded"], 0, "{name}");
        if expected_bound == 0 {
            assert_eq!(f["method"], "exact", "{name}");
        } else {
            assert_eq!(f["method"], "f64", "{name}");
            assert!(f["min_margin"].as_f64().unwrap() > doc["ambiguous_margin"].as_f64().unwrap());
        }
    }
    let sum = &doc["reduce_sum"];
    assert_eq!(sum["pass"], true);
    assert_eq!(sum["mismatches"], 0);
    assert_eq!(sum["split_disagreements"], 0);
    assert!(sum["vectors"].as_u64().unwrap() > 1000);
    assert!(sum["nan_results"].as_u64().unwrap() > 0);
    assert!(sum["inf_results"].as_u64().unwrap() > 0);

    for f in functions {
        let name = f["func"].as_str().unwrap();
        let bound = f["bound_ulp"].as_u64().unwrap();
        let path = plots.join(format!("cvo-{name}-ulp.svg"));
        let svg =
            std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert!(svg.starts_with("<svg"), "{name}");
        assert!(svg.trim_end().ends_with("</svg>"), "{name}");
        assert!(svg.contains("<polyline"), "{name}");
        assert!(svg.contains(&name.to_ascii_uppercase()), "{name}: titled");
        assert!(
            svg.contains(&format!("bound: {bound} ULP from correctly rounded")),
            "{name}: the bound line is labelled"
        );
        // The data is drawn: some line has two points (min, max) per pixel
        // column over hundreds of columns (the dashed lines are two-point
        // pieces).
        let longest = svg
            .split("<polyline")
            .skip(1)
            .map(|line| line.split_once("/>").unwrap().0.matches(',').count())
            .max()
            .unwrap_or(0);
        assert!(longest > 200, "{name}: longest line {longest} points");
        // Every function is correctly rounded (checked above): no circles.
        assert!(!svg.contains("<circle"), "{name}");
        // Balanced elements: every opened tag is closed or self-closing.
        // (`<a .../>` has one `<`, `<a>...</a>` two; text is escaped.)
        let paired = svg.matches("</").count();
        let single = svg.matches("/>").count();
        assert_eq!(svg.matches('<').count(), 2 * paired + single, "{name}");
        assert!(svg.len() < 200_000, "{name}: {} bytes", svg.len());
    }
}

#[test]
fn without_options_it_writes_nothing() {
    let dir = temp_dir("plain");
    let o = Command::new(env!("CARGO_BIN_EXE_pccx-cosim"))
        .arg("cvo-accuracy")
        .current_dir(&dir)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0));
    assert!(String::from_utf8(o.stdout).unwrap().contains("PASS"));
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0);
}

#[test]
fn bad_arguments_are_clear_errors() {
    let dir = temp_dir("bad");
    // An unknown option: clap's usage error.
    let o = cosim(&["cvo-accuracy", "--bogus"]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8(o.stderr).unwrap();
    assert!(err.contains("unexpected argument '--bogus'"), "{err}");
    assert!(!err.contains("panicked"), "{err}");

    // An option without its value.
    let o = cosim(&["cvo-accuracy", "--json"]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8(o.stderr).unwrap();
    assert!(err.contains("--json <FILE>"), "{err}");

    // --plots naming a file: refused before anything is measured.
    let file = dir.join("a-file");
    std::fs::write(&file, "x").unwrap();
    let o = cosim(&["cvo-accuracy", "--plots", file.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8(o.stderr).unwrap();
    assert!(
        err.contains("exists and is not a directory") && err.starts_with("pccx-cosim: "),
        "{err}"
    );
    assert!(o.stdout.is_empty());

    // --json in a directory that does not exist.
    let missing = dir.join("no/such/dir/acc.json");
    let o = cosim(&["cvo-accuracy", "--json", missing.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8(o.stderr).unwrap();
    assert!(err.contains("cannot write"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}
