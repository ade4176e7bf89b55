//! The sweep: a plan resolved against its results directory and store ([`Sweep`]), the
//! one rule of where each cell stands ([`resume`]), the read-only views `bench plan` and
//! `bench status` ([`views`]), the run loop ([`run`]) and one run of one cell ([`cell`]).

mod ab;
mod cell;
mod extend;
mod goldens;
mod open;
mod outputs;
mod pairing;
mod pause;
mod run;
mod runner;
mod servers;
mod stored;
mod views;
mod workers;

pub use bench_core::compare::precision;
pub use bench_core::sweep::resume::arms_in;
pub use bench_core::sweep::{estimate, requests, resume, shard};

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

pub use ab::ab;
pub use pairing::Pairing;
pub use precision::Until;
pub use run::{ARM_A, ARM_B, AbOptions, Arm, RunOptions, run};
pub use views::{show_plan, show_status, status_gate};

use crate::error::BenchError;
use crate::export::{Record, csv, jsonl};
use crate::plan::{Cell, GoldenSpec, Plan, Step, expand};
use crate::state::State;
use crate::store::Store;

/// What the command line changes of a plan.
#[derive(Debug, Clone, Default)]
pub struct Overrides {
    pub out: Option<PathBuf>,
    pub root: Option<String>,
    pub storage: Vec<(String, String)>,
    /// An A/B sweep, with its two arms, checked (their builds are part of every cell's
    /// key): its results go to `results/<plan name>-ab/` by default.
    pub ab: Option<[Arm; 2]>,
    /// Run only this shard's share of the cells.
    pub shard: Option<shard::ShardArg>,
    /// `--launcher`: replaces the plan's `run.launcher`.
    pub launcher: Option<String>,
    /// `--trace`: replaces the plan's `run.trace_operations`.
    pub trace: Option<u32>,
    /// `--prices`: the price table records are priced with, instead of bench's own.
    pub prices: Option<PathBuf>,
    /// `--only`: run only the cells whose id one of these matches.
    pub only: Vec<bench_core::glob::Glob>,
    /// `--set KEY=VALUE`: plan keys as if the plan said them.
    pub set: Vec<(String, String)>,
}

/// A plan resolved against its results directory and store.
pub struct Sweep {
    pub plan: Plan,
    pub plan_path: PathBuf,
    pub out: PathBuf,
    /// Where this sweep's goldens and copies live: the root, or a shard's prefix under it.
    pub store: Store,
    /// The steps this process runs: all of the plan's, or a shard's share.
    pub steps: Vec<Step>,
    pub shard: Option<shard::Shard>,
    /// Every cell of the plan, in order, whichever shard runs it (for `bench merge`).
    pub planned: Vec<String>,
    /// The sweep's root as the cells' keys have it (a shard's prefix is under it).
    pub root: String,
    /// The plan's `[builds]`, each checked (`worker-info`) and resolved: whose workers run
    /// the cells of that build.
    pub builds: std::collections::BTreeMap<String, Arm>,
    /// `bench ab`: its arms' executables (recorded in the checkpoint).
    pub ab: Option<[PathBuf; 2]>,
    /// `--only` selected some of the cells: the others are neither run nor cleaned up for.
    pub only: bool,
    /// The price table the records' costs are figured with.
    pub prices: bench_core::prices::Priced,
}

/// Check every build of the plan before anything is written: resolve its path (`"bench"`
/// is the running binary; a relative path is from the current directory) and ask its
/// `worker-info`, whose answer becomes part of its cells' keys.
async fn check_builds(
    plan: &mut Plan,
) -> Result<std::collections::BTreeMap<String, Arm>, BenchError> {
    let mut arms = std::collections::BTreeMap::new();
    for b in &mut plan.builds {
        let exe = if b.path == crate::plan::THIS_BENCH {
            std::env::current_exe()
                .map_err(|e| BenchError::Internal(format!("cannot locate the bench binary: {e}")))?
        } else {
            let p = Path::new(&b.path);
            std::path::absolute(p).map_err(|e| BenchError::io("resolve", p, e))?
        };
        let arm = Arm::checked(None, exe)
            .await
            .map_err(|e| BenchError::Usage(format!("builds.{} (\"{}\"): {}", b.name, b.path, e)))?;
        b.id = Some(arm.id());
        arms.insert(b.name.clone(), arm);
    }
    Ok(arms)
}

impl Sweep {
    /// The plan's `[namespace]` properties, and those the pinned lance does not read
    /// (they would do nothing unless the workers' build reads them): said before any cell.
    pub fn namespace_note(&self) -> Vec<String> {
        let ns = &self.plan.namespace;
        let matrix = &self.plan.property_matrix;
        let mut lines = Vec::new();
        if !self.builds.is_empty() {
            let builds: Vec<String> = (self.plan.builds.iter())
                .map(|b| {
                    let arm = &self.builds[&b.name];
                    format!(
                        "{} = {} ({}, digest {})",
                        b.name,
                        arm.exe.display(),
                        arm.versions,
                        arm.short_digest()
                    )
                })
                .collect();
            lines.push(format!("builds: {}", builds.join("; ")));
        }
        if !ns.is_empty() {
            let given: Vec<String> = ns.iter().map(|(k, v)| format!("{k}={v}")).collect();
            lines.push(format!("namespace properties: {}", given.join(", ")));
        }
        if !matrix.is_empty() {
            let given: Vec<String> = matrix
                .iter()
                .map(|(k, v)| format!("{k} in [{}]", v.join(", ")))
                .collect();
            lines.push(format!("namespace properties varied: {}", given.join("; ")));
        }
        if !self.plan.env.is_empty() {
            let given: Vec<String> = (self.plan.env.iter())
                .map(|(k, v)| format!("{k}={v}"))
                .collect();
            lines.push(format!("workers' environment: {}", given.join(", ")));
        }
        if !self.plan.env_matrix.is_empty() {
            let given: Vec<String> = (self.plan.env_matrix.iter())
                .map(|(k, v)| format!("{k} in [{}]", v.join(", ")))
                .collect();
            lines.push(format!("workers' environment varied: {}", given.join("; ")));
        }
        if self.plan.transports != [crate::plan::Transport::Direct] {
            lines.push(self.transport_line());
        }
        let unread = self.plan.unread_namespace_keys();
        if !unread.is_empty() {
            lines.push(format!(
                "note: lance {} does not read {}: unchecked, they do nothing unless the \
                 workers' build reads them",
                crate::plan::LANCE_VERSION,
                unread.join(", ")
            ));
        }
        lines
    }

    /// How the cells reach the catalog: each transport, and where REST servers run.
    fn transport_line(&self) -> String {
        let given: Vec<String> = (self.plan.transports.iter())
            .map(|t| t.describe(self.plan.rest.external.as_deref()))
            .collect();
        let rest = &self.plan.rest;
        if let (Some(uri), Some(parent)) = (&rest.external, &rest.parent) {
            return format!(
                "transports: external (lance's REST namespace to {uri}, a server bench did not \
                 start: each run in a namespace of its own under {parent}, its golden built \
                 through the server, verified by the server's listing)"
            );
        }
        if rest.external.is_some() {
            return format!("transports: {}", given.join(", "));
        }
        let at = match &rest.launcher {
            Some(l) => format!("started through: {l}"),
            None => format!("on this machine, bound to {}", rest.bind),
        };
        format!("transports: {}; servers {at}", given.join(", "))
    }

    /// Mixed cells whose clients' reads before one commit outlast the cell's duration (by the
    /// records of earlier runs of the cell, else the model): each would measure no commit.
    pub fn starved_note(&self, records: &[Record]) -> Vec<String> {
        self.cells()
            .into_iter()
            .filter_map(|c| {
                let id = c.id();
                let measured: Vec<f64> = (records.iter())
                    .filter(|r| r.bench_tag == id)
                    .filter_map(|r| r.reads.as_ref())
                    .filter(|x| x.total_operations > 0)
                    .map(|x| x.avg_latency_ms)
                    .collect();
                let (secs, from) = estimate::starved_mixed(c, &measured)?;
                let (read, reads) = c.mode.mixed_reads()?;
                Some(format!(
                    "warning: {id}: its {reads} reads of {read} and a commit take about \
                     {secs:.0} s (reads by the {from}), more than its {} s: it would measure no \
                     commit; lower mixed.reads_per_write or raise mixed.duration_secs",
                    c.mode.duration_secs()
                ))
            })
            .collect()
    }

    /// For an S3 root: where the credentials come from and until when, against `left` (the
    /// estimate of what is left), with a warning when they expire first. Nothing for a
    /// local root.
    pub async fn credentials_note(&self, left: std::time::Duration) -> Vec<String> {
        if self.store.scheme() != "s3" {
            return Vec::new();
        }
        match crate::store::credentials::resolve(&self.plan.storage).await {
            Ok(c) => {
                let (line, warning) = c.describe(left, std::time::SystemTime::now());
                std::iter::once(line)
                    .chain(warning.map(|w| format!("warning: {w}")))
                    .collect()
            }
            Err(e) => vec![format!("credentials: none resolved yet ({e})")],
        }
    }

    /// Load the plan, apply the command line's overrides, and resolve where its outputs and
    /// store are. Writes nothing.
    pub async fn prepare(plan_path: &Path, over: &Overrides) -> Result<Sweep, BenchError> {
        let mut plan = Plan::load_with(plan_path, &over.set)?;
        plan.override_with(over.root.as_deref(), &over.storage);
        if over.ab.is_some() {
            refused_by_ab(&plan, plan_path)?;
        }
        let prices = bench_core::prices::Priced::from_arg(over.prices.as_deref())
            .map_err(BenchError::Usage)?;
        let builds = check_builds(&mut plan).await?;
        if let Some(l) = &over.launcher {
            if plan.roles.is_some() {
                let why = crate::plan::LAUNCHER_WITH_ROLES;
                return Err(BenchError::Usage(format!("--launcher {why}")));
            }
            plan.run.launcher = Some(
                crate::plan::Launcher::parse(l)
                    .map_err(|m| BenchError::Usage(format!("--launcher {m}")))?,
            );
        }
        if let Some(n) = over.trace {
            plan.run.trace_operations = n;
        }
        let out = over.out.clone().unwrap_or_else(|| {
            let dir = if over.ab.is_some() {
                format!("{}-ab", plan.name)
            } else {
                plan.name.clone()
            };
            Path::new("results").join(dir)
        });
        let out = std::path::absolute(&out).map_err(|e| BenchError::io("resolve", &out, e))?;
        if over.root.is_none() && over.storage.is_empty() {
            adopt_recorded_store(&mut plan, &out);
        }
        let shard = match over.shard {
            None => None,
            Some(arg) => {
                Some(shard::resolve(arg, &|k| std::env::var(k).ok()).map_err(BenchError::Usage)?)
            }
        };
        let root = match &plan.root {
            Some(r) => r.clone(),
            None => default_root(&out, shard.is_some()).display().to_string(),
        };
        // The arms' builds are in every cell's key: bench ab's own, or (for `bench plan` and
        // `bench status` of an A/B directory) those its checkpoint names, checked anew.
        plan.arms = match &over.ab {
            Some([a, b]) => Some([a.id(), b.id()]),
            None => recorded_arms(&out).await,
        };
        let parallelism = plan.run.copy_parallelism as usize;
        let mut store = Store::open(&root, &plan.storage)
            .await?
            .with_copy_parallelism(parallelism);
        // Keys come from the sweep's root, so a cell has the same key sharded or not.
        let root = store.root_uri();
        let mut steps = expand(&plan, &root);
        let planned = crate::plan::cells(&steps).iter().map(|c| c.id()).collect();
        if let Some(s) = shard {
            steps = shard_steps(&steps, plan.run.repetitions, s);
            store = Store::open(&store.uri(&s.prefix()), &plan.storage)
                .await?
                .with_copy_parallelism(parallelism);
        }
        if !over.only.is_empty() {
            steps = only_steps(&steps, &over.only, plan_path, shard)?;
        }
        Ok(Sweep {
            plan,
            plan_path: plan_path.to_path_buf(),
            out,
            store,
            steps,
            shard,
            planned,
            root,
            builds,
            only: !over.only.is_empty(),
            prices,
            ab: over
                .ab
                .as_ref()
                .map(|[a, b]| [a.exe.clone(), b.exe.clone()]),
        })
    }

    /// What this sweep is, for the checkpoint: the whole plan's cells and this shard.
    fn info(&self) -> crate::state::SweepInfo {
        let (plan_file, plan_sha256) = self.plan_identity().unzip();
        crate::state::SweepInfo {
            plan_file,
            plan_sha256,
            planned: self.planned.clone(),
            repetitions: self.plan.run.repetitions,
            shard: self.shard,
            pairing: None,
            arms: self
                .ab
                .as_ref()
                .map(|[a, b]| [a.display().to_string(), b.display().to_string()]),
            root: Some(self.root.clone()),
            storage: self
                .plan
                .storage
                .iter()
                .filter(|(k, _)| crate::plan::is_public_option(k))
                .map(|(k, v)| (k.clone(), bench_core::redact::shown_value(v)))
                .collect(),
        }
    }

    /// The plan file's absolute path and the SHA-256 of its text (`None`: it cannot be
    /// read again).
    fn plan_identity(&self) -> Option<(String, String)> {
        use sha2::Digest;
        let text = std::fs::read(&self.plan_path).ok()?;
        let path = std::fs::canonicalize(&self.plan_path).ok()?;
        let digest = sha2::Sha256::digest(&text);
        let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
        Some((path.display().to_string(), hex))
    }

    /// A directory holds the cells of one plan file: another file of the same plan name (a
    /// copy, edited) is refused, so that two plans' cells never mix in one summary. The same
    /// file edited runs the cells whose key changed; a file moved, its text the same, is the
    /// same plan.
    fn another_plan_file(&self, state: &State) -> Option<String> {
        let info = state.sweep.as_ref()?;
        let (was, was_sha) = (info.plan_file.as_ref()?, info.plan_sha256.as_ref()?);
        let (now, now_sha) = self.plan_identity()?;
        (!state.cells.is_empty() && *was != now && *was_sha != now_sha).then(|| {
            format!(
                "{} holds the results of plan `{}` from {was}; {now} is another plan file of \
                 that name, and the cells of the two would mix in one summary: give it its own \
                 --out (or another `name`), or --fresh to move the earlier results aside. To \
                 change the cells {was} runs, edit that file: only the cells whose key changed \
                 run again",
                self.out.display(),
                self.plan.name
            )
        })
    }

    /// When the directory was run against another store (root or storage options): the
    /// options it was run with. `None` for the same store, or a checkpoint that does not
    /// say (written before bench recorded it).
    fn other_store(&self, state: &State) -> Option<crate::state::SweepInfo> {
        let was = state.sweep.as_ref()?;
        let now = self.info();
        (was.root.is_some() && (was.root != now.root || was.storage != now.storage))
            .then(|| was.clone())
    }

    fn cells(&self) -> Vec<&Cell> {
        crate::plan::cells(&self.steps)
    }

    fn results_path(&self) -> PathBuf {
        self.out.join(jsonl::RESULTS_FILE)
    }

    fn summary_path(&self) -> PathBuf {
        self.out.join(csv::SUMMARY_FILE)
    }

    /// Load the checkpoint (read-only), or a fresh one if the directory has none.
    fn state(&self) -> Result<State, BenchError> {
        State::load(&self.out, &self.plan.name)
    }

    /// Where a cell stands, by the one resume rule, for runs made by these arms (`live`: a
    /// run holds the directory now).
    fn standing(
        &self,
        state: &State,
        records: &[Record],
        cell: &Cell,
        arms: &[Option<&str>],
        live: bool,
    ) -> resume::Standing {
        resume::standing(state, records, cell, self.plan.run.repetitions, arms, live)
    }
}

impl Sweep {
    /// What is left to run: each cell that will run (failed ones only with
    /// `retry_failed`) with its missing runs, and the goldens they need that are not in
    /// `ready`. The time estimate and the request estimate both count from it.
    fn left(
        &self,
        state: &State,
        records: &[Record],
        arms: &[Option<&str>],
        retry_failed: bool,
        ready: &BTreeSet<GoldenSpec>,
    ) -> (Vec<(&Cell, u32)>, BTreeSet<GoldenSpec>) {
        let mut runs = Vec::new();
        let mut goldens = BTreeSet::new();
        for cell in self.cells() {
            let st = self.standing(state, records, cell, arms, false);
            match st.status {
                resume::CellStatus::Done => continue,
                resume::CellStatus::Failed if !retry_failed => continue,
                _ => runs.push((cell, (st.repetitions - st.recorded) * arms.len() as u32)),
            }
            // An external server's cells build no golden.
            if cell.transport.has_goldens() && !ready.contains(&cell.golden) {
                goldens.insert(cell.golden);
            }
        }
        (runs, goldens)
    }

    /// The model's time for what is left (see [`estimate`]).
    fn predicted_left(
        &self,
        state: &State,
        records: &[Record],
        arms: &[Option<&str>],
        retry_failed: bool,
        ready: &BTreeSet<GoldenSpec>,
    ) -> crate::progress::Predicted {
        let (runs, goldens) = self.left(state, records, arms, retry_failed, ready);
        // A campaign's points run `campaign.parallel` at a time (one arm: `bench run`).
        let at_once = match &self.plan.campaign {
            Some(c) if arms.len() == 1 => c.parallel.max(1),
            _ => 1,
        };
        let point = |c: &Cell| c.build.is_none() && c.campaign_point();
        let run = |c: &Cell, n: u32| match point(c) {
            true => estimate::cell_run(c) * n / at_once,
            false => estimate::cell_run(c) * n,
        };
        crate::progress::Predicted {
            runs: runs.iter().map(|&(c, n)| run(c, n)).sum(),
            goldens: goldens.into_iter().map(estimate::golden).sum(),
        }
    }
}

impl Sweep {
    /// For an S3 root: the requests what is left will make (see [`requests`]), and what
    /// S3 Standard charges for them; calibrated by the directory's records, and the model
    /// by the store's latency (`request_ms`, from [`crate::store::look`]) where known.
    fn requests_note(
        &self,
        state: &State,
        records: &[Record],
        arms: &[Option<&str>],
        ready: &BTreeSet<GoldenSpec>,
        request_ms: Option<f64>,
    ) -> Option<String> {
        if self.store.scheme() != "s3" {
            return None;
        }
        let (runs, goldens) = self.left(state, records, arms, false, ready);
        let goldens: Vec<GoldenSpec> = goldens.into_iter().collect();
        let e = requests::estimate(&runs, &goldens, records, request_ms);
        let standard = requests::s3_standard();
        let (put, get) = (standard.write_per_1000, standard.read_per_1000);
        let model = match (e.modeled, request_ms) {
            (0, _) => String::new(),
            (_, Some(ms)) => format!(
                " (its cells bounded by time make as many commits as {ms:.1} ms a request, \
                 measured now, allows)"
            ),
            (_, None) => " (its cells bounded by time at local disk's pace: a ceiling, as \
                          the store could not be reached to time a request)"
                .to_string(),
        };
        Some(format!(
            "requests to S3 for what is left (estimate): {}; about ${} at S3 Standard \
             prices (${put} per 1,000 PUT, COPY, LIST; ${get} per 1,000 GET, HEAD; DELETE \
             free); {} runs from the directory's records of the same cells, {} from a \
             model{model} (docs/s3.md)",
            requests::describe(&e.requests),
            match requests::cost(&e.requests) {
                c if c < 0.1 => format!("{c:.4}"),
                c => format!("{c:.2}"),
            },
            e.calibrated,
            e.modeled
        ))
    }
}

/// The builds of an A/B directory's arms, from the executables its checkpoint names,
/// checked anew (an arm that cannot be checked any more is a build of unknown bytes: its
/// cells are stale, and said so).
/// A resume needs only the plan: where neither the plan nor the command line names a store
/// but the directory was run against one (`--root s3://…`), that root and its storage
/// options as the checkpoint keeps them (credentials come from the environment or the
/// credential chain, as they did; a value the checkpoint keeps hidden cannot be reused).
fn adopt_recorded_store(plan: &mut Plan, out: &Path) {
    if plan.root.is_some() || !plan.storage.is_empty() {
        return;
    }
    let Some(info) = crate::state::State::read(out).and_then(|s| s.sweep) else {
        return;
    };
    let Some(root) = info
        .root
        .as_deref()
        .filter(|r| r.contains("://") && !r.starts_with("file:"))
    else {
        return;
    };
    if info
        .storage
        .values()
        .any(|v| v.contains(bench_core::redact::HIDDEN))
    {
        return;
    }
    let storage: Vec<(String, String)> = info.storage.clone().into_iter().collect();
    plan.override_with(Some(root), &storage);
    crate::out::note(&format!(
        "{}: the store it was run against, as its checkpoint keeps it: {}",
        out.display(),
        info.store_args()
    ));
}

async fn recorded_arms(out: &Path) -> Option<[crate::plan::BuildId; 2]> {
    let paths = crate::state::State::read(out)?.sweep?.arms?;
    let mut ids = Vec::new();
    for (name, path) in [ARM_A, ARM_B].into_iter().zip(paths) {
        ids.push(match Arm::checked(Some(name), PathBuf::from(&path)).await {
            Ok(arm) => arm.id(),
            Err(e) => {
                crate::out::note(&format!(
                    "note: {} is an A/B directory whose {e}; its cells count as stale",
                    out.display()
                ));
                crate::plan::BuildId::default()
            }
        });
    }
    ids.try_into().ok()
}

/// The store root of a sweep that names none: `<out>/store`; for a shard, `store/` beside
/// its results directory, which the shards of one sweep share when their `--out`s are
/// siblings (`results/<plan>/shard-K`), each under a prefix of its own, so that they merge
/// as one store.
fn default_root(out: &Path, sharded: bool) -> PathBuf {
    match out.parent() {
        Some(parent) if sharded => parent.join("store"),
        _ => out.join("store"),
    }
}

/// A shard's share of the steps: its cells, and the goldens they need, in plan order.
/// The steps of the cells `--only` selects, and the goldens they need; none selected is an
/// error naming the patterns.
fn only_steps(
    steps: &[Step],
    only: &[bench_core::glob::Glob],
    plan_path: &Path,
    shard: Option<shard::Shard>,
) -> Result<Vec<Step>, BenchError> {
    let mine: Vec<&Cell> = (crate::plan::cells(steps).into_iter())
        .filter(|c| bench_core::glob::Glob::any(only, &c.id()))
        .collect();
    if mine.is_empty() {
        let given: Vec<&str> = only.iter().map(|g| g.0.as_str()).collect();
        return Err(BenchError::Usage(format!(
            "no cell of {}{} matches --only {}: `bench plan {}` lists the cells' ids",
            plan_path.display(),
            shard.map_or(String::new(), |s| format!(" (shard {s})")),
            given.join(" --only "),
            plan_path.display()
        )));
    }
    Ok(keep_steps(steps, &mine))
}

/// Of `steps`, the cells in `mine` and the goldens they need.
fn keep_steps(steps: &[Step], mine: &[&Cell]) -> Vec<Step> {
    steps
        .iter()
        .filter(|step| match step {
            Step::Golden(g) => mine.iter().any(|c| c.golden == *g),
            Step::Cell(c) => mine.contains(&c),
        })
        .cloned()
        .collect()
}

fn shard_steps(steps: &[Step], repetitions: u32, s: shard::Shard) -> Vec<Step> {
    let cells = crate::plan::cells(steps);
    let of = shard::partition(&cells, repetitions, s.count);
    let mine: Vec<&Cell> = cells
        .iter()
        .zip(&of)
        .filter(|&(_, &k)| k + 1 == s.index)
        .map(|(c, _)| *c)
        .collect();
    keep_steps(steps, &mine)
}

/// What `bench ab` cannot run: a plan with `[builds]` (its builds come from its command
/// line) or an offered load (it pairs closed-loop cells only).
fn refused_by_ab(plan: &Plan, plan_path: &Path) -> Result<(), BenchError> {
    if !plan.builds.is_empty() {
        return Err(BenchError::Usage(format!(
            "{} names its builds in [builds]; bench ab takes its two builds from its \
             command line: run the plan with `bench run {}` and compare its builds with \
             `bench compare <results> --variant <build> --against <build>`, or remove \
             [builds] from the plan",
            plan_path.display(),
            plan_path.display()
        )));
    }
    let open = plan
        .concurrent
        .as_ref()
        .is_some_and(|c| !c.loads.is_empty())
        || plan.mixed.as_ref().is_some_and(|m| !m.loads.is_empty());
    if open {
        return Err(BenchError::Usage(format!(
            "{} offers its cells a load (concurrent.rate or mixed.rate): bench ab pairs \
             closed-loop cells only; run the plan with `bench run` for each build and \
             compare the results with `bench compare`",
            plan_path.display()
        )));
    }
    Ok(())
}
