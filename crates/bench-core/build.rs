//! Records which lance this binary is built against, from Cargo.lock, so that a worker
//! reports it (`bench worker-info`, every record's `lance_version`) even when the build
//! replaces lance through `[patch]` with a git revision or a local checkout.

fn main() {
    println!("cargo:rerun-if-changed=../../Cargo.lock");
    // The workspace's Cargo.lock: the lance the workers (the `bench` package) are built with.
    let lock = std::fs::read_to_string("../../Cargo.lock").unwrap_or_default();
    let version = lance_version(&lock).unwrap_or_else(|| "unknown".to_string());
    println!("cargo:rustc-env=BENCH_LANCE_VERSION={version}");
    let revision = lance_revision(&lock).unwrap_or_default();
    println!("cargo:rustc-env=BENCH_LANCE_REVISION={revision}");
}

/// The git revision lance was built from, where it is known: of a git dependency, the
/// commit in Cargo.lock; of crates.io's, the commit its package was made from (cargo
/// records it in the package's `.cargo_vcs_info.json`, under cargo's registry sources).
fn lance_revision(lock: &str) -> Option<String> {
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
    let source = field("source")?;
    if source.starts_with("git+") {
        return source.rsplit('#').next().map(str::to_string);
    }
    if !source.starts_with("registry+") {
        return None;
    }
    let version = field("version")?;
    let home = std::env::var_os("CARGO_HOME")
        .map(std::path::PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| std::path::Path::new(&h).join(".cargo")))?;
    let registries = std::fs::read_dir(home.join("registry").join("src")).ok()?;
    for reg in registries.flatten() {
        let info = reg
            .path()
            .join(format!("lance-{version}"))
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

/// The version of the `lance` package in a Cargo.lock, with where it comes from when it is
/// not crates.io: `14.0.2`, `14.1.0+git.1a2b3c4d`, `14.1.0+path`.
fn lance_version(lock: &str) -> Option<String> {
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
    let version = field("version")?;
    Some(match field("source") {
        Some(s) if s.starts_with("registry+") => version,
        Some(s) if s.starts_with("git+") => {
            let rev = s.rsplit('#').next().unwrap_or("");
            format!("{version}+git.{}", &rev[..rev.len().min(8)])
        }
        Some(_) => format!("{version}+other"),
        None => format!("{version}+path"),
    })
}
