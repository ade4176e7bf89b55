//! A rest cell's servers: one set per arm on its copy, started before the workers,
//! watched while they run (one that dies stops them), asked what they served, stopped.

use std::time::Duration;

use tokio::sync::watch;

use super::Sweep;
use crate::arm::Arm;
use crate::coordinator::servers::{ServerSpec, Servers};
use crate::measured::Measured;
use crate::plan::Cell;
use bench_core::serve::ServeArgs;

/// Run the workers (`workers`, stopped through `stop`) while watching the servers: a
/// server that dies stops the workers at once, as an interrupt does, and fails the run
/// with its reason (`Err`); the user's interrupt is passed on.
pub(super) async fn with_servers<T>(
    servers: &mut [Servers],
    interrupt: &mut watch::Receiver<bool>,
    stop: &watch::Sender<bool>,
    workers: impl std::future::Future<Output = T>,
) -> Result<T, String> {
    tokio::pin!(workers);
    let (mut died, mut passed) = (None, false);
    loop {
        tokio::select! {
            ran = &mut workers => {
                return match died {
                    Some(why) => Err(why),
                    None => Ok(ran),
                };
            }
            _ = interrupt.changed(), if !passed => {
                passed = true;
                let _ = stop.send(true);
            }
            _ = tokio::time::sleep(Duration::from_millis(50)), if died.is_none() => {
                died = servers.iter_mut().find_map(Servers::exited);
                if died.is_some() {
                    let _ = stop.send(true);
                }
            }
        }
    }
}

/// A rest cell's servers, one set per arm on its copy, listening; none for a direct cell.
pub(super) async fn start_servers(
    sweep: &Sweep,
    cell: &Cell,
    arms: &[&Arm],
    roots: &[String],
    env: &std::collections::BTreeMap<String, String>,
) -> Result<Vec<Servers>, String> {
    let count = cell.transport.servers();
    let mut started = Vec::new();
    if count == 0 {
        return Ok(started);
    }
    for (arm, root) in arms.iter().zip(roots) {
        let spec = ServerSpec {
            exe: &arm.exe,
            args: ServeArgs {
                root: root.clone(),
                inline: cell.golden.inline,
                commit_retries: cell.commit_retries,
                s3_shaped: cell.s3_shaped,
                bind: sweep.plan.rest.bind.clone(),
                port: 0,
                supervised: true,
            },
            env,
            count,
            launcher: (sweep.plan.rest.launcher.as_ref()).map(|l| l.command(count)),
        };
        match Servers::start(spec).await {
            Ok(s) => started.push(s),
            Err(reason) => {
                for s in &mut started {
                    let _ = s.stop().await;
                }
                return Err(reason);
            }
        }
    }
    Ok(started)
}

/// After the workers: what each arm's servers served (into its figures, where the workers
/// measured), and the servers stopped. A server that died during the cell, or outlived it,
/// fails the run: its reason.
pub(super) async fn finish_servers(
    servers: &mut [Servers],
    measured: Option<&mut [Measured]>,
) -> Result<(), String> {
    let mut result = Ok(());
    for (s, m) in servers.iter_mut().zip(measured.into_iter().flatten()) {
        let served = match s.exited() {
            Some(why) => Err(why),
            None => s.report().await,
        };
        match served {
            Ok((reports, told)) => {
                m.servers = reports;
                bench_core::fold::join(&mut m.log, &told);
            }
            Err(why) => {
                result = Err(why);
                break;
            }
        }
    }
    for s in servers.iter_mut() {
        if let Err(e) = s.stop().await {
            result = Err(e);
        }
    }
    result
}
