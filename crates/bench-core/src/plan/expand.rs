//! Matrix expansion: a pure function from a validated plan to the ordered steps of a sweep.

use super::{Catalog, Cell, CellBuild, GoldenSpec, Load, Mode, Plan, Transport};

/// One step of a sweep in execution order: a golden bootstrap or a cell. (A sweep has a
/// few steps per cell, built once: their size does not matter.)
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    Golden(GoldenSpec),
    Cell(Cell),
}

/// Every combination of the values of `[matrix.properties]` and `[matrix.env]`, the first key outermost; one
/// empty combination without the table.
fn property_combinations(matrix: &[(String, Vec<String>)]) -> Vec<Vec<(String, String)>> {
    matrix.iter().fold(vec![Vec::new()], |acc, (k, values)| {
        acc.iter()
            .flat_map(|c| {
                values.iter().map(move |v| {
                    let mut c = c.clone();
                    c.push((k.clone(), v.clone()));
                    c
                })
            })
            .collect()
    })
}

/// The builds every cell runs under: `[builds]` in order, or the running bench's own.
fn builds(plan: &Plan) -> Vec<Option<CellBuild>> {
    if plan.builds.is_empty() {
        return vec![None];
    }
    (plan.builds.iter())
        .map(|b| {
            Some(CellBuild {
                name: b.name.clone(),
                path: b.path.clone(),
                id: b.id.clone().unwrap_or_default(),
            })
        })
        .collect()
}

/// The goldens of a plan, in the reference's order: for each inline variant, each size (or
/// tree of `[fixture]`), each history of the shared table.
fn goldens(plan: &Plan) -> Vec<GoldenSpec> {
    // A plan of table operations has a golden per history of its shared table.
    let histories: Vec<Option<u64>> = match &plan.table {
        Some(t) => t.versions.iter().copied().map(Some).collect(),
        None => vec![None],
    };
    // Flat goldens of `matrix.sizes`, or the trees of `[fixture]`.
    let shapes: Vec<(u64, Option<super::Fixture>)> = match plan.fixtures.is_empty() {
        true => plan.sizes.iter().map(|&rows| (rows, None)).collect(),
        false => plan.fixtures.iter().map(|f| (f.rows(), Some(*f))).collect(),
    };
    let mut goldens = Vec::new();
    for &inline in &plan.inline {
        for &(rows, fixture) in &shapes {
            goldens.extend(histories.iter().map(|&table_versions| GoldenSpec {
                rows,
                inline,
                table_versions,
                fixture,
            }));
        }
    }
    goldens
}

/// What one workload of one golden is run under, side by side: each build, each
/// combination of `[matrix.properties]` and `[matrix.env]`, each transport (innermost).
struct Variants<'p> {
    plan: &'p Plan,
    root: &'p str,
    builds: Vec<Option<CellBuild>>,
    combinations: Vec<(Vec<(String, String)>, Transport)>,
}

/// A cell's work: its mode, its roles and the distribution its roles' targets follow.
type Work = (Mode, Vec<super::Role>, Option<String>);

impl<'p> Variants<'p> {
    fn new(plan: &'p Plan, root: &'p str) -> Variants<'p> {
        let dimensions: Vec<(String, Vec<String>)> =
            (plan.property_matrix.iter().chain(&plan.env_matrix).cloned()).collect();
        let combinations = (property_combinations(&dimensions).into_iter())
            .flat_map(|c| plan.transports.iter().map(move |&t| (c.clone(), t)))
            .collect();
        Variants {
            plan,
            root,
            builds: builds(plan),
            combinations,
        }
    }

    /// The cells of one workload on `golden`, one per variant.
    fn of(&self, golden: GoldenSpec, (mode, roles, targets): Work) -> Vec<Step> {
        let (plan, root) = (self.plan, self.root);
        let is_env = |k: &str| plan.env_matrix.iter().any(|(e, _)| e == k);
        let mut variants = Vec::new();
        for build in &self.builds {
            for (varied, transport) in &self.combinations {
                let (env, props): (Vec<_>, Vec<_>) =
                    varied.iter().cloned().partition(|(k, _)| is_env(k));
                let mut named = varied.clone();
                named.extend(targets.clone().map(|t| ("targets".to_string(), t)));
                named.extend(super::transport::varied(*transport, &plan.transports));
                let mut properties = plan.namespace.clone();
                properties.extend(props);
                let mut vars = plan.env.clone();
                vars.extend(env);
                variants.push(Step::Cell(Cell {
                    golden,
                    mode,
                    operation: headline(&roles).unwrap_or(plan.operation),
                    commit_retries: plan.commit_retries_with(&properties),
                    warmup: plan.run.warmup_operations,
                    root: root.to_string(),
                    storage: plan.storage.clone(),
                    properties,
                    varied: named,
                    env: vars,
                    attempt_timeout_ms: plan.run.attempt_timeout_ms,
                    rows_per_commit: plan.table.as_ref().map(|t| t.rows_per_commit),
                    page_size: plan.page_size,
                    build: build.clone(),
                    arms: plan.arms.clone(),
                    s3_shaped: plan.run.s3_shaped_local && !root.starts_with("s3://"),
                    transport: *transport,
                    rest_uri: (transport.catalog() == Catalog::Theirs)
                        .then(|| plan.rest.external.clone())
                        .flatten(),
                    parent: (transport.catalog() == Catalog::Theirs)
                        .then(|| plan.rest.parent.clone())
                        .flatten(),
                    roles: roles.clone(),
                    seed: plan.roles.as_ref().map_or(0, |r| r.workload.seed),
                    seed_per_repetition: (plan.roles.as_ref())
                        .is_some_and(|r| r.workload.seed_per_repetition),
                    storage_sample_secs: (plan.roles.as_ref())
                        .and_then(|r| r.workload.storage_sample_secs),
                    nemesis: plan.nemesis.clone(),
                    retention: plan.campaign.as_ref().and_then(|c| c.retention),
                }));
            }
        }
        variants
    }
}

/// Expand the matrix in the reference's order: for each inline variant, for each size: its
/// golden, then the continuous cell, then one concurrent cell per concurrency, then (bench's
/// addition) one mixed cell per client count. Each of those is one cell per variant of
/// builds and `[matrix.properties]` (builds outermost), side by side.
pub fn expand(plan: &Plan, root: &str) -> Vec<Step> {
    let variants = Variants::new(plan, root);
    let mut steps = Vec::new();
    for golden in goldens(plan) {
        // An external server's cells run on its catalog as it is: no golden to build.
        if plan.rest.external.is_none() {
            steps.push(Step::Golden(golden));
        }
        let cell = |workload: Work| variants.of(golden, workload);
        let alone = |mode| (mode, Vec::new(), None);
        if let Some(c) = &plan.continuous {
            steps.extend(cell(alone(Mode::Continuous {
                operations: c.operations,
            })));
        }
        if let Some(c) = &plan.concurrent {
            steps.extend(concurrent_modes(c).into_iter().map(alone).flat_map(&cell));
        }
        if let Some(m) = &plan.mixed {
            steps.extend(mixed_modes(m).into_iter().map(alone).flat_map(&cell));
        }
        if let Some(r) = &plan.roles {
            steps.extend(role_cells(r).into_iter().flat_map(&cell));
        }
    }
    steps
}

/// Only the cells of an expansion, in order.
pub fn cells(steps: &[Step]) -> Vec<&Cell> {
    steps
        .iter()
        .filter_map(|s| match s {
            Step::Cell(c) => Some(c),
            Step::Golden(_) => None,
        })
        .collect()
}

/// The concurrent cells' modes, in order: per writer count, closed loop or one per offered
/// load.
fn concurrent_modes(c: &super::Concurrent) -> Vec<Mode> {
    let loads = or_closed(&c.loads);
    let per = |concurrency: u32| {
        loads.iter().map(move |&load| Mode::Concurrent {
            concurrency,
            duration_secs: c.duration.map_or(0, |d| d.as_secs()),
            operations: c.operations,
            load,
        })
    };
    c.concurrency.iter().flat_map(|&n| per(n)).collect()
}

/// The mixed cells' modes, in order: per client count, closed loop or one per offered load.
fn mixed_modes(m: &super::Mixed) -> Vec<Mode> {
    let loads = or_closed(&m.loads);
    let per = |clients: u32| {
        loads.iter().map(move |&load| Mode::Mixed {
            clients,
            reads_per_write: m.reads_per_write,
            read: m.read_operation,
            duration_secs: m.duration.as_secs(),
            load,
        })
    };
    m.clients.iter().flat_map(|&n| per(n)).collect()
}

/// The cells of roles: one, or one per value of `matrix.targets` (for the roles that name
/// no targets of their own).
fn role_cells(r: &super::Roles) -> Vec<(Mode, Vec<super::Role>, Option<String>)> {
    let mode = Mode::Roles {
        clients: r.roles.iter().map(|role| role.clients).sum(),
        duration_secs: r.workload.duration_secs,
    };
    if r.targets.is_empty() {
        return vec![(mode, r.roles.clone(), None)];
    }
    (r.targets.iter())
        .map(|t| {
            let roles = (r.roles.iter().zip(&r.own_targets))
                .map(|(role, &own)| super::Role {
                    targets: if own { role.targets } else { *t },
                    ..role.clone()
                })
                .collect();
            (mode, roles, Some(t.label()))
        })
        .collect()
}

/// The operation a cell of roles records as its own: its first role's first operation (its
/// headline figures are every role's operations together).
fn headline(roles: &[super::Role]) -> Option<super::Operation> {
    roles.first().map(|r| r.mix[0].0)
}

/// Closed loop alone, or each offered load.
fn or_closed(loads: &[Load]) -> Vec<Option<Load>> {
    match loads.is_empty() {
        true => vec![None],
        false => loads.iter().copied().map(Some).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::tests::TINY;
    use crate::plan::{Arrivals, DEFAULT_MIXED_READ, ModeKind, Variant};
    use std::collections::BTreeMap;

    fn ids(steps: &[Step]) -> Vec<String> {
        steps
            .iter()
            .map(|s| match s {
                Step::Golden(g) => format!("golden:{}", g.id()),
                Step::Cell(c) => c.id(),
            })
            .collect()
    }

    #[test]
    fn variables_and_properties_vary_apart_and_reach_their_own_maps() {
        let plan = Plan::parse(
            "name = 'v'\n[matrix]\nsizes = [1]\ninline = [false]\n[matrix.properties]\n\
             shards = [1, 2]\n[matrix.env]\nHINT = ['0', '1']\n[env]\nRUST_LOG = 'warn'\n\
             [continuous]\noperations = 1\n",
        )
        .unwrap();
        let steps = expand(&plan, "/r");
        let cells = cells(&steps);
        let names: Vec<String> = cells.iter().map(|c| c.variant_name()).collect();
        assert_eq!(
            names,
            [
                "no_index/shards=1/HINT=0",
                "no_index/shards=1/HINT=1",
                "no_index/shards=2/HINT=0",
                "no_index/shards=2/HINT=1",
            ]
        );
        let last = cells[3];
        assert_eq!(last.id(), "cont_inline_false_rows_1_shards-2_HINT-1");
        assert_eq!(last.properties, [("shards".into(), "2".into())].into());
        let env: BTreeMap<String, String> = [
            ("HINT".into(), "1".into()),
            ("RUST_LOG".into(), "warn".into()),
        ]
        .into();
        assert_eq!(last.env, env);
    }

    #[test]
    fn expansion_follows_the_reference_order() {
        let plan = Plan::parse(TINY).unwrap();
        let steps = expand(&plan, "/r");
        assert_eq!(
            ids(&steps),
            vec![
                "golden:inline_true_rows_100",
                "cont_inline_true_rows_100",
                "conc_inline_true_rows_100_c_2",
                "conc_inline_true_rows_100_c_10",
                "golden:inline_true_rows_1000",
                "cont_inline_true_rows_1000",
                "conc_inline_true_rows_1000_c_2",
                "conc_inline_true_rows_1000_c_10",
                "golden:inline_false_rows_100",
                "cont_inline_false_rows_100",
                "conc_inline_false_rows_100_c_2",
                "conc_inline_false_rows_100_c_10",
                "golden:inline_false_rows_1000",
                "cont_inline_false_rows_1000",
                "conc_inline_false_rows_1000_c_2",
                "conc_inline_false_rows_1000_c_10",
            ]
        );
        let cells = cells(&steps);
        assert_eq!(cells.len(), 12);
        assert_eq!(cells[0].variant(), Variant::InlineIndex);
        assert_eq!(cells[8].variant(), Variant::NoIndex);
        assert_eq!(cells[1].mode.workers(), 2);
        assert_eq!(cells[0].mode.duration_secs(), 0);
    }

    #[test]
    fn offered_loads_are_cells_of_their_own_and_leave_closed_loop_keys_alone() {
        let text = |extra: &str| {
            format!(
                "name='x'\n[matrix]\nsizes=[7]\ninline=[true]\n[concurrent]\nconcurrency=[2, 4]\n\
                 duration_secs=5\n{extra}"
            )
        };
        let closed = Plan::parse(&text("")).unwrap();
        let open = Plan::parse(&text("rates=[5, 2.5]\narrivals='poisson'\n")).unwrap();
        let steps = expand(&open, "/r");
        assert_eq!(
            ids(&steps)[1..],
            [
                "conc_inline_true_rows_7_c_2_rate_5_poisson",
                "conc_inline_true_rows_7_c_2_rate_2.5_poisson",
                "conc_inline_true_rows_7_c_4_rate_5_poisson",
                "conc_inline_true_rows_7_c_4_rate_2.5_poisson",
            ]
        );
        let c = cells(&steps)[1];
        let load = c.mode.load().unwrap();
        assert_eq!(
            (load.rate(), load.label(), load.arrivals),
            (2.5, "2.5".into(), Arrivals::Poisson)
        );
        // A closed-loop cell's key is what it was before offered loads existed.
        let closed_cell = cells(&expand(&closed, "/r"))[0].clone();
        assert!(closed_cell.mode.load().is_none());
        assert!(
            !closed_cell.mode.key_part().contains("rate"),
            "{}",
            closed_cell.mode.key_part()
        );
        assert!(
            c.mode.key_part().contains(";rate=2.5;arrivals=poisson"),
            "{}",
            c.mode.key_part()
        );
        let mixed = Plan::parse(
            "name='x'\n[matrix]\nsizes=[7]\ninline=[true]\n[mixed]\nclients=[3]\n\
             reads_per_write=4\nduration_secs=5\nrate=10\n",
        )
        .unwrap();
        let m = cells(&expand(&mixed, "/r"))[0].clone();
        assert_eq!(m.id(), "mixed_inline_true_rows_7_c_3_rate_10");
        assert!(m.mode.key_part().ends_with(";rate=10;arrivals=uniform"));
        assert_eq!(m.mode.load().map(|l| l.rate()), Some(10.0));
        let uniform = Plan::parse(&text("rate=5\n")).unwrap();
        let u = cells(&expand(&uniform, "/r"))[0].clone();
        assert_eq!(u.id(), "conc_inline_true_rows_7_c_2_rate_5");
        assert_ne!(u.key(), cells(&steps)[0].key(), "arrivals are in the key");
    }

    #[test]
    fn offered_loads_are_checked() {
        let bad = |extra: &str, key: &str, says: &str| {
            let text = format!(
                "name='x'\n[matrix]\nsizes=[7]\ninline=[true]\n[concurrent]\nconcurrency=[2]\n\
                 duration_secs=5\n{extra}"
            );
            let e = Plan::parse(&text).unwrap_err().to_string();
            assert!(e.contains(key) && e.contains(says), "{extra}: {e}");
        };
        bad("rate=5\nrates=[5]\n", "concurrent.rates", "both set");
        bad(
            "arrivals='poisson'\n",
            "concurrent.arrivals",
            "no `concurrent.rate`",
        );
        bad(
            "rate=5\narrivals='bursty'\n",
            "concurrent.arrivals",
            "\"uniform\" or \"poisson\"",
        );
        bad("rate=0\n", "concurrent.rate", "from 0.001");
        bad("rates=[]\n", "concurrent.rates", "empty");
        bad("rates=[5, 5.0]\n", "concurrent.rates", "lists 5 twice");
        bad("rate=1e9\n", "concurrent.rate", "to 100000");
        let mixed = "name='x'\n[matrix]\nsizes=[7]\ninline=[true]\n[mixed]\nclients=[1]\n\
                     reads_per_write=4\nduration_secs=5\narrivals='poisson'\n";
        let e = Plan::parse(mixed).unwrap_err().to_string();
        assert!(
            e.contains("mixed.arrivals") && e.contains("no `mixed.rate`"),
            "{e}"
        );
    }

    #[test]
    fn mixed_cells_follow_the_concurrent_ones() {
        let plan = Plan::parse(
            "name='x'\n[matrix]\nsizes=[7]\ninline=[true]\n[concurrent]\nconcurrency=[2]\nduration_secs=1\n\
             [mixed]\nclients=[4, 1]\nreads_per_write=100\nduration_secs=3\n",
        )
        .unwrap();
        let steps = expand(&plan, "/r");
        assert_eq!(
            ids(&steps),
            vec![
                "golden:inline_true_rows_7",
                "conc_inline_true_rows_7_c_2",
                "mixed_inline_true_rows_7_c_4",
                "mixed_inline_true_rows_7_c_1",
            ]
        );
        let c = cells(&steps)[1];
        assert_eq!(c.mode.kind(), ModeKind::Mixed);
        assert_eq!(c.mode.workers(), 4);
        assert_eq!(c.mode.duration_secs(), 3);
        assert_eq!(c.mode.mixed_reads(), Some((DEFAULT_MIXED_READ, 100)));
        let other = Plan::parse(
            "name='x'\n[matrix]\nsizes=[7]\ninline=[true]\n[concurrent]\nconcurrency=[2]\nduration_secs=1\n\
             [mixed]\nclients=[4, 1]\nreads_per_write=10\nduration_secs=3\nread_operation='cold-read-list-tables'\n",
        )
        .unwrap();
        let c2 = cells(&expand(&other, "/r"))[1].clone();
        assert_eq!(c2.id(), c.id());
        assert_ne!(
            c2.key(),
            c.key(),
            "reads_per_write and the read are in the key"
        );
    }

    #[test]
    fn omitted_tables_skip_their_cells() {
        let plan =
            Plan::parse("name='x'\n[matrix]\nsizes=[7]\ninline=[false]\n[concurrent]\nconcurrency=[3]\nduration_secs=1\n")
                .unwrap();
        assert_eq!(
            ids(&expand(&plan, "/r")),
            vec!["golden:inline_false_rows_7", "conc_inline_false_rows_7_c_3"]
        );
    }

    #[test]
    fn keys_change_only_with_the_parameters_of_a_cell() {
        let a = Plan::parse(TINY).unwrap();
        let b = Plan::parse(&TINY.replace("operations = 5", "operations = 6")).unwrap();
        let ka: Vec<_> = cells(&expand(&a, "/r")).iter().map(|c| c.key()).collect();
        let kb: Vec<_> = cells(&expand(&b, "/r")).iter().map(|c| c.key()).collect();
        let changed: Vec<_> = cells(&expand(&a, "/r"))
            .iter()
            .zip(ka.iter().zip(&kb))
            .filter(|(_, (x, y))| x != y)
            .map(|(c, _)| c.id())
            .collect();
        assert_eq!(
            changed,
            vec![
                "cont_inline_true_rows_100",
                "cont_inline_true_rows_1000",
                "cont_inline_false_rows_100",
                "cont_inline_false_rows_1000"
            ]
        );
        let kr: Vec<_> = cells(&expand(&a, "/other"))
            .iter()
            .map(|c| c.key())
            .collect();
        assert!(
            ka.iter().zip(&kr).all(|(x, y)| x != y),
            "root is part of the key"
        );
        let mut unique = ka.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), ka.len(), "every cell has its own key");
    }

    #[test]
    fn credentials_are_not_part_of_the_key_but_other_options_are() {
        let mut a = Plan::parse(TINY).unwrap();
        let key = |p: &Plan| cells(&expand(p, "s3://b/p"))[0].key();
        let k0 = key(&a);
        a.override_with(None, &[("aws_secret_access_key".into(), "s3cr3t".into())]);
        a.override_with(None, &[("aws_access_key_id".into(), "AKIA".into())]);
        a.override_with(None, &[("aws_session_token".into(), "tok".into())]);
        // Any option not known to carry no secret stays out of the key, whatever its name.
        a.override_with(None, &[("azure_storage_account_key".into(), "k".into())]);
        a.override_with(None, &[("google_service_account_key".into(), "k".into())]);
        a.override_with(None, &[("some_future_option".into(), "v".into())]);
        assert_eq!(key(&a), k0);
        a.override_with(
            None,
            &[("aws_endpoint".into(), "http://127.0.0.1:9".into())],
        );
        assert_ne!(key(&a), k0);
        a.override_with(Some("s3://other/p"), &[]);
        assert_eq!(a.root.as_deref(), Some("s3://other/p"));
    }
}
