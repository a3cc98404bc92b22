//! The harness's dependencies run one way: each folder of `harness/` imports
//! only the folders of the layers above it (the order `harness/lib.rs` and
//! docs/architecture.md state), so no module imports one that imports it
//! back.

use std::path::Path;

/// Top to bottom: a module may use its own layer and those before it.
const LAYERS: &[&str] = &[
    "format",
    "config",
    "stimulus",
    "rtl",
    "scoreboard",
    "env",
    "coverage",
    "triage",
    "regress",
    "tools",
    "report",
    "cli",
];

fn layer(name: &str) -> Option<usize> {
    LAYERS.iter().position(|l| *l == name)
}

/// Every `crate::NAME` a source text names, with its line number.
fn crate_paths(text: &str) -> Vec<(usize, String)> {
    let mut found = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let code = line.split("//").next().unwrap_or("");
        let mut rest = code;
        while let Some(at) = rest.find("crate::") {
            let tail = &rest[at + "crate::".len()..];
            let name: String = tail
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            found.push((n + 1, name));
            rest = tail;
        }
        // `use crate::{a, b}` groups.
        if let Some(at) = code.find("crate::{") {
            let group = &code[at + "crate::{".len()..];
            for part in group.split([',', '}']) {
                let name: String = part
                    .trim()
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect();
                if !name.is_empty() {
                    found.push((n + 1, name));
                }
            }
        }
    }
    found
}

fn violations(root: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            if path.extension().is_none_or(|e| e != "rs") {
                continue;
            }
            let rel = path.strip_prefix(root).unwrap();
            let top = rel
                .components()
                .next()
                .unwrap()
                .as_os_str()
                .to_string_lossy();
            let top = top.trim_end_matches(".rs");
            let Some(own) = layer(top) else { continue };
            let text = std::fs::read_to_string(&path).unwrap();
            for (line, name) in crate_paths(&text) {
                if let Some(used) = layer(&name) {
                    if used > own {
                        out.push(format!(
                            "harness/{}:{line}: `{top}` uses `crate::{name}`, a layer below it",
                            rel.display()
                        ));
                    }
                }
            }
        }
    }
    out.sort();
    out
}

#[test]
fn every_folder_imports_only_the_layers_above_it() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("harness");
    let found = violations(&root);
    assert!(
        found.is_empty(),
        "imports against the layering:\n{}",
        found.join("\n")
    );
}

#[test]
fn the_check_fires_on_an_upward_import() {
    let dir = std::env::temp_dir().join(format!("pccx-layering-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("scoreboard")).unwrap();
    std::fs::write(
        dir.join("scoreboard/mod.rs"),
        "use crate::triage::signature::Signature;\nuse crate::{config, regress};\n",
    )
    .unwrap();
    let found = violations(&dir);
    assert_eq!(found.len(), 2, "{found:?}");
    assert!(found[0].contains("crate::triage") || found[1].contains("crate::triage"));
    assert!(found.iter().any(|f| f.contains("crate::regress")));
}
