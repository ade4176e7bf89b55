//! Roles (`[[roles]]`): groups of clients that run at once against one copy, each group with
//! its own weighted mix of operations, its own offered rate (or a closed loop), and its own
//! distribution of targets over the golden's entries; `[workload]` says for how long and
//! with which seed. A cell of roles is one run of all of them.

use serde::{Deserialize, Serialize};

use super::checks::{bounded, invalid, limits};
use super::raw::{RawRole, RawWorkload};
use super::{Effect, Fixture, Names, Operation, Target};
use crate::error::PlanError;
use crate::rng::Rng;

/// How a role's operations pick their entries among the `n` of a kind.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase", tag = "kind")]
pub enum Distribution {
    /// Every entry alike.
    Uniform,
    /// The `r`-th entry (from the first) with a weight of 1 / r^exponent.
    Zipf { exponent: f64 },
    /// The first `fraction` of the entries take [`HOT_SHARE`] of the operations.
    Hotspot { fraction: f64 },
    /// Only the first `k` entries, alike (an "active" subset among many).
    Active { k: u64 },
}

/// The share of a hotspot's operations that go to its hot entries.
pub const HOT_SHARE: f64 = 0.9;

impl Distribution {
    /// Read as plans write it: `uniform`, `zipf-1.1`, `hotspot-0.1`, `active-10`.
    pub fn parse(s: &str) -> Result<Distribution, String> {
        let (kind, value) = s.split_once('-').unwrap_or((s, ""));
        let number = |what: &str| {
            value
                .parse::<f64>()
                .map_err(|_| format!("`{s}` needs its {what} after the dash, e.g. {kind}-1.1"))
        };
        let d = match kind {
            "uniform" if value.is_empty() => Distribution::Uniform,
            "zipf" => Distribution::Zipf {
                exponent: number("exponent")?,
            },
            "hotspot" => Distribution::Hotspot {
                fraction: number("hot fraction")?,
            },
            "active" => Distribution::Active {
                k: value.parse().map_err(|_| {
                    format!("`{s}` needs its count of active entries, e.g. active-10")
                })?,
            },
            _ => {
                return Err(format!(
                    "`{s}` is not a distribution; use uniform, zipf-<exponent>, \
                     hotspot-<fraction> or active-<count>"
                ));
            }
        };
        match d {
            Distribution::Zipf { exponent } if !(0.0..=10.0).contains(&exponent) => {
                Err(format!("`{s}`: a zipf exponent lies in 0 … 10"))
            }
            Distribution::Hotspot { fraction } if !(fraction > 0.0 && fraction < 1.0) => {
                Err(format!("`{s}`: a hot fraction lies between 0 and 1"))
            }
            Distribution::Active { k: 0 } => Err(format!("`{s}`: at least 1 active entry")),
            d => Ok(d),
        }
    }

    /// As plans write it (and ids carry it).
    pub fn label(&self) -> String {
        match *self {
            Distribution::Uniform => "uniform".into(),
            Distribution::Zipf { exponent } => format!("zipf-{exponent}"),
            Distribution::Hotspot { fraction } => format!("hotspot-{fraction}"),
            Distribution::Active { k } => format!("active-{k}"),
        }
    }
}

/// Draws entries by a distribution over `n` of them: the same sequence for the same seed.
/// Zipf by the inverse of its exact cumulative weights, one uniform a draw (rand_distr's
/// `Zipf` samples by rejection: other entries from the same seed, so a plan's draws would
/// not stay what its records say they were).
pub struct Picker {
    d: Distribution,
    n: u64,
    /// Zipf: the cumulative weights of the first `n` ranks, normalised.
    cdf: Vec<f64>,
}

impl Picker {
    pub fn new(d: Distribution, n: u64) -> Picker {
        let cdf = match d {
            Distribution::Zipf { exponent } => {
                let mut acc = 0.0;
                let mut cdf: Vec<f64> = (1..=n)
                    .map(|r| {
                        acc += (r as f64).powf(-exponent);
                        acc
                    })
                    .collect();
                cdf.iter_mut().for_each(|c| *c /= acc);
                cdf
            }
            _ => Vec::new(),
        };
        Picker { d, n, cdf }
    }

    /// The index of the next entry, in `0..n` (0 where there is none).
    pub fn pick(&self, rng: &mut Rng) -> u64 {
        if self.n == 0 {
            return 0;
        }
        let below = |m: u64, rng: &mut Rng| rng.next_u64() % m.max(1);
        match self.d {
            Distribution::Uniform => below(self.n, rng),
            Distribution::Zipf { .. } => {
                let u = rng.uniform();
                (self.cdf.partition_point(|&c| c < u) as u64).min(self.n - 1)
            }
            Distribution::Hotspot { fraction } => {
                let hot = ((self.n as f64 * fraction).ceil() as u64).clamp(1, self.n);
                if rng.uniform() < HOT_SHARE || hot == self.n {
                    below(hot, rng)
                } else {
                    hot + below(self.n - hot, rng)
                }
            }
            Distribution::Active { k } => below(k.min(self.n), rng),
        }
    }
}

/// One role of a plan.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Role {
    pub name: String,
    pub clients: u32,
    /// Operations a second offered across its clients (open loop); none: closed loop.
    pub rate: Option<f64>,
    /// Its operations and their weights, in the order written.
    pub mix: Vec<(Operation, u32)>,
    pub targets: Distribution,
    /// What its `maintain-cleanup-versions` keeps of `__manifest` (a role that runs it has
    /// one; no other role has).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retention: Option<Retention>,
}

/// What a cleanup keeps of `__manifest`'s versions (the newest always).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Retention {
    /// The last `n` versions (lance's `retain_n_versions`).
    KeepVersions(u64),
    /// Versions younger than this many seconds: older ones go (lance's `before_timestamp`).
    OlderThanSecs(u64),
}

impl Retention {
    /// As records and cell keys say it: `keep-100`, `older-than-30s`.
    pub fn label(self) -> String {
        match self {
            Retention::KeepVersions(n) => format!("keep-{n}"),
            Retention::OlderThanSecs(s) => format!("older-than-{s}s"),
        }
    }
}

impl Role {
    /// The `k`-th operation drawn from the mix by `rng`.
    pub fn draw(&self, rng: &mut Rng) -> (usize, Operation) {
        let total: u64 = self.mix.iter().map(|&(_, w)| u64::from(w)).sum();
        let mut x = rng.next_u64() % total.max(1);
        for (i, &(op, w)) in self.mix.iter().enumerate() {
            if x < u64::from(w) {
                return (i, op);
            }
            x -= u64::from(w);
        }
        (self.mix.len() - 1, self.mix[self.mix.len() - 1].0)
    }

    /// The part of a cell's key it makes.
    pub(crate) fn key_line(&self) -> String {
        let mix: Vec<String> = self.mix.iter().map(|(op, w)| format!("{op}={w}")).collect();
        let retention =
            (self.retention).map_or(String::new(), |r| format!(";cleanup={}", r.label()));
        format!(
            "role={};clients={};rate={};mix={};targets={}{retention}\n",
            self.name,
            self.clients,
            self.rate.map_or("closed".into(), |r| r.to_string()),
            mix.join(","),
            self.targets.label()
        )
    }
}

/// `[workload]`: how long a cell of roles runs, and the seed of its clients' draws (the
/// same in every repetition, unless `seed_per_repetition`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Workload {
    pub duration_secs: u64,
    pub seed: u64,
    pub seed_per_repetition: bool,
    /// Every this many seconds of a cell, what `__manifest` stores (versions, files, bytes),
    /// listed by the coordinator; `None`: not sampled.
    pub storage_sample_secs: Option<u64>,
}

/// A client's seed: the workload's, its role's place and its own; with
/// `seed_per_repetition`, its repetition's too (0: the same in every repetition).
pub fn client_seed(seed: u64, repetition: u32, role: usize, client: u32) -> u64 {
    let rep = u64::from(repetition).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    let mut r = Rng::new(seed ^ rep ^ ((role as u64) << 32) ^ u64::from(client));
    r.next_u64()
}

/// `[[roles]]`, `[workload]` and `matrix.targets` (the distributions of the roles that
/// name none of their own, a cell each), checked.
pub(super) fn roles(
    raw: Vec<RawRole>,
    workload: Option<RawWorkload>,
    targets: Option<Vec<String>>,
    fixture: Option<&Fixture>,
) -> Result<Option<super::Roles>, PlanError> {
    if raw.is_empty() {
        return match (workload, targets) {
            (Some(_), _) => Err(invalid(
                "workload",
                "says how long roles run, and the plan has no [[roles]]; add roles or remove it",
            )),
            (None, Some(_)) => Err(invalid(
                "matrix.targets",
                "varies the targets of roles, and the plan has no [[roles]]; remove it",
            )),
            (None, None) => Ok(None),
        };
    }
    let Some(w) = workload else {
        return Err(invalid(
            "workload",
            "is missing: a plan with [[roles]] says how long they run, e.g. \
             [workload] duration_secs = 10",
        ));
    };
    let duration_secs = bounded(
        "workload.duration_secs",
        w.duration_secs,
        "must be at least 1",
        limits::DURATION_SECS,
    )?;
    let mut out = Vec::new();
    let mut own_targets = Vec::new();
    for (i, r) in raw.into_iter().enumerate() {
        let key = |k: &str| format!("roles[{i}].{k}");
        if !super::checks::id_safe(&r.name) || out.iter().any(|o: &Role| o.name == r.name) {
            return Err(invalid(
                &key("name"),
                format!(
                    "`{}` must be unique among the roles and use letters, digits, `-`, `_` or `.`",
                    r.name
                ),
            ));
        }
        let clients = bounded(
            &key("clients"),
            r.clients,
            "must be at least 1",
            limits::WORKERS,
        )? as u32;
        if let Some(rate) = r.rate
            && !(rate > 0.0 && rate <= limits::RATE)
        {
            return Err(invalid(
                &key("rate"),
                format!("must lie in (0, {}] operations a second", limits::RATE),
            ));
        }
        let mix = mix(&key("mix"), r.mix, fixture)?;
        let targets = match &r.targets {
            Some(t) => Distribution::parse(t).map_err(|e| invalid(&key("targets"), e))?,
            None => Distribution::Uniform,
        };
        own_targets.push(r.targets.is_some());
        let retention = retention(&key, (r.keep_versions, r.older_than_secs), &mix)?;
        out.push(Role {
            name: r.name,
            clients,
            rate: r.rate,
            mix,
            targets,
            retention,
        });
    }
    let total: u64 = out.iter().map(|r| u64::from(r.clients)).sum();
    if total > limits::WORKERS {
        return Err(invalid(
            "roles",
            format!("have {total} clients together, at most {}", limits::WORKERS),
        ));
    }
    let workload = Workload {
        duration_secs,
        seed: w.seed.unwrap_or(1),
        seed_per_repetition: w.seed_per_repetition.unwrap_or(false),
        storage_sample_secs: storage_sample_secs(w.storage_sample_secs)?,
    };
    let targets = matrix_targets(targets, &own_targets)?;
    Ok(Some(super::Roles {
        roles: out,
        own_targets,
        targets,
        workload,
    }))
}

/// `workload.storage_sample_secs`, where given: at least a second.
fn storage_sample_secs(raw: Option<u64>) -> Result<Option<u64>, PlanError> {
    let key = "workload.storage_sample_secs";
    raw.map(|s| bounded(key, s, "must be at least 1", limits::DURATION_SECS))
        .transpose()
}

/// A role's retention (`keep_versions` or `older_than_secs`): one, where its mix cleans up,
/// and none where it does not.
fn retention(
    key: &dyn Fn(&str) -> String,
    (keep_versions, older_than_secs): (Option<u64>, Option<u64>),
    mix: &[(Operation, u32)],
) -> Result<Option<Retention>, PlanError> {
    let cleans = mix.iter().any(|(op, _)| op.is_maintenance());
    let cleanup = Operation::CleanupVersions;
    match (keep_versions, older_than_secs, cleans) {
        (Some(_), Some(_), _) => Err(invalid(
            &key("keep_versions"),
            "and `older_than_secs` both set what a cleanup keeps; give one",
        )),
        (None, None, true) => Err(invalid(
            &key("mix"),
            format!(
                "runs `{cleanup}`, and the role does not say what it keeps: add \
                 keep_versions = <N> (the last N versions) or older_than_secs = <T>"
            ),
        )),
        (Some(_), None, false) | (None, Some(_), false) => Err(invalid(
            &key(match keep_versions {
                Some(_) => "keep_versions",
                None => "older_than_secs",
            }),
            format!(
                "says what `{cleanup}` keeps, and the role's mix does not run it; remove it or add the operation"
            ),
        )),
        (Some(0), None, true) => Err(invalid(
            &key("keep_versions"),
            "must be at least 1 (lance always keeps the newest version)",
        )),
        (Some(n), None, true) => Ok(Some(Retention::KeepVersions(n))),
        (None, Some(t), true) => Ok(Some(Retention::OlderThanSecs(t))),
        (None, None, false) => Ok(None),
    }
}

/// A cleanup runs on the catalog's store beside direct clients only: through REST its
/// requests would be counted apart from the servers' (each cell's figures are the
/// servers'), and an external server's catalog is its owner's.
pub(super) fn check_maintenance(plan: &super::Plan) -> Result<(), PlanError> {
    let cleans = (plan.roles.iter().flat_map(|r| &r.roles))
        .any(|r| r.mix.iter().any(|(op, _)| op.is_maintenance()));
    let direct = plan
        .transports
        .iter()
        .all(|t| *t == super::Transport::Direct);
    match cleans && !direct {
        true => Err(invalid(
            "matrix.transport",
            format!(
                "runs cells through REST, and a role runs `{}`, which runs on the store \
                 directly; measure maintenance with transport = [\"direct\"]",
                Operation::CleanupVersions
            ),
        )),
        false => Ok(()),
    }
}

/// `matrix.targets`: distributions, for a plan with a role that names none.
fn matrix_targets(
    targets: Option<Vec<String>>,
    own_targets: &[bool],
) -> Result<Vec<Distribution>, PlanError> {
    let Some(list) = targets else {
        return Ok(Vec::new());
    };
    super::checks::check_list("matrix.targets", &list)?;
    if own_targets.iter().all(|&own| own) {
        return Err(invalid(
            "matrix.targets",
            "varies the targets of roles that name none, and every role names its own; \
             remove it or a role's `targets`",
        ));
    }
    (list.iter())
        .map(|t| Distribution::parse(t).map_err(|e| invalid("matrix.targets", e)))
        .collect()
}

/// A role's `mix`: operation name → weight, each operation one a role can run.
fn mix(
    key: &str,
    raw: toml::Table,
    fixture: Option<&Fixture>,
) -> Result<Vec<(Operation, u32)>, PlanError> {
    if raw.is_empty() {
        return Err(invalid(
            key,
            "lists no operation; give each operation a weight under [roles.mix], e.g. \
             \"warm-read-describe-table\" = 50",
        ));
    }
    let mut out = Vec::new();
    for (name, weight) in raw {
        let op: Operation = name.parse().map_err(|e: String| invalid(key, e))?;
        let weight = weight
            .as_integer()
            .filter(|&w| (1..=1_000_000).contains(&w))
            .ok_or_else(|| invalid(key, format!("`{name}` needs a weight from 1 to 1000000")))?;
        if let Some(why) = refused_in_roles(op, fixture) {
            return Err(invalid(key, format!("`{op}` {why}")));
        }
        out.push((op, weight as u32));
    }
    Ok(out)
}

/// Why a role cannot run `op` on this golden, if it cannot.
fn refused_in_roles(op: Operation, fixture: Option<&Fixture>) -> Option<String> {
    let d = op.describe();
    match (d.effect, d.target) {
        (Effect::TableProperty, _) if !fixture.is_some_and(|f| f.table_data) => Some(
            "updates a table's properties, which needs tables with data: add [fixture] with \
             table_data = true"
                .into(),
        ),
        (Effect::TableProperty, _) => None,
        (_, Target::Table | Target::TableVersions) => Some(
            "works on the shared table of table operations; roles work on the catalog's \
             entries (measure it in a plan of its own)"
                .into(),
        ),
        _ if d.names == Names::RemovesGolden(super::Entry::Namespace) && fixture.is_some() => Some(
            "drops an empty namespace, and every namespace of a [fixture] holds tables or \
                 namespaces"
                .into(),
        ),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distributions_read_as_written_and_say_what_is_wrong() {
        for s in ["uniform", "zipf-1.1", "hotspot-0.1", "active-10"] {
            assert_eq!(Distribution::parse(s).unwrap().label(), s);
        }
        for (s, want) in [
            ("zipf", "exponent"),
            ("zipf-x", "exponent"),
            ("hotspot-1.5", "between 0 and 1"),
            ("active-0", "at least 1"),
            ("gauss-1", "not a distribution"),
        ] {
            let e = Distribution::parse(s).unwrap_err();
            assert!(e.contains(want), "{s}: {e}");
        }
    }

    fn shares(d: Distribution, n: u64, draws: u32) -> Vec<u32> {
        let p = Picker::new(d, n);
        let mut rng = Rng::new(7);
        let mut counts = vec![0u32; n as usize];
        for _ in 0..draws {
            counts[p.pick(&mut rng) as usize] += 1;
        }
        counts
    }

    #[test]
    fn pickers_skew_as_their_distribution_says() {
        let uniform = shares(Distribution::Uniform, 10, 100_000);
        assert!(
            uniform.iter().all(|&c| (9_000..11_000).contains(&c)),
            "{uniform:?}"
        );
        // Zipf with exponent 1 over 10 entries: the first takes 1 / H(10) ≈ 34 %.
        let zipf = shares(Distribution::Zipf { exponent: 1.0 }, 10, 100_000);
        assert!((33_000..35_300).contains(&zipf[0]), "{zipf:?}");
        assert!(zipf.windows(2).all(|w| w[0] >= w[1]), "{zipf:?}");
        let hot = shares(Distribution::Hotspot { fraction: 0.1 }, 100, 100_000);
        let hot_share: u32 = hot[..10].iter().sum();
        assert!((89_000..91_000).contains(&hot_share), "{hot_share}");
        let active = shares(Distribution::Active { k: 3 }, 100, 10_000);
        assert_eq!(active[3..].iter().sum::<u32>(), 0);
        // Seeded: the same draws every time.
        assert_eq!(
            shares(Distribution::Uniform, 10, 1000),
            shares(Distribution::Uniform, 10, 1000)
        );
    }

    #[test]
    fn a_mix_is_drawn_by_its_weights() {
        let role = Role {
            name: "r".into(),
            clients: 1,
            rate: None,
            mix: vec![
                (Operation::DescribeTable { cold: false }, 90),
                (Operation::CreateTable, 10),
            ],
            targets: Distribution::Uniform,
            retention: None,
        };
        let mut rng = Rng::new(3);
        let creates = (0..10_000)
            .filter(|_| role.draw(&mut rng).1 == Operation::CreateTable)
            .count();
        assert!((900..1100).contains(&creates), "{creates}");
    }
}

#[cfg(test)]
mod plan_tests {
    use crate::plan::{Mode, Plan, Retention, Step, cells, expand};

    const TREE: &str = "[fixture]\nwidth = 2\ndepth = 3\ntables_per_namespace = 5\n";

    fn plan(body: &str) -> Result<Plan, String> {
        Plan::parse(&format!("name = \"r\"\n{body}")).map_err(|e| e.to_string())
    }

    fn roles(extra: &str) -> String {
        format!(
            "{TREE}table_data = true\n[matrix]\ninline = [true]\n{extra}\n[workload]\n\
             duration_secs = 5\n\
             [[roles]]\nname = 'readers'\nclients = 3\nrate = 50\n\
             [roles.mix]\n'warm-read-describe-table' = 50\n'warm-read-list-tables' = 20\n\
             [[roles]]\nname = 'writers'\nclients = 2\ntargets = 'zipf-1.1'\n\
             [roles.mix]\n'write-create-table' = 5\n'write-update-table-metadata' = 5\n"
        )
    }

    #[test]
    fn a_plan_of_roles_on_a_tree_expands_into_one_cell_per_target_distribution() {
        let p = plan(&roles("targets = ['uniform', 'hotspot-0.1']")).unwrap();
        let steps = expand(&p, "/r");
        let Step::Golden(g) = &steps[0] else {
            panic!("{steps:?}")
        };
        assert_eq!(g.rows, 54, "warp's default tree: 14 namespaces, 40 tables");
        assert_eq!(g.id(), "inline_true_rows_54_tree_w2_d3_t5_data");
        let all = cells(&steps);
        assert_eq!(all.len(), 2);
        let ids: Vec<String> = all.iter().map(|c| c.id()).collect();
        assert_eq!(
            ids,
            [
                "roles_inline_true_rows_54_tree_w2_d3_t5_data_c_5_targets-uniform",
                "roles_inline_true_rows_54_tree_w2_d3_t5_data_c_5_targets-hotspot-0.1"
            ]
        );
        assert_ne!(all[0].key(), all[1].key());
        let c = all[1];
        assert_eq!(
            c.mode,
            Mode::Roles {
                clients: 5,
                duration_secs: 5
            }
        );
        // The matrix's targets go to the role that names none; the other keeps its own.
        assert_eq!(c.roles[0].targets.label(), "hotspot-0.1");
        assert_eq!(c.roles[1].targets.label(), "zipf-1.1");
        assert_eq!(
            c.operation.as_str(),
            "warm-read-describe-table",
            "its first role's first operation"
        );
        assert!(c.properties.is_empty(), "targets are no namespace property");
        // A role's weight, rate or seed is another measurement: another key.
        let seeded =
            plan(&roles("").replace("duration_secs = 5\n", "duration_secs = 5\nseed = 9\n"))
                .unwrap();
        let one = |p: &Plan| cells(&expand(p, "/r"))[0].key();
        assert_ne!(one(&seeded), one(&plan(&roles("")).unwrap()));
        let varied = (roles("").replace(
            "duration_secs = 5\n",
            "duration_secs = 5\nseed_per_repetition = true\n",
        ))
        .to_string();
        let varied = cells(&expand(&plan(&varied).unwrap(), "/r"))[0].clone();
        assert!(varied.seed_per_repetition);
        assert_ne!(varied.key(), one(&plan(&roles("")).unwrap()));
        let heavier = plan(&roles("").replace("table' = 50", "table' = 60")).unwrap();
        assert_ne!(one(&heavier), one(&plan(&roles("")).unwrap()));
    }

    #[test]
    fn bad_roles_and_trees_name_their_key() {
        let base = roles("");
        for (text, key, want) in [
            (
                base.replace("[workload]\nduration_secs = 5\n", ""),
                "workload",
                "is missing",
            ),
            (
                base.replace("clients = 3", "clients = 0"),
                "roles[0].clients",
                "at least 1",
            ),
            (
                base.replace("rate = 50", "rate = -1"),
                "roles[0].rate",
                "must lie in",
            ),
            (
                base.replace("'zipf-1.1'", "'zipf'"),
                "roles[1].targets",
                "exponent",
            ),
            (
                base.replace("table' = 50", "table' = 0"),
                "roles[0].mix",
                "weight from 1",
            ),
            (
                base.replace("'warm-read-list-tables'", "'write-table-append'"),
                "roles[0].mix",
                "shared table",
            ),
            (
                base.replace("table_data = true\n", ""),
                "roles[1].mix",
                "table_data = true",
            ),
            (
                base.replace("'write-create-table'", "'write-drop-namespace'"),
                "roles[1].mix",
                "empty namespace",
            ),
            (
                base.replace("name = 'writers'", "name = 'readers'"),
                "roles[1].name",
                "unique",
            ),
            (
                format!("{base}[run]\nlauncher = 'srun --ntasks={{workers}}'\n"),
                "run.launcher",
                "one command line",
            ),
            (
                base.replace("[matrix]\n", "[matrix]\nsizes = [10]\n"),
                "matrix.sizes",
                "remove matrix.sizes",
            ),
            (
                "[matrix]\ninline = [true]\n[continuous]\noperations = 1\n".into(),
                "matrix.sizes",
                "is missing",
            ),
            (
                format!("{TREE}[matrix]\ntargets = ['uniform']\n[continuous]\noperations = 1\n"),
                "matrix.targets",
                "no [[roles]]",
            ),
            (
                format!(
                    "operation = 'write-drop-table'\n{TREE}[matrix]\ninline = [true]\n\
                     [continuous]\noperations = 41\n"
                ),
                "fixture",
                "holds 40 tables",
            ),
        ] {
            let e = plan(&text).unwrap_err();
            assert!(e.contains(key) && e.contains(want), "{key}: {e}\n{text}");
        }
        // A tree's tables suffice for 40 drops, one each.
        let drops = format!(
            "operation = 'write-drop-table'\n{TREE}[matrix]\ninline = [true]\n\
             [continuous]\noperations = 40\n"
        );
        assert!(plan(&drops).is_ok());
    }

    /// A cleanup runs in a role that says what it keeps, beside direct clients only; the
    /// retention is part of the cell's key, the storage samples are not.
    #[test]
    fn a_cleanup_role_says_what_it_keeps_and_runs_beside_direct_clients() {
        let clean = "[[roles]]\nname = 'maintenance'\nclients = 1\nrate = 0.1\nkeep_versions = 20\n\
                     [roles.mix]\n'maintain-cleanup-versions' = 1\n";
        let base = format!("{}{clean}", roles(""));
        let sampled = base.replace(
            "duration_secs = 5\n",
            "duration_secs = 5\nstorage_sample_secs = 2\n",
        );
        let p = plan(&sampled).unwrap();
        let cell = cells(&expand(&p, "/r"))[0].clone();
        assert_eq!(cell.roles[2].retention, Some(Retention::KeepVersions(20)));
        assert_eq!(cell.storage_sample_secs, Some(2));
        let key = |text: &str| cells(&expand(&plan(text).unwrap(), "/r"))[0].key();
        assert_eq!(key(&sampled), key(&base), "sampling changes no measurement");
        let older = base.replace("keep_versions = 20", "older_than_secs = 30");
        assert_ne!(key(&older), key(&base));
        for (text, k, want) in [
            (
                base.replace("keep_versions = 20\n", ""),
                "roles[2].mix",
                "keep_versions = <N>",
            ),
            (
                base.replace("keep_versions = 20", "keep_versions = 20\nolder_than_secs = 5"),
                "roles[2].keep_versions",
                "give one",
            ),
            (
                base.replace("keep_versions = 20", "keep_versions = 0"),
                "roles[2].keep_versions",
                "at least 1",
            ),
            (
                roles("").replace("rate = 50\n", "rate = 50\nolder_than_secs = 5\n"),
                "roles[0].older_than_secs",
                "does not run it",
            ),
            (
                base.replace("inline = [true]", "inline = [true]\ntransport = ['rest']"),
                "matrix.transport",
                "transport = [\"direct\"]",
            ),
            (
                base.replace("duration_secs = 5\n", "duration_secs = 5\nstorage_sample_secs = 0\n"),
                "workload.storage_sample_secs",
                "at least 1",
            ),
            (
                "operation = 'maintain-cleanup-versions'\n[matrix]\nsizes = [10]\ninline = [true]\n\
                 [continuous]\noperations = 1\n"
                    .into(),
                "operation",
                "run it as a role's operation",
            ),
        ] {
            let e = plan(&text).unwrap_err();
            assert!(e.contains(k) && e.contains(want), "{k}: {e}\n{text}");
        } // --set reaches a role by its name.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("p.toml");
        std::fs::write(&path, format!("name = \"r\"\n{base}")).unwrap();
        let set = |k: &str, v: &str| Plan::load_with(&path, &[(k.to_string(), v.to_string())]);
        let p = set("roles.maintenance.keep_versions", "7").unwrap();
        let set_cell = cells(&expand(&p, "/r"))[0].clone();
        assert_eq!(
            set_cell.roles[2].retention,
            Some(Retention::KeepVersions(7))
        );
        assert_eq!(
            set("roles.readers.rate", "4").unwrap().roles.unwrap().roles[0].rate,
            Some(4.0)
        );
        for (k, want) in [
            (
                "roles.cleaner.rate",
                "no entry of `roles` is named `cleaner`",
            ),
            ("roles.rate", "name one of its entries: roles.<name>.<key>"),
            ("roles.readers.bogus", "bogus"),
        ] {
            let e = set(k, "1").unwrap_err().to_string();
            assert!(e.contains(want), "{k}: {e}");
        }
    }
}
