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

/// The storage options of `storage` whose values are hidden, kept hidden ([`keep_hidden`]);
/// and of every option whose value is a URL, what in it may be a credential: its userinfo
/// (`USER:PASS@`) and its query's values ([`url_secrets`]), of any length.
pub fn keep_options_hidden<'a>(storage: impl IntoIterator<Item = (&'a String, &'a String)>) {
    let storage: Vec<(&String, &String)> = storage.into_iter().collect();
    keep_hidden(
        (storage.iter())
            .filter(|(k, _)| !is_public_option(k))
            .map(|(_, v)| v.as_str()),
    );
    let parts: Vec<String> = (storage.iter()).flat_map(|(_, v)| url_secrets(v)).collect();
    let mut secrets = SECRETS.write().unwrap_or_else(|e| e.into_inner());
    for p in parts {
        for f in [percent_encoded_userinfo(&p), p] {
            if !secrets.contains(&f) {
                secrets.push(f);
            }
        }
    }
    secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
}

/// What in a URL may be a credential, each with what marks it off in the URL (so that a
/// short password hides itself and nothing else): its userinfo with its `@`
/// (`USER:PASS@`), and the value of each query parameter whose name looks like a secret's
/// ([`looks_secret`]: `X-Amz-Signature`, `token`) or that is 8 characters or longer, with
/// its `=` (`=VALUE`). None in a value that is no URL.
fn url_secrets(value: &str) -> Vec<String> {
    let Some((_, rest)) = value.split_once("://") else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    if let Some((userinfo, _)) = authority.rsplit_once('@') {
        out.push(format!("{userinfo}@"));
    }
    if let Some((_, query)) = rest.split_once('?') {
        let query = query.split('#').next().unwrap_or("");
        for pair in query.split('&') {
            if let Some((name, v)) = pair.split_once('=')
                && !v.is_empty()
                && (looks_secret(name) || v.chars().count() >= MIN_LEN)
            {
                out.push(format!("={v}"));
            }
        }
    }
    out
}

/// A userinfo or query part as a URL library writes it back, its reserved characters
/// encoded (the `@` or `=` that marks it off kept as it is).
fn percent_encoded_userinfo(part: &str) -> String {
    match (part.strip_suffix('@'), part.strip_prefix('=')) {
        (Some(userinfo), _) => {
            let (user, pass) = userinfo.split_once(':').unwrap_or((userinfo, ""));
            match pass.is_empty() {
                true => format!("{}@", percent_encoded(user)),
                false => format!("{}:{}@", percent_encoded(user), percent_encoded(pass)),
            }
        }
        (None, Some(v)) => format!("={}", percent_encoded(v)),
        _ => part.to_string(),
    }
}

/// A storage option's value as bench shows and stores it (in a cell's key, state.json, the
/// records): a URL's userinfo and query values replaced by [`HIDDEN`], any other value as
/// it is.
pub fn shown_value(value: &str) -> String {
    let mut out = value.to_string();
    for part in url_secrets(value) {
        let hidden = match part.ends_with('@') {
            true => format!("{HIDDEN}@"),
            false => format!("={HIDDEN}"),
        };
        out = out.replace(&part, &hidden);
    }
    out
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
    // lance-io's AIMD throttle (lance-io 14.0.2, object_store/throttle.rs), each named.
    "lance_aimd_initial_rate",
    "lance_aimd_min_rate",
    "lance_aimd_max_rate",
    "lance_aimd_decrease_factor",
    "lance_aimd_additive_increment",
    "lance_aimd_burst_capacity",
    "lance_aimd_max_retries",
    "lance_aimd_min_backoff_ms",
    "lance_aimd_max_backoff_ms",
];

/// Whether a storage option is known to carry no secret ([`PUBLIC_OPTIONS`]); its value
/// may be shown and stored (a URL's userinfo and query values still hidden:
/// [`shown_value`]).
pub fn is_public_option(key: &str) -> bool {
    let k = key.trim().to_ascii_lowercase();
    let bare = ["azure_storage_", "aws_", "azure_", "google_"]
        .iter()
        .find_map(|p| k.strip_prefix(p))
        .unwrap_or(&k);
    PUBLIC_OPTIONS.contains(&bare) || PUBLIC_OPTIONS.contains(&k.as_str())
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

/// [`hide`] of a JSON document (or of JSON lines, `lines`) by value: every string (and
/// object key) with each value kept hidden replaced, numbers and the rest as they are — a
/// hidden value made of digits never turns a number into text. A line or a document that
/// is not JSON is hidden as text. Untouched (borrowed) where no hidden value is in it.
pub fn hide_json(bytes: &[u8], lines: bool) -> Cow<'_, [u8]> {
    let Ok(text) = std::str::from_utf8(bytes) else {
        return Cow::Borrowed(bytes);
    };
    if matches!(hide(text), Cow::Borrowed(_)) {
        return Cow::Borrowed(bytes);
    }
    let doc = |t: &str, pretty: bool| match serde_json::from_str::<serde_json::Value>(t) {
        Ok(mut v) => {
            hide_strings(&mut v);
            let shown = match pretty {
                true => serde_json::to_string_pretty(&v),
                false => serde_json::to_string(&v),
            };
            shown.unwrap_or_else(|_| hide(t).into_owned())
        }
        Err(_) => hide(t).into_owned(),
    };
    let out: String = match lines {
        true => (text.split_inclusive('\n'))
            .map(|l| {
                let (body, end) = l.strip_suffix('\n').map_or((l, ""), |b| (b, "\n"));
                match body.trim().is_empty() {
                    true => l.to_string(),
                    false => doc(body, false) + end,
                }
            })
            .collect(),
        false => {
            let pretty = text.trim_end().contains('\n');
            let end = if text.ends_with('\n') { "\n" } else { "" };
            doc(text.trim_end(), pretty) + end
        }
    };
    Cow::Owned(out.into_bytes())
}

/// Every string of `v`, and every key, with each value kept hidden replaced.
fn hide_strings(v: &mut serde_json::Value) {
    match v {
        serde_json::Value::String(s) => {
            if let Cow::Owned(h) = hide(s) {
                *s = h;
            }
        }
        serde_json::Value::Array(a) => a.iter_mut().for_each(hide_strings),
        serde_json::Value::Object(o) => {
            for (k, mut val) in std::mem::take(o) {
                hide_strings(&mut val);
                o.insert(hide(&k).into_owned(), val);
            }
        }
        _ => {}
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

/// An error's text without the places in source code its libraries name: lance's and
/// object_store's errors carry `location: Location { file: "/…/.cargo/registry/src/…/x.rs",
/// line: …, column: … }` (and Rust's `/rustc/<hash>/library/…`), which say nothing to a
/// user of bench and show the build machine's paths. What the error says is kept.
pub fn without_source_places(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("location: Location {") {
        let Some(end) = rest[at..].find('}') else {
            break;
        };
        // The field's comma before it goes too (`…, location: Location { … }`).
        let kept = rest[..at].trim_end();
        out.push_str(kept.strip_suffix(',').unwrap_or(kept));
        rest = &rest[at + end + 1..];
    }
    out.push_str(rest);
    without_source_paths(&out)
}

/// `text` without the paths of source files into cargo's registry or Rust's library
/// (`, /…/.cargo/registry/src/…/manifest.rs:2202:13`), the comma before each too.
fn without_source_paths(text: &str) -> String {
    let mut out = text.to_string();
    while let Some(at) = [".cargo/registry/", "/rustc/"]
        .iter()
        .filter_map(|m| out.find(m))
        .min()
    {
        let start = out[..at].rfind([' ', '"', '(', '\'']).map_or(0, |i| i + 1);
        let tail = &out[at..];
        let stop = tail
            .find(".rs")
            .map(|i| {
                let after = &tail[i + 3..];
                let digits = after
                    .find(|c: char| !(c.is_ascii_digit() || c == ':'))
                    .unwrap_or(after.len());
                at + i + 3 + digits
            })
            .unwrap_or_else(|| at + tail.find([' ', '"']).unwrap_or(tail.len()));
        let before = out[..start].trim_end();
        let before = before.strip_suffix(',').unwrap_or(before).trim_end();
        out = format!("{before}{}", &out[stop..]);
    }
    out
}

#[cfg(test)]
mod tests {

    #[test]
    fn errors_lose_the_source_places_their_libraries_name() {
        let e = "IO { source: NotFound { uri: \"a/b.lance\", location: Location { file: \
                 \"/root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/lance-io-14.0.2/\
                 src/object_reader.rs\", line: 335, column: 56 }, backtrace: MaybeBacktrace } }, \
                 location: Location { file: \"/rustc/59807616e1fa/library/core/src/x.rs\", \
                 line: 1, column: 2 } }";
        assert_eq!(
            without_source_places(e),
            "IO { source: NotFound { uri: \"a/b.lance\", backtrace: MaybeBacktrace } } }"
        );
        assert_eq!(without_source_places("plain"), "plain");
        let e = "Internal error: Failed to count rows, /root/.cargo/registry/src/index.crates.io-\
                 1949cf8c6b5b557f/lance-namespace-impls-14.0.2/src/dir/manifest.rs:2202:13";
        assert_eq!(
            without_source_places(e),
            "Internal error: Failed to count rows"
        );
    }

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

    /// A URL's userinfo and query values are credentials wherever the URL is given, under
    /// a public option too, and whatever their length: hidden in every text, and a value
    /// as stored shows them hidden. The AIMD options are public by name, no others of
    /// `lance_aimd_`.
    #[test]
    fn a_url_s_userinfo_and_query_values_are_hidden_whatever_their_length() {
        let storage: std::collections::BTreeMap<String, String> = [(
            "aws_endpoint".to_string(),
            "http://usr:pw@127.0.0.1:9000/x?X-Amz-Signature=Q1&v=2".to_string(),
        )]
        .into();
        keep_options_hidden(&storage);
        let text = "cannot reach http://usr:pw@127.0.0.1:9000/x?X-Amz-Signature=Q1&v=2: refused";
        let shown = hide(text);
        assert!(!shown.contains("pw@") && !shown.contains("=Q1"), "{shown}");
        assert!(
            shown.contains("127.0.0.1:9000") && shown.contains("v=2"),
            "{shown}"
        );
        assert_eq!(
            shown_value("http://usr:pw@127.0.0.1:9000/x?X-Amz-Signature=Q1"),
            "http://(hidden)@127.0.0.1:9000/x?X-Amz-Signature=(hidden)"
        );
        assert_eq!(
            shown_value("http://127.0.0.1:9000"),
            "http://127.0.0.1:9000"
        );
        assert_eq!(shown_value("us-east-1"), "us-east-1");
        // "power" and a short query value elsewhere are not touched.
        assert_eq!(hide("power x=2"), "power x=2");
        assert!(is_public_option("lance_aimd_max_retries"));
        assert!(!is_public_option("lance_aimd_token"));
    }

    /// In a JSON file a hidden value is masked by value: inside strings, never inside a
    /// number, and the file stays JSON.
    #[test]
    fn a_hidden_value_of_digits_leaves_json_numbers_whole() {
        keep_hidden(["98765432"]);
        let line = b"{\"n\":198765432,\"s\":\"key 98765432\"}\n{\"m\":1}\n";
        let shown = hide_json(line, true);
        let text = std::str::from_utf8(&shown).unwrap();
        let first: serde_json::Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
        assert_eq!(first["n"], 198765432, "{text}");
        assert_eq!(first["s"], "key (hidden)", "{text}");
        assert!(text.ends_with("{\"m\":1}\n"), "{text}");
        assert!(matches!(hide_json(b"{\"m\":1}", false), Cow::Borrowed(_)));
    }
}
