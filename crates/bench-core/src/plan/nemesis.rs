//! `[[nemesis]]`: faults of the store switched on and off on a timeline while each cell
//! runs, as Jepsen's nemesis does: from `from_secs` after release, for `for_secs`, every
//! request of a kind under the cell's copy meets the fault. The coordinator switches each
//! window at its store (`scripts/s3-server.py`, `POST /_bench/window`) and records every
//! switch ([`Switch`]): in the record, and in the history as an event of the `nemesis`
//! process.

use serde::{Deserialize, Serialize};

use super::checks::invalid;
use super::raw::RawNemesis;
use crate::error::PlanError;

/// Windows a plan may give.
pub const MAX_WINDOWS: usize = 100;

/// The request kinds a window may name (`of`), as the store counts them.
pub const KINDS: [&str; 8] = [
    "any",
    "get",
    "put",
    "conditional_put",
    "list",
    "head",
    "delete",
    "copy",
];

/// What every request of its kind meets while a window is on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum WindowFault {
    /// 503 SlowDown.
    SlowDown,
    /// Applied, then the connection reset before the reply.
    LoseReply,
    /// The connection reset before it is applied.
    Reset,
    /// Applied, then 500 InternalError.
    FailAfterApply,
}

impl WindowFault {
    pub const ALL: [WindowFault; 4] = [
        WindowFault::SlowDown,
        WindowFault::LoseReply,
        WindowFault::Reset,
        WindowFault::FailAfterApply,
    ];

    pub fn name(self) -> &'static str {
        match self {
            WindowFault::SlowDown => "slow-down",
            WindowFault::LoseReply => "lose-reply",
            WindowFault::Reset => "reset",
            WindowFault::FailAfterApply => "fail-after-apply",
        }
    }
}

/// One window of the timeline.
#[derive(Debug, Clone, PartialEq)]
pub struct Window {
    pub fault: WindowFault,
    /// From release, in ms.
    pub from_ms: u64,
    pub for_ms: u64,
    /// The kind of request it meets (one of [`KINDS`]).
    pub of: String,
}

impl Window {
    /// As the cell's key and messages write it: `slow-down of any from 1000 ms for 2000 ms`.
    pub fn describe(&self) -> String {
        format!(
            "{} of {} from {} ms for {} ms",
            self.fault.name(),
            self.of,
            self.from_ms,
            self.for_ms
        )
    }
}

/// One switch of a window, as the coordinator made it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Switch {
    /// The window's fault and the kind of request it met (`slow-down of any`).
    pub fault: String,
    /// On, or off.
    pub on: bool,
    /// When the store was told, in ms since release.
    pub at_ms: f64,
    /// The same moment on the host's monotonic clock (µs), as the history's times.
    pub at_us: u64,
    /// Off: the requests the window met while it was on, as the store counted them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub met: Option<u64>,
    /// Where the store could not be told: why (the window then did not switch).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

fn seconds(key: &str, v: f64, zero: bool) -> Result<u64, PlanError> {
    if !v.is_finite() || v < 0.0 || (v == 0.0 && !zero) || v > 86_400.0 {
        let least = if zero { "0" } else { "more than 0" };
        return Err(invalid(
            key,
            format!("must be seconds, {least} and at most 86400; got {v}"),
        ));
    }
    Ok((v * 1000.0).round() as u64)
}

/// `[[nemesis]]` validated, in the order written; empty without any.
pub(super) fn settings(raw: Vec<RawNemesis>, campaign: bool) -> Result<Vec<Window>, PlanError> {
    if raw.is_empty() {
        return Ok(Vec::new());
    }
    if campaign {
        return Err(invalid(
            "nemesis",
            "a campaign's points each meet one fault at one request: give [[nemesis]] in a \
             plan of its own",
        ));
    }
    if raw.len() > MAX_WINDOWS {
        return Err(invalid(
            "nemesis",
            format!("at most {MAX_WINDOWS} windows; got {}", raw.len()),
        ));
    }
    let mut out = Vec::new();
    for (i, w) in raw.into_iter().enumerate() {
        let key = |k: &str| format!("nemesis[{i}].{k}");
        let fault = (WindowFault::ALL.into_iter())
            .find(|f| f.name() == w.fault)
            .ok_or_else(|| {
                let names: Vec<&str> = WindowFault::ALL.iter().map(|f| f.name()).collect();
                invalid(
                    &key("fault"),
                    format!(
                        "`{}` is not a window's fault; give one of {}",
                        w.fault,
                        names.join(", ")
                    ),
                )
            })?;
        let of = w.of.unwrap_or_else(|| "any".to_string());
        if !KINDS.contains(&of.as_str()) {
            return Err(invalid(
                &key("of"),
                format!(
                    "`{of}` is not a kind of request; give one of {}",
                    KINDS.join(", ")
                ),
            ));
        }
        out.push(Window {
            fault,
            from_ms: seconds(&key("from_secs"), w.from_secs, true)?,
            for_ms: seconds(&key("for_secs"), w.for_secs, false)?,
            of,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use crate::plan::Plan;

    const BASE: &str = "name = 'n'\n[matrix]\nsizes = [10]\ninline = [false]\n\
                        [concurrent]\nconcurrency = [2]\nduration_secs = 4\n";

    #[test]
    fn windows_are_read_in_order_and_part_of_the_cells_keys() {
        let text = format!(
            "{BASE}[[nemesis]]\nfault = 'slow-down'\nfrom_secs = 1\nfor_secs = 0.5\n\
             [[nemesis]]\nfault = 'lose-reply'\nof = 'conditional_put'\nfrom_secs = 2\n\
             for_secs = 1\n"
        );
        let plan = Plan::parse(&text).unwrap();
        let w: Vec<String> = plan.nemesis.iter().map(|w| w.describe()).collect();
        assert_eq!(
            w,
            [
                "slow-down of any from 1000 ms for 500 ms",
                "lose-reply of conditional_put from 2000 ms for 1000 ms"
            ]
        );
        let steps = crate::plan::expand(&plan, "/r");
        let with = crate::plan::cells(&steps)[0].key();
        let plain = Plan::parse(BASE).unwrap();
        let steps = crate::plan::expand(&plain, "/r");
        assert_ne!(with, crate::plan::cells(&steps)[0].key());
    }

    #[test]
    fn a_wrong_window_is_refused_with_the_fix() {
        let cases = [
            (
                "fault = 'drop'\nfrom_secs = 1\nfor_secs = 1",
                "nemesis[0].fault",
            ),
            (
                "fault = 'reset'\nfrom_secs = -1\nfor_secs = 1",
                "nemesis[0].from_secs",
            ),
            (
                "fault = 'reset'\nfrom_secs = 1\nfor_secs = 0",
                "nemesis[0].for_secs",
            ),
            (
                "fault = 'reset'\nof = 'post'\nfrom_secs = 1\nfor_secs = 1",
                "nemesis[0].of",
            ),
            (
                "fault = 'reset'\nfrom_secs = 1\nfor_secs = 1\nwhen = 2",
                "when",
            ),
        ];
        for (window, want) in cases {
            let text = format!("{BASE}[[nemesis]]\n{window}\n");
            let err = Plan::parse(&text).unwrap_err().to_string();
            assert!(err.contains(want), "{text}\n→ {err}");
        }
        let both = "name = 'n'\n[matrix]\nsizes = [10]\ninline = [false]\n[continuous]\n\
                    operations = 2\n[campaign]\n[[nemesis]]\nfault = 'reset'\nfrom_secs = 1\n\
                    for_secs = 1\n";
        let err = Plan::parse(both).unwrap_err().to_string();
        assert!(err.contains("plan of its own"), "{err}");
    }
}
