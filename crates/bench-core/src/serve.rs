//! What a REST server of a cell (`bench serve`) tells its coordinator, and the pure part of
//! its accounting: how long each request waited behind the mutations ahead of it, and the
//! per-operation figures a record of a rest cell carries.
//!
//! The server speaks one JSON line at a time on stdout: first [`ServerLine::Listening`],
//! then a [`ServerLine::Served`] each time its stdin says `report`. Its stdin also says
//! `start` when the cell's window begins (what it served before — the workers' opening and
//! warm-up — is not counted); stdin closing stops it.

use serde::{Deserialize, Serialize};

use crate::stats::IoCounts;

/// The command line of `bench serve`: the catalog it serves (a cell's copy, as a worker
/// opens it, or a user's catalog for an external server; storage options and namespace
/// properties come through the environment, as a worker's do), the address it binds and
/// the port (0: any free one).
///
/// `supervised` (`--supervised`, what a sweep starts its servers with): the server reads
/// its coordinator's commands on stdin and stops when stdin closes. Without it (a server a
/// user starts for `rest.external`), stdin is not read and the server runs until SIGINT or
/// SIGTERM.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServeArgs {
    pub root: String,
    pub inline: bool,
    pub commit_retries: u32,
    pub s3_shaped: bool,
    pub bind: String,
    pub port: u16,
    pub supervised: bool,
}

/// `bench serve --help`: what it takes (its arguments are read here, not by clap, as the
/// coordinator writes them with [`ServeArgs::to_args`]).
pub const USAGE: &str =
    "bench serve --root ROOT --bind HOST [--port PORT] [--inline] [--commit-retries N]";
pub const HELP: &str = "\
Serve the directory catalog at ROOT through lance's REST adapter (the namespace a rest cell's
clients use), e.g. as the external server of a plan with `rest.uri` and `rest.external = true`.

  --root ROOT          the catalog (a local directory or s3://BUCKET/PREFIX); storage
                       options come from the environment (AWS_ENDPOINT, AWS_REGION, ...)
  --bind HOST          the address to listen on, e.g. 127.0.0.1 (0.0.0.0: every interface)
  --port PORT          the port [default: 0, any free port]
  --inline             inline scalar indices on (the plan's `inline = true`)
  --commit-retries N   lance's commit retries [default: 0]

It prints one JSON line on stdout when it listens ({\"server\":\"listening\",\"uri\":...}: the
rest.uri to give the plan) and runs until Ctrl-C or SIGTERM.";

impl ServeArgs {
    /// The command line of `bench serve` with these arguments.
    pub fn to_args(&self) -> Vec<String> {
        let mut v = vec![
            "serve".to_string(),
            "--root".into(),
            self.root.clone(),
            "--commit-retries".into(),
            self.commit_retries.to_string(),
            "--bind".into(),
            self.bind.clone(),
        ];
        if self.inline {
            v.push("--inline".into());
        }
        if self.s3_shaped {
            v.push("--s3-shaped".into());
        }
        if self.port != 0 {
            v.extend(["--port".into(), self.port.to_string()]);
        }
        if self.supervised {
            v.push("--supervised".into());
        }
        v
    }

    /// Read back what [`ServeArgs::to_args`] wrote (after `serve`).
    pub fn parse(args: &[String]) -> Result<ServeArgs, String> {
        let mut a = ServeArgs {
            root: String::new(),
            inline: false,
            commit_retries: 0,
            s3_shaped: false,
            bind: String::new(),
            port: 0,
            supervised: false,
        };
        let mut it = args.iter();
        while let Some(flag) = it.next() {
            let mut value = || (it.next().cloned()).ok_or_else(|| format!("{flag} needs a value"));
            match flag.as_str() {
                "--root" => a.root = value()?,
                "--bind" => a.bind = value()?,
                "--commit-retries" => {
                    let v = value()?;
                    a.commit_retries = v
                        .parse()
                        .map_err(|_| format!("{flag} takes a whole number, not `{v}`"))?;
                }
                "--port" => {
                    let v = value()?;
                    a.port = v
                        .parse()
                        .map_err(|_| format!("{flag} takes a port number, not `{v}`"))?;
                }
                "--inline" => a.inline = true,
                "--s3-shaped" => a.s3_shaped = true,
                "--supervised" => a.supervised = true,
                other => {
                    return Err(format!("unknown serve argument `{other}` (usage: {USAGE})"));
                }
            }
        }
        if a.root.is_empty() || a.bind.is_empty() {
            return Err(format!(
                "the server needs --root and --bind (usage: {USAGE})"
            ));
        }
        Ok(a)
    }
}

/// The commands a server reads on stdin, one a line.
pub const START: &str = "start";
pub const REPORT: &str = "report";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "server", rename_all = "snake_case")]
pub enum ServerLine {
    /// Serving at `uri` (what clients dial); `open_ms`: from the process's start to an open
    /// catalog and a bound port.
    Listening {
        uri: String,
        host: String,
        open_ms: f64,
    },
    Served(ServerReport),
    /// What it said of calls whose response has no body to say it in (a look-up's `exists`),
    /// each named by the client that made it: said before `Served`.
    Told {
        calls: Vec<crate::versions::Told>,
    },
}

/// What one server served since `start`: its backend calls and the store requests they made.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, Default)]
pub struct ServerReport {
    /// Calls of the backend (`DirectoryNamespace`) the REST adapter made: one per request.
    pub calls: u64,
    /// Of which mutations of `__manifest` (the ones lance serialises behind one lock).
    pub mutations: u64,
    /// Calls that failed (the adapter answered them with an error status).
    pub failed: u64,
    /// Time inside the backend, summed over the calls, in ms.
    pub ms: f64,
    /// Of which time a mutation spent while mutations that arrived before it were still in
    /// the server (`serve::waits`), summed.
    pub wait_ms: f64,
    /// The server's store requests since `start`.
    pub io: IoCounts,
    /// The process's CPU time since `start`, in seconds (user + system).
    pub cpu_secs: f64,
    /// The process's peak resident memory, in KiB.
    pub rss_peak_kib: Option<u64>,
}

/// One backend call as the server saw it: when it entered and left the backend (µs on the
/// server's clock), and whether it mutates `__manifest`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Call {
    pub entered_us: u64,
    pub left_us: u64,
    pub mutation: bool,
}

/// Each call's wait, in µs, in the order given: for a mutation, the part of its time in
/// the backend during which a mutation that entered before it was still inside (lance's
/// `DirectoryNamespace` lets one mutation of an instance at a time rewrite `__manifest`,
/// first come first served, so that is the time it queued); 0 for a read.
pub fn waits(calls: &[Call]) -> Vec<u64> {
    let mut order: Vec<usize> = (0..calls.len()).filter(|&i| calls[i].mutation).collect();
    order.sort_by_key(|&i| (calls[i].entered_us, i));
    let mut out = vec![0; calls.len()];
    let mut busy_until = 0u64;
    for i in order {
        out[i] = wait(calls[i], &mut busy_until);
    }
    out
}

/// A mutation's wait, `busy_until` being the latest exit of the mutations that entered
/// before it (which it moves on): the rule of [`waits`] and of [`Served`].
fn wait(c: Call, busy_until: &mut u64) -> u64 {
    let waited = (*busy_until).min(c.left_us).saturating_sub(c.entered_us);
    *busy_until = (*busy_until).max(c.left_us);
    waited
}

/// What a server served since its window began, kept as running sums: a call is remembered
/// only while it is inside or while a call that entered before it is, so a server's memory
/// stays flat however long it runs. The sums are those [`waits`] gives over every call that
/// left, in the same order (by entry, then by exit).
#[derive(Debug, Default)]
pub struct Served {
    /// Entry times of the calls inside, with how many entered at each.
    inside: std::collections::BTreeMap<u64, u32>,
    /// Calls that left while one that entered before them was still inside, in exit order.
    pending: Vec<Call>,
    /// The latest exit of the mutations summed so far.
    busy_until: u64,
    totals: ServedTotals,
}

/// A window's sums: calls, of them mutations, their time in the server and the part of it
/// mutations waited behind earlier ones, in µs.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct ServedTotals {
    pub calls: u64,
    pub mutations: u64,
    pub busy_us: u64,
    pub wait_us: u64,
}

impl ServedTotals {
    /// Add `calls` (each in order of entry), the mutations' wait counted from `busy_until`,
    /// which it moves on.
    fn add(&mut self, calls: &[Call], busy_until: &mut u64) {
        for c in calls {
            self.calls += 1;
            self.busy_us += c.left_us - c.entered_us;
            if c.mutation {
                self.mutations += 1;
                self.wait_us += wait(*c, busy_until);
            }
        }
    }
}

impl Served {
    /// A call entered at `at_us`.
    pub fn enter(&mut self, at_us: u64) {
        *self.inside.entry(at_us).or_default() += 1;
    }

    /// A call (that [`Served::enter`] saw enter) has left.
    pub fn leave(&mut self, call: Call) {
        self.pending.push(call);
        self.out(call.entered_us);
    }

    /// A call that entered at `at_us` will not leave (its request was dropped): not counted.
    pub fn abandon(&mut self, at_us: u64) {
        self.out(at_us);
    }

    /// A call that entered at `at_us` is no longer inside: every call to come entered at or
    /// after the earliest still inside, so those that entered before it are in their final
    /// order and are summed.
    fn out(&mut self, at_us: u64) {
        if let Some(n) = self.inside.get_mut(&at_us) {
            *n -= 1;
            if *n == 0 {
                self.inside.remove(&at_us);
            }
        }
        let first_inside = self.inside.keys().next().copied().unwrap_or(u64::MAX);
        let mut settled: Vec<Call> = Vec::new();
        self.pending.retain(|c| {
            let done = c.entered_us < first_inside;
            if done {
                settled.push(*c);
            }
            !done
        });
        settled.sort_by_key(|c| c.entered_us);
        self.totals.add(&settled, &mut self.busy_until);
    }

    /// The window begins: what left before is forgotten (calls inside count when they
    /// leave).
    pub fn restart(&mut self) {
        self.pending.clear();
        self.busy_until = 0;
        self.totals = ServedTotals::default();
    }

    /// The sums over every call that left since [`Served::restart`].
    pub fn totals(&self) -> ServedTotals {
        let mut totals = self.totals;
        let mut pending = self.pending.clone();
        pending.sort_by_key(|c| c.entered_us);
        totals.add(&pending, &mut self.busy_until.clone());
        totals
    }

    /// Calls remembered one by one: those inside and those waiting on one.
    pub fn remembered(&self) -> usize {
        self.inside.values().map(|&n| n as usize).sum::<usize>() + self.pending.len()
    }
}

/// A rest cell's per-operation split of the client's time, from its servers' reports:
/// transport (client time − server time), waiting in the server, the backend's own time.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RestFigures {
    pub servers: u32,
    /// Backend calls per client operation (1 for the catalog's operations).
    pub server_calls_per_op: f64,
    /// Time in the servers per client operation (wait + backend), in ms.
    pub server_ms_per_op: f64,
    /// Time per operation a mutation queued behind earlier ones in its server, in ms.
    pub server_wait_ms_per_op: f64,
    /// The backend's own time per operation (server − wait), in ms.
    pub backend_ms_per_op: f64,
    /// The client's mean time per operation minus the server's: HTTP, JSON and the REST
    /// client and adapter, in ms.
    pub transport_ms_per_op: f64,
    /// The client's mean time per operation attempted (failed ones too), in ms: what the
    /// three parts add up to.
    pub client_ms_per_op: f64,
    /// Calls the servers answered with an error.
    pub server_errors: u64,
    /// The servers' store requests per client operation attempted, as the other figures
    /// here (every kind together — commits, a mixed cell's reads, roles' operations —,
    /// failed ones too): a server cannot tell which of its requests a call made.
    pub server_requests_per_op: f64,
    /// The largest server's peak resident memory, in KiB.
    pub server_rss_peak_kib: Option<u64>,
    /// The servers' CPU time over the window, summed, in seconds.
    pub server_cpu_secs: f64,
    /// The hosts the servers ran on.
    pub server_hosts: Vec<String>,
}

impl RestFigures {
    /// The split of `ops` client operations whose mean time was `client_ms`, served by
    /// `reports` (one per server).
    pub fn new(
        reports: &[ServerReport],
        hosts: Vec<String>,
        ops: u64,
        client_ms: f64,
    ) -> RestFigures {
        let n = ops.max(1) as f64;
        let sum = |f: fn(&ServerReport) -> f64| reports.iter().map(f).sum::<f64>();
        let server = sum(|r| r.ms) / n;
        let wait = sum(|r| r.wait_ms) / n;
        let io: IoCounts = reports.iter().fold(IoCounts::default(), |a, r| a + r.io);
        RestFigures {
            servers: reports.len() as u32,
            server_calls_per_op: sum(|r| r.calls as f64) / n,
            server_ms_per_op: server,
            server_wait_ms_per_op: wait,
            backend_ms_per_op: server - wait,
            transport_ms_per_op: client_ms - server,
            client_ms_per_op: client_ms,
            server_errors: reports.iter().map(|r| r.failed).sum(),
            server_requests_per_op: io.requests() as f64 / n,
            server_rss_peak_kib: reports.iter().filter_map(|r| r.rss_peak_kib).max(),
            server_cpu_secs: sum(|r| r.cpu_secs),
            server_hosts: hosts,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(entered_us: u64, left_us: u64, mutation: bool) -> Call {
        Call {
            entered_us,
            left_us,
            mutation,
        }
    }

    #[test]
    fn serve_arguments_round_trip() {
        let a = ServeArgs {
            root: "s3://b/runs/x".into(),
            inline: true,
            commit_retries: 7,
            s3_shaped: false,
            bind: "127.0.0.1".into(),
            port: 0,
            supervised: true,
        };
        let line = a.to_args();
        assert_eq!(line[0], "serve");
        assert_eq!(ServeArgs::parse(&line[1..]), Ok(a.clone()));
        let user = ServeArgs {
            port: 8181,
            supervised: false,
            ..a
        };
        assert_eq!(ServeArgs::parse(&user.to_args()[1..]), Ok(user));
        let bad = ServeArgs::parse(&["--root".into(), "/r".into()]).unwrap_err();
        assert!(
            bad.contains("--bind") && bad.contains("usage: bench serve"),
            "{bad}"
        );
        let bad = ServeArgs::parse(&["--port".into()]).unwrap_err();
        assert!(bad.contains("--port"), "{bad}");
        let bad = ServeArgs::parse(&["--port".into(), "x".into()]).unwrap_err();
        assert!(bad.contains("a port number"), "{bad}");
    }

    #[test]
    fn a_mutation_waits_while_earlier_ones_are_inside() {
        // Three mutations arriving together, served one after another (10 µs each), and a
        // read alongside: the second waited 10, the third 20, the read nothing.
        let calls = [
            call(0, 10, true),
            call(1, 20, true),
            call(2, 30, true),
            call(3, 4, false),
        ];
        assert_eq!(waits(&calls), vec![0, 9, 18, 0]);
        // Given in another order, each keeps its own wait.
        let shuffled = [calls[2], calls[3], calls[0], calls[1]];
        assert_eq!(waits(&shuffled), vec![18, 0, 0, 9]);
        // One after another without overlap: nobody waits.
        assert_eq!(waits(&[call(0, 5, true), call(6, 9, true)]), vec![0, 0]);
        // A wait never exceeds the call's own time (a call that left first).
        assert_eq!(waits(&[call(0, 50, true), call(10, 20, true)]), vec![0, 10]);
    }

    /// The running sums equal [`waits`] over every call that left, whatever the overlap
    /// (random histories of up to 8 calls inside at once), however the window is cut by
    /// `restart`, while remembering only the calls inside or waiting on one.
    #[test]
    fn the_running_sums_are_the_waits_of_every_call_and_memory_stays_flat() {
        let mut rng = crate::rng::Rng::new(7);
        for round in 0..200 {
            // Calls entering every few µs, each inside for up to 40 µs.
            let mut calls = Vec::new();
            let mut t = 0;
            for _ in 0..(50 + round) {
                t += rng.next_u64() % 6;
                let long = 1 + rng.next_u64() % 40;
                calls.push(call(t, t + long, !rng.next_u64().is_multiple_of(3)));
            }
            // Events in time order: entries before exits at the same µs. One call in ten is
            // abandoned (its request dropped): never counted, never remembered after.
            let dropped = |i: usize| i % 10 == 9;
            let mut events: Vec<(u64, bool, usize)> = (calls.iter().enumerate())
                .flat_map(|(i, c)| [(c.entered_us, false, i), (c.left_us, true, i)])
                .collect();
            events.sort();
            let cut = calls[calls.len() / 3].entered_us;
            let mut served = Served::default();
            let mut left = Vec::new();
            let mut most = 0;
            let mut restarted = false;
            for (at, leaves, i) in events {
                if !restarted && at >= cut {
                    served.restart();
                    left.clear();
                    restarted = true;
                }
                if leaves && dropped(i) {
                    served.abandon(calls[i].entered_us);
                } else if leaves {
                    served.leave(calls[i]);
                    left.push(calls[i]);
                } else {
                    served.enter(at);
                }
                most = most.max(served.remembered());
                let w: u64 = waits(&left).iter().sum();
                let busy: u64 = left.iter().map(|c| c.left_us - c.entered_us).sum();
                let mutations = left.iter().filter(|c| c.mutation).count() as u64;
                let want = ServedTotals {
                    calls: left.len() as u64,
                    mutations,
                    busy_us: busy,
                    wait_us: w,
                };
                assert_eq!(served.totals(), want, "round {round} at {at}");
            }
            assert_eq!(served.remembered(), 0);
            assert!(
                most < calls.len() / 2,
                "{most} of {} remembered",
                calls.len()
            );
        }
    }

    #[test]
    fn the_split_adds_up_to_the_clients_time() {
        let r = ServerReport {
            calls: 20,
            mutations: 20,
            ms: 100.0,
            wait_ms: 40.0,
            io: IoCounts {
                get: 30,
                put: 10,
                ..IoCounts::default()
            },
            cpu_secs: 0.5,
            rss_peak_kib: Some(100),
            ..ServerReport::default()
        };
        let two = [
            r,
            ServerReport {
                rss_peak_kib: Some(300),
                ..r
            },
        ];
        let f = RestFigures::new(&two, vec!["n1".into()], 40, 8.0);
        assert_eq!(f.servers, 2);
        assert_eq!(f.server_calls_per_op, 1.0);
        assert_eq!(f.server_ms_per_op, 5.0);
        assert_eq!(f.server_wait_ms_per_op, 2.0);
        assert_eq!(f.backend_ms_per_op, 3.0);
        assert_eq!(f.transport_ms_per_op, 3.0);
        let parts = f.transport_ms_per_op + f.server_wait_ms_per_op + f.backend_ms_per_op;
        assert!((parts - f.client_ms_per_op).abs() < 1e-9);
        assert_eq!(f.server_requests_per_op, 2.0);
        assert_eq!(f.server_rss_peak_kib, Some(300));
        assert_eq!(f.server_cpu_secs, 1.0);
    }
}
