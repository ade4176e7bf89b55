//! What the CPU scheduler did to this process while an operation ran, as the kernel tells
//! it (`/proc/self/task/*/schedstat` and `stat`; Linux only, nothing elsewhere): how long
//! its threads ran, how long they were runnable but waited for a CPU — the time a
//! neighbour on the machine took from them — and on which CPUs they ran.
//!
//! A worker samples before and after each measured operation (outside its timed span);
//! `bench ab` reads the arms' waits to tell whether both met the same interference. The
//! coordinator samples the whole machine before and after a run's workers ([`machine`]): the
//! CPU other processes kept busy meanwhile is a neighbour's load.

use serde::{Deserialize, Serialize};

/// One operation's (or a run's, summed) use of the CPUs by the process's threads.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CpuUse {
    /// Time its threads ran on a CPU, in ms.
    pub busy_ms: f64,
    /// Time its threads were runnable but waited for a CPU, in ms (summed over threads:
    /// two threads waiting at once count twice).
    pub wait_ms: f64,
    /// `busy_ms` by CPU (index: the CPU's number), each thread's time counted on the CPU it
    /// was last seen on.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub by_cpu_ms: Vec<f64>,
}

impl std::ops::AddAssign<&CpuUse> for CpuUse {
    fn add_assign(&mut self, o: &CpuUse) {
        self.busy_ms += o.busy_ms;
        self.wait_ms += o.wait_ms;
        if self.by_cpu_ms.len() < o.by_cpu_ms.len() {
            self.by_cpu_ms.resize(o.by_cpu_ms.len(), 0.0);
        }
        for (s, x) in self.by_cpu_ms.iter_mut().zip(&o.by_cpu_ms) {
            *s += x;
        }
    }
}

impl CpuUse {
    /// The share of the time its threads wanted a CPU that they waited for one:
    /// `wait / (busy + wait)`; 0 where they wanted none.
    pub fn wait_share(&self) -> f64 {
        let wanted = self.busy_ms + self.wait_ms;
        if wanted > 0.0 {
            self.wait_ms / wanted
        } else {
            0.0
        }
    }

    /// The same to the microsecond, as records keep it.
    pub fn rounded(&self) -> CpuUse {
        let us = |x: f64| (x * 1000.0).round() / 1000.0;
        CpuUse {
            busy_ms: us(self.busy_ms),
            wait_ms: us(self.wait_ms),
            by_cpu_ms: self.by_cpu_ms.iter().map(|&x| us(x)).collect(),
        }
    }

    /// The CPU its threads ran on most, and the share of their time there.
    pub fn main_cpu(&self) -> Option<(usize, f64)> {
        let total: f64 = self.by_cpu_ms.iter().sum();
        let (cpu, ms) = self
            .by_cpu_ms
            .iter()
            .enumerate()
            .max_by(|a, b| a.1.total_cmp(b.1))?;
        (total > 0.0).then(|| (cpu, ms / total))
    }
}

/// One thread's counters at a moment: its id, ns on a CPU, ns waiting for one.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Thread {
    tid: u32,
    run_ns: u64,
    wait_ns: u64,
}

/// The counters of every thread of this process at a moment.
#[derive(Debug, Clone, Default)]
pub struct Snapshot {
    threads: Vec<Thread>,
}

/// `run_ns wait_ns slices` of a schedstat file.
fn parse_schedstat(text: &str) -> Option<(u64, u64)> {
    let mut it = text.split_whitespace().map(|x| x.parse::<u64>().ok());
    Some((it.next()??, it.next()??))
}

/// The CPU a thread last ran on: field 39 of its `stat` (the fields after its name, which
/// is in parentheses and may hold spaces).
fn parse_cpu(stat: &str) -> Option<usize> {
    let after = &stat[stat.rfind(')')? + 1..];
    // After the name: state is field 3, so field 39 is the 37th here.
    after.split_whitespace().nth(36)?.parse().ok()
}

const TASKS: &str = "/proc/self/task";

/// Every thread's counters now; `None` where the kernel does not tell them.
pub fn snapshot() -> Option<Snapshot> {
    let mut threads = Vec::new();
    for entry in std::fs::read_dir(TASKS).ok()? {
        let Ok(entry) = entry else { continue };
        let Some(tid) = entry.file_name().to_str().and_then(|s| s.parse().ok()) else {
            continue;
        };
        // A thread that ended meanwhile is no longer there: its time is lost to both sides.
        let Ok(text) = std::fs::read_to_string(entry.path().join("schedstat")) else {
            continue;
        };
        if let Some((run_ns, wait_ns)) = parse_schedstat(&text) {
            threads.push(Thread {
                tid,
                run_ns,
                wait_ns,
            });
        }
    }
    (!threads.is_empty()).then_some(Snapshot { threads })
}

/// What this process's threads did since `before`: a thread that began since counts from
/// zero; where each ran, from its `stat` now.
pub fn since(before: &Snapshot) -> Option<CpuUse> {
    let now = snapshot()?;
    let was = |tid: u32| before.threads.iter().find(|t| t.tid == tid).copied();
    let mut used = CpuUse::default();
    for t in &now.threads {
        let (run0, wait0) = was(t.tid).map_or((0, 0), |b| (b.run_ns, b.wait_ns));
        let run = t.run_ns.saturating_sub(run0) as f64 / 1e6;
        used.busy_ms += run;
        used.wait_ms += t.wait_ns.saturating_sub(wait0) as f64 / 1e6;
        if run > 0.0
            && let Some(cpu) = std::fs::read_to_string(format!("{TASKS}/{}/stat", t.tid))
                .ok()
                .and_then(|s| parse_cpu(&s))
        {
            if used.by_cpu_ms.len() <= cpu {
                used.by_cpu_ms.resize(cpu + 1, 0.0);
            }
            used.by_cpu_ms[cpu] += run;
        }
    }
    Some(used)
}

/// The machine's CPU time at a moment, from `/proc/stat` and `/proc/self/stat` (in the
/// kernel's clock ticks): busy (user, nice, system, irq, softirq, steal — time the
/// hypervisor gave another machine counts as taken), in all (idle and iowait too), and this
/// process's own with its children that have ended (bench's workers and servers).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Machine {
    busy: u64,
    total: u64,
    own: u64,
    cpus: usize,
}

/// `(busy, total, cpus)` of `/proc/stat`'s text.
fn parse_stat(text: &str) -> Option<(u64, u64, usize)> {
    let first = text.lines().find(|l| l.starts_with("cpu "))?;
    let f: Vec<u64> = first
        .split_whitespace()
        .skip(1)
        .map(|x| x.parse().ok())
        .collect::<Option<_>>()?;
    let at = |i: usize| f.get(i).copied().unwrap_or(0);
    // user nice system idle iowait irq softirq steal (guest time is within user).
    let busy = at(0) + at(1) + at(2) + at(5) + at(6) + at(7);
    let total = busy + at(3) + at(4);
    let cpus = text
        .lines()
        .filter(|l| l.starts_with("cpu") && l.as_bytes().get(3).is_some_and(u8::is_ascii_digit))
        .count();
    Some((busy, total, cpus.max(1)))
}

/// utime + stime + cutime + cstime of a process's `stat` (fields 14 to 17).
fn parse_own(stat: &str) -> Option<u64> {
    let after = &stat[stat.rfind(')')? + 1..];
    // After the name: field 3 is the first, so fields 14-17 are the 12th to 15th here.
    let f: Vec<u64> = after
        .split_whitespace()
        .skip(11)
        .take(4)
        .map(|x| x.parse().ok())
        .collect::<Option<_>>()?;
    (f.len() == 4).then(|| f.iter().sum())
}

/// The machine's CPU time now; `None` where the kernel does not tell it.
pub fn machine() -> Option<Machine> {
    let (busy, total, cpus) = parse_stat(&std::fs::read_to_string("/proc/stat").ok()?)?;
    let own = parse_own(&std::fs::read_to_string("/proc/self/stat").ok()?)?;
    Some(Machine {
        busy,
        total,
        own,
        cpus,
    })
}

impl Machine {
    /// The CPUs other processes kept busy on average since `before`, in cores (0.5: half a
    /// core): the machine's busy time less this process's and its ended children's, over
    /// the time that passed. `None` where no time passed on the machine's clock.
    pub fn others_since(&self, before: &Machine) -> Option<f64> {
        let total = self.total.checked_sub(before.total).filter(|&t| t > 0)?;
        let busy = self.busy.saturating_sub(before.busy);
        let own = self.own.saturating_sub(before.own);
        let others = busy.saturating_sub(own) as f64 / total as f64;
        Some(others * self.cpus as f64)
    }

    /// [`Machine::others_since`] this sample, up to now.
    pub fn others_now(&self) -> Option<f64> {
        machine()?.others_since(self)
    }
}

/// The machine a run measured on, as its record carries it (`machine`): its CPUs, memory
/// and CPU model, and the load average (the kernel's 1-minute mean of runnable tasks, bench's
/// own workers among them) just before the workers started and just after they ended.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Host {
    pub cores: u32,
    pub memory_kib: u64,
    pub cpu_model: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load_start: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load_end: Option<f64>,
}

/// The CPU model in `/proc/cpuinfo`'s text (its first `model name`), else the architecture.
fn cpu_model(cpuinfo: &str) -> String {
    cpuinfo
        .lines()
        .find_map(|l| {
            let (k, v) = l.split_once(':')?;
            (k.trim() == "model name").then(|| v.trim().to_string())
        })
        .unwrap_or_else(|| std::env::consts::ARCH.to_string())
}

/// `MemTotal` of `/proc/meminfo`'s text, in KiB.
fn mem_total(meminfo: &str) -> Option<u64> {
    meminfo.lines().find_map(|l| {
        l.strip_prefix("MemTotal:")?
            .trim()
            .trim_end_matches("kB")
            .trim()
            .parse()
            .ok()
    })
}

/// This machine's memory in KiB (0 where the kernel does not tell it).
pub fn memory_kib() -> u64 {
    mem_total(&std::fs::read_to_string("/proc/meminfo").unwrap_or_default()).unwrap_or(0)
}

/// The 1-minute load average now; `None` where the kernel does not tell it.
pub fn load_average() -> Option<f64> {
    std::fs::read_to_string("/proc/loadavg")
        .ok()?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// This machine's CPUs (those this process may run on), memory and CPU model; the loads
/// are the caller's to fill.
pub fn host() -> Host {
    Host {
        cores: std::thread::available_parallelism().map_or(1, |n| n.get() as u32),
        memory_kib: memory_kib(),
        cpu_model: cpu_model(&std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default()),
        load_start: None,
        load_end: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_host_is_read_from_the_kernels_files() {
        let cpuinfo = "processor\t: 0\nvendor_id\t: X\nmodel name\t: AMD EPYC 7B13\n";
        assert_eq!(cpu_model(cpuinfo), "AMD EPYC 7B13");
        assert_eq!(cpu_model("processor : 0\n"), std::env::consts::ARCH);
        let meminfo = "MemTotal:       24576000 kB\nMemFree:  1 kB\n";
        assert_eq!(mem_total(meminfo), Some(24_576_000));
        assert_eq!(mem_total("MemFree: 1 kB\n"), None);
        let h = host();
        assert!(h.cores >= 1 && !h.cpu_model.is_empty());
    }

    #[test]
    fn others_are_the_machine_s_busy_time_less_this_process_s() {
        let stat = "cpu  100 0 50 800 10 5 5 30 0 0\ncpu0 50 0 25 400 5 2 3 15 0 0\n\
                    cpu1 50 0 25 400 5 3 2 15 0 0\nintr 1 2 3\n";
        assert_eq!(parse_stat(stat), Some((190, 1000, 2)));
        let mut me = "77 (bench (x)) S".to_string();
        for f in 4..=20 {
            me.push_str(&format!(" {}", if (14..=17).contains(&f) { f } else { 0 }));
        }
        assert_eq!(parse_own(&me), Some(14 + 15 + 16 + 17));
        // 1,000 ticks of 2 CPUs pass; the machine is busy 600 of them, 200 of them ours:
        // others kept 400 / 1000 of both CPUs, 0.8 of a core, busy.
        let at = |busy, total, own| Machine {
            busy,
            total,
            own,
            cpus: 2,
        };
        let others = at(790, 2000, 300)
            .others_since(&at(190, 1000, 100))
            .unwrap();
        assert!((others - 0.8).abs() < 1e-12, "{others}");
        assert_eq!(at(190, 1000, 100).others_since(&at(190, 1000, 100)), None);
        assert!(machine().is_none_or(|m| m.cpus >= 1));
    }

    #[test]
    fn a_thread_s_counters_and_cpu_are_read_from_the_kernel_s_lines() {
        assert_eq!(parse_schedstat("1500 250 7\n"), Some((1500, 250)));
        assert_eq!(parse_schedstat("x"), None);
        // A name with spaces and a parenthesis: fields count from the last `)`.
        let mut stat = "42 (tokio (w) 1) S".to_string();
        for f in 4..=52 {
            stat.push_str(&format!(" {}", if f == 39 { 3 } else { 0 }));
        }
        assert_eq!(parse_cpu(&stat), Some(3));
    }

    #[test]
    fn busy_time_is_seen_with_the_cpu_it_ran_on() {
        let Some(before) = snapshot() else {
            eprintln!("no /proc/self/task here: nothing to read");
            return;
        };
        // Spin until the kernel has counted 30 ms of this thread's CPU (however busy the
        // machine is), for at most a minute of wall time.
        let t = std::time::Instant::now();
        let mut x = 0u64;
        while since(&before).is_some_and(|u| u.busy_ms < 30.0)
            && t.elapsed() < std::time::Duration::from_secs(60)
        {
            for _ in 0..100_000 {
                x = std::hint::black_box(x.wrapping_add(1));
            }
        }
        let used = since(&before).expect("counters read twice");
        assert!(used.busy_ms >= 20.0, "{used:?}");
        assert!(used.wait_ms >= 0.0);
        let (_, share) = used.main_cpu().expect("it ran somewhere");
        assert!(share > 0.0 && share <= 1.0);
        let mut sum = CpuUse::default();
        sum += &used;
        sum += &used;
        assert!((sum.busy_ms - 2.0 * used.busy_ms).abs() < 1e-9);
        assert!((0.0..=1.0).contains(&sum.wait_share()));
    }
}
