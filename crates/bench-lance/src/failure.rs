//! What kind of failure an error from lance or the object store is, read from its chain of
//! sources: object_store's error variants and HTTP error kinds, and lance's own. Where the
//! libraries expose no kind (S3 error codes and statuses, missing credentials), the S3 code
//! in the message decides. The S3 preflight and the workers' error classes both ask here.

use std::error::Error;

use object_store::client::HttpErrorKind;

/// The failures bench tells apart when a store refuses something.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// The object (or for a write: the bucket) does not exist.
    NotFound,
    /// The store refused these credentials (401/403, wrong or expired keys).
    Denied,
    /// No credentials could be found.
    NoCredentials,
    /// The endpoint could not be reached (connect error, timeout).
    Unreachable,
    /// The store asked to slow down (503 SlowDown, 429 Too Many Requests).
    Throttled,
    /// The connection broke while a request was under way (reset, closed, timed out).
    Network,
    Other,
}

/// Classify an error by walking its sources.
pub fn classify(error: &(dyn Error + 'static)) -> Fault {
    let mut text = String::new();
    let mut next = Some(error);
    while let Some(e) = next {
        if let Some(kind) = by_kind(e) {
            return kind;
        }
        text.push_str(&e.to_string());
        text.push('\n');
        next = e.source();
    }
    by_text(&text)
}

fn by_kind(e: &(dyn Error + 'static)) -> Option<Fault> {
    if let Some(e) = e.downcast_ref::<object_store::Error>() {
        return match e {
            object_store::Error::NotFound { .. } => Some(Fault::NotFound),
            object_store::Error::PermissionDenied { .. }
            | object_store::Error::Unauthenticated { .. } => Some(Fault::Denied),
            _ => None,
        };
    }
    if let Some(lance_core::Error::NotFound { .. }) = e.downcast_ref::<lance_core::Error>() {
        return Some(Fault::NotFound);
    }
    if let Some(e) = e.downcast_ref::<object_store::client::HttpError>() {
        return match e.kind() {
            HttpErrorKind::Connect => Some(Fault::Unreachable),
            HttpErrorKind::Timeout | HttpErrorKind::Request | HttpErrorKind::Interrupted => {
                Some(Fault::Network)
            }
            _ => None,
        };
    }
    None
}

/// The HTTP statuses object_store reports (`Server returned non-2xx status code: 503 …`):
/// its own phrase, so an id or a path that holds the digits never counts.
fn statuses(text: &str) -> impl Iterator<Item = u16> + '_ {
    const PHRASE: &str = "non-2xx status code: ";
    text.match_indices(PHRASE).filter_map(|(i, _)| {
        text.get(i + PHRASE.len()..i + PHRASE.len() + 3)?
            .parse()
            .ok()
    })
}

/// The S3 error codes of the response bodies in the text (`<Code>SlowDown</Code>`).
fn s3_codes(text: &str) -> impl Iterator<Item = &str> + '_ {
    text.split("<Code>")
        .skip(1)
        .filter_map(|rest| rest.split_once("</Code>").map(|(code, _)| code.trim()))
}

fn by_s3_code(code: &str) -> Option<Fault> {
    match code {
        "NoSuchBucket" => Some(Fault::NotFound),
        "InvalidAccessKeyId"
        | "SignatureDoesNotMatch"
        | "AccessDenied"
        | "ExpiredToken"
        | "InvalidToken" => Some(Fault::Denied),
        "SlowDown"
        | "Throttling"
        | "ThrottlingException"
        | "RequestLimitExceeded"
        | "TooManyRequests"
        | "TooManyRequestsException" => Some(Fault::Throttled),
        _ => None,
    }
}

fn by_status(status: u16) -> Option<Fault> {
    match status {
        429 | 503 => Some(Fault::Throttled),
        401 | 403 => Some(Fault::Denied),
        _ => None,
    }
}

/// Where no error in the chain has a kind: the S3 error code of a response body, then the
/// HTTP status object_store reports, then the phrases of the credential chain and of
/// broken connections. Never a bare number or word anywhere in the text.
fn by_text(text: &str) -> Fault {
    if let Some(fault) = s3_codes(text)
        .find_map(by_s3_code)
        .or_else(|| statuses(text).find_map(by_status))
    {
        return fault;
    }
    let has = |needles: &[&str]| needles.iter().any(|n| text.contains(n));
    if has(&[
        "Failed to load credentials",
        "Failed to get AWS credentials",
        "NoCredentials",
        "no providers in chain",
        "credential provider was not enabled",
        "error occurred while loading credentials",
    ]) {
        Fault::NoCredentials
    } else if has(&[
        "Connection refused",
        "connection refused",
        "dns error",
        "tcp connect",
    ]) {
        Fault::Unreachable
    } else if has(&[
        "connection reset",
        "Connection reset",
        "connection closed",
        "broken pipe",
        "Broken pipe",
        "error sending request",
        "timed out",
        "IncompleteMessage",
    ]) {
        Fault::Network
    } else {
        Fault::Other
    }
}
