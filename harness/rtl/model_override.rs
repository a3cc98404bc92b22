//! Shared objects named by `PCCX_MODEL_OVERRIDE` opened in place of the linked models: how `gate-power` runs the gate's own tests on a mutant.
//!
//! The variable holds JSON, a list of [`ModelOverride`]s, written by
//! `pccx-cosim gate-power` (docs/mutation.md, "The gate's power"). Each
//! entry names a configuration, the shared object to open for it and, for a
//! mutant schema, the mutant to select. A process that sees the variable
//! says so on stderr the first time it opens each configuration: a model
//! that is not the one the binary was built with is never opened silently.
//! A variable that does not parse, or an entry that cannot be loaded, fails
//! the open with the variable's name and the entry.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Mutex, OnceLock};

use serde::{Deserialize, Serialize};

use super::dynamic::{self, Loaded};
use super::SimOps;

/// The environment variable.
pub const ENV: &str = "PCCX_MODEL_OVERRIDE";

/// The symbol a mutant schema's shim exports to select its mutant.
const SELECT_SYMBOL: &str = "pccx_mutant_select";

/// One configuration's replacement model.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelOverride {
    /// The configuration it stands in for (`kv260`).
    pub config: String,
    /// The shared object (a mutant schema's or a mutant's built alone).
    pub so: PathBuf,
    /// The name its shim was built under: its table is
    /// `pccx_sim_ops_<name>`.
    pub name: String,
    /// For a mutant schema: the mutant to select (0: the RTL as written).
    pub selector: Option<u32>,
}

/// Parses the variable's text.
pub fn parse(text: &str) -> Result<Vec<ModelOverride>, String> {
    let list: Vec<ModelOverride> =
        serde_json::from_str(text).map_err(|e| format!("{ENV}: not a list of overrides: {e}"))?;
    let mut seen = std::collections::BTreeSet::new();
    for o in &list {
        if !seen.insert(o.config.as_str()) {
            return Err(format!(
                "{ENV}: configuration `{}` is named twice",
                o.config
            ));
        }
    }
    Ok(list)
}

/// The variable's text for `list`.
pub fn render(list: &[ModelOverride]) -> String {
    serde_json::to_string(list).expect("overrides serialise")
}

/// The overrides of this process, read once.
fn overrides() -> Result<&'static [ModelOverride], String> {
    static LIST: OnceLock<Result<Vec<ModelOverride>, String>> = OnceLock::new();
    LIST.get_or_init(|| match std::env::var(ENV) {
        Ok(text) => parse(&text),
        Err(std::env::VarError::NotPresent) => Ok(Vec::new()),
        Err(e) => Err(format!("{ENV}: {e}")),
    })
    .as_ref()
    .map(Vec::as_slice)
    .map_err(Clone::clone)
}

/// The model to open for configuration `config` when the variable names
/// it (loaded, its mutant selected, once per process); `None` when it does
/// not.
pub fn ops_for(config: &str) -> Result<Option<&'static SimOps>, String> {
    static LOADED: Mutex<BTreeMap<String, Loaded>> = Mutex::new(BTreeMap::new());

    let Some(o) = overrides()?.iter().find(|o| o.config == config) else {
        return Ok(None);
    };
    let mut loaded = LOADED.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(Loaded(ops)) = loaded.get(config) {
        return Ok(Some(ops));
    }
    let at = |e: String| format!("{ENV}, configuration `{config}`: {e}");
    let ops = dynamic::load(&o.so, &o.name).map_err(at)?;
    if let Some(selector) = o.selector {
        let select = dynamic::symbol(&o.so, SELECT_SYMBOL).map_err(at)?;
        // SAFETY: the schema shim's `extern "C" void pccx_mutant_select(uint32_t)`.
        let select: extern "C" fn(u32) = unsafe { std::mem::transmute(select) };
        select(selector);
    }
    eprintln!(
        "pccx-cosim: {ENV}: configuration `{config}` opens {}{} instead of its own model",
        o.so.display(),
        o.selector
            .map_or(String::new(), |k| format!(" (mutant selector {k})"))
    );
    loaded.insert(config.to_string(), Loaded(ops));
    Ok(Some(ops))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_variable_round_trips_and_bad_text_names_the_variable() {
        let list = vec![ModelOverride {
            config: "tiny".into(),
            so: "/x/pccx_model_schema.so".into(),
            name: "schema".into(),
            selector: Some(17),
        }];
        assert_eq!(parse(&render(&list)).unwrap(), list);
        let e = parse("kv260=/x.so").unwrap_err();
        assert!(e.starts_with(ENV), "{e}");
        let twice = render(&[list[0].clone(), list[0].clone()]);
        assert!(parse(&twice).unwrap_err().contains("named twice"));
        let unknown = r#"[{"config":"tiny","so":"/x","name":"s","selector":null,"extra":1}]"#;
        assert!(parse(unknown).is_err());
    }
}
