//! The `lance` package's entry in the workspace's Cargo.lock, read by both build scripts
//! (crates/bench-core/build.rs: the version records report; crates/bench-lance/build.rs:
//! which of lance's APIs this build has).

/// The `lance` package's entry in a Cargo.lock: its version and where it comes from.
pub struct Lance {
    pub version: String,
    pub source: Option<String>,
}

/// Whether the lock's `lance-namespace-impls` is a copy of its own (`[patch]` with a path:
/// no source), as `scripts/track-record.sh build 14.0.2+fix` builds it.
pub fn namespace_patched(lock: &str) -> bool {
    Lance::package(lock, "lance-namespace-impls").is_some_and(|p| p.source.is_none())
}

/// The build's word for the patches of docs/findings/patches applied to the lance crates it
/// builds against: their names (a patch's file name without `.patch`), comma-separated.
/// `scripts/track-record.sh build 14.0.2+fix` sets it; unset, the crates are the release's.
/// A build script that reads it says `cargo:rerun-if-env-changed` for it.
pub const FIXES_ENV: &str = "BENCH_LANCE_FIXES";

/// The patches [`FIXES_ENV`] names, sorted.
pub fn fixes() -> Vec<String> {
    let mut fixes: Vec<String> = std::env::var(FIXES_ENV)
        .unwrap_or_default()
        .split(',')
        .map(|f| f.trim().to_string())
        .filter(|f| !f.is_empty())
        .collect();
    fixes.sort();
    fixes.dedup();
    fixes
}

/// The patches [`FIXES_ENV`] names, each checked against the build (`lock`: the workspace's
/// Cargo.lock, read from a crate's directory): a patch of docs/findings/patches, applied to
/// a copy of lance-namespace-impls, not the registry's release. A build script whose value
/// is wrong stops the build ([`refuse`]): no binary may claim patches it lacks.
pub fn checked_fixes(lock: &str) -> Vec<String> {
    let fixes = fixes();
    if !fixes.is_empty() && !namespace_patched(lock) {
        refuse(
            &fixes,
            "Cargo.lock's lance-namespace-impls is the registry's release, not a patched \
             copy: build with `scripts/track-record.sh build 14.0.2+fix`, or unset it",
        );
    }
    for fix in &fixes {
        if !std::path::Path::new(&format!("../../docs/findings/patches/{fix}.patch")).is_file() {
            let why =
                format!("`{fix}` has no patch in docs/findings/patches: name the patches applied");
            refuse(&fixes, &why);
        }
    }
    fixes
}

/// Stop the build: [`FIXES_ENV`] says something this build is not.
pub fn refuse(fixes: &[String], why: &str) -> ! {
    eprintln!("{FIXES_ENV}={}: {why}", fixes.join(","));
    std::process::exit(1)
}

impl Lance {
    pub fn of(lock: &str) -> Option<Lance> {
        Lance::package(lock, "lance")
    }

    /// The entry of package `name`.
    fn package(lock: &str, name: &str) -> Option<Lance> {
        let line = format!("name = \"{name}\"");
        let entry = lock
            .split("[[package]]")
            .find(|p| p.lines().any(|l| l.trim() == line))?;
        let field = |name: &str| {
            entry.lines().find_map(|l| {
                let v = l
                    .trim()
                    .strip_prefix(name)?
                    .trim()
                    .strip_prefix('=')?
                    .trim();
                Some(v.trim_matches('"').to_string())
            })
        };
        Some(Lance {
            version: field("version")?,
            source: field("source"),
        })
    }

    /// Its version with where it comes from when it is not crates.io: `14.0.2`,
    /// `14.1.0+git.1a2b3c4d`, `14.1.0+path`.
    pub fn version(&self) -> Option<String> {
        let version = &self.version;
        Some(match &self.source {
            Some(s) if s.starts_with("registry+") => version.clone(),
            Some(s) if s.starts_with("git+") => {
                let rev = s.rsplit('#').next().unwrap_or("");
                format!("{version}+git.{}", &rev[..rev.len().min(8)])
            }
            Some(_) => format!("{version}+other"),
            None => format!("{version}+path"),
        })
    }

    /// The git revision it was built from, where it is known: of a git dependency, the
    /// commit in Cargo.lock; of crates.io's, the commit its package was made from (cargo
    /// records it in the package's `.cargo_vcs_info.json`, under cargo's registry sources).
    pub fn revision(&self) -> Option<String> {
        let source = self.source.as_deref()?;
        if source.starts_with("git+") {
            return source.rsplit('#').next().map(str::to_string);
        }
        if !source.starts_with("registry+") {
            return None;
        }
        let home = std::env::var_os("CARGO_HOME")
            .map(std::path::PathBuf::from)
            .or_else(|| {
                std::env::var_os("HOME").map(|h| std::path::Path::new(&h).join(".cargo"))
            })?;
        let registries = std::fs::read_dir(home.join("registry").join("src")).ok()?;
        for reg in registries.flatten() {
            let info = reg
                .path()
                .join(format!("lance-{}", self.version))
                .join(".cargo_vcs_info.json");
            if let Ok(text) = std::fs::read_to_string(&info) {
                println!("cargo:rerun-if-changed={}", info.display());
                // {"git": {"sha1": "<40 hex>"}, ...}
                let sha = text.split("\"sha1\"").nth(1)?.split('"').nth(1)?;
                if sha.len() >= 7 && sha.chars().all(|c| c.is_ascii_hexdigit()) {
                    return Some(sha.to_string());
                }
            }
        }
        None
    }
}
