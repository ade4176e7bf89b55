//! The REST servers of a rest cell (`bench serve`): started on the cell's copy before its
//! workers, told when the window begins, asked what they served, and stopped — verified
//! gone — after the cell, by the [`supervisor`] as workers are (each server process leads
//! its own process group; under a launcher, the launcher does, with the servers as its
//! tasks). Stopping closes their stdin first (a server ends when it closes), then the
//! supervisor's ladder. A server also ends on its own when its coordinator dies (its stdin
//! closes), and [`Servers`] kills its groups when dropped.

use std::collections::BTreeMap;
use std::io::Write;
use std::os::fd::OwnedFd;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bench_core::serve::{REPORT, START, ServeArgs, ServerLine, ServerReport};
use bench_core::versions::Told;
use tokio::process::Command;
use tokio::sync::mpsc;

use super::supervisor::{self, Child, GRACE, Wiring};

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

/// A cell's running servers (of one arm).
pub struct Servers {
    children: Vec<Child>,
    /// Their stdins, shared with the window's start ([`Servers::starter`]), written as
    /// files (a word at a time, from a display that is not async).
    stdins: Arc<Mutex<Vec<std::fs::File>>>,
    lines: mpsc::UnboundedReceiver<ServerLine>,
    listening: Vec<(String, String)>,
    count: usize,
    stopped: bool,
}

/// Tells a cell's servers that its window begins (from the coordinator's release).
#[derive(Clone)]
pub struct Starter(Arc<Mutex<Vec<std::fs::File>>>);

impl Starter {
    pub fn start(&self) {
        write_all(&self.0, START);
    }
}

fn write_all(stdins: &Mutex<Vec<std::fs::File>>, word: &str) {
    for s in stdins.lock().expect("server stdins").iter_mut() {
        let _ = writeln!(s, "{word}");
        let _ = s.flush();
    }
}

/// How a server's stdout reaches its coordinator: each line parsed (a launcher may label
/// its tasks' lines, `0: {...}`); its stderr's tail kept; its exit known by its child.
fn wiring(tx: mpsc::UnboundedSender<ServerLine>) -> Wiring<ServerLine> {
    Wiring {
        tx,
        line: Box::new(|line: String| {
            let json = line.find('{').map_or("", |i| &line[i..]);
            serde_json::from_str::<ServerLine>(json).ok()
        }),
        said: None,
        exit: Box::new(|_| None),
    }
}

impl Servers {
    /// Start the servers and wait until each listens; a failure stops those started and
    /// says why (with what they wrote to stderr).
    pub async fn start(spec: ServerSpec<'_>) -> Result<Servers, String> {
        let (tx, lines) = mpsc::unbounded_channel();
        let mut s = Servers {
            children: Vec::new(),
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
            match supervisor::spawn(cmd, spec.env, wiring(tx.clone())) {
                Ok(mut child) => {
                    let stdin = (child.stdin.take())
                        .and_then(|i| i.into_owned_fd().ok())
                        .map(|fd: OwnedFd| std::fs::File::from(fd));
                    s.children.push(child);
                    s.stdins.lock().expect("server stdins").extend(stdin);
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

    /// Each server's host and what it served since the window began, and what the servers
    /// told of the calls that named themselves.
    pub async fn report(&mut self) -> Result<(Vec<(String, ServerReport)>, Vec<Told>), String> {
        write_all(&self.stdins, REPORT);
        let deadline = tokio::time::Instant::now() + REPORT_TIMEOUT;
        let (mut reports, mut told) = (Vec::new(), Vec::new());
        while reports.len() < self.count {
            match tokio::time::timeout_at(deadline, self.lines.recv()).await {
                Ok(Some(ServerLine::Served(r))) => reports.push(r),
                Ok(Some(ServerLine::Told { calls })) => told.extend(calls),
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
        Ok((hosts.zip(reports).collect(), told))
    }

    /// A server that is no longer running: why (its exit and last words).
    pub fn exited(&mut self) -> Option<String> {
        let (i, how) =
            (self.children.iter().enumerate()).find_map(|(i, c)| c.ended().map(|how| (i, how)))?;
        Some(format!(
            "REST server {} exited during the cell ({how}){}",
            i + 1,
            self.tails()
        ))
    }

    /// What the servers last wrote to stderr, as a message's tail.
    fn tails(&self) -> String {
        let text: Vec<String> = (self.children.iter())
            .map(Child::tail)
            .filter(|t| !t.is_empty())
            .collect();
        if text.is_empty() {
            String::new()
        } else {
            format!(": {}", text.join("\n"))
        }
    }

    /// Stop the servers: stdin closed (a server shuts its adapter down and exits), a grace
    /// period for that, then the supervisor's ladder; an error names what outlived it all.
    pub async fn stop(&mut self) -> Result<(), String> {
        self.stopped = true;
        self.stdins.lock().expect("server stdins").clear();
        let live = supervisor::stop(&mut self.children, GRACE).await;
        if live.is_empty() {
            Ok(())
        } else {
            Err(format!(
                "REST server process groups {live:?} outlived their cell"
            ))
        }
    }
}

impl Drop for Servers {
    /// Servers dropped without [`Servers::stop`] (an error on the way) are killed; their
    /// readers reap them.
    fn drop(&mut self) {
        if !self.stopped {
            supervisor::kill(&self.children);
        }
    }
}
