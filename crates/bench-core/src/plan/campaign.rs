//! `[campaign]`: a fault campaign over the plan's operation. Its points — a fault of the
//! store at one request of a worker's measured operations — are a dimension of the plan's
//! cells: each cell's workers get the variable [`ENV`] naming the point (`lose-reply@3`, or
//! `trace` for the run that only lists the requests). Right before its first measured
//! operation the worker asks the store (`scripts/s3-server.py`, `POST /_bench/arm`) to give
//! that fault to the k-th request under the cell's copy from then on; after the run the
//! coordinator asks the store what met it ([`Met`]), before it verifies the copy.
//! `report::campaign` judges each point and draws the matrix.
//!
//! A new fault kind: a variant of [`FaultKind`] (its name, below) and its branch in
//! `scripts/s3-server.py`'s `Armed.meet` and `NetworkStore.armed`. A new operation kind is
//! the plan's `operation`: any operation bench measures runs as a campaign, and lance's
//! cleanup of `__manifest` too, with what it keeps (`campaign.keep_versions`).

use serde::{Deserialize, Serialize};

use super::checks::{bounded, check_list, invalid};
use super::raw::RawCampaign;
use super::{Continuous, Operation, Retention, Transport};
use crate::error::PlanError;

/// The workers' variable that names their cell's point (`lose-reply@3`, `trace`).
pub const ENV: &str = "BENCH_STORE_FAULT";

/// The value of [`ENV`] for a `pause` point's other client: a campaign's worker that arms
/// nothing.
pub const OTHER: &str = "other";

/// Request positions a campaign may enumerate (`campaign.requests`).
pub const MAX_REQUESTS: u64 = 200;

/// What the store does to the request a point names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FaultKind {
    /// Applied, then the connection reset before the reply: a reply lost after its effect.
    LoseReply,
    /// The connection reset before the store applies it.
    Reset,
    /// 503 SlowDown to it and to its next 2 resends, then served.
    SlowDown,
    /// 503 SlowDown to it and to every request under the copy after it, 20 in all: a
    /// window longer than the client's resends of one request (object_store's 3, and
    /// lance's 3 on top: 16 sends).
    SlowDownWindow,
    /// Applied, its reply lost (the connection reset), then 503 SlowDown to the next 16
    /// reads (HEAD, GET) of its key: the client's look-up of whether its write landed meets a burst
    /// as long as its resends of one request (16 sends), and the store answers again.
    LoseReplyThenSlowDown,
    /// Applied, then answered 500 InternalError; its next 15 resends (the same method and
    /// key) answered 500 unapplied — past the client's budget of 16 sends —, then served.
    FailAfterApply,
    /// Applied, its reply held 35 s: past object_store's default timeout of 30 s.
    Delay,
    /// A HEAD answered without the object's length (`Content-Length: 0`); a point whose
    /// request is not a HEAD is not reached.
    HeadNoLength,
    /// The worker SIGKILLed by the store when the request arrives, before it applies it.
    KillBefore,
    /// The request applied, then the worker SIGKILLed before it hears the reply.
    KillAfter,
    /// The worker SIGSTOPped by the store when the request arrives, and the request held
    /// unapplied; meanwhile another client runs [`PAUSE_OTHERS`] operations of the plan's
    /// and a cleanup keeps only the latest version of `__manifest`; then the worker is
    /// SIGCONTed and its request served.
    Pause,
}

impl FaultKind {
    pub const ALL: [FaultKind; 11] = [
        FaultKind::LoseReply,
        FaultKind::Reset,
        FaultKind::SlowDown,
        FaultKind::SlowDownWindow,
        FaultKind::LoseReplyThenSlowDown,
        FaultKind::FailAfterApply,
        FaultKind::Delay,
        FaultKind::HeadNoLength,
        FaultKind::KillBefore,
        FaultKind::KillAfter,
        FaultKind::Pause,
    ];

    /// Its name in plans, specs and the store's control endpoint.
    pub fn name(self) -> &'static str {
        match self {
            FaultKind::LoseReply => "lose-reply",
            FaultKind::Reset => "reset",
            FaultKind::SlowDown => "slow-down",
            FaultKind::SlowDownWindow => "slow-down-window",
            FaultKind::LoseReplyThenSlowDown => "lose-reply-then-slow-down",
            FaultKind::FailAfterApply => "fail-after-apply",
            FaultKind::Delay => "delay",
            FaultKind::HeadNoLength => "head-no-length",
            FaultKind::KillBefore => "kill-before",
            FaultKind::KillAfter => "kill-after",
            FaultKind::Pause => "pause",
        }
    }

    pub fn parse(name: &str) -> Option<FaultKind> {
        FaultKind::ALL.into_iter().find(|k| k.name() == name)
    }

    /// Whether the worker does not live through it (no later operation of its own).
    pub fn kills(self) -> bool {
        matches!(self, FaultKind::KillBefore | FaultKind::KillAfter)
    }

    /// Whether the worker is stopped at the request while others write and clean up.
    pub fn pauses(self) -> bool {
        self == FaultKind::Pause
    }

    /// Whether it goes on answering later requests of the same key (its resends, and the
    /// client's look-ups): until a request of that key is served, a failure of the worker
    /// may be the fault's own answer.
    pub fn keyed(self) -> bool {
        matches!(
            self,
            FaultKind::SlowDown | FaultKind::LoseReplyThenSlowDown | FaultKind::FailAfterApply
        )
    }

    pub fn names() -> String {
        let all: Vec<&str> = FaultKind::ALL.iter().map(|k| k.name()).collect();
        all.join(", ")
    }
}

/// One point of a campaign: a fault at the `at`-th request (from 1) of the worker's
/// measured operations; `kind` `None`: the trace (no fault, the requests listed).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Point {
    pub kind: Option<FaultKind>,
    pub at: u32,
}

impl Point {
    pub const TRACE: Point = Point { kind: None, at: 0 };

    /// `trace`, or `KIND@K`.
    pub fn parse(spec: &str) -> Result<Point, String> {
        if spec == "trace" {
            return Ok(Point::TRACE);
        }
        let (kind, at) = spec
            .split_once('@')
            .ok_or_else(|| format!("`{spec}` is not a fault point: give KIND@REQUEST or trace"))?;
        let kind = FaultKind::parse(kind).ok_or_else(|| {
            format!(
                "`{kind}` is not a fault kind; the kinds are {}",
                FaultKind::names()
            )
        })?;
        match at.parse::<u32>() {
            Ok(at) if at >= 1 => Ok(Point {
                kind: Some(kind),
                at,
            }),
            _ => Err(format!(
                "`{spec}`: the request is a position from 1, e.g. {}@1",
                kind.name()
            )),
        }
    }

    pub fn spec(&self) -> String {
        match self.kind {
            None => "trace".to_string(),
            Some(k) => format!("{}@{}", k.name(), self.at),
        }
    }
}

/// `[campaign]`, validated: the fault kinds and the request positions each meets.
#[derive(Debug, Clone, PartialEq)]
pub struct Campaign {
    pub faults: Vec<FaultKind>,
    /// Positions 1..=requests of the worker's measured requests.
    pub requests: u32,
    /// Points run at once, each on its own copy with its own worker (they are judged, not
    /// timed); not part of any cell's key.
    pub parallel: u32,
    /// What the worker's cleanups keep of `__manifest`, in a campaign over
    /// `maintain-cleanup-versions` (`campaign.keep_versions`); `None` otherwise.
    pub retention: Option<Retention>,
}

impl Campaign {
    /// Every point: the trace first, then each fault kind at each position.
    pub fn points(&self) -> Vec<Point> {
        let mut out = vec![Point::TRACE];
        for &kind in &self.faults {
            out.extend((1..=self.requests).map(|at| Point {
                kind: Some(kind),
                at,
            }));
        }
        out
    }
}

/// One request the store saw under the copy after the point's fault was armed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Request {
    /// Its position, from 1.
    pub n: u32,
    pub method: String,
    /// Its key under the copy (`__manifest/_versions/…`).
    pub key: String,
    /// As the store counts it: get, put, conditional_put, list, head, delete, copy.
    pub kind: String,
    /// The fault it met, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fault: Option<String>,
}

/// The operations the other client runs while a `pause` point holds the worker.
pub const PAUSE_OTHERS: u64 = 3;

/// What happened while a `pause` point held the worker (the coordinator's account).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct WhilePaused {
    /// The other client's operations, and how many of them succeeded (its log is the
    /// run's, as client 1).
    pub others: u64,
    pub others_ok: u64,
    /// The versions of `__manifest` the cleanup removed, or why it failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cleaned_versions: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cleanup_error: Option<String>,
    /// Why the other client could not run, if it could not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub others_error: Option<String>,
    /// How long the worker was held, from the store telling it paused to its resume, in ms.
    pub held_ms: f64,
}

/// What the store said of a point after its run: a record's `fault`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Met {
    /// The point (`lose-reply@3`, `trace`).
    pub point: String,
    /// The position of the request that met the fault; `None`: none did (the run made
    /// fewer requests, or the request there was not of the kind the fault needs).
    pub fired_at: Option<u32>,
    /// Every request under the copy from the arming to the run's end, in order.
    pub requests: Vec<Request>,
    /// Where the point is a finding (`report::campaign::judge`, when it was recorded): its
    /// class and witness (`STUCK: …`). Its cell fails, as one that fails verification.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finding: Option<String>,
    /// A client opened on the copy after the run and its verification, creating a
    /// namespace: `ok`, or its error (no later operation of any client succeeds: STUCK).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub new_client: Option<String>,
    /// A `pause` point: what ran while the worker was held.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub while_paused: Option<WhilePaused>,
}

/// Request positions a campaign enumerates where the plan does not say.
pub const DEFAULT_REQUESTS: u32 = 12;

/// Points a campaign runs at once where the plan does not say, and the most it may ask.
pub const DEFAULT_PARALLEL: u32 = 2;
pub const MAX_PARALLEL: u64 = 16;

/// What else the plan says that a campaign depends on.
pub(super) struct Around<'a> {
    /// The plan's operation.
    pub operation: Operation,
    pub continuous: Option<&'a Continuous>,
    /// Whether the plan has `[concurrent]`, `[mixed]` or `[[roles]]`.
    pub other_modes: bool,
    pub launcher: bool,
    pub transports: &'a [Transport],
}

/// `[campaign]` validated, and its points pushed into `env_matrix` as the dimension
/// [`ENV`] (the trace first).
pub(super) fn settings(
    raw: Option<RawCampaign>,
    around: Around<'_>,
    env_matrix: &mut Vec<(String, Vec<String>)>,
) -> Result<Option<Campaign>, PlanError> {
    let Some(raw) = raw else { return Ok(None) };
    let faults = match raw.faults {
        None => FaultKind::ALL.to_vec(),
        Some(names) => {
            check_list("campaign.faults", &names)?;
            (names.iter())
                .map(|n| {
                    FaultKind::parse(n).ok_or_else(|| {
                        invalid(
                            "campaign.faults",
                            format!(
                                "`{n}` is not a fault kind; the kinds are {}",
                                FaultKind::names()
                            ),
                        )
                    })
                })
                .collect::<Result<Vec<_>, _>>()?
        }
    };
    let requests = match raw.requests {
        None => DEFAULT_REQUESTS,
        Some(n) => bounded(
            "campaign.requests",
            n,
            "must be at least 1 (the positions 1..=requests of the worker's requests)",
            MAX_REQUESTS,
        )? as u32,
    };
    let parallel = match raw.parallel {
        None => DEFAULT_PARALLEL,
        Some(n) => bounded(
            "campaign.parallel",
            n,
            "must be at least 1 (the points run at once, each on its own copy)",
            MAX_PARALLEL,
        )? as u32,
    };
    let one_worker = "a campaign's points each run one worker: give [continuous] with \
                      operations = 2 or more (the first meets the fault, the rest show that \
                      the worker goes on)";
    match around.continuous {
        None => return Err(invalid("campaign", one_worker)),
        Some(c) if c.operations < 2 => return Err(invalid("continuous.operations", one_worker)),
        Some(_) => {}
    }
    if around.other_modes {
        return Err(invalid(
            "campaign",
            format!("{one_worker}, and no [concurrent], [mixed] or [[roles]]"),
        ));
    }
    if around.launcher {
        return Err(invalid(
            "run.launcher",
            "a campaign's store stops its points' workers by their pid on this host: remove \
             run.launcher",
        ));
    }
    if around.transports.iter().any(|t| *t != Transport::Direct) {
        return Err(invalid(
            "matrix.transport",
            "a campaign's faults meet the worker's own requests to the store: run it with \
             the direct transport only",
        ));
    }
    let campaign = Campaign {
        faults,
        requests,
        parallel,
        retention: retention(raw.keep_versions, around.operation)?,
    };
    let points = campaign.points().iter().map(|p| p.spec()).collect();
    env_matrix.push((ENV.to_string(), points));
    Ok(Some(campaign))
}

/// What a campaign's cleanups keep (`campaign.keep_versions`): given with a campaign over
/// `maintain-cleanup-versions`, and only there.
fn retention(
    keep_versions: Option<u64>,
    operation: Operation,
) -> Result<Option<Retention>, PlanError> {
    match (keep_versions, operation.is_maintenance()) {
        (None, false) => Ok(None),
        (Some(_), false) => Err(invalid(
            "campaign.keep_versions",
            format!(
                "only a campaign over `maintain-cleanup-versions` keeps versions; `{operation}` \
                 removes none: remove it"
            ),
        )),
        (None, true) => Err(invalid(
            "campaign.keep_versions",
            "a campaign over `maintain-cleanup-versions` needs what its cleanups keep: e.g. \
             campaign.keep_versions = 1 (the golden's older versions are what they remove)",
        )),
        (Some(0), true) => Err(invalid(
            "campaign.keep_versions",
            "must be at least 1 (lance keeps the latest version whatever it is told)",
        )),
        (Some(n), true) => Ok(Some(Retention::KeepVersions(n))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::Plan;

    const BASE: &str = "name = 'c'\n[matrix]\nsizes = [10]\ninline = [false]\n";
    const CLEANUP: &str = "name = 'c'\noperation = 'maintain-cleanup-versions'\n[matrix]\n\
                           sizes = [10]\ninline = [false]\n";

    /// A campaign over lance's cleanup: each point's worker cleans up keeping what the plan
    /// says, and the cells' keys hold it.
    #[test]
    fn a_campaign_over_cleanup_keeps_what_it_says() {
        let text = format!(
            "{CLEANUP}[continuous]\noperations = 2\n[campaign]\nfaults = ['reset']\n\
             requests = 2\nkeep_versions = 1\n"
        );
        let plan = Plan::parse(&text).unwrap();
        let keep = Some(Retention::KeepVersions(1));
        assert_eq!(plan.campaign.as_ref().unwrap().retention, keep);
        let steps = crate::plan::expand(&plan, "/tmp/r");
        let cells = crate::plan::cells(&steps);
        assert_eq!(cells.len(), 3);
        assert!(cells.iter().all(|c| c.retention == keep));
        let args = crate::workers::worker_args(cells[1], 1, "/tmp/r/x", 0, Vec::new(), "");
        assert_eq!(args[0].retention, keep);
        let two = Plan::parse(&text.replace("keep_versions = 1", "keep_versions = 2")).unwrap();
        let two = crate::plan::expand(&two, "/tmp/r");
        assert_ne!(cells[1].key(), crate::plan::cells(&two)[1].key());
    }

    #[test]
    fn a_campaign_makes_its_points_a_dimension_of_the_cells() {
        let text = format!(
            "{BASE}[continuous]\noperations = 3\n[campaign]\nfaults = ['reset', 'kill-after']\n\
             requests = 2\n"
        );
        let plan = Plan::parse(&text).unwrap();
        let c = plan.campaign.as_ref().unwrap();
        assert_eq!((c.requests, c.parallel), (2, DEFAULT_PARALLEL));
        let (var, points) = plan.env_matrix.last().unwrap();
        assert_eq!(var, ENV);
        assert_eq!(
            points,
            &[
                "trace",
                "reset@1",
                "reset@2",
                "kill-after@1",
                "kill-after@2"
            ]
        );
        let steps = crate::plan::expand(&plan, "/tmp/r");
        assert_eq!(crate::plan::cells(&steps).len(), 5);
    }

    #[test]
    fn a_wrong_campaign_is_refused_with_the_fix() {
        let cases = [
            (
                format!("{BASE}[continuous]\noperations = 3\n[campaign]\nfaults = ['drop']\n"),
                "`drop` is not a fault kind",
            ),
            (
                format!("{BASE}[continuous]\noperations = 3\n[campaign]\nrequests = 0\n"),
                "at least 1",
            ),
            (
                format!("{BASE}[continuous]\noperations = 1\n[campaign]\n"),
                "operations = 2 or more",
            ),
            (
                format!("{BASE}[continuous]\noperations = 2\n[campaign]\nparallel = 0\n"),
                "campaign.parallel",
            ),
            (
                format!("{BASE}[continuous]\noperations = 2\n[campaign]\nparallel = 17\n"),
                "at most 16",
            ),
            (
                format!(
                    "{BASE}[continuous]\noperations = 2\n[concurrent]\nconcurrency = [2]\n\
                     duration_secs = 1\n[campaign]\n"
                ),
                "no [concurrent]",
            ),
            (
                format!("{BASE}[continuous]\noperations = 2\n[campaign]\nwhat = 1\n"),
                "what",
            ),
            (
                format!("{BASE}[continuous]\noperations = 2\n[campaign]\nkeep_versions = 1\n"),
                "only a campaign over `maintain-cleanup-versions` keeps versions",
            ),
            (
                format!("{CLEANUP}[continuous]\noperations = 2\n[campaign]\n"),
                "campaign.keep_versions = 1",
            ),
            (
                format!("{CLEANUP}[continuous]\noperations = 2\n[campaign]\nkeep_versions = 0\n"),
                "at least 1",
            ),
            // Without a campaign, a cleanup is a role's alone.
            (
                format!("{CLEANUP}[continuous]\noperations = 2\n"),
                "run it as a role's operation",
            ),
        ];
        for (text, want) in cases {
            let err = Plan::parse(&text).unwrap_err().to_string();
            assert!(err.contains(want), "{text}\n→ {err}");
        }
    }

    #[test]
    fn points_parse_back_from_their_specs_and_bad_ones_say_why() {
        let c = Campaign {
            faults: FaultKind::ALL.to_vec(),
            requests: 3,
            parallel: 1,
            retention: None,
        };
        let points = c.points();
        assert_eq!(points.len(), 1 + 11 * 3);
        for p in points {
            assert_eq!(Point::parse(&p.spec()), Ok(p));
        }
        let pause = Point::parse("pause@4").unwrap();
        assert!(pause.kind.is_some_and(FaultKind::pauses));
        assert!(!pause.kind.unwrap().kills());
        assert!(
            Point::parse("lose-reply")
                .unwrap_err()
                .contains("KIND@REQUEST")
        );
        assert!(
            Point::parse("drop@1")
                .unwrap_err()
                .contains("lose-reply, reset")
        );
        assert!(
            Point::parse("reset@0")
                .unwrap_err()
                .contains("position from 1")
        );
    }
}
