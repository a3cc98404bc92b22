//! The evidence file of the equivalent list: the battery each listed
//! equivalent survived, per configuration, for one RTL (docs/mutation.md,
//! "Evidence").
//!
//! `mutate --evidence N` runs each listed equivalent through N programs
//! (and the CVO sweep) and records what it survived here, under the RTL's
//! fingerprint. A later run finds an equivalent with a sufficient record
//! for the same fingerprint and configuration and does not run it again;
//! any change to hw/rtl, hw/verilator.f, the configuration or Verilator
//! makes every record stale, and the equivalents run again.

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::build::Builder;
use super::Battery;

/// The file's format name.
pub const EVIDENCE_FORMAT: &str = "pccx-equivalence-evidence";

/// The default place of the evidence file, beside the equivalent list.
pub const EVIDENCE_FILE: &str = "hw/mutants/evidence.json";

/// Every record, in id then configuration order.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EvidenceFile {
    pub format: String,
    pub version: u32,
    pub records: Vec<EvidenceRecord>,
}

/// What one listed equivalent survived on one configuration.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EvidenceRecord {
    pub id: String,
    pub config: String,
    /// The fingerprint of the RTL it ran on ([`rtl_fingerprint`]).
    pub rtl: String,
    pub battery: Battery,
}

impl EvidenceFile {
    /// The file at `path`; an empty one when there is none.
    pub fn read(path: &Path) -> Result<EvidenceFile, String> {
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok(EvidenceFile {
                    format: EVIDENCE_FORMAT.into(),
                    version: 1,
                    records: Vec::new(),
                })
            }
            Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
        };
        let file: EvidenceFile = serde_json::from_str(&text).map_err(|e| {
            format!(
                "{}: line {}, column {}: {e}",
                path.display(),
                e.line(),
                e.column()
            )
        })?;
        if file.format != EVIDENCE_FORMAT || file.version != 1 {
            return Err(format!(
                "{}: format `{}` version {}, expected `{EVIDENCE_FORMAT}` version 1",
                path.display(),
                file.format,
                file.version
            ));
        }
        Ok(file)
    }

    /// Writes the file whole, then renames it into place.
    pub fn write(&self, path: &Path) -> Result<(), String> {
        let text = serde_json::to_string_pretty(self).expect("evidence serialises") + "\n";
        let tmp = path.with_extension(format!("tmp{}", std::process::id()));
        std::fs::write(&tmp, text)
            .and_then(|()| std::fs::rename(&tmp, path))
            .map_err(|e| format!("cannot write {}: {e}", path.display()))
    }

    /// The battery recorded for `id` on `config` and the RTL `rtl`.
    pub fn fresh(&self, id: &str, config: &str, rtl: &str) -> Option<Battery> {
        self.records
            .iter()
            .find(|r| r.id == id && r.config == config && r.rtl == rtl)
            .map(|r| r.battery)
    }

    /// Records `battery` for `id` on `config` and `rtl`, replacing what
    /// was recorded for the pair before.
    pub fn record(&mut self, id: &str, config: &str, rtl: &str, battery: Battery) {
        self.forget(id, config);
        self.records.push(EvidenceRecord {
            id: id.into(),
            config: config.into(),
            rtl: rtl.into(),
            battery,
        });
        self.records
            .sort_by(|a, b| (&a.id, &a.config).cmp(&(&b.id, &b.config)));
    }

    /// Drops the record of `id` on `config` (an entry that died).
    pub fn forget(&mut self, id: &str, config: &str) {
        self.records.retain(|r| !(r.id == id && r.config == config));
    }
}

/// The fingerprint evidence is recorded under: hw/rtl's manifest and every
/// file it lists, hw/verilator.f, the configuration's parameters and the
/// Verilator that builds it.
pub fn rtl_fingerprint(builder: &Builder) -> Result<String, String> {
    builder.rtl_fingerprint("equivalence evidence 1")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_is_fresh_only_for_its_rtl_and_configuration() {
        let dir = std::env::temp_dir().join(format!("pccx-evidence-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("evidence.json");
        let mut file = EvidenceFile::read(&path).unwrap();
        assert!(file.records.is_empty());
        let battery = Battery {
            random: 750,
            stalled: 750,
            steered: 500,
            cvo_sweep: 0,
            directed: 0,
        };
        file.record("a.sv:1:1:operator-swap", "tiny", "r1", battery);
        file.record("a.sv:1:1:operator-swap", "tiny", "r1", battery);
        assert_eq!(file.records.len(), 1, "a second record replaces the first");
        file.write(&path).unwrap();
        let file = EvidenceFile::read(&path).unwrap();
        assert_eq!(
            file.fresh("a.sv:1:1:operator-swap", "tiny", "r1"),
            Some(battery)
        );
        assert_eq!(file.fresh("a.sv:1:1:operator-swap", "tiny", "r2"), None);
        assert_eq!(file.fresh("a.sv:1:1:operator-swap", "small", "r1"), None);
        std::fs::write(&path, r#"{"format": "other", "version": 1, "records": []}"#).unwrap();
        assert!(EvidenceFile::read(&path).unwrap_err().contains("`other`"));
        std::fs::write(
            &path,
            "{\"format\": \"pccx-equivalence-evidence\",\n \"versio\": 1}",
        )
        .unwrap();
        assert!(EvidenceFile::read(&path).unwrap_err().contains("line 2"));
        std::fs::remove_dir_all(&dir).ok();
    }
}
