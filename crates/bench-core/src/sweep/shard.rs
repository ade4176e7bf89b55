//! Shards: one sweep spread over N machines, each running a share of the cells (`--shard
//! K/N`, or `--shard auto` from an array job's environment), merged afterwards by `bench
//! merge`.
//!
//! The partition is a pure function of the plan and N, so every machine computes the same
//! one without talking to the others. It balances the estimated work ([`crate::sweep::estimate`]):
//! cells are taken from the most to the least expensive, each given to the shard where it
//! would end earliest, counting the golden it needs when that shard does not build it
//! already (longest-processing-time-first). So cells that share a golden tend to stay
//! together and no shard bootstraps a golden it does not need.
//!
//! In the store each shard works under its own prefix (`<root>/shard-K-of-N/`), goldens
//! included: shards never touch each other's objects, a crashed shard blocks nobody, and a
//! golden is built by at most the shards whose cells need it (the partition counts that
//! cost). Cell keys are computed from the sweep's root, not the shard's prefix, so a cell
//! has the same key sharded or not.

use std::collections::BTreeSet;
use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::plan::Cell;

/// Shard `index` (from 1) of `count`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shard {
    pub index: u32,
    pub count: u32,
}

impl Shard {
    /// Where this shard's goldens and copies live, under the sweep's root.
    pub fn prefix(self) -> String {
        format!("shard-{}-of-{}", self.index, self.count)
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

/// The most shards a sweep can be split into.
pub const MAX_SHARDS: u32 = 10_000;

/// `--shard` as given: `K/N`, `auto`, or `auto/N` (Kubernetes, which does not tell N).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShardArg {
    Fixed(Shard),
    Auto { count: Option<u32> },
}

fn count(s: &str, arg: &str) -> Result<u32, String> {
    match s.trim().parse::<u32>() {
        Ok(n) if (1..=MAX_SHARDS).contains(&n) => Ok(n),
        _ => Err(format!(
            "`{arg}`: the number of shards must be a whole number from 1 to {MAX_SHARDS}"
        )),
    }
}

impl FromStr for ShardArg {
    type Err = String;

    fn from_str(arg: &str) -> Result<ShardArg, String> {
        let usage = || {
            format!(
                "`{arg}` is not a shard: use K/N (shard K of N, from 1, e.g. 2/8), `auto` (from \
                 a Slurm or AWS Batch array job) or `auto/N` (a Kubernetes Indexed Job of N)"
            )
        };
        let Some((k, n)) = arg.split_once('/') else {
            return match arg.trim() {
                "auto" => Ok(ShardArg::Auto { count: None }),
                _ => Err(usage()),
            };
        };
        let n = count(n, arg)?;
        if k.trim() == "auto" {
            return Ok(ShardArg::Auto { count: Some(n) });
        }
        let k: u32 = k.trim().parse().map_err(|_| usage())?;
        if k == 0 || k > n {
            return Err(format!(
                "`{arg}`: shards are numbered from 1 to {n}; use 1/{n} to {n}/{n}"
            ));
        }
        Ok(ShardArg::Fixed(Shard { index: k, count: n }))
    }
}

fn number(env: &dyn Fn(&str) -> Option<String>, var: &str) -> Result<Option<u64>, String> {
    match env(var) {
        None => Ok(None),
        Some(v) => v
            .trim()
            .parse()
            .map(Some)
            .map_err(|_| format!("{var}={v:?} is not a number")),
    }
}

/// The shard this process is, from `--shard` and (for `auto`) the array job's environment:
/// Slurm (`SLURM_ARRAY_TASK_ID`, `SLURM_ARRAY_TASK_COUNT`, `SLURM_ARRAY_TASK_MIN`,
/// `SLURM_ARRAY_TASK_STEP`), AWS Batch (`AWS_BATCH_JOB_ARRAY_INDEX`,
/// `AWS_BATCH_JOB_ARRAY_SIZE`) or a Kubernetes Indexed Job (`JOB_COMPLETION_INDEX`, with N
/// from `auto/N`).
pub fn resolve(arg: ShardArg, env: &dyn Fn(&str) -> Option<String>) -> Result<Shard, String> {
    let given = match arg {
        ShardArg::Fixed(s) => return Ok(s),
        ShardArg::Auto { count } => count,
    };
    let found = |engine: &str, index: u64, total: u64| -> Result<Shard, String> {
        let total = match given {
            Some(n) if u64::from(n) != total => {
                return Err(format!(
                    "--shard auto/{n}: the {engine} array has {total} tasks, not {n}; use \
                     --shard auto"
                ));
            }
            _ => count(&total.to_string(), &format!("{engine} array of {total}"))?,
        };
        if index >= u64::from(total) {
            return Err(format!(
                "{engine} says this is task {index} (from 0) of an array of {total}"
            ));
        }
        Ok(Shard {
            index: index as u32 + 1,
            count: total,
        })
    };
    if let Some(id) = number(env, "SLURM_ARRAY_TASK_ID")? {
        let total = number(env, "SLURM_ARRAY_TASK_COUNT")?
            .ok_or("SLURM_ARRAY_TASK_ID is set but SLURM_ARRAY_TASK_COUNT is not")?;
        let min = number(env, "SLURM_ARRAY_TASK_MIN")?.unwrap_or(0);
        let step = number(env, "SLURM_ARRAY_TASK_STEP")?.unwrap_or(1).max(1);
        if id < min || !(id - min).is_multiple_of(step) {
            return Err(format!(
                "SLURM_ARRAY_TASK_ID={id} is not in the array {min}-…:{step}; give the array as \
                 a range, e.g. sbatch --array=0-{}",
                total.saturating_sub(1)
            ));
        }
        return found("Slurm", (id - min) / step, total);
    }
    if let Some(index) = number(env, "AWS_BATCH_JOB_ARRAY_INDEX")? {
        let total = number(env, "AWS_BATCH_JOB_ARRAY_SIZE")?
            .ok_or("AWS_BATCH_JOB_ARRAY_INDEX is set but AWS_BATCH_JOB_ARRAY_SIZE is not")?;
        return found("AWS Batch", index, total);
    }
    if let Some(index) = number(env, "JOB_COMPLETION_INDEX")? {
        let Some(n) = given else {
            return Err(
                "JOB_COMPLETION_INDEX is set (a Kubernetes Indexed Job) but Kubernetes does not \
                 tell the number of shards: use --shard auto/N with N = the Job's completions"
                    .into(),
            );
        };
        return found("Kubernetes", index, n.into());
    }
    let slurm_job = if env("SLURM_JOB_ID").is_some() {
        " (this is a Slurm job, but not an array: submit it with sbatch --array=0-N)"
    } else {
        ""
    };
    Err(format!(
        "--shard auto found no array job{slurm_job}: it reads SLURM_ARRAY_TASK_ID and \
         SLURM_ARRAY_TASK_COUNT (Slurm), AWS_BATCH_JOB_ARRAY_INDEX and AWS_BATCH_JOB_ARRAY_SIZE \
         (AWS Batch) or JOB_COMPLETION_INDEX (Kubernetes, with --shard auto/N); elsewhere give \
         --shard K/N"
    ))
}

/// The shard (0-based) of every cell, balancing estimated work over `count` shards. The
/// variants of one shape (builds, properties: cells that differ in nothing else) go to one
/// shard together, where they run side by side and pair up run by run; on several machines
/// they would not.
pub fn partition(cells: &[&Cell], repetitions: u32, count: u32) -> Vec<u32> {
    let n = count.max(1) as usize;
    let cost =
        |c: &Cell| crate::sweep::estimate::cell_run(c).as_secs_f64() * f64::from(repetitions);
    // The shapes, in plan order, each with its cells.
    let mut shapes: Vec<(String, Vec<usize>)> = Vec::new();
    for (i, c) in cells.iter().enumerate() {
        let id = c.shape_id();
        match shapes.iter_mut().find(|(s, _)| *s == id) {
            Some((_, members)) => members.push(i),
            None => shapes.push((id, vec![i])),
        }
    }
    let shape_cost = |m: &[usize]| m.iter().map(|&i| cost(cells[i])).sum::<f64>();
    let mut order: Vec<usize> = (0..shapes.len()).collect();
    // Most expensive first; equal costs in plan order (a stable sort).
    order.sort_by(|&a, &b| shape_cost(&shapes[b].1).total_cmp(&shape_cost(&shapes[a].1)));
    let mut load = vec![0.0f64; n];
    let mut goldens = vec![BTreeSet::new(); n];
    let mut shard_of = vec![0u32; cells.len()];
    for s in order {
        let members = &shapes[s].1;
        let golden = cells[members[0]].golden;
        let end = |k: usize| {
            let g = if goldens[k].contains(&golden) {
                0.0
            } else {
                crate::sweep::estimate::golden(golden).as_secs_f64()
            };
            load[k] + shape_cost(members) + g
        };
        let best = (0..n)
            .min_by(|&a, &b| end(a).total_cmp(&end(b)))
            .expect("at least one shard");
        load[best] = end(best);
        goldens[best].insert(golden);
        for &i in members {
            shard_of[i] = best as u32;
        }
    }
    shard_of
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;
    use crate::plan::{Plan, cells, expand};

    fn env(vars: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let map: HashMap<String, String> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |k| map.get(k).cloned()
    }

    fn shard(index: u32, count: u32) -> Shard {
        Shard { index, count }
    }

    #[test]
    fn shard_arguments_parse_or_say_what_is_wrong() {
        assert_eq!("2/8".parse(), Ok(ShardArg::Fixed(shard(2, 8))));
        assert_eq!(" 1 / 1 ".parse(), Ok(ShardArg::Fixed(shard(1, 1))));
        assert_eq!("auto".parse(), Ok(ShardArg::Auto { count: None }));
        assert_eq!("auto/4".parse(), Ok(ShardArg::Auto { count: Some(4) }));
        let bad = [
            ("0/3", "numbered from 1 to 3"),
            ("4/3", "numbered from 1 to 3"),
            ("x", "is not a shard"),
            ("", "is not a shard"),
            ("1/0", "from 1 to"),
            ("1/x", "from 1 to"),
            ("-1/3", "is not a shard"),
            ("a/3", "is not a shard"),
            ("auto/0", "from 1 to"),
            ("1/99999", "from 1 to"),
        ];
        for (arg, needle) in bad {
            let err = arg.parse::<ShardArg>().unwrap_err();
            assert!(err.contains(needle), "{arg}: {err}");
        }
    }

    #[test]
    fn auto_reads_the_array_engines() {
        let auto = ShardArg::Auto { count: None };
        let slurm = env(&[
            ("SLURM_JOB_ID", "12"),
            ("SLURM_ARRAY_TASK_ID", "2"),
            ("SLURM_ARRAY_TASK_COUNT", "3"),
            ("SLURM_ARRAY_TASK_MIN", "0"),
        ]);
        assert_eq!(resolve(auto, &slurm), Ok(shard(3, 3)));
        // An array 1-8 and one with a step: the index counts tasks, not ids.
        let from_one = env(&[
            ("SLURM_ARRAY_TASK_ID", "1"),
            ("SLURM_ARRAY_TASK_COUNT", "8"),
            ("SLURM_ARRAY_TASK_MIN", "1"),
        ]);
        assert_eq!(resolve(auto, &from_one), Ok(shard(1, 8)));
        let stepped = env(&[
            ("SLURM_ARRAY_TASK_ID", "6"),
            ("SLURM_ARRAY_TASK_COUNT", "4"),
            ("SLURM_ARRAY_TASK_MIN", "0"),
            ("SLURM_ARRAY_TASK_STEP", "2"),
        ]);
        assert_eq!(resolve(auto, &stepped), Ok(shard(4, 4)));
        let batch = env(&[
            ("AWS_BATCH_JOB_ARRAY_INDEX", "0"),
            ("AWS_BATCH_JOB_ARRAY_SIZE", "5"),
        ]);
        assert_eq!(resolve(auto, &batch), Ok(shard(1, 5)));
        let k8s = env(&[("JOB_COMPLETION_INDEX", "3")]);
        assert_eq!(
            resolve(ShardArg::Auto { count: Some(4) }, &k8s),
            Ok(shard(4, 4))
        );
        // A fixed shard ignores the environment.
        assert_eq!(
            resolve(ShardArg::Fixed(shard(1, 2)), &slurm),
            Ok(shard(1, 2))
        );
    }

    #[test]
    fn auto_without_an_array_or_with_bad_values_fails_clearly() {
        let auto = ShardArg::Auto { count: None };
        type Case = (ShardArg, Vec<(&'static str, &'static str)>, &'static str);
        let cases: Vec<Case> = vec![
            (auto, vec![], "found no array job"),
            (auto, vec![("SLURM_JOB_ID", "7")], "not an array"),
            (auto, vec![("JOB_COMPLETION_INDEX", "1")], "--shard auto/N"),
            (
                ShardArg::Auto { count: Some(2) },
                vec![("JOB_COMPLETION_INDEX", "2")],
                "task 2 (from 0) of an array of 2",
            ),
            (
                auto,
                vec![("SLURM_ARRAY_TASK_ID", "1")],
                "SLURM_ARRAY_TASK_COUNT is not",
            ),
            (
                auto,
                vec![
                    ("SLURM_ARRAY_TASK_ID", "x"),
                    ("SLURM_ARRAY_TASK_COUNT", "3"),
                ],
                "is not a number",
            ),
            (
                ShardArg::Auto { count: Some(4) },
                vec![
                    ("AWS_BATCH_JOB_ARRAY_INDEX", "0"),
                    ("AWS_BATCH_JOB_ARRAY_SIZE", "3"),
                ],
                "has 3 tasks, not 4",
            ),
            (
                auto,
                vec![("AWS_BATCH_JOB_ARRAY_INDEX", "0")],
                "AWS_BATCH_JOB_ARRAY_SIZE is not",
            ),
        ];
        for (arg, vars, needle) in cases {
            let err = resolve(arg, &env(&vars)).unwrap_err();
            assert!(err.contains(needle), "{vars:?}: {err}");
        }
    }

    const PANEL: &str = "name='p'\n[matrix]\nsizes=[1000, 10000, 100000, 1000000]\n\
        [continuous]\noperations=200\n[concurrent]\nconcurrency=[2,4,8]\nduration_secs=2\n";

    #[test]
    fn every_cell_goes_to_exactly_one_shard_the_same_way_every_time() {
        let plan = Plan::parse(PANEL).unwrap();
        let steps = expand(&plan, "/r");
        let cells = cells(&steps);
        for n in [1, 2, 3, 5, 8, 40] {
            let p = partition(&cells, 1, n);
            assert_eq!(p.len(), cells.len());
            assert!(p.iter().all(|&s| s < n), "{n}: {p:?}");
            assert_eq!(p, partition(&cells, 1, n), "deterministic");
        }
        assert!(partition(&cells, 1, 1).iter().all(|&s| s == 0));
    }

    /// The variants of a shape (builds, properties) stay on one shard, where they run side
    /// by side and pair up; different shapes still spread.
    #[test]
    fn a_shape_s_variants_stay_on_one_shard() {
        let text = format!(
            "{PANEL}[builds]\nmain = 'bench'\ncow = '../cow/bench'\n[matrix.properties]\nk = [1, 2]\n"
        );
        let plan = Plan::parse(&text).unwrap();
        let steps = expand(&plan, "/r");
        let cells = cells(&steps);
        let p = partition(&cells, 1, 4);
        let mut by_shape: std::collections::BTreeMap<String, BTreeSet<u32>> = Default::default();
        for (c, &s) in cells.iter().zip(&p) {
            by_shape.entry(c.shape_id()).or_default().insert(s);
        }
        assert!(by_shape.len() >= 16, "{by_shape:?}");
        assert!(by_shape.values().all(|s| s.len() == 1), "{by_shape:?}");
        let used: BTreeSet<u32> = p.iter().copied().collect();
        assert_eq!(used.len(), 4, "{p:?}");
    }

    #[test]
    fn shards_balance_estimated_work_not_cell_counts() {
        let plan = Plan::parse(PANEL).unwrap();
        let steps = expand(&plan, "/r");
        let cells = cells(&steps);
        let cost = |c: &Cell| crate::sweep::estimate::cell_run(c).as_secs_f64();
        for n in [2u32, 3, 4] {
            let p = partition(&cells, 1, n);
            let mut load = vec![0.0; n as usize];
            let mut goldens = vec![BTreeSet::new(); n as usize];
            for (c, &s) in cells.iter().zip(&p) {
                load[s as usize] += cost(c);
                if goldens[s as usize].insert(c.golden) {
                    load[s as usize] += crate::sweep::estimate::golden(c.golden).as_secs_f64();
                }
            }
            let (lo, hi) = load
                .iter()
                .fold((f64::MAX, 0.0f64), |(lo, hi), &l| (lo.min(l), hi.max(l)));
            let biggest = cells.iter().map(|c| cost(c)).fold(0.0, f64::max)
                + cells
                    .iter()
                    .map(|c| crate::sweep::estimate::golden(c.golden).as_secs_f64())
                    .fold(0.0, f64::max);
            // Greedy LPT: no shard ends later than the lightest by more than one cell and
            // its golden.
            assert!(hi - lo <= biggest + 1e-9, "{n}: {load:?}");
            // The 1,000,000-row continuous cells (200 commits of ~1 s each) outweigh many
            // small cells: the shard that holds the most expensive cell holds fewer cells
            // than the fullest shard.
            let count = |s: u32| p.iter().filter(|&&x| x == s).count();
            let heaviest = (0..cells.len())
                .max_by(|&a, &b| cost(cells[a]).total_cmp(&cost(cells[b])))
                .unwrap();
            let fullest = (0..n).map(count).max().unwrap();
            assert!(count(p[heaviest]) < fullest, "{n}: {p:?}");
        }
    }
}
