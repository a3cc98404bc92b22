//! Where this binary and the RTL came from, for the repro file: versions,
//! git commits, and whether hw/rtl had uncommitted changes.

use serde_json::{json, Value};
use std::path::Path;
use std::process::Command;
use std::sync::OnceLock;

/// Where this binary and the RTL came from, asked once per process: the
/// pccx-cosim version and build profile, the rustc on PATH (asked at run
/// time), the Verilator the models were built with, the git commit of the source tree and whether
/// hw/rtl has uncommitted changes. What cannot be found out is "unknown".
pub fn provenance() -> &'static Value {
    static PROVENANCE: OnceLock<Value> = OnceLock::new();
    PROVENANCE.get_or_init(|| {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let git = |args: &[&str]| -> Option<String> {
            let out = Command::new("git")
                .arg("-C")
                .arg(root)
                .args(args)
                .env("GIT_OPTIONAL_LOCKS", "0")
                .output()
                .ok()?;
            out.status
                .success()
                .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
        };
        let commit = git(&["rev-parse", "HEAD"]);
        let rtl_commit = git(&["log", "-1", "--format=%H", "--", "hw/rtl"]);
        let dirty = git(&["status", "--porcelain", "--", "hw/rtl"]).map(|s| !s.is_empty());
        // The Verilator the linked models were made with, as build.rs
        // identified it (version, where it was read, path).
        #[cfg(feature = "rtl")]
        let verilator = env!("PCCX_VERILATOR_BUILT").to_string();
        #[cfg(not(feature = "rtl"))]
        let verilator = "none (built without the rtl feature)".to_string();
        let rustc = first_line_of(
            &std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into()),
            &["--version"],
        );
        json!({
            "pccx_cosim_version": env!("CARGO_PKG_VERSION"),
            "build_profile": if cfg!(debug_assertions) { "debug" } else { "release" },
            "rustc_on_path": rustc,
            "verilator": verilator,
            "git_commit": commit.unwrap_or_else(|| "unknown".into()),
            "rtl_last_commit": rtl_commit.filter(|c| !c.is_empty()).unwrap_or_else(|| "unknown".into()),
            "rtl_dirty": dirty.map_or(json!("unknown"), Value::from),
            "command_line": std::env::args().collect::<Vec<_>>().join(" "),
        })
    })
}

fn first_line_of(program: &str, args: &[&str]) -> String {
    Command::new(program)
        .args(args)
        .output()
        .ok()
        .filter(|o| o.status.success())
        .and_then(|o| {
            String::from_utf8_lossy(&o.stdout)
                .lines()
                .next()
                .map(|l| l.trim().to_string())
        })
        .filter(|l| !l.is_empty())
        .unwrap_or_else(|| "unknown".into())
}
