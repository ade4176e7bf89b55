//! A campaign point's fault, armed at its store and read back through the store's control
//! endpoint (`/_bench/arm` of `scripts/s3-server.py`; see `bench_core::plan::campaign`). The
//! worker arms it right before its first measured operation, so the store counts the
//! point's request positions from there; the coordinator reads what met it after the run,
//! and removes it before it verifies the copy (verification's own requests meet nothing).
//! A plan's `[[nemesis]]` windows are switched on and off there too, on the cell's timeline
//! ([`timeline`], `/_bench/window`).

use std::collections::BTreeMap;
use std::time::Duration;

use std::sync::OnceLock;
use std::time::Instant;

use bench_core::plan::campaign::Met;
use bench_core::plan::nemesis::{Switch, Window};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::watch;

/// The storage options (or variables) that name an S3 store's endpoint, in the order
/// object_store reads them.
const ENDPOINT_KEYS: [&str; 4] = [
    "aws_endpoint",
    "endpoint",
    "aws_endpoint_url",
    "endpoint_url",
];

/// The store's endpoint: a storage option, else `AWS_ENDPOINT_URL` / `AWS_ENDPOINT`.
fn endpoint(storage: &BTreeMap<String, String>) -> Result<String, String> {
    (ENDPOINT_KEYS.iter())
        .find_map(|k| storage.get(*k).cloned())
        .or_else(|| std::env::var("AWS_ENDPOINT_URL").ok())
        .or_else(|| std::env::var("AWS_ENDPOINT").ok())
        .ok_or_else(|| {
            "a campaign's store must be reachable by its endpoint: give --storage-option \
             aws_endpoint=http://HOST:PORT of scripts/s3-server.py"
                .to_string()
        })
}

/// The path of `root`'s keys as a path-style request names them: `s3://b/p` → `/b/p/`.
fn prefix(root: &str) -> Result<String, String> {
    let rest = root.strip_prefix("s3://").ok_or_else(|| {
        format!(
            "{root} is not on S3: a campaign's faults come from its S3 store \
             (scripts/s3-server.py); give --root s3://BUCKET/PREFIX"
        )
    })?;
    Ok(format!("/{}/", rest.trim_end_matches('/')))
}

/// One request to the control endpoint: its status and body.
async fn call(
    endpoint: &str,
    method: &str,
    target: &str,
    body: &str,
) -> Result<(u16, String), String> {
    let url = url::Url::parse(endpoint).map_err(|e| format!("{endpoint}: {e}"))?;
    let host = (url.host_str()).ok_or_else(|| format!("{endpoint} names no host"))?;
    let port = url.port_or_known_default().unwrap_or(80);
    let exchange = async {
        let mut s = tokio::net::TcpStream::connect((host, port)).await?;
        let request = format!(
            "{method} {target} HTTP/1.0\r\nHost: {host}:{port}\r\nContent-Type: \
             application/json\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        );
        s.write_all(request.as_bytes()).await?;
        let mut answer = Vec::new();
        s.read_to_end(&mut answer).await?;
        Ok::<_, std::io::Error>(answer)
    };
    let answer = tokio::time::timeout(Duration::from_secs(30), exchange)
        .await
        .map_err(|_| format!("{endpoint} did not answer {method} {target} within 30 s"))?
        .map_err(|e| format!("cannot reach {host}:{port}: {e}"))?;
    let text = String::from_utf8_lossy(&answer);
    let (head, rest) = (text.split_once("\r\n\r\n")).unwrap_or((text.as_ref(), ""));
    let status = (head.split_whitespace().nth(1))
        .and_then(|c| c.parse().ok())
        .ok_or_else(|| format!("{endpoint} gave no HTTP answer to {method} {target}"))?;
    Ok((status, rest.to_string()))
}

fn not_a_fault_store(endpoint: &str, what: String) -> String {
    format!(
        "the store at {endpoint} takes no campaign faults ({what}): run it with \
         scripts/s3-server.py (moto, or --upstream in front of another S3 server)"
    )
}

/// Before a campaign runs: its root is on S3 and its store gives faults on demand (it
/// answers the control endpoint as `scripts/s3-server.py` does).
pub async fn preflight(storage: &BTreeMap<String, String>, root: &str) -> Result<(), String> {
    prefix(root)?;
    let endpoint = endpoint(storage)?;
    match call(&endpoint, "GET", "/_bench/arm?under=%2F", "").await {
        Ok((404 | 200, body)) if body.contains("armed") || body.contains("point") => Ok(()),
        Ok((status, _)) => Err(not_a_fault_store(&endpoint, format!("HTTP {status}"))),
        Err(e) => Err(not_a_fault_store(&endpoint, e)),
    }
}

/// Arm `point` (`lose-reply@3`) for the requests under `root`, counted from now; the store
/// signals `pid` for a point that kills.
pub async fn arm(
    storage: &BTreeMap<String, String>,
    root: &str,
    point: &str,
    pid: u32,
) -> Result<(), String> {
    let endpoint = endpoint(storage)?;
    let body = serde_json::json!({"under": prefix(root)?, "fault": point, "pid": pid});
    match call(&endpoint, "POST", "/_bench/arm", &body.to_string()).await {
        Ok((200, _)) => Ok(()),
        Ok((400, why)) => Err(format!("the store refused the fault {point}: {why}")),
        Ok((status, _)) => Err(not_a_fault_store(&endpoint, format!("HTTP {status}"))),
        Err(e) => Err(not_a_fault_store(&endpoint, e)),
    }
}

/// What met the point armed under `root` (its requests and the one it faulted), and the
/// point removed from the store.
pub async fn read_back(storage: &BTreeMap<String, String>, root: &str) -> Result<Met, String> {
    let endpoint = endpoint(storage)?;
    let under = prefix(root)?;
    match call(&endpoint, "DELETE", &arm_target(root)?, "").await? {
        (200, body) => serde_json::from_str(&body)
            .map_err(|e| format!("the store's answer about {under} is not a point's: {e}")),
        (404, _) => Err(format!(
            "the worker armed no fault under {under}: a build of bench without campaigns, or a \
             worker that stopped before its first operation"
        )),
        (status, _) => Err(not_a_fault_store(&endpoint, format!("HTTP {status}"))),
    }
}

/// The `/_bench/arm?under=…` target of `root`'s point.
fn arm_target(root: &str) -> Result<String, String> {
    let under = prefix(root)?;
    Ok(format!(
        "/_bench/arm?under={}",
        url::form_urlencoded::byte_serialize(under.as_bytes()).collect::<String>()
    ))
}

/// Whether the `pause` point armed under `root` holds its worker now (`paused`), did
/// (`resumed`), or has not yet (`None`, or nothing armed there yet).
pub async fn pause_state(
    storage: &BTreeMap<String, String>,
    root: &str,
) -> Result<Option<String>, String> {
    let endpoint = endpoint(storage)?;
    match call(&endpoint, "GET", &arm_target(root)?, "").await? {
        (200, body) => {
            let v: serde_json::Value = serde_json::from_str(&body).unwrap_or_default();
            Ok(v["paused"].as_str().map(str::to_string))
        }
        (404, _) => Ok(None),
        (status, _) => Err(not_a_fault_store(&endpoint, format!("HTTP {status}"))),
    }
}

/// Let the worker held by the `pause` point under `root` go on.
pub async fn resume(storage: &BTreeMap<String, String>, root: &str) -> Result<(), String> {
    let endpoint = endpoint(storage)?;
    let body = serde_json::json!({"under": prefix(root)?});
    match call(&endpoint, "POST", "/_bench/resume", &body.to_string()).await? {
        (200, _) => Ok(()),
        (status, why) => Err(format!(
            "the store did not resume the paused worker: HTTP {status}: {why}"
        )),
    }
}

/// The moment the cell's workers were released, once they are; `None` where the run ends
/// first.
async fn released_at(
    released: &OnceLock<Instant>,
    done: &mut watch::Receiver<bool>,
) -> Option<Instant> {
    loop {
        if let Some(t) = released.get() {
            return Some(*t);
        }
        if *done.borrow() {
            return None;
        }
        tokio::select! {
            _ = done.changed() => {}
            _ = tokio::time::sleep(Duration::from_millis(5)) => {}
        }
    }
}

/// Switch `w` on or off under every root; the switch as made (`t0`: release).
async fn switch(endpoint: &str, roots: &[String], w: &Window, on: bool, t0: Instant) -> Switch {
    let at = Instant::now();
    let at_us = crate::host_clock::monotonic_us();
    let mut met = 0;
    let mut error = None;
    for root in roots {
        let body = prefix(root).map(|under| {
            serde_json::json!({"under": under, "fault": w.fault.name(), "of": w.of, "on": on})
        });
        let answer = match body {
            Ok(body) => call(endpoint, "POST", "/_bench/window", &body.to_string()).await,
            Err(e) => Err(e),
        };
        match answer {
            Ok((200, text)) => {
                let v: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
                met += v["met"].as_u64().unwrap_or(0);
            }
            Ok((status, text)) => error = Some(format!("HTTP {status}: {text}")),
            Err(e) => error = Some(e),
        }
    }
    Switch {
        fault: format!("{} of {}", w.fault.name(), w.of),
        on,
        at_ms: ((at - t0).as_secs_f64() * 1000.0 * 10.0).round() / 10.0,
        at_us,
        met: (!on).then_some(met),
        error,
    }
}

/// The plan's windows switched at the store under every root, from `released` on, until
/// `done`: each switch as it was made. A window still on when the run ends is switched off
/// then.
pub async fn timeline(
    storage: &BTreeMap<String, String>,
    roots: &[String],
    windows: &[Window],
    released: &OnceLock<Instant>,
    mut done: watch::Receiver<bool>,
) -> Vec<Switch> {
    let Ok(endpoint) = endpoint(storage) else {
        return Vec::new();
    };
    let Some(t0) = released_at(released, &mut done).await else {
        return Vec::new();
    };
    // (ms from release, off before on at the same moment, window)
    let mut steps: Vec<(u64, bool, usize)> = (windows.iter().enumerate())
        .flat_map(|(i, w)| [(w.from_ms, true, i), (w.from_ms + w.for_ms, false, i)])
        .collect();
    steps.sort();
    let mut on = vec![false; windows.len()];
    let mut out = Vec::new();
    for (ms, switch_on, i) in steps {
        let at = t0 + Duration::from_millis(ms);
        let ended = tokio::select! {
            _ = tokio::time::sleep_until(at.into()) => false,
            _ = done.wait_for(|&d| d) => true,
        };
        if ended {
            break;
        }
        if on[i] != switch_on {
            out.push(switch(&endpoint, roots, &windows[i], switch_on, t0).await);
            on[i] = switch_on;
        }
    }
    for i in (0..windows.len()).filter(|&i| on[i]) {
        out.push(switch(&endpoint, roots, &windows[i], false, t0).await);
    }
    out
}
