//! A capture against its baseline: figures side by side, regressions beyond the threshold,
//! new deadline misses (the CI gate of `tracedb report --baseline`, exit status 3).
use super::model::{Change, Comparison, TaskRow};
use super::{human_ns, Row};

/// Task figures that count as a regression when they grow beyond the threshold.
pub const GATED: &[&str] = &[
    "response_time_avg",
    "response_time_p99",
    "response_time_max",
    "net_exec_avg",
    "net_exec_max",
    "blocking_max",
];

impl Comparison {
    /// True when the CI gate fails (exit status 3).
    pub fn failed(&self) -> bool {
        !self.regressions.is_empty() || !self.new_deadline_misses.is_empty()
    }

    /// Deadline misses of the baseline, all tasks together (deadline_summary.misses summed).
    pub fn baseline_misses(&self) -> f64 {
        self.baseline_tasks.iter().filter_map(|t| t.deadline_misses).sum()
    }

    /// The baseline row of `entity`.
    pub fn base(&self, entity: &str) -> Option<&TaskRow> {
        self.baseline_tasks.iter().find(|t| t.entity == entity)
    }

    /// One line naming the new misses and the worst regressions, `limit` in all, then how
    /// many more there are (the error message of exit status 3).
    pub fn describe(&self, limit: usize) -> String {
        let mut parts: Vec<String> = self
            .new_deadline_misses
            .iter()
            .map(|c| format!("{}: deadline misses {} -> {}", c.entity, c.baseline, c.current))
            .collect();
        parts.extend(self.regressions.iter().map(|c| {
            format!(
                "{}: {} {} -> {} ({})",
                c.entity,
                c.metric,
                human_ns(c.baseline),
                human_ns(c.current),
                c.change_pct.map(|p| format!("{p:+.1}%")).unwrap_or_default()
            )
        }));
        let more = parts.len().saturating_sub(limit);
        parts.truncate(limit);
        if more > 0 {
            parts.push(format!("and {more} more"));
        }
        parts.join("; ")
    }
}

/// Compares task figures; a regression is a [`GATED`] figure that grew by more than
/// `threshold_pct` percent from a non-zero baseline.
pub fn compare(
    tasks: &[TaskRow],
    base: Vec<TaskRow>,
    base_sems: Vec<Row>,
    threshold_pct: f64,
) -> Comparison {
    let mut regressions = Vec::new();
    let mut new_deadline_misses = Vec::new();
    for t in tasks {
        let Some(b) = base.iter().find(|b| b.entity == t.entity) else { continue };
        for m in GATED {
            if let (Some(bv), Some(cv)) = (b.get(m), t.get(m)) {
                let pct = (bv != 0.0).then(|| (cv - bv) / bv * 100.0);
                if pct.map(|p| p > threshold_pct).unwrap_or(false) {
                    regressions.push(Change {
                        entity: t.entity.clone(),
                        metric: m.to_string(),
                        baseline: bv,
                        current: cv,
                        change_pct: pct,
                    });
                }
            }
        }
        let (bm, cm) = (b.deadline_misses.unwrap_or(0.0), t.deadline_misses.unwrap_or(0.0));
        if cm > bm {
            let pct = (bm != 0.0).then(|| (cm - bm) / bm * 100.0);
            new_deadline_misses.push(Change {
                entity: t.entity.clone(),
                metric: "deadline_misses".into(),
                baseline: bm,
                current: cm,
                change_pct: pct,
            });
        }
    }
    for t in tasks.iter().filter(|t| !base.iter().any(|b| b.entity == t.entity)) {
        if t.deadline_misses.unwrap_or(0.0) > 0.0 {
            let cm = t.deadline_misses.unwrap_or(0.0);
            new_deadline_misses.push(Change {
                entity: t.entity.clone(),
                metric: "deadline_misses".into(),
                baseline: 0.0,
                current: cm,
                change_pct: None,
            });
        }
    }
    regressions.sort_by(|a, b| {
        b.change_pct.partial_cmp(&a.change_pct).unwrap_or(std::cmp::Ordering::Equal)
    });
    Comparison {
        new_tasks: tasks
            .iter()
            .filter(|t| !base.iter().any(|b| b.entity == t.entity))
            .map(|t| t.entity.clone())
            .collect(),
        gone_tasks: base
            .iter()
            .filter(|b| !tasks.iter().any(|t| t.entity == b.entity))
            .map(|b| b.entity.clone())
            .collect(),
        baseline_tasks: base,
        baseline_semaphores: base_sems,
        regressions,
        new_deadline_misses,
        deadlines_note: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regressions_need_a_threshold_and_a_baseline() {
        let t = |e: &str, rt: f64, m: f64| TaskRow {
            entity: e.into(),
            response_time_max: Some(rt),
            deadline_misses: Some(m),
            ..Default::default()
        };
        let c = compare(
            &[t("A", 110.0, 0.0), t("B", 104.0, 1.0)],
            vec![t("A", 100.0, 0.0), t("B", 100.0, 0.0)],
            vec![],
            5.0,
        );
        assert_eq!(c.regressions.len(), 1);
        assert_eq!(c.regressions[0].entity, "A");
        assert_eq!(c.new_deadline_misses[0].entity, "B");
        assert!(c.failed());
        assert_eq!(
            c.describe(10),
            "B: deadline misses 0 -> 1; A: response_time_max 100 ns -> 110 ns (+10.0%)"
        );
        assert_eq!(c.describe(1), "B: deadline misses 0 -> 1; and 1 more");
    }
}
