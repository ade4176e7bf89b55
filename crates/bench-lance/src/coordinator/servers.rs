//! The REST servers of a rest cell (`bench serve`): started on the cell's copy before its
//! workers, told when the window begins, asked what they served, and stopped — verified
//! gone — after the cell. Each server process leads its own process group (under a
//! launcher, the launcher does, with the servers as its tasks); stopping closes their
//! stdin (a server ends when it closes), then SIGTERM, SIGKILL and whatever is left in the
//! groups, as for workers. A server also ends on its own when its coordinator dies (its
//! stdin closes), and [`Servers`] kills its groups when dropped.

use std::collections::{BTreeMap, VecDeque};
use std::io::{BufRead, Write};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bench_core::serve::{REPORT, START, ServeArgs, ServerLine, ServerReport};
use tokio::sync::mpsc;

use super::process::{
    GRACE, clear_groups, disown_groups, keep_tail, own_group, signal_group, split_env,
};

/// How long servers may take to listen (open the copy's catalog, bind a port).
const LISTEN_TIMEOUT: Duration = Duration::from_secs(120);
/// How long servers may take to say what they served.
const REPORT_TIMEOUT: Duration = Duration::from_secs(30);

/// What starts a cell's servers.
pub struct ServerSpec<'a> {
    pub exe: &'a Path,
    pub args: ServeArgs,
    /// Storage options, namespace properties and variables, as the workers get them.
    pub env: &'a BTreeMap<String, String>,
    pub count: u32,
    /// Start them as the tasks of this command (`rest.launcher`, `{workers}` filled in).
    pub launcher: Option<String>,
}

struct Proc {
    child: Child,
    pid: u32,
    tail: Arc<Mutex<VecDeque<String>>>,
}

/// A cell's running servers (of one arm).
pub struct Servers {
    procs: Vec<Proc>,
    /// Their stdins, shared with the window's start ([`Servers::starter`]).
    stdins: Arc<Mutex<Vec<ChildStdin>>>,
    lines: mpsc::UnboundedReceiver<ServerLine>,
    listening: Vec<(String, String)>,
    count: usize,
    stopped: bool,
}

/// Tells a cell's servers that its window begins (from the coordinator's release).
#[derive(Clone)]
pub struct Starter(Arc<Mutex<Vec<ChildStdin>>>);

impl Starter {
    pub fn start(&self) {
        write_all(&self.0, START);
    }
}

fn write_all(stdins: &Mutex<Vec<ChildStdin>>, word: &str) {
    for s in stdins.lock().expect("server stdins").iter_mut() {
        let _ = writeln!(s, "{word}");
        let _ = s.flush();
    }
}

/// One server process (or a launcher of all of them): its stdout parsed into lines, its
/// stderr's tail kept.
fn spawn(
    mut cmd: Command,
    env: &BTreeMap<String, String>,
    tx: mpsc::UnboundedSender<ServerLine>,
) -> std::io::Result<(Proc, ChildStdin)> {
    let (vars, storage_json) = split_env(env);
    cmd.envs(vars)
        .env(crate::worker::STORAGE_ENV, storage_json)
        .env_remove(crate::fault::ENV)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    let mut child = cmd.spawn()?;
    let pid = child.id();
    own_group(pid);
    let stdin = child.stdin.take().expect("stdin is piped");
    let stdout = child.stdout.take().expect("stdout is piped");
    let stderr = child.stderr.take().expect("stderr is piped");
    let tail = Arc::new(Mutex::new(VecDeque::new()));
    let kept = tail.clone();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stderr)
            .lines()
            .map_while(Result::ok)
        {
            keep_tail(&kept, line);
        }
    });
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stdout)
            .lines()
            .map_while(Result::ok)
        {
            // A launcher may label its tasks' lines (`0: {...}`).
            let json = line.find('{').map_or("", |i| &line[i..]);
            if let Ok(l) = serde_json::from_str::<ServerLine>(json)
                && tx.send(l).is_err()
            {
                break;
            }
        }
    });
    Ok((Proc { child, pid, tail }, stdin))
}

impl Servers {
    /// Start the servers and wait until each listens; a failure stops those started and
    /// says why (with what they wrote to stderr).
    pub async fn start(spec: ServerSpec<'_>) -> Result<Servers, String> {
        let (tx, lines) = mpsc::unbounded_channel();
        let mut s = Servers {
            procs: Vec::new(),
            stdins: Arc::new(Mutex::new(Vec::new())),
            lines,
            listening: Vec::new(),
            count: spec.count as usize,
            stopped: false,
        };
        let commands: Vec<Command> = match &spec.launcher {
            Some(launcher) => {
                let mut c = Command::new("sh");
                c.arg("-c")
                    .arg(format!("exec {launcher} \"$@\""))
                    .arg("bench-launcher")
                    .arg(spec.exe)
                    .args(spec.args.to_args());
                vec![c]
            }
            None => (0..spec.count)
                .map(|_| {
                    let mut c = Command::new(spec.exe);
                    c.args(spec.args.to_args());
                    c
                })
                .collect(),
        };
        for cmd in commands {
            match spawn(cmd, spec.env, tx.clone()) {
                Ok((p, stdin)) => {
                    s.procs.push(p);
                    s.stdins.lock().expect("server stdins").push(stdin);
                }
                Err(e) => {
                    s.stop().await.ok();
                    return Err(format!(
                        "cannot start a REST server ({}): {e}",
                        spec.exe.display()
                    ));
                }
            }
        }
        drop(tx);
        if let Err(why) = s.listen().await {
            let tail = s.tails();
            s.stop().await.ok();
            return Err(format!("{why}{tail}"));
        }
        Ok(s)
    }

    /// Wait for every server's `listening` line.
    async fn listen(&mut self) -> Result<(), String> {
        let deadline = tokio::time::Instant::now() + LISTEN_TIMEOUT;
        while self.listening.len() < self.count {
            match tokio::time::timeout_at(deadline, self.lines.recv()).await {
                Ok(Some(ServerLine::Listening { uri, host, .. })) => {
                    self.listening.push((uri, host))
                }
                Ok(Some(_)) => {}
                Ok(None) => {
                    return Err(format!(
                        "a REST server exited before it listened ({} of {} listening)",
                        self.listening.len(),
                        self.count
                    ));
                }
                Err(_) => {
                    return Err(format!(
                        "the REST servers did not all listen within {} s ({} of {})",
                        LISTEN_TIMEOUT.as_secs(),
                        self.listening.len(),
                        self.count
                    ));
                }
            }
        }
        Ok(())
    }

    /// Where clients reach the servers, in order.
    pub fn uris(&self) -> Vec<String> {
        self.listening.iter().map(|(u, _)| u.clone()).collect()
    }

    /// What starts the servers' window.
    pub fn starter(&self) -> Starter {
        Starter(self.stdins.clone())
    }

    /// Each server's host and what it served since the window began.
    pub async fn report(&mut self) -> Result<Vec<(String, ServerReport)>, String> {
        write_all(&self.stdins, REPORT);
        let deadline = tokio::time::Instant::now() + REPORT_TIMEOUT;
        let mut reports = Vec::new();
        while reports.len() < self.count {
            match tokio::time::timeout_at(deadline, self.lines.recv()).await {
                Ok(Some(ServerLine::Served(r))) => reports.push(r),
                Ok(Some(_)) => {}
                Ok(None) | Err(_) => {
                    return Err(format!(
                        "{} of {} REST servers said what they served{}",
                        reports.len(),
                        self.count,
                        self.tails()
                    ));
                }
            }
        }
        let hosts = self.listening.iter().map(|(_, h)| h.clone());
        Ok(hosts.zip(reports).collect())
    }

    /// A server that is no longer running: why (its exit and last words).
    pub fn exited(&mut self) -> Option<String> {
        let mut ended = None;
        for (i, p) in self.procs.iter_mut().enumerate() {
            if let Ok(Some(status)) = p.child.try_wait() {
                ended = Some(format!(
                    "REST server {} exited during the cell ({status})",
                    i + 1
                ));
                break;
            }
        }
        ended.map(|e| format!("{e}{}", self.tails()))
    }

    /// What the servers last wrote to stderr, as a message's tail.
    fn tails(&self) -> String {
        let text: Vec<String> = (self.procs.iter())
            .flat_map(|p| {
                p.tail
                    .lock()
                    .expect("stderr tail")
                    .iter()
                    .cloned()
                    .collect::<Vec<_>>()
            })
            .collect();
        if text.is_empty() {
            String::new()
        } else {
            format!(": {}", text.join("\n"))
        }
    }

    fn running(&mut self) -> bool {
        self.procs
            .iter_mut()
            .any(|p| matches!(p.child.try_wait(), Ok(None)))
    }

    async fn wait_until(&mut self, until: tokio::time::Instant) -> bool {
        while self.running() {
            if tokio::time::Instant::now() >= until {
                return false;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        true
    }

    /// Stop the servers: stdin closed (a server shuts its adapter down and exits), then
    /// SIGTERM, SIGKILL, and whatever is left in their groups; an error names what
    /// outlived it all.
    pub async fn stop(&mut self) -> Result<(), String> {
        self.stopped = true;
        self.stdins.lock().expect("server stdins").clear();
        let now = tokio::time::Instant::now;
        if !self.wait_until(now() + GRACE).await {
            self.signal(libc::SIGTERM);
            if !self.wait_until(now() + GRACE).await {
                self.signal(libc::SIGKILL);
                self.wait_until(now() + GRACE).await;
            }
        }
        let pgids: Vec<u32> = self.procs.iter().map(|p| p.pid).collect();
        let live = clear_groups(&pgids, now() + GRACE).await;
        if live.is_empty() {
            disown_groups(&pgids);
            Ok(())
        } else {
            Err(format!(
                "REST server process groups {live:?} outlived their cell"
            ))
        }
    }

    fn signal(&self, sig: libc::c_int) {
        for p in &self.procs {
            signal_group(p.pid, sig);
        }
    }
}

impl Drop for Servers {
    /// Servers dropped without [`Servers::stop`] (an error on the way) are killed.
    fn drop(&mut self) {
        if !self.stopped {
            self.signal(libc::SIGKILL);
            for p in &mut self.procs {
                let _ = p.child.wait();
            }
        }
    }
}
