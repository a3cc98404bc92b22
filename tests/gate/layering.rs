//! The harness's dependencies run one way: each folder of `harness/` imports
//! only the folders of the layers above it (the order `harness/lib.rs` and
//! docs/architecture.md state), and within a folder no file imports one
//! that imports it back, directly or through others.

use std::collections::{BTreeMap, BTreeSet};
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
    "workload",
    "report",
    "session",
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

/// Every module of the tree at `root` (a file, or a folder's `mod.rs`) by
/// its path (`regress::campaign`, `regress`), with its source up to its
/// unit tests (a `#[cfg(test)] mod tests` only uses what it tests).
fn modules(root: &Path) -> BTreeMap<String, String> {
    let mut found = BTreeMap::new();
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
            let rel = path.strip_prefix(root).unwrap().with_extension("");
            let mut parts: Vec<String> = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            if parts.last().is_some_and(|p| p == "mod") {
                parts.pop();
            }
            let text = std::fs::read_to_string(&path).unwrap();
            let code = match text.find("#[cfg(test)]\nmod tests") {
                Some(at) => text[..at].to_string(),
                None => text,
            };
            found.insert(parts.join("::"), code);
        }
    }
    found
}

/// The modules `name`'s source imports: each `crate::a::b` and
/// `super::b` path, resolved to the longest module of `all` it names.
fn imports(name: &str, code: &str, all: &BTreeMap<String, String>) -> BTreeSet<String> {
    let mut parent: Vec<&str> = name.split("::").collect();
    parent.pop();
    let mut out = BTreeSet::new();
    for line in code.lines() {
        let line = line.split("//").next().unwrap_or("");
        for (prefix, base) in [("crate::", Vec::new()), ("super::", parent.clone())] {
            let mut rest = line;
            while let Some(at) = rest.find(prefix) {
                // `super::` inside a longer word (`mysuper::`) is not one.
                let before = rest[..at].chars().next_back();
                rest = &rest[at + prefix.len()..];
                if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_') {
                    continue;
                }
                let mut path: Vec<String> = base.iter().map(|p| p.to_string()).collect();
                let tail = rest
                    .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == ':'))
                    .next()
                    .unwrap_or("");
                path.extend(tail.split("::").filter(|p| !p.is_empty()).map(String::from));
                // The longest prefix that is a module; `use super::{a, b}`
                // groups name the parent itself.
                while !path.is_empty() && !all.contains_key(&path.join("::")) {
                    path.pop();
                }
                let target = path.join("::");
                if !target.is_empty() && target != name {
                    out.insert(target);
                }
            }
        }
    }
    out
}

/// One import cycle among the modules at `root`, as `a -> b -> a`, if any.
fn a_cycle(root: &Path) -> Option<String> {
    let all = modules(root);
    let edges: BTreeMap<&String, BTreeSet<String>> =
        all.iter().map(|(n, c)| (n, imports(n, c, &all))).collect();
    // Depth-first search; `on_path` holds the current chain.
    fn visit(
        node: &str,
        edges: &BTreeMap<&String, BTreeSet<String>>,
        done: &mut BTreeSet<String>,
        on_path: &mut Vec<String>,
    ) -> Option<String> {
        if let Some(at) = on_path.iter().position(|n| n == node) {
            let mut cycle = on_path[at..].to_vec();
            cycle.push(node.to_string());
            return Some(cycle.join(" -> "));
        }
        if done.contains(node) {
            return None;
        }
        on_path.push(node.to_string());
        for next in edges.get(&node.to_string()).into_iter().flatten() {
            if let Some(c) = visit(next, edges, done, on_path) {
                return Some(c);
            }
        }
        on_path.pop();
        done.insert(node.to_string());
        None
    }
    let mut done = BTreeSet::new();
    for node in edges.keys() {
        if let Some(c) = visit(node, &edges, &mut done, &mut Vec::new()) {
            return Some(c);
        }
    }
    None
}

#[test]
fn no_file_imports_one_that_imports_it_back() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("harness");
    if let Some(cycle) = a_cycle(&root) {
        panic!("an import cycle between files of harness/: {cycle}");
    }
}

#[test]
fn the_cycle_check_fires_on_two_files_of_one_folder() {
    let dir = std::env::temp_dir().join(format!("pccx-cycles-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("regress")).unwrap();
    std::fs::write(dir.join("regress/mod.rs"), "pub mod a;\npub mod b;\n").unwrap();
    std::fs::write(dir.join("regress/a.rs"), "use super::b::Thing;\n").unwrap();
    std::fs::write(
        dir.join("regress/b.rs"),
        "pub struct Thing;\n#[cfg(test)]\nmod tests {\n    use crate::regress::a;\n}\n",
    )
    .unwrap();
    // The test module's import is not one of the file's.
    assert_eq!(a_cycle(&dir), None);
    std::fs::write(
        dir.join("regress/b.rs"),
        "pub struct Thing;\nfn f() { crate::regress::a::g() }\n",
    )
    .unwrap();
    let cycle = a_cycle(&dir).expect("a cycle");
    assert!(
        cycle.contains("regress::a -> regress::b -> regress::a"),
        "{cycle}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
