//! Which credentials an S3 sweep will use, and whether they outlast it: resolved before any
//! cell through the AWS SDK's standard chain (`aws-config`: environment, profile with
//! static keys, `credential_process` or SSO, web identity, container, instance), as every
//! worker's lance resolves them, unless the storage options give keys. Never a secret:
//! only the provider, the profile's name and the expiry are said.

use std::collections::BTreeMap;
use std::time::{Duration, SystemTime};

use aws_credential_types::provider::ProvideCredentials;

/// How long the chain may take to answer (an instance's metadata service that is not
/// there costs a few seconds).
const RESOLVE_TIMEOUT: Duration = Duration::from_secs(10);

/// Where a sweep's S3 credentials come from, and until when they hold.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Credentials {
    /// The provider that answered, in words (`the environment`, `a profile's
    /// credential_process`, `the instance's role (IMDSv2)`, …), or `storage options`.
    pub provider: String,
    /// The profile (`AWS_PROFILE`), where a profile provider answered.
    pub profile: Option<String>,
    /// When they expire; `None`: they do not, or the provider does not say.
    pub expiry: Option<SystemTime>,
    /// A session token with no stated expiry (temporary keys in the environment).
    pub session: bool,
}

/// Resolve the credentials an S3 sweep with these storage options will use. `Err` with the
/// chain's first line when none is found (the preflight then says what to do).
pub async fn resolve(storage: &BTreeMap<String, String>) -> Result<Credentials, String> {
    let given = |k: &str| {
        storage
            .iter()
            .any(|(key, v)| key.eq_ignore_ascii_case(k) && !v.is_empty())
    };
    if given("aws_access_key_id") || given("access_key_id") {
        return Ok(Credentials {
            provider: "storage options".into(),
            profile: None,
            expiry: None,
            session: given("aws_session_token") || given("session_token"),
        });
    }
    let config = aws_config::defaults(aws_config::BehaviorVersion::latest())
        .load()
        .await;
    let provider = config
        .credentials_provider()
        .ok_or("the AWS SDK has no credential chain here")?;
    let creds = tokio::time::timeout(RESOLVE_TIMEOUT, provider.provide_credentials())
        .await
        .map_err(|_| {
            format!(
                "the AWS credential chain did not answer within {}s",
                RESOLVE_TIMEOUT.as_secs()
            )
        })?
        .map_err(|e| {
            let text = e.to_string();
            text.lines().next().unwrap_or_default().to_string()
        })?;
    let provider = provider_name(&creds);
    let profile = matches!(
        provider.as_str(),
        "ProfileFile" | "CredentialProcess" | "SSO" | "Profile"
    )
    .then(|| std::env::var("AWS_PROFILE").unwrap_or_else(|_| "default".into()));
    Ok(Credentials {
        session: creds.session_token().is_some() && creds.expiry().is_none(),
        expiry: creds.expiry(),
        provider: in_words(&provider),
        profile,
    })
}

/// A provider as the SDK names it (`EnvironmentVariable`, `ProfileFile`, …), in words.
pub fn in_words(sdk: &str) -> String {
    match sdk {
        "EnvironmentVariable" | "Environment" => "the environment (AWS_ACCESS_KEY_ID)",
        "ProfileFile" | "Profile" => "a profile's keys",
        "CredentialProcess" => "a profile's credential_process",
        "SSO" | "Sso" => "an SSO login",
        "WebIdentityToken" => "a web identity token",
        "EcsContainer" => "the container's role",
        "IMDSv2" | "IMDS" => "the instance's role (IMDSv2)",
        other => return format!("the AWS provider {other}"),
    }
    .to_string()
}

/// The provider's name: the SDK shows it only in the credentials' `Debug` form, which
/// redacts the secret; only the name is taken from it.
fn provider_name(c: &aws_credential_types::Credentials) -> String {
    let text = format!("{c:?}");
    text.split("provider_name: \"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .unwrap_or("unknown")
        .to_string()
}

impl Credentials {
    /// One line for `bench plan`, `bench status` and the start of `bench run`; and a
    /// warning when they expire before the sweep's estimated end (`left`: the time the
    /// estimate gives what is left, from `now`).
    pub fn describe(&self, left: Duration, now: SystemTime) -> (String, Option<String>) {
        let from = match &self.profile {
            Some(p) => format!("{} (profile {p})", self.provider),
            None => self.provider.clone(),
        };
        let Some(expiry) = self.expiry else {
            let line = if self.session {
                format!(
                    "credentials: {from}, a session token whose expiry bench cannot see; if \
                     it is short-lived, the cells after it expires fail"
                )
            } else {
                format!("credentials: {from}, static keys (they do not expire)")
            };
            return (line, None);
        };
        let at = chrono::DateTime::<chrono::Utc>::from(expiry).format("%Y-%m-%dT%H:%M:%SZ");
        let until = expiry.duration_since(now).unwrap_or_default();
        let line = format!(
            "credentials: {from}, expiring {at} (in {}); the sweep's estimate: {} left",
            bench_core::sweep::estimate::about(until),
            bench_core::sweep::estimate::about(left)
        );
        let warning = (until < left).then(|| {
            format!(
                "the credentials from {from} expire at {at}, in {}, before the sweep's \
                 estimated end (in {}): unless {} gives new ones then by itself (an \
                 instance or container role, a renewed SSO login, a credential_process that \
                 needs no one), every cell after {at} fails. Renew them for longer (e.g. `aws \
                 sso login`, a longer role session) or run the sweep in parts; finished cells \
                 are kept and a re-run resumes",
                bench_core::sweep::estimate::about(until),
                bench_core::sweep::estimate::about(left),
                self.provider
            )
        });
        (line, warning)
    }
}
