//! Values that are never shown or written: those of the storage options not known to carry
//! no secret ([`is_public_option`]). Each process that holds them (the
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
            .filter(|(k, _)| !is_public_option(k))
            .map(|(_, v)| v.as_str()),
    );
}

/// Storage options known to carry no secret, as object_store and lance name them (without
/// the `aws_`, `azure_`, `azure_storage_` or `google_` a key may begin with): where the store
/// is, how to reach it and how to talk to it. Every other option's value may be a
/// credential (a key, a token, a signature, a password in a URL, an identity), so it is
/// hidden: never printed, never written (state.json, records, summaries, reports, messages,
/// logs), never part of a cell's key.
const PUBLIC_OPTIONS: &[&str] = &[
    // Where: region, bucket, endpoint (object_store's S3, Azure and Google builders).
    "region",
    "default_region",
    "bucket",
    "bucket_name",
    "container_name",
    "account_name",
    "endpoint",
    "endpoint_url",
    "endpoint_url_s3",
    "endpoint_url_sts",
    "base_url",
    "metadata_endpoint",
    "authority_host",
    // How: the S3 dialect and its switches.
    "virtual_hosted_style_request",
    "s3_express",
    "imdsv1_fallback",
    "unsigned_payload",
    "checksum_algorithm",
    "skip_signature",
    "copy_if_not_exists",
    "conditional_put",
    "disable_tagging",
    "disable_bulk_delete",
    "request_payer",
    "server_side_encryption",
    "sse_bucket_key_enabled",
    "use_emulator",
    "use_fabric_endpoint",
    "use_azure_cli",
    "credential_type",
    // object_store's HTTP client (not proxy_url, proxy_ca_certificate: a URL may hold a
    // password).
    "allow_http",
    "allow_invalid_certificates",
    "disable_system_certificates",
    "connect_timeout",
    "default_content_type",
    "http1_only",
    "http2_only",
    "http2_keep_alive_interval",
    "http2_keep_alive_timeout",
    "http2_keep_alive_while_idle",
    "http2_max_frame_size",
    "pool_idle_timeout",
    "pool_max_idle_per_host",
    "proxy_excludes",
    "randomize_addresses",
    "read_timeout",
    "timeout",
    "user_agent",
    // lance's own.
    "client_max_retries",
    "client_retry_timeout",
    "download_retry_count",
    "expires_at_millis",
    "refresh_offset_millis",
    "use_constant_size_upload_parts",
    "list_is_lexically_ordered",
    "block_size",
    "max_iop_size",
    "read_chunk_size",
];

/// Whether a storage option is known to carry no secret ([`PUBLIC_OPTIONS`], or one of
/// lance's `lance_aimd_*` pacing options); its value may be shown and stored.
pub fn is_public_option(key: &str) -> bool {
    let k = key.trim().to_ascii_lowercase();
    let bare = ["azure_storage_", "aws_", "azure_", "google_"]
        .iter()
        .find_map(|p| k.strip_prefix(p))
        .unwrap_or(&k);
    PUBLIC_OPTIONS.contains(&bare)
        || PUBLIC_OPTIONS.contains(&k.as_str())
        || k.starts_with("lance_aimd_")
}

/// Whether the value given under a key (a plan's or `--set`'s: `storage.K` for a storage
/// option) is hidden wherever bench shows or writes it: a storage option not known to carry
/// no secret, or any other key whose name looks like a secret's.
pub fn hides(key: &str) -> bool {
    match key.trim().strip_prefix("storage.") {
        Some(option) => !is_public_option(option),
        None => looks_secret(key),
    }
}

/// Whether a name (an environment variable's, a key outside `[storage]`) looks like a
/// secret's: it names a key, a token, a password, a credential, a session, a signature, a
/// private or an authorization.
pub fn looks_secret(name: &str) -> bool {
    let k = name.to_ascii_lowercase();
    [
        "secret",
        "key",
        "token",
        "passw",
        "credential",
        "session",
        "sas",
        "signature",
        "private",
        "auth",
        "cert",
    ]
    .iter()
    .any(|s| k.contains(s))
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
