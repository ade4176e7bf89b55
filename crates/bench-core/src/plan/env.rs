//! `[env]` and `[matrix.env]`: variables set in the workers' environment (e.g. lance's
//! `LANCE_USE_VERSION_HINT`), for every cell or as a dimension of the matrix.

use std::collections::BTreeMap;

use super::checks::{dimension, invalid};
use crate::error::PlanError;

/// Why bench refuses a variable name; `None` when a plan may set it.
fn refused(name: &str) -> Option<&'static str> {
    let mut chars = name.chars();
    let well_formed = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_');
    if !well_formed {
        Some("is not a variable name: use letters, digits and `_`, not starting with a digit")
    } else if name.starts_with("BENCH_") {
        Some("is bench's own (BENCH_*): bench sets it, a plan cannot")
    } else if super::looks_secret(name) {
        Some(
            "looks like a secret, and a cell's variables are written to its records: set it \
             in the environment bench runs in (its workers inherit it)",
        )
    } else {
        None
    }
}

/// A variable's value as text.
fn text(key: &str, v: toml::Value) -> Result<String, PlanError> {
    match v {
        toml::Value::String(s) => Ok(s),
        toml::Value::Boolean(b) => Ok(b.to_string()),
        toml::Value::Integer(i) => Ok(i.to_string()),
        toml::Value::Float(f) => Ok(f.to_string()),
        _ => Err(invalid(key, "must be a string, a number or true/false")),
    }
}

/// `[env]`: variables every cell's workers get.
pub(super) fn fixed(
    raw: BTreeMap<String, toml::Value>,
) -> Result<BTreeMap<String, String>, PlanError> {
    let mut out = BTreeMap::new();
    for (k, v) in raw {
        let key = format!("env.{k}");
        if let Some(why) = refused(&k) {
            return Err(invalid(&key, why));
        }
        out.insert(k, text(&key, v)?);
    }
    Ok(out)
}

/// `[matrix.env]`: each variable a dimension, with the values it takes, in the order
/// written; a variable in `[env]` too, or named as a namespace property dimension, is refused.
pub(super) fn matrix(
    raw: Option<toml::Table>,
    fixed: &BTreeMap<String, String>,
    properties: &[(String, Vec<String>)],
) -> Result<Vec<(String, Vec<String>)>, PlanError> {
    let mut out = Vec::new();
    for (k, v) in raw.unwrap_or_default() {
        let key = format!("matrix.env.{k}");
        if let Some(why) = refused(&k) {
            return Err(invalid(&key, why));
        }
        if let Some(v) = fixed.get(&k) {
            return Err(invalid(
                &key,
                format!(
                    "is also set in [env] ({k} = {v:?}); give it in one place: in [env] for \
                     every cell, or here as a dimension"
                ),
            ));
        }
        if properties.iter().any(|(p, _)| *p == k) {
            return Err(invalid(
                &key,
                "is also a dimension of [matrix.properties]; rename one of them",
            ));
        }
        let values = dimension(&key, v, "variable", "[env]", |x| text(&key, x))?;
        out.push((k, values));
    }
    Ok(out)
}
