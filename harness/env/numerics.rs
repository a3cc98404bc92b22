//! Numerics profile files (docs/dut-contract.md, "Numerics profiles"): the
//! JSON a DUT manifest names in `numerics`, read with serde into golden's
//! `NumericsProfile`, every error naming the file and the field.

use pccx_golden::isa::CvoFunc;
use pccx_golden::numerics::profile::NumericsProfile;
use std::collections::BTreeMap;
use std::path::Path;

/// The file's `format`, and the version this harness reads.
pub const FORMAT: &str = "pccx-cosim numerics";
pub const VERSION: u64 = 1;

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct ProfileFile {
    format: String,
    version: u64,
    /// Per CVO function by its assembler name (`exp`, `sqrt`, `gelu`,
    /// `sin`, `cos`, `reduce_sum`, `scale`, `recip`), how far its results
    /// may be from the golden model's.
    cvo: BTreeMap<String, Bound>,
}

/// How far one function's written elements may be from the golden model's.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Bound {
    /// At most this many BF16 ULP (profile.rs, `ulp_distance`); a special
    /// value (NaN, an infinity) must still match exactly.
    max_ulp: u32,
}

/// Whether a campaign applies the profile the DUT declares
/// (`--numerics`).
#[derive(
    Clone,
    Copy,
    Debug,
    Default,
    PartialEq,
    Eq,
    clap::ValueEnum,
    serde::Serialize,
    serde::Deserialize,
)]
#[serde(rename_all = "kebab-case")]
pub enum NumericsMode {
    /// The DUT manifest's profile, if it names one.
    #[default]
    Declared,
    /// None: every result must match the golden model bit for bit (what
    /// the profile hides).
    Exact,
}

impl NumericsMode {
    pub fn is_declared(&self) -> bool {
        *self == NumericsMode::Declared
    }
}

/// The profile the DUT manifest `manifest` (relative to the sources this
/// binary was built from) names in `numerics`, if it names one.
#[cfg(feature = "rtl")]
pub fn declared_by(manifest: &str) -> Result<Option<NumericsProfile>, String> {
    let path = crate::rtl::dynamic::source_root().join(manifest);
    let declared = crate::rtl::dut::Manifest::read(&path)?;
    let Some(file) = declared.numerics else {
        return Ok(None);
    };
    read(&path.parent().unwrap_or(&path).join(file)).map(Some)
}

/// Reads the profile at `path`.
pub fn read(path: &Path) -> Result<NumericsProfile, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read the numerics profile {}: {e}", path.display()))?;
    parse(&text, path)
}

/// [`read`] of `text`, `path` naming it in errors.
pub fn parse(text: &str, path: &Path) -> Result<NumericsProfile, String> {
    let file = path.display();
    let mut de = serde_json::Deserializer::from_str(text);
    let f: ProfileFile = serde_path_to_error::deserialize(&mut de)
        .map_err(|e| format!("{file}: field `{}`: {}", e.path(), e.inner()))?;
    if f.format != FORMAT {
        return Err(format!(
            "{file}: field `format` is `{}`; a numerics profile says `{FORMAT}`",
            f.format
        ));
    }
    if f.version != VERSION {
        return Err(format!(
            "{file}: field `version` is {}; this pccx-cosim reads version {VERSION}",
            f.version
        ));
    }
    let mut profile = NumericsProfile {
        source: path.display().to_string(),
        ..NumericsProfile::default()
    };
    for (name, bound) in f.cvo {
        let func = CvoFunc::ALL
            .into_iter()
            .find(|f| f.name() == name)
            .ok_or_else(|| {
                format!(
                    "{file}: field `cvo.{name}`: no such CVO function (the functions: {})",
                    CvoFunc::ALL.map(CvoFunc::name).join(", ")
                )
            })?;
        if bound.max_ulp == 0 {
            return Err(format!(
                "{file}: field `cvo.{name}.max_ulp` is 0: an exact function needs no bound \
                 (leave it out)"
            ));
        }
        profile.max_ulp[func as usize] = Some(bound.max_ulp);
    }
    Ok(profile)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_text(text: &str) -> Result<NumericsProfile, String> {
        parse(text, Path::new("x/numerics.json"))
    }

    #[test]
    fn a_profile_bounds_the_functions_it_names() {
        let p = parse_text(
            r#"{"format": "pccx-cosim numerics", "version": 1,
                "cvo": {"exp": {"max_ulp": 1}, "reduce_sum": {"max_ulp": 3}}}"#,
        )
        .unwrap();
        assert_eq!(p.bound(CvoFunc::Exp), Some(1));
        assert_eq!(p.bound(CvoFunc::ReduceSum), Some(3));
        assert_eq!(p.bound(CvoFunc::Sin), None);
        assert_eq!(p.source, "x/numerics.json");
    }

    #[test]
    fn a_bad_profile_is_refused_with_its_field() {
        let e = parse_text(
            r#"{"format": "pccx-cosim numerics", "version": 1, "cvo": {"tanh": {"max_ulp": 1}}}"#,
        )
        .unwrap_err();
        assert!(
            e.starts_with("x/numerics.json: field `cvo.tanh`: no such CVO function"),
            "{e}"
        );
        let e = parse_text(
            r#"{"format": "pccx-cosim numerics", "version": 1, "cvo": {"exp": {"ulp": 1}}}"#,
        )
        .unwrap_err();
        assert!(
            e.contains("field `cvo.exp.ulp`: unknown field `ulp`"),
            "{e}"
        );
        let e = parse_text(
            r#"{"format": "pccx-cosim numerics", "version": 1, "cvo": {"exp": {"max_ulp": 0}}}"#,
        )
        .unwrap_err();
        assert!(e.contains("field `cvo.exp.max_ulp` is 0"), "{e}");
        let e = parse_text(r#"{"format": "other", "version": 1, "cvo": {}}"#).unwrap_err();
        assert!(e.contains("field `format` is `other`"), "{e}");
    }
}
