//! Validation: the raw TOML mirror becomes a [`Plan`] whose every value has the type and
//! range the runner needs, or one error naming the key. Every count, size and duration has
//! an upper bound, so no plan can make bench overflow a clock or a counter.

use std::collections::BTreeMap;
use std::time::Duration;

use super::cell::Arrivals;
use super::checks::{
    at_most, bounded, check_counts, check_list, dimension, id_safe, invalid, limits,
};
use super::raw::{RawConcurrent, RawContinuous, RawMixed, RawPlan, RawRun};
use super::{
    Build, Cleanup, Concurrent, Continuous, DEFAULT_CELL_TIMEOUT_SECS, DEFAULT_COMMIT_RETRIES,
    DEFAULT_MIXED_READ, Launcher, Load, Mixed, Operation, Order, Plan, RunSettings,
};
use crate::error::PlanError;

fn duration(key: &str, secs: u64) -> Result<Duration, PlanError> {
    bounded(key, secs, "must be at least 1", limits::DURATION_SECS).map(Duration::from_secs)
}

fn check_name(name: &str) -> Result<String, PlanError> {
    let trimmed = name.trim();
    let usable = !trimmed.is_empty()
        && !trimmed.starts_with('.')
        && trimmed
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if !usable {
        return Err(invalid(
            "name",
            format!(
                "`{name}` is not a usable results directory name; use letters, digits, `-`, `_` or `.`"
            ),
        ));
    }
    Ok(trimmed.to_string())
}

/// The operation `key` names (`default` where it names none); lance's cleanup only where
/// `campaign_cleans` (a `[campaign]`, which checks its `keep_versions`).
fn operation(
    raw: Option<&str>,
    key: &str,
    default: Operation,
    campaign_cleans: bool,
) -> Result<Operation, PlanError> {
    let op = match raw {
        None => return Ok(default),
        Some(s) => s
            .parse::<Operation>()
            .map_err(|m: String| invalid(key, m))?,
    };
    match op.is_maintenance() && !campaign_cleans {
        true => Err(invalid(
            key,
            format!(
                "`{op}` maintains the catalog while others use it: run it as a role's \
                 operation ([[roles]] with keep_versions or older_than_secs), beside the \
                 roles whose versions it removes, or as a fault campaign's ([campaign] with \
                 keep_versions)"
            ),
        )),
        false => Ok(op),
    }
}

/// Why bench refuses a namespace property, naming where it belongs; `None` when it may be
/// given.
fn refused(k: &str) -> Option<&'static str> {
    match k {
        "root" => Some("bench sets it: use `root` or --root"),
        "manifest_enabled" | "dir_listing_enabled" => {
            Some("bench measures the manifest catalog without directory listing and sets it")
        }
        "inline_optimization_enabled" => Some("it is `matrix.inline`"),
        _ if k.starts_with("storage.") => Some("storage options go in [storage]"),
        _ => None,
    }
}

/// A property's value as lance reads it (text); `commit_retries` must be a count, as bench
/// uses it for the cell's retry budget too.
fn property_value(key: &str, name: &str, v: toml::Value) -> Result<String, PlanError> {
    let value = match v {
        toml::Value::String(s) => s,
        toml::Value::Boolean(b) => b.to_string(),
        toml::Value::Integer(i) => i.to_string(),
        toml::Value::Float(f) => f.to_string(),
        _ => {
            return Err(invalid(
                key,
                "must be a string, a number or true/false (lance reads properties as text)",
            ));
        }
    };
    if name == "commit_retries" {
        let n: u64 = value
            .trim()
            .parse()
            .map_err(|_| invalid(key, "must be a whole number of retries, e.g. 0 or 20"))?;
        at_most(key, n, limits::COMMIT_RETRIES)?;
    }
    Ok(value)
}

/// `[namespace]`: properties as lance reads them (strings); those bench sets itself are
/// refused, each naming where it belongs.
fn namespace(raw: BTreeMap<String, toml::Value>) -> Result<BTreeMap<String, String>, PlanError> {
    let mut out = BTreeMap::new();
    for (k, v) in raw {
        let key = format!("namespace.{k}");
        if let Some(why) = refused(&k) {
            return Err(invalid(&key, format!("cannot be set here: {why}")));
        }
        let value = property_value(&key, &k, v)?;
        out.insert(k, value);
    }
    Ok(out)
}

/// `[matrix.properties]`: each key a dimension of the matrix, with the values it takes.
fn property_matrix(
    raw: Option<toml::Table>,
    fixed: &BTreeMap<String, String>,
) -> Result<Vec<(String, Vec<String>)>, PlanError> {
    let mut out = Vec::new();
    for (k, v) in raw.unwrap_or_default() {
        let key = format!("matrix.properties.{k}");
        if let Some(why) = refused(&k) {
            return Err(invalid(&key, format!("cannot be set here: {why}")));
        }
        if fixed.contains_key(&k) {
            return Err(invalid(
                &key,
                format!(
                    "is also set in [namespace] ({k} = {:?}); give it in one place: in \
                     [namespace] for every cell, or here as a dimension",
                    fixed[&k]
                ),
            ));
        }
        if !id_safe(&k) {
            return Err(invalid(
                &key,
                "names its cells, so use letters, digits, `-`, `_` or `.`",
            ));
        }
        let values = dimension(&key, v, "property", "[namespace]", |x| {
            property_value(&key, &k, x)
        })?;
        out.push((k, values));
    }
    Ok(out)
}

/// `[builds]` and `matrix.builds`: the worker builds every cell runs under, in the order
/// `matrix.builds` lists them (every build of `[builds]`, in the order written, without it).
fn builds(table: toml::Table, listed: Option<Vec<String>>) -> Result<Vec<Build>, PlanError> {
    let mut known = Vec::new();
    for (name, v) in table {
        let key = format!("builds.{name}");
        if !id_safe(&name) {
            return Err(invalid(
                &key,
                "names its cells, so use letters, digits, `-`, `_` or `.`",
            ));
        }
        let toml::Value::String(path) = v else {
            return Err(invalid(
                &key,
                "must be the path of a bench executable (or \"bench\" for this one)",
            ));
        };
        if path.trim().is_empty() {
            return Err(invalid(
                &key,
                "is empty; give the path of a bench executable (or \"bench\" for this one)",
            ));
        }
        known.push(Build {
            name,
            path: path.trim().to_string(),
            id: None,
        });
    }
    let Some(listed) = listed else {
        return Ok(known);
    };
    check_list("matrix.builds", &listed)?;
    if known.is_empty() {
        return Err(invalid(
            "matrix.builds",
            "names builds, but the plan has no [builds] table saying where they are; add one, \
             e.g. [builds]\nmain = \"bench\"\ncow = \"../bench-cow/target/release/bench\"",
        ));
    }
    listed
        .into_iter()
        .map(|n| {
            known.iter().find(|b| b.name == n).cloned().ok_or_else(|| {
                let names: Vec<&str> = known.iter().map(|b| b.name.as_str()).collect();
                invalid(
                    "matrix.builds",
                    format!(
                        "names `{n}`, which [builds] does not define (it has {})",
                        names.join(", ")
                    ),
                )
            })
        })
        .collect()
}

fn concurrent(c: RawConcurrent) -> Result<Concurrent, PlanError> {
    check_counts(
        "concurrent.concurrency",
        &c.concurrency,
        "every concurrency must be at least 1 writer process",
        limits::WORKERS,
    )?;
    if c.duration_secs.is_none() && c.operations.is_none() {
        return Err(invalid(
            "concurrent",
            "says neither how long nor how many commits: give `duration_secs` (each writer \
             commits until then), `operations` (the cell ends after that many successful \
             commits across its writers), or both",
        ));
    }
    let operations = c
        .operations
        .map(|n| {
            bounded(
                "concurrent.operations",
                n,
                "must be at least 1 commit",
                limits::OPERATIONS,
            )
        })
        .transpose()?;
    let loads = loads(
        "concurrent",
        c.rate,
        c.rates.as_deref(),
        c.arrivals.as_deref(),
    )?;
    Ok(Concurrent {
        concurrency: c.concurrency,
        duration: c
            .duration_secs
            .map(|d| duration("concurrent.duration_secs", d))
            .transpose()?,
        operations,
        loads,
    })
}

/// `<section>.rate` or `<section>.rates` with `<section>.arrivals`: the offered loads of
/// open-loop cells, in the order written (none: closed loop).
fn loads(
    section: &str,
    rate: Option<f64>,
    rates: Option<&[f64]>,
    arrivals: Option<&str>,
) -> Result<Vec<Load>, PlanError> {
    let (one, many, spaced) = (
        format!("{section}.rate"),
        format!("{section}.rates"),
        format!("{section}.arrivals"),
    );
    let (key, rates) = match (rate, rates) {
        (Some(_), Some(_)) => {
            return Err(invalid(
                &many,
                format!("and `{one}` both set: give one rate as `rate`, or several as `rates`"),
            ));
        }
        (Some(r), None) => (one.as_str(), vec![r]),
        (None, Some(rs)) => (many.as_str(), rs.to_vec()),
        (None, None) => {
            return match arrivals {
                Some(_) => Err(invalid(
                    &spaced,
                    format!(
                        "spaces an offered load's operations, and no `{one}` is set: give a \
                         rate (operations a second across the writers), or remove it"
                    ),
                )),
                None => Ok(Vec::new()),
            };
        }
    };
    let arrivals = match arrivals {
        None => Arrivals::Uniform,
        Some(a) => Arrivals::parse(a).ok_or_else(|| {
            invalid(
                &spaced,
                format!("must be \"uniform\" or \"poisson\"; got \"{a}\""),
            )
        })?,
    };
    if rates.is_empty() {
        return Err(invalid(key, "is empty: give at least one rate"));
    }
    let mut loads: Vec<Load> = Vec::new();
    for r in rates {
        if !(r.is_finite() && (0.001..=limits::RATE).contains(&r)) {
            return Err(invalid(
                key,
                format!(
                    "must be operations a second from 0.001 to {}; got {r}",
                    limits::RATE
                ),
            ));
        }
        let load = Load {
            milli_per_sec: (r * 1000.0).round() as u64,
            arrivals,
        };
        if loads.contains(&load) {
            return Err(invalid(key, format!("lists {} twice", load.label())));
        }
        loads.push(load);
    }
    Ok(loads)
}

fn mixed(m: RawMixed, operation: Operation) -> Result<Mixed, PlanError> {
    check_counts(
        "mixed.clients",
        &m.clients,
        "every client count must be at least 1 process",
        limits::WORKERS,
    )?;
    bounded(
        "mixed.reads_per_write",
        m.reads_per_write,
        "must be at least 1; for writes only use [concurrent]",
        limits::READS_PER_WRITE,
    )?;
    let duration = duration("mixed.duration_secs", m.duration_secs)?;
    let read_operation = self::operation(
        m.read_operation.as_deref(),
        "mixed.read_operation",
        DEFAULT_MIXED_READ,
        false,
    )?;
    if read_operation.is_write() {
        return Err(invalid(
            "mixed.read_operation",
            format!("`{read_operation}` is a write; name a warm- or cold-read operation"),
        ));
    }
    if !operation.is_write() {
        return Err(invalid(
            "operation",
            format!(
                "`{operation}` is a read, but [mixed] commits the plan's operation; \
                 use a write- operation (the reads are mixed.read_operation)"
            ),
        ));
    }
    let loads = loads("mixed", m.rate, m.rates.as_deref(), m.arrivals.as_deref())?;
    Ok(Mixed {
        clients: m.clients,
        reads_per_write: m.reads_per_write,
        duration,
        read_operation,
        loads,
    })
}

fn cleanup(raw: Option<&str>, keep_runs: bool) -> Result<Cleanup, PlanError> {
    match raw {
        None if keep_runs => Ok(Cleanup::None),
        None => Ok(Cleanup::Runs),
        Some("none") => Ok(Cleanup::None),
        Some(c @ ("runs" | "all")) if keep_runs => Err(invalid(
            "run.cleanup",
            format!("`{c}` contradicts `run.keep_runs = true`; use \"none\" or drop keep_runs"),
        )),
        Some("runs") => Ok(Cleanup::Runs),
        Some("all") => Ok(Cleanup::All),
        Some(other) => Err(invalid(
            "run.cleanup",
            format!("unknown value `{other}`; expected \"runs\", \"all\" or \"none\""),
        )),
    }
}

fn order(raw: Option<&str>) -> Result<Order, PlanError> {
    match raw {
        None | Some("sequential") => Ok(Order::Sequential),
        Some("interleaved") => Ok(Order::Interleaved),
        Some(other) => Err(invalid(
            "run.order",
            format!("unknown value `{other}`; expected \"sequential\" or \"interleaved\""),
        )),
    }
}

fn run_settings(run: RawRun) -> Result<RunSettings, PlanError> {
    let timeout = bounded(
        "run.cell_timeout_secs",
        run.cell_timeout_secs.unwrap_or(DEFAULT_CELL_TIMEOUT_SECS),
        "must be at least 1",
        limits::CELL_TIMEOUT_SECS,
    )?;
    let commit_retries = at_most(
        "run.commit_retries",
        run.commit_retries.unwrap_or(DEFAULT_COMMIT_RETRIES).into(),
        limits::COMMIT_RETRIES,
    )? as u32;
    let warmup_operations = at_most(
        "run.warmup_operations",
        run.warmup_operations.unwrap_or(0),
        limits::WARMUP_OPERATIONS,
    )?;
    let repetitions = bounded(
        "run.repetitions",
        run.repetitions.unwrap_or(1).into(),
        "must be at least 1",
        limits::REPETITIONS,
    )? as u32;
    let keep_runs = run.keep_runs.unwrap_or(false);
    let copy_parallelism = bounded(
        "run.copy_parallelism",
        run.copy_parallelism
            .unwrap_or(super::DEFAULT_COPY_PARALLELISM)
            .into(),
        "must be at least 1 copy at a time",
        limits::COPY_PARALLELISM,
    )? as u32;
    let trace_operations = at_most(
        "run.trace_operations",
        run.trace_operations.unwrap_or(0).into(),
        limits::TRACE_OPERATIONS,
    )? as u32;
    let s3_shaped_local = match run.local_requests.as_deref() {
        None | Some("native") => false,
        Some("s3") => true,
        Some(other) => {
            return Err(invalid(
                "run.local_requests",
                format!(
                    "must be \"native\" (lance's own local file store, the default) or \"s3\" \
                     (local disk through the object-store API, with S3's requests); got {other:?}"
                ),
            ));
        }
    };
    let attempt_timeout_ms = run
        .attempt_timeout_secs
        .map(|t| attempt_timeout(t, timeout))
        .transpose()?;
    Ok(RunSettings {
        attempt_timeout_ms,
        copy_parallelism,
        trace_operations,
        keep_history: run.keep_history.unwrap_or(true),
        s3_shaped_local,
        cell_timeout: Duration::from_secs(timeout),
        commit_retries,
        keep_runs,
        cleanup: cleanup(run.cleanup.as_deref(), keep_runs)?,
        warmup_operations,
        repetitions,
        order: order(run.order.as_deref())?,
        launcher: run
            .launcher
            .map(|l| Launcher::parse(&l).map_err(|m| invalid("run.launcher", m)))
            .transpose()?,
    })
}

/// `run.attempt_timeout_secs` in ms: at least 1 ms, shorter than a cell may run.
fn attempt_timeout(secs: f64, cell_timeout_secs: u64) -> Result<u64, PlanError> {
    let key = "run.attempt_timeout_secs";
    if !(secs.is_finite() && secs >= 0.001) {
        return Err(invalid(
            key,
            format!("must be a time of at least 0.001 s, e.g. 30 (got {secs})"),
        ));
    }
    if secs >= cell_timeout_secs as f64 {
        return Err(invalid(
            key,
            format!(
                "is {secs} s, not shorter than `run.cell_timeout_secs` = {cell_timeout_secs} s; \
                 an attempt is a part of a cell, so make it shorter"
            ),
        ));
    }
    Ok((secs * 1000.0).round() as u64)
}

/// The plan's modes, each valid: `[continuous]`, `[concurrent]` and `[mixed]` (of the
/// plan's `operation`); a plan with none of them and no roles (`roles`) has no cells.
type Modes = (Option<Continuous>, Option<Concurrent>, Option<Mixed>);

fn modes(
    (continuous, concurrent, mixed): (
        Option<RawContinuous>,
        Option<RawConcurrent>,
        Option<RawMixed>,
    ),
    operation: Operation,
    roles: bool,
) -> Result<Modes, PlanError> {
    let continuous = match continuous {
        None => None,
        Some(c) => Some(Continuous {
            operations: bounded(
                "continuous.operations",
                c.operations,
                "must be at least 1",
                limits::OPERATIONS,
            )?,
        }),
    };
    let concurrent = concurrent.map(self::concurrent).transpose()?;
    let mixed = mixed.map(|m| self::mixed(m, operation)).transpose()?;
    if continuous.is_none() && concurrent.is_none() && mixed.is_none() && !roles {
        return Err(invalid(
            "",
            "the plan has none of the tables [continuous], [concurrent] and [mixed], nor \
             [[roles]], so it has no cells; add at least one of them",
        ));
    }
    Ok((continuous, concurrent, mixed))
}

/// `root`, where given: not empty.
fn check_root(root: Option<&str>) -> Result<(), PlanError> {
    match root {
        Some(r) if r.trim().is_empty() => Err(invalid(
            "root",
            "must not be empty; omit it to use <out>/store",
        )),
        _ => Ok(()),
    }
}

pub(super) fn validate(mut raw: RawPlan) -> Result<Plan, PlanError> {
    let name = check_name(&raw.name)?;
    check_root(raw.root.as_deref())?;
    // A campaign says what its cleanups keep (`campaign.keep_versions`), or says why not.
    let op = raw.operation.as_deref();
    let operation = operation(
        op,
        "operation",
        Operation::CreateNamespace,
        raw.campaign.is_some(),
    )?;
    let (sizes, fixtures, roles) = goldens(&mut raw)?;
    let page_size = page_size(raw.page_size, operation, raw.mixed.as_ref(), roles.as_ref())?;
    let inline = raw.matrix.inline.unwrap_or_else(|| vec![true, false]);
    check_list("matrix.inline", &inline)?;

    let (continuous, concurrent, mixed) = modes(
        (
            raw.continuous.take(),
            raw.concurrent.take(),
            raw.mixed.take(),
        ),
        operation,
        roles.is_some(),
    )?;
    let read = mixed.as_ref().map(|m| m.read_operation);
    let table = super::table::settings(
        raw.table.and_then(|t| t.rows_per_commit),
        raw.matrix.table_versions,
        &[Some(operation), read]
            .into_iter()
            .flatten()
            .collect::<Vec<_>>(),
    )?;
    check_storage(&raw.storage)?;
    let run = run_settings(raw.run)?;
    let durations = [
        concurrent
            .as_ref()
            .and_then(|c| c.duration.map(|d| ("concurrent", d))),
        mixed.as_ref().map(|m| ("mixed", m.duration)),
        (roles.as_ref()).map(|r| ("workload", Duration::from_secs(r.workload.duration_secs))),
    ];
    check_timeout(&run, durations.into_iter().flatten())?;
    let mut namespace = namespace(raw.namespace)?;
    let property_matrix = property_matrix(raw.matrix.properties, &namespace)?;
    super::table::tracking(operation, &mut namespace, &property_matrix)?;
    let env = super::env::fixed(raw.env)?;
    let mut env_matrix = super::env::matrix(raw.matrix.env, &env, &property_matrix)?;
    let builds = builds(raw.builds, raw.matrix.builds)?;
    let (transports, rest) = super::transport::settings(super::transport::RawTransport::of(
        raw.matrix.transport,
        raw.matrix.servers,
        raw.rest.unwrap_or_default(),
        run.launcher.is_some(),
    ))?;
    let campaign = super::campaign::settings(
        raw.campaign,
        super::campaign::Around {
            operation,
            continuous: continuous.as_ref(),
            other_modes: concurrent.is_some() || mixed.is_some() || roles.is_some(),
            launcher: run.launcher.is_some(),
            transports: &transports,
        },
        &mut env_matrix,
    )?;
    let nemesis = super::nemesis::settings(raw.nemesis, campaign.is_some())?;
    let plan = Plan {
        name,
        namespace,
        property_matrix,
        env,
        env_matrix,
        table,
        builds,
        arms: None,
        root: raw.root.map(|r| r.trim().to_string()),
        operation,
        page_size,
        sizes,
        fixtures,
        roles,
        inline,
        continuous,
        concurrent,
        mixed,
        storage: raw.storage,
        run,
        transports,
        rest,
        campaign,
        nemesis,
    };
    whole(&plan)?;
    Ok(plan)
}

/// The checks of the plan as a whole, once each part is valid.
fn whole(plan: &Plan) -> Result<(), PlanError> {
    unique_ids(plan)?;
    super::transport::check_external(plan)?;
    check_empty(plan)?;
    super::removal::check(plan)?;
    super::role::check_maintenance(plan)
}

/// `page_size`: entries a page of a listing, for a plan that lists (its operation or its
/// mixed reads).
fn page_size(
    raw: Option<u64>,
    operation: Operation,
    mixed: Option<&super::raw::RawMixed>,
    roles: Option<&super::Roles>,
) -> Result<Option<u32>, PlanError> {
    let Some(n) = raw else { return Ok(None) };
    let n = bounded(
        "page_size",
        n,
        "must be at least 1 entry a page",
        limits::PAGE_SIZE,
    )?;
    let read = mixed.and_then(|m| m.read_operation.as_deref());
    let role_lists = roles
        .is_some_and(|r| (r.roles.iter()).any(|role| role.mix.iter().any(|(op, _)| op.lists())));
    let lists = operation.lists()
        || read.is_some_and(|r| r.parse().is_ok_and(Operation::lists))
        || role_lists;
    if !lists {
        return Err(invalid(
            "page_size",
            format!(
                "pages only listings, and this plan lists nothing (`{operation}`); remove it \
                 or measure warm-read-list-tables, warm-read-list-namespaces or their cold forms"
            ),
        ));
    }
    Ok(Some(n as u32))
}

/// What the goldens hold (flat sizes, or trees) and the plan's roles, taken from `raw`.
type Goldens = (Vec<u64>, Vec<super::Fixture>, Option<super::Roles>);

fn goldens(raw: &mut RawPlan) -> Result<Goldens, PlanError> {
    let fixtures = match raw.fixture.take() {
        Some(f) => super::fixture::fixtures(f)?,
        None => Vec::new(),
    };
    let sizes = sizes(raw.matrix.sizes.take(), !fixtures.is_empty())?;
    let (roles, workload) = (std::mem::take(&mut raw.roles), raw.workload.take());
    if !roles.is_empty() && raw.run.launcher.is_some() {
        return Err(invalid("run.launcher", super::LAUNCHER_WITH_ROLES));
    }
    let targets = raw.matrix.targets.take();
    let roles = super::role::roles(roles, workload, targets, fixtures.first())?;
    Ok((sizes, fixtures, roles))
}

/// `matrix.sizes`: required without a `[fixture]` (whose tree says the goldens' rows), and
/// refused with one.
fn sizes(raw: Option<Vec<u64>>, fixture: bool) -> Result<Vec<u64>, PlanError> {
    match (raw, fixture) {
        (Some(_), true) => Err(invalid(
            "matrix.sizes",
            "and [fixture] both say what the goldens hold; a tree's rows are its namespaces \
             and tables, so remove matrix.sizes (or [fixture], for flat goldens)",
        )),
        (None, true) => Ok(Vec::new()),
        (None, false) => Err(invalid(
            "matrix.sizes",
            "is missing: list the rows already in __manifest of each golden, e.g. \
             sizes = [1000, 10000], or describe a tree in [fixture]",
        )),
        (Some(sizes), false) => {
            check_sizes(&sizes)?;
            Ok(sizes)
        }
    }
}

/// `matrix.sizes`: each within the limit; 0 is a catalog that does not exist yet (no
/// `__manifest`: [`check_empty`] says what may run on it), or for an external server's
/// catalog the least it holds.
fn check_sizes(sizes: &[u64]) -> Result<(), PlanError> {
    check_list("matrix.sizes", sizes)?;
    for &s in sizes.iter().filter(|&&s| s > 0) {
        bounded("matrix.sizes", s, "must be at least 0", limits::SIZE)?;
    }
    Ok(())
}

/// A size of 0 starts its cells on a root with no `__manifest`: every client opens its
/// catalog there before the first commit. What runs on it must not need the golden's
/// entries (reads of one, removals) or its shared table.
fn check_empty(plan: &Plan) -> Result<(), PlanError> {
    let external = plan.transports.contains(&super::Transport::External);
    if external || !plan.sizes.contains(&0) {
        return Ok(());
    }
    let mut ops: Vec<(String, Operation)> = Vec::new();
    if plan.continuous.is_some() || plan.concurrent.is_some() || plan.mixed.is_some() {
        ops.push(("operation".into(), plan.operation));
    }
    ops.extend((plan.mixed.as_ref()).map(|m| ("mixed.read_operation".into(), m.read_operation)));
    for (i, r) in plan.roles.iter().flat_map(|r| r.roles.iter().enumerate()) {
        ops.extend(r.mix.iter().map(|&(op, _)| (format!("roles[{i}].mix"), op)));
    }
    for (key, op) in ops {
        let needs = match op.describe().names {
            _ if op.on_table() => Some("the shared table"),
            super::Names::ReadsGolden(_) => Some("one of the golden's entries to read"),
            super::Names::RemovesGolden(_) => Some("one of the golden's entries to remove"),
            _ => None,
        };
        if let Some(what) = needs {
            return Err(invalid(
                &key,
                format!(
                    "`{op}` needs {what}, and matrix.sizes = [0] starts on a root with no \
                     __manifest; give it sizes of at least 1, or run it in a plan of its own"
                ),
            ));
        }
    }
    Ok(())
}

/// `[storage]`: no empty key, no empty value.
fn check_storage(storage: &BTreeMap<String, String>) -> Result<(), PlanError> {
    for (k, v) in storage {
        if k.trim().is_empty() {
            return Err(invalid("storage", "has an empty key"));
        }
        if v.is_empty() {
            return Err(invalid(&format!("storage.{k}"), "must not be empty"));
        }
    }
    Ok(())
}

/// A cell timeout longer than every duration a table gives (else every such cell times out).
fn check_timeout(
    run: &RunSettings,
    durations: impl Iterator<Item = (&'static str, std::time::Duration)>,
) -> Result<(), PlanError> {
    for (table, d) in durations {
        if run.cell_timeout <= d {
            return Err(invalid(
                "run.cell_timeout_secs",
                format!(
                    "is {} s, not longer than `{table}.duration_secs` = {} s, so every such \
                     cell would time out; set it well above, e.g. {}",
                    run.cell_timeout.as_secs(),
                    d.as_secs(),
                    d.as_secs() * 2 + 60
                ),
            ));
        }
    }
    Ok(())
}

/// Names of builds and property values are restricted, but two cells could still spell the
/// same id (`a_b` = `c` beside `a` = `b_c`): refuse that rather than mix them.
fn unique_ids(plan: &Plan) -> Result<(), PlanError> {
    let steps = super::expand(plan, "");
    let mut seen = std::collections::BTreeSet::new();
    match super::cells(&steps)
        .iter()
        .map(|c| c.id())
        .find(|id| !seen.insert(id.clone()))
    {
        Some(id) => Err(invalid(
            "matrix.properties",
            format!("two cells would both be named `{id}`; rename a property or a value"),
        )),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BASE: &str = "name = 'x'\n[matrix]\nsizes = [1]\n[continuous]\noperations = 1\n";

    /// Each bad plan, the key its message must name ("" for none) and a phrase it must hold.
    fn bad_plans() -> Vec<(String, &'static str, &'static str)> {
        let base = BASE;
        let mixed = |extra: &str| format!("{base}[mixed]\n{extra}");
        let run = |extra: &str| format!("{base}[run]\n{extra}\n");
        let conc =
            |extra: &str| format!("name = 'x'\n[matrix]\nsizes = [1]\n[concurrent]\n{extra}\n");
        vec![
            ("name = 'x'\n[matrix]\nsizez = [1]\n".into(), "sizez", "unknown field"),
            ("name = 'x'\nfoo = 1\n[matrix]\nsizes=[1]\n".into(), "foo", "unknown field"),
            ("name = 'x'\n[matrix]\nsizes = 'many'\n".into(), "matrix.sizes", "must be a list, e.g. [1000, 10000]"),
            ("name = 'x'\n[matrix]\nsizes = [-1]\n".into(), "matrix.sizes[0]", "each value must be a whole number of rows"),
            ("name = 'x'\n[matrix]\nsizes = []\n[continuous]\noperations=1\n".into(), "matrix.sizes", "at least one"),
            ("name = 'x'\n[matrix]\nsizes = [5, 5]\n[continuous]\noperations=1\n".into(), "matrix.sizes", "twice"),
            ("name = 'x'\noperation = 'warm-read-describe-table'\n[matrix]\nsizes = [0, 10]\n[continuous]\noperations=1\n".into(), "operation", "one of the golden's entries to read"),
            ("name = 'x'\noperation = 'write-drop-table'\n[matrix]\nsizes = [0]\n[continuous]\noperations=1\n".into(), "operation", "starts on a root with no"),
            ("name = 'x'\n[matrix]\nsizes = [0]\n[mixed]\nclients = [1]\nreads_per_write = 1\nduration_secs = 1\n".into(), "mixed.read_operation", "entries to read"),
            ("name = 'x'\n[matrix]\nsizes = [0]\n[workload]\nduration_secs = 1\n[[roles]]\nname = 'w'\nclients = 1\n[roles.mix]\n'write-declare-table' = 1\n[[roles]]\nname = 'r'\nclients = 1\n[roles.mix]\n'warm-read-table-exists' = 1\n".into(), "roles[1].mix", "entries to read"),
            ("name = 'x'\n[matrix]\nsizes = [1]\ninline = []\n[continuous]\noperations=1\n".into(), "matrix.inline", "at least one"),
            ("name = 'x'\n[matrix]\nsizes = [1]\ninline = [true, true]\n[continuous]\noperations=1\n".into(), "matrix.inline", "twice"),
            ("name = 'x'\n[matrix]\nsizes = [1]\n[continuous]\noperations = 0\n".into(), "continuous.operations", "at least 1"),
            (format!("{base}[table]\nrows_per_commit = 5\n"), "table.rows_per_commit", "this plan has none"),
            (BASE.replace("sizes = [1]", "sizes = [1]\ntable_versions = [10]"), "matrix.table_versions", "this plan has none"),
            (format!("operation = 'write-table-append'\n{base}[table]\nrows_per_commit = 0\n"), "table.rows_per_commit", "at least 1 row"),
            (format!("operation = 'write-table-append'\n{}", BASE.replace("sizes = [1]", "sizes = [1]\ntable_versions = [0]")), "matrix.table_versions", "at least 1 version"),
            (format!("operation = 'write-table-append'\n{base}[table]\nrows = 5\n"), "rows", "unknown field"),
            (format!("operation = 'write-create-table-version'\n{base}[namespace]\ntable_version_tracking_enabled = false\n"), "namespace.table_version_tracking_enabled", "need it on"),
            (format!("operation = 'write-create-table-version'\n{base}[matrix.properties]\ntable_version_tracking_enabled = [true, false]\n"), "matrix.properties.table_version_tracking_enabled", "need it on"),
            (format!("{base}[env]\nBENCH_STORAGE_OPTIONS = '{{}}'\n"), "env.BENCH_STORAGE_OPTIONS", "bench's own"),
            (format!("{base}[env]\n'1X' = '1'\n"), "env.1X", "not a variable name"),
            (format!("{base}[env]\nAWS_SECRET_ACCESS_KEY = 'k'\n"), "env.AWS_SECRET_ACCESS_KEY", "looks like a secret"),
            (format!("{base}[env]\nX = [1]\n"), "env.X", "a string, a number or true/false"),
            (format!("{base}[matrix.env]\nX = '1'\n"), "matrix.env.X", "must be a list"),
            (format!("{base}[matrix.env]\nX = ['a b']\n"), "matrix.env.X", "value `a b` names its cells"),
            (format!("{base}[matrix.env]\nX = ['1', '1']\n"), "matrix.env.X", "twice"),
            (format!("{base}[env]\nX = 1\n[matrix.env]\nX = ['1']\n"), "matrix.env.X", "also set in [env]"),
            (format!("{base}[matrix.properties]\nX = ['1']\n[matrix.env]\nX = ['1']\n"), "matrix.env.X", "also a dimension of [matrix.properties]"),
            (conc("concurrency = [0]\nduration_secs = 1"), "concurrent.concurrency", "at least 1"),
            (conc("concurrency = []\nduration_secs = 1"), "concurrent.concurrency", "at least one"),
            (conc("concurrency = [2,2]\nduration_secs = 1"), "concurrent.concurrency", "twice"),
            (conc("concurrency = [2]\nduration_secs = 0"), "concurrent.duration_secs", "at least 1"),
            (conc("concurrency = [2]"), "concurrent", "neither how long nor how many commits"),
            (conc("concurrency = [2]\noperations = 0"), "concurrent.operations", "at least 1"),
            (conc("concurrency = [2]\noperations = 10000001"), "concurrent.operations", "at most 10000000"),
            ("name = 'x'\n[matrix]\nsizes = [1]\n".into(), "", "none of the tables [continuous], [concurrent] and [mixed]"),
            (mixed("clients = [2]\nduration_secs = 1\n"), "mixed", "missing field `reads_per_write`"),
            (mixed("clients = [0]\nreads_per_write = 3\nduration_secs = 1\n"), "mixed.clients", "at least 1"),
            (mixed("clients = [2]\nreads_per_write = 0\nduration_secs = 1\n"), "mixed.reads_per_write", "at least 1"),
            (mixed("clients = [2]\nreads_per_write = 3\nduration_secs = 0\n"), "mixed.duration_secs", "at least 1"),
            (mixed("clients = [2]\nreads_per_write = 3\nduration_secs = 1\nread_operation = 'write-create-table'\n"), "mixed.read_operation", "is a write"),
            (mixed("clients = [2]\nreads_per_write = 3\nduration_secs = 1\nread_operation = 'list'\n"), "mixed.read_operation", "unknown operation"),
            ("name = 'x'\noperation = 'warm-read-list-tables'\n[matrix]\nsizes = [1]\n[mixed]\nclients = [2]\nreads_per_write = 3\nduration_secs = 1\n".into(), "operation", "is a read"),
            ("name = 'x'\noperation = 'write-truncate-table'\n[matrix]\nsizes = [1]\n[continuous]\noperations=1\n".into(), "operation", "unknown operation"),
            ("name = 'a/b'\n[matrix]\nsizes = [1]\n[continuous]\noperations=1\n".into(), "name", "results directory name"),
            ("[matrix]\nsizes = [1]\n[continuous]\noperations=1\n".into(), "", "missing field `name`"),
            (run("cell_timeout_secs = 0"), "run.cell_timeout_secs", "at least 1"),
            (run("keep_runs = 'yes'"), "run.keep_runs", "must be true or false"),
            (run("retries = 3"), "run.retries", "unknown field"),
            (run("repetitions = 0"), "run.repetitions", "at least 1"),
            (run("cleanup = 'some'"), "run.cleanup", "unknown value"),
            (run("order = 'random'"), "run.order", "\"interleaved\""),
            (run("keep_runs = true\ncleanup = 'all'"), "run.cleanup", "contradicts"),
            (format!("{base}[storage]\naws_region = 3\n"), "storage.aws_region", "must be a string in quotes"),
            (conc("concurrency = [2]\nduration_secs = '4s'"), "concurrent.duration_secs", "must be a whole number of seconds, e.g. 10 (found the string \"4s\")"),
            (conc("concurrency = [2]\nduration_secs = 30\n[run]\ncell_timeout_secs = 30"), "run.cell_timeout_secs", "not longer than `concurrent.duration_secs` = 30 s"),
            (mixed("clients = [2]\nreads_per_write = 3\nduration_secs = 1300\n"), "run.cell_timeout_secs", "is 1200 s, not longer than `mixed.duration_secs`"),
            (format!("{base}[storage]\naws_region = ''\n"), "storage.aws_region", "must not be empty"),
            // Upper bounds: each names the key and the limit.
            (run("cell_timeout_secs = 9223372036854775807"), "run.cell_timeout_secs", "at most 604800"),
            (conc("concurrency = [2]\nduration_secs = 18446744073709551615"), "concurrent.duration_secs", "at most 86400"),
            (mixed("clients = [2]\nreads_per_write = 3\nduration_secs = 86401\n"), "mixed.duration_secs", "at most 86400"),
            (mixed("clients = [2]\nreads_per_write = 1000001\nduration_secs = 1\n"), "mixed.reads_per_write", "at most 1000000"),
            (mixed("clients = [10001]\nreads_per_write = 3\nduration_secs = 1\n"), "mixed.clients", "at most 10000"),
            (conc("concurrency = [2, 4000000000]\nduration_secs = 1"), "concurrent.concurrency", "at most 10000"),
            ("name = 'x'\n[matrix]\nsizes = [1000000001]\n[continuous]\noperations=1\n".into(), "matrix.sizes", "at most 1000000000"),
            ("name = 'x'\n[matrix]\nsizes = [1]\n[continuous]\noperations = 10000001\n".into(), "continuous.operations", "at most 10000000"),
            (run("commit_retries = 4294967295"), "run.commit_retries", "at most 10000"),
            (run("warmup_operations = 1000001"), "run.warmup_operations", "at most 1000000"),
            (run("repetitions = 1001"), "run.repetitions", "at most 1000"),
            (run("copy_parallelism = 0"), "run.copy_parallelism", "at least 1"),
            (run("copy_parallelism = 1001"), "run.copy_parallelism", "at most 1000"),
            (run("trace_operations = 1001"), "run.trace_operations", "at most 1000"),
            (run("local_requests = \"s\""), "run.local_requests", "\"native\""),
            (run("attempt_timeout_secs = 0"), "run.attempt_timeout_secs", "at least 0.001 s"),
            (run("attempt_timeout_secs = 9999999"), "run.attempt_timeout_secs", "not shorter than `run.cell_timeout_secs`"),
            (ns("root = '/elsewhere'"), "namespace.root", "use `root` or --root"),
            (ns("manifest_enabled = false"), "namespace.manifest_enabled", "cannot be set here"),
            (ns("dir_listing_enabled = true"), "namespace.dir_listing_enabled", "cannot be set here"),
            (ns("inline_optimization_enabled = true"), "namespace.inline_optimization_enabled", "`matrix.inline`"),
            (ns("'storage.region' = 'x'"), "namespace.storage.region", "go in [storage]"),
            (ns("commit_retries = 'many'"), "namespace.commit_retries", "whole number of retries"),
            (ns("commit_retries = 10001"), "namespace.commit_retries", "at most 10000"),
            (ns("x = [1]"), "namespace.x", "a string, a number or true/false"),
            (props("root = ['a']"), "matrix.properties.root", "use `root` or --root"),
            (props("inline_optimization_enabled = [true]"), "matrix.properties.inline_optimization_enabled", "`matrix.inline`"),
            (props("shards = 1000"), "matrix.properties.shards", "must be a list"),
            (props("shards = []"), "matrix.properties.shards", "at least one"),
            (props("shards = [1, 1]"), "matrix.properties.shards", "twice"),
            (props("shards = ['a b']"), "matrix.properties.shards", "value `a b` names its cells"),
            (props("commit_retries = [0, 'x']"), "matrix.properties.commit_retries", "whole number"),
            (format!("{}[namespace]\nshards = 1\n", props("shards = [1, 2]")), "matrix.properties.shards", "also set in [namespace]"),
            (builds("[builds]\nmain = 'bench'\n", "['cow']"), "matrix.builds", "does not define (it has main)"),
            (builds("", "['cow']"), "matrix.builds", "no [builds] table"),
            (builds("[builds]\nmain = 'bench'\n", "['main', 'main']"), "matrix.builds", "twice"),
            (builds("[builds]\n'a b' = 'bench'\n", "['a b']"), "builds.a b", "names its cells"),
            (builds("[builds]\nmain = 3\n", "['main']"), "builds.main", "path of a bench executable"),
            (builds("[builds]\nmain = ' '\n", "['main']"), "builds.main", "is empty"),
        ]
    }

    /// `[matrix.properties]` with these lines.
    fn props(lines: &str) -> String {
        BASE.replace(
            "[continuous]",
            &format!("[matrix.properties]\n{lines}\n[continuous]"),
        )
    }

    /// A plan with these `[builds]` lines and `matrix.builds`.
    fn builds(table: &str, listed: &str) -> String {
        BASE.replace("sizes = [1]", &format!("sizes = [1]\nbuilds = {listed}")) + table
    }

    /// Builds and property values are dimensions: one cell per variant, side by side
    /// (builds outermost, in `matrix.builds` order, properties in the order written), ids
    /// and names that say the variant, keys that differ by build and by value.
    #[test]
    fn builds_and_properties_expand_into_named_variants() {
        let text = BASE.replace(
            "sizes = [1]",
            "sizes = [1]\ninline = [false]\nbuilds = ['cow', 'main']\n[matrix.properties]\nz = [1, 2]\ncommit_retries = [0]",
        ) + "[builds]\nmain = 'bench'\ncow = '../cow/bench'\nother = 'x'\n";
        let mut p = Plan::parse(&text).unwrap();
        let names: Vec<&str> = p.builds.iter().map(|b| b.name.as_str()).collect();
        assert_eq!(names, ["cow", "main"]);
        assert_eq!(p.property_matrix[0].0, "z", "the order written");
        let cells = |p: &Plan| -> Vec<crate::plan::Cell> {
            crate::plan::cells(&crate::plan::expand(p, "/r"))
                .into_iter()
                .cloned()
                .collect()
        };
        let ids: Vec<String> = cells(&p).iter().map(|c| c.id()).collect();
        assert_eq!(
            ids,
            [
                "cont_inline_false_rows_1_cow_z-1_commit_retries-0",
                "cont_inline_false_rows_1_cow_z-2_commit_retries-0",
                "cont_inline_false_rows_1_main_z-1_commit_retries-0",
                "cont_inline_false_rows_1_main_z-2_commit_retries-0",
            ]
        );
        let c = &cells(&p)[1];
        assert_eq!(c.variant_name(), "cow/no_index/z=2/commit_retries=0");
        assert_eq!(c.shape_id(), "cont_inline_false_rows_1");
        assert_eq!(c.commit_retries, 0);
        assert_eq!(c.properties["z"], "2");
        let keys: Vec<String> = cells(&p).iter().map(|c| c.key()).collect();
        let mut unique = keys.clone();
        unique.dedup();
        assert_eq!(unique.len(), 4);
        // What a build's worker-info says is in its cells' keys, and only in theirs.
        p.builds[0].id = Some(crate::plan::BuildId {
            identity: "bench 2 with lance 15".into(),
            digest: String::new(),
        });
        let after: Vec<String> = cells(&p).iter().map(|c| c.key()).collect();
        assert_ne!(after[0], keys[0]);
        assert_eq!(after[2..], keys[2..]);
        // So is the digest of its file: a rebuild with the same versions runs them again.
        p.builds[0].id.as_mut().unwrap().digest = "ab".repeat(32);
        let rebuilt: Vec<String> = cells(&p).iter().map(|c| c.key()).collect();
        assert_ne!(rebuilt[0], after[0]);
        assert_eq!(rebuilt[2..], keys[2..]);
        // bench ab's arms: both in every cell's key.
        let plain = rebuilt.clone();
        let arm = |d: &str| crate::plan::BuildId {
            identity: "bench 0.1.0".into(),
            digest: d.into(),
        };
        p.arms = Some([arm("aa"), arm("bb")]);
        let ab: Vec<String> = cells(&p).iter().map(|c| c.key()).collect();
        p.arms = Some([arm("aa"), arm("cc")]);
        let rebuilt_b: Vec<String> = cells(&p).iter().map(|c| c.key()).collect();
        for i in 0..4 {
            assert!(ab[i] != plain[i] && rebuilt_b[i] != ab[i], "cell {i}");
        }
        // Without matrix.builds, every build of [builds] in the order written.
        let all = Plan::parse(&text.replace("builds = ['cow', 'main']\n", "")).unwrap();
        let names: Vec<&str> = all.builds.iter().map(|b| b.name.as_str()).collect();
        assert_eq!(names, ["main", "cow", "other"]);
        assert_eq!(all.unread_namespace_keys(), ["z"]);
    }

    fn ns(extra: &str) -> String {
        format!("{BASE}[namespace]\n{extra}\n")
    }

    /// Properties reach the plan as text, the retry budget from `[namespace]` wins, and the
    /// keys the pinned lance does not read are named.
    #[test]
    fn create_table_version_cells_have_the_namespace_manage_versions() {
        let p = Plan::parse(&format!("operation = 'write-create-table-version'\n{BASE}")).unwrap();
        let cells = crate::plan::cells(&crate::plan::expand(&p, "/r"))
            .into_iter()
            .cloned()
            .collect::<Vec<_>>();
        assert_eq!(
            cells[0].properties["table_version_tracking_enabled"],
            "true"
        );
        assert_eq!(cells[0].rows_per_commit, Some(10));
        assert_eq!(cells[0].golden.table_versions, Some(1));
    }

    #[test]
    fn namespace_properties_are_text_and_unread_keys_are_named() {
        let p = Plan::parse(&ns(
            "commit_retries = 0\ntable_version_tracking_enabled = true\n'credential_vendor.enabled' = 'false'\nmanifest_shards = 1000",
        ))
        .unwrap();
        assert_eq!(p.namespace["commit_retries"], "0");
        assert_eq!(p.namespace["table_version_tracking_enabled"], "true");
        assert_eq!(p.commit_retries(), 0);
        assert_eq!(p.unread_namespace_keys(), ["manifest_shards"]);
        let cells = crate::plan::cells(&crate::plan::expand(&p, "/r"))
            .into_iter()
            .cloned()
            .collect::<Vec<_>>();
        assert!(cells.iter().all(|c| c.commit_retries == 0));
        // The properties are part of every cell's key; without them, keys are as before.
        let plain = Plan::parse(BASE).unwrap();
        let key = |p: &Plan| crate::plan::cells(&crate::plan::expand(p, "/r"))[0].key();
        assert_ne!(key(&p), key(&plain));
        assert_eq!(plain.commit_retries(), DEFAULT_COMMIT_RETRIES);
    }

    #[test]
    fn bad_plans_name_the_key() {
        for (text, key, needle) in bad_plans() {
            let err = Plan::parse(&text).expect_err(&text).to_string();
            assert!(
                err.contains(needle),
                "plan {text:?}: message {err:?} lacks {needle:?}"
            );
            // One line of prose: no run of spaces left by a broken string continuation.
            assert!(!err.contains("  "), "plan {text:?}: message {err:?}");
            if !key.is_empty() {
                assert!(
                    err.contains(&format!("`{key}`")),
                    "plan {text:?}: message {err:?} does not name key {key:?}"
                );
            }
        }
    }

    #[test]
    fn every_error_the_file_can_place_has_its_line() {
        for (text, key, _) in bad_plans() {
            let err = Plan::parse(&text).expect_err(&text).to_string();
            if super::super::messages::locate(&text, key).is_some() {
                assert!(err.contains("(line "), "plan {text:?}: {err}");
            }
        }
        // E.g. an empty list.
        let err = Plan::parse("name = 'x'\n[matrix]\nsizes = []\n[continuous]\noperations=1\n")
            .unwrap_err()
            .to_string();
        assert!(err.contains("`matrix.sizes` (line 3)"), "{err}");
    }

    #[test]
    fn a_catalog_that_does_not_exist_yet_takes_creations_and_listings() {
        let text = "name = 'x'\n[matrix]\nsizes = [0]\ninline = [false]\n\
                    [continuous]\noperations = 3\n\
                    [workload]\nduration_secs = 1\n\
                    [[roles]]\nname = 'w'\nclients = 1\n[roles.mix]\n'write-declare-table' = 1\n\
                    [[roles]]\nname = 'r'\nclients = 2\n[roles.mix]\n'warm-read-list-tables' = 1\n";
        let plan = Plan::parse(text).unwrap();
        let steps = crate::plan::expand(&plan, "/r");
        let cells = crate::plan::cells(&steps);
        assert_eq!(cells.len(), 2);
        assert!(cells.iter().all(|c| c.golden.is_empty()), "{cells:?}");
        assert_eq!(cells[0].id(), "cont_inline_false_rows_0");
    }

    #[test]
    fn the_limits_themselves_are_accepted() {
        let text = format!(
            "name = 'x'\n[matrix]\nsizes = [{}]\n[continuous]\noperations = {}\n\
             [concurrent]\nconcurrency = [{}]\nduration_secs = {}\n\
             [run]\ncell_timeout_secs = {}\ncommit_retries = {}\nwarmup_operations = {}\nrepetitions = {}\n",
            limits::SIZE,
            limits::OPERATIONS,
            limits::WORKERS,
            limits::DURATION_SECS,
            limits::CELL_TIMEOUT_SECS,
            limits::COMMIT_RETRIES,
            limits::WARMUP_OPERATIONS,
            limits::REPETITIONS
        );
        let plan = Plan::parse(&text).unwrap();
        assert_eq!(plan.run.repetitions as u64, limits::REPETITIONS);
        assert_eq!(plan.run.cell_timeout.as_secs(), limits::CELL_TIMEOUT_SECS);
    }

    #[test]
    fn cleanup_defaults_follow_keep_runs() {
        let c = |extra: &str| Plan::parse(&format!("{BASE}{extra}")).unwrap().run.cleanup;
        assert_eq!(c(""), Cleanup::Runs);
        assert_eq!(c("[run]\nkeep_runs = true\n"), Cleanup::None);
        assert_eq!(c("[run]\ncleanup = 'all'\n"), Cleanup::All);
        assert_eq!(c("[run]\ncleanup = 'none'\n"), Cleanup::None);
    }

    #[test]
    fn order_defaults_to_sequential() {
        let o = |extra: &str| Plan::parse(&format!("{BASE}{extra}")).unwrap().run.order;
        assert_eq!(o(""), Order::Sequential);
        assert_eq!(o("[run]\norder = 'interleaved'\n"), Order::Interleaved);
    }
}
