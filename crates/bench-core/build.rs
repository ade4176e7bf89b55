//! Records which lance this binary is built against, from Cargo.lock, so that a worker
//! reports it (`bench worker-info`, every record's `lance_version`) even when the build
//! replaces lance through `[patch]` with a git revision or a local checkout; and the git
//! revision it was built from, where that is known (`lance_revision`).

fn main() {
    println!("cargo:rerun-if-changed=../../Cargo.lock");
    // The workspace's Cargo.lock: the lance the workers (the `bench` package) are built with.
    let lock = std::fs::read_to_string("../../Cargo.lock").unwrap_or_default();
    let lance = Lance::of(&lock);
    let version = lance
        .as_ref()
        .and_then(Lance::version)
        .unwrap_or_else(|| "unknown".to_string());
    println!("cargo:rustc-env=BENCH_LANCE_VERSION={version}");
    let revision = lance.as_ref().and_then(Lance::revision).unwrap_or_default();
    println!("cargo:rustc-env=BENCH_LANCE_REVISION={revision}");
}

/// The `lance` package's entry in a Cargo.lock: its version and where it comes from.
struct Lance {
    version: String,
    source: Option<String>,
}

impl Lance {
    fn of(lock: &str) -> Option<Lance> {
        let entry = lock
            .split("[[package]]")
            .find(|p| p.lines().any(|l| l.trim() == "name = \"lance\""))?;
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
    fn version(&self) -> Option<String> {
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
    fn revision(&self) -> Option<String> {
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
