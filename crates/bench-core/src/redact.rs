//! Values that are never shown or written: those of the storage options not known to carry
//! no secret ([`crate::plan::is_public_option`]). Each process that holds them (the
//! coordinator from its plan and command line, a worker or server from its environment)
//! keeps them here once, and every line bench prints and every file it writes passes
//! through [`hide`], so that a store's error message that echoes a credential, or a value a
//! user gave without its key, leaves the process as `(hidden)`.

use std::borrow::Cow;
use std::sync::RwLock;

/// What a hidden value is replaced with.
pub const HIDDEN: &str = "(hidden)";

static SECRETS: RwLock<Vec<String>> = RwLock::new(Vec::new());

/// The shortest value kept hidden.
const MIN_LEN: usize = 8;

/// Keep `values` hidden from now on in this process: each as given, as JSON writes it in a
/// string and as a URL encodes it. Values shorter than 8 characters are left alone: no
/// store issues a credential that short (an AWS key id has 20, a secret 40, an Azure
/// account key 88), and hiding short words would garble every other figure; a short
/// value is still never shown where bench shows an option's value ([`crate::plan::given`]).
pub fn keep_hidden<'a>(values: impl IntoIterator<Item = &'a str>) {
    let mut secrets = SECRETS.write().unwrap_or_else(|e| e.into_inner());
    for v in values {
        if v.chars().count() < MIN_LEN {
            continue;
        }
        let json = serde_json::to_string(v).unwrap_or_default();
        let forms = [
            v.to_string(),
            json.trim_matches('"').to_string(),
            percent_encoded(v),
        ];
        for f in forms {
            if !secrets.contains(&f) {
                secrets.push(f);
            }
        }
    }
    // The longest first: a value that contains another is hidden whole.
    secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
}

/// The storage options of `storage` whose values are hidden, kept hidden ([`keep_hidden`]).
pub fn keep_options_hidden<'a>(storage: impl IntoIterator<Item = (&'a String, &'a String)>) {
    keep_hidden(
        (storage.into_iter())
            .filter(|(k, _)| !crate::plan::is_public_option(k))
            .map(|(_, v)| v.as_str()),
    );
}

/// `text` with every value kept hidden replaced by [`HIDDEN`].
pub fn hide(text: &str) -> Cow<'_, str> {
    let secrets = SECRETS.read().unwrap_or_else(|e| e.into_inner());
    if !secrets.iter().any(|s| text.contains(s.as_str())) {
        return Cow::Borrowed(text);
    }
    let mut out = text.to_string();
    for s in secrets.iter() {
        if out.contains(s.as_str()) {
            out = out.replace(s.as_str(), HIDDEN);
        }
    }
    Cow::Owned(out)
}

/// [`hide`] of bytes that are text (a file's contents); others as they are.
pub fn hide_bytes(bytes: &[u8]) -> Cow<'_, [u8]> {
    match std::str::from_utf8(bytes).map(hide) {
        Ok(Cow::Owned(s)) => Cow::Owned(s.into_bytes()),
        _ => Cow::Borrowed(bytes),
    }
}

/// A value as a URL's query or path carries it: unreserved characters as they are, every
/// other byte `%XX`.
fn percent_encoded(v: &str) -> String {
    let mut out = String::with_capacity(v.len());
    for b in v.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                out.push(b as char)
            }
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A value kept hidden leaves no trace as given, JSON-escaped or URL-encoded; short
    /// values are not touched; a storage option known to carry no secret is not kept
    /// hidden.
    #[test]
    fn kept_values_are_hidden_in_every_form() {
        keep_hidden(["s3cr\"et/+key=="]);
        let text = r#"error: AccessDenied for key s3cr"et/+key== ("s3cr\"et/+key==") at ?sig=s3cr%22et%2F%2Bkey%3D%3D"#;
        let shown = hide(text);
        assert!(!shown.contains("s3cr"), "{shown}");
        assert_eq!(shown.matches(HIDDEN).count(), 3, "{shown}");
        keep_hidden(["abcdefg", "true"]);
        assert_eq!(hide("abcdefg true"), "abcdefg true");
        let storage: std::collections::BTreeMap<String, String> = [
            (
                "aws_endpoint".to_string(),
                "http://127.0.0.1:9000".to_string(),
            ),
            (
                "azure_storage_account_key".to_string(),
                "MARKER-azure-key".to_string(),
            ),
        ]
        .into();
        keep_options_hidden(&storage);
        assert_eq!(
            hide("http://127.0.0.1:9000 MARKER-azure-key"),
            "http://127.0.0.1:9000 (hidden)"
        );
        assert_eq!(&*hide_bytes(b"x MARKER-azure-key"), b"x (hidden)");
    }
}
