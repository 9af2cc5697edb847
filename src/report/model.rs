//! The report's data: what [`super::collect`] gathers and the renderers format. Serialised
//! as is by the JSON form (durations in ns, loads 0..1).
use super::Row;
use serde::Serialize;

/// Everything a report shows.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// tracedb version that made it.
    pub tool_version: String,
    /// The capture reported on.
    pub capture: Summary,
    /// The baseline it is compared with.
    pub baseline: Option<Summary>,
    /// Regression threshold, percent.
    pub threshold_pct: f64,
    /// `data_loss` rows of the capture (diagnostics summarised).
    pub diagnostics: Vec<Row>,
    /// One row per task and ISR.
    pub tasks: Vec<TaskRow>,
    /// `deadline_misses` rows, worst lateness first (at most [`LIST_CAP`]).
    pub deadline_misses: Vec<Row>,
    /// All deadline misses, including those left out of the list.
    pub deadline_misses_total: usize,
    /// `semaphore_contention` rows.
    pub semaphores: Vec<Row>,
    /// `cpu_load` per core.
    pub cpu_load: CpuLoad,
    /// Response-time histogram per task.
    pub histograms: Vec<Histogram>,
    /// The window around the worst response time.
    pub gantt: Option<Gantt>,
    /// Non-BTF captures: state and channel time (or a note).
    pub other_format: Option<OtherFormat>,
    /// Figures against the baseline.
    pub comparison: Option<Comparison>,
    /// One line per analysis and rule used.
    pub definitions: Vec<Definition>,
}

/// A capture's identity and size.
#[derive(Debug, Clone, Serialize)]
pub struct Summary {
    /// Capture id.
    pub capture_id: i64,
    /// Capture name.
    pub name: String,
    /// Source format (btf, prv, ...).
    pub format: String,
    /// Source files.
    pub source_files: Vec<String>,
    /// First event, ns.
    pub ts_min: Option<i64>,
    /// Last event, ns.
    pub ts_max: Option<i64>,
    /// ts_max - ts_min, ns.
    pub span_ns: i64,
    /// Events read.
    pub events: u64,
    /// Entities (tasks, ISRs, runnables, cores, semaphores, signals, ...).
    pub entities: i64,
}

/// One task or ISR: figures from response_times, deadline_summary, blocking, preemptions.
#[derive(Debug, Clone, Serialize, Default)]
pub struct TaskRow {
    /// Task or ISR.
    pub entity: String,
    /// T, I or ISR.
    pub entity_type: String,
    /// response_times.instances (complete instances).
    pub instances: Option<f64>,
    /// response_times.instances_left_out (no activate or terminate in the capture, or
    /// resynchronised: not in the statistics).
    pub instances_left_out: Option<f64>,
    /// response_times.response_time_min, ns.
    pub response_time_min: Option<f64>,
    /// response_times.response_time_avg, ns.
    pub response_time_avg: Option<f64>,
    /// response_times.response_time_p99, ns.
    pub response_time_p99: Option<f64>,
    /// response_times.response_time_max, ns.
    pub response_time_max: Option<f64>,
    /// deadline_summary.misses.
    pub deadline_misses: Option<f64>,
    /// deadline_summary.instances (instances judged against a deadline).
    pub deadline_instances: Option<f64>,
    /// response_times.net_exec_avg, ns.
    pub net_exec_avg: Option<f64>,
    /// response_times.net_exec_max, ns.
    pub net_exec_max: Option<f64>,
    /// blocking.blocking_total, ns.
    pub blocking_total: Option<f64>,
    /// blocking.blocking_max, ns.
    pub blocking_max: Option<f64>,
    /// preemptions.preemptions.
    pub preemptions: Option<f64>,
    /// Time running over the whole capture, every instance (complete or not): the sum of
    /// `instances.net_exec`, ns.
    pub cpu_time: Option<f64>,
}

/// The task columns shown, with their header and whether they are durations.
pub const TASK_COLUMNS: &[(&str, &str, bool)] = &[
    ("instances", "instances", false),
    ("instances_left_out", "left out", false),
    ("response_time_min", "RT min", true),
    ("response_time_avg", "RT avg", true),
    ("response_time_p99", "RT p99", true),
    ("response_time_max", "RT max", true),
    ("deadline_misses", "misses", false),
    ("net_exec_avg", "net exec avg", true),
    ("net_exec_max", "net exec max", true),
    ("blocking_total", "blocking total", true),
    ("blocking_max", "blocking max", true),
    ("preemptions", "preemptions", false),
    ("cpu_time", "CPU time", true),
];

impl TaskRow {
    /// The figure called `name` (one of [`TASK_COLUMNS`]).
    pub fn get(&self, name: &str) -> Option<f64> {
        match name {
            "instances" => self.instances,
            "instances_left_out" => self.instances_left_out,
            "response_time_min" => self.response_time_min,
            "response_time_avg" => self.response_time_avg,
            "response_time_p99" => self.response_time_p99,
            "response_time_max" => self.response_time_max,
            "deadline_misses" => self.deadline_misses,
            "deadline_instances" => self.deadline_instances,
            "net_exec_avg" => self.net_exec_avg,
            "net_exec_max" => self.net_exec_max,
            "blocking_total" => self.blocking_total,
            "blocking_max" => self.blocking_max,
            "preemptions" => self.preemptions,
            "cpu_time" => self.cpu_time,
            _ => None,
        }
    }
}

/// CPU load per core over time.
#[derive(Debug, Clone, Serialize)]
pub struct CpuLoad {
    /// Window length, ns (chosen so a core has at most [`LOAD_POINTS`] windows).
    pub window_ns: i64,
    /// One series per core.
    pub cores: Vec<CoreLoad>,
}

/// The load of one core.
#[derive(Debug, Clone, Serialize)]
pub struct CoreLoad {
    /// Core name.
    pub core: String,
    /// Mean of the windows' load, 0..1.
    pub mean: f64,
    /// Mean in the baseline, when there is one and it has this core.
    pub baseline_mean: Option<f64>,
    /// (window_start ns, load 0..1) per window.
    pub points: Vec<(i64, f64)>,
    /// The baseline's windows of this core, moved onto this capture's time axis (its first
    /// window starts where this capture's first window does); empty without a baseline.
    pub baseline_points: Vec<(i64, f64)>,
}

/// Response times of one task's complete instances, binned.
#[derive(Debug, Clone, Serialize)]
pub struct Histogram {
    /// Task or ISR.
    pub entity: String,
    /// Smallest response time, ns (start of the first bin); with a baseline that has this
    /// task, the smallest of both captures.
    pub lo: i64,
    /// Largest response time, ns (end of the last bin); with a baseline that has this task,
    /// the largest of both.
    pub hi: i64,
    /// Instances per bin; the bins split lo..hi evenly.
    pub counts: Vec<i64>,
    /// The baseline's instances in the same bins, when the baseline has this task.
    pub baseline_counts: Option<Vec<i64>>,
}

/// A window of the capture drawn as tasks (rows, grouped by core) coloured by state.
#[derive(Debug, Clone, Serialize)]
pub struct Gantt {
    /// Window start, ns.
    pub from: i64,
    /// Window end, ns.
    pub to: i64,
    /// Why this window: the instance it is centred on.
    pub focus: String,
    /// That instance's activation, ns.
    pub focus_from: i64,
    /// That instance's termination, ns.
    pub focus_to: i64,
    /// One row per task.
    pub lanes: Vec<Lane>,
}

/// One task in the Gantt window.
#[derive(Debug, Clone, Serialize)]
pub struct Lane {
    /// Task or ISR.
    pub entity: String,
    /// Core it ran on most in the window.
    pub core: String,
    /// (start ns, end ns, state) after merging slices shorter than a pixel.
    pub slices: Vec<(i64, i64, String)>,
}

/// The section shown for non-BTF captures.
#[derive(Debug, Clone, Serialize)]
pub struct OtherFormat {
    /// `state_time` rows.
    pub state_time: Vec<Row>,
    /// `channel_time` rows.
    pub channel_time: Vec<Row>,
    /// Rows `state_time` and `channel_time` have before the list cap.
    pub totals: (usize, usize),
}

/// Figures of the capture against the baseline.
#[derive(Debug, Clone, Serialize)]
pub struct Comparison {
    /// Task rows of the baseline (same entity names).
    pub baseline_tasks: Vec<TaskRow>,
    /// Semaphore rows of the baseline.
    pub baseline_semaphores: Vec<Row>,
    /// Figures that grew beyond the threshold, largest change first.
    pub regressions: Vec<Change>,
    /// Tasks with more deadline misses than in the baseline.
    pub new_deadline_misses: Vec<Change>,
    /// Tasks only in the capture.
    pub new_tasks: Vec<String>,
    /// Tasks only in the baseline.
    pub gone_tasks: Vec<String>,
    /// Set when the two captures were ingested with different deadline rules: says so and
    /// how to judge both by one file.
    pub deadlines_note: Option<String>,
}

/// A figure that changed.
#[derive(Debug, Clone, Serialize)]
pub struct Change {
    /// Task or ISR.
    pub entity: String,
    /// Figure (a [`TASK_COLUMNS`] name).
    pub metric: String,
    /// Baseline value.
    pub baseline: f64,
    /// Capture value.
    pub current: f64,
    /// (current - baseline) / baseline * 100 (None when the baseline is 0).
    pub change_pct: Option<f64>,
}

/// One line of the definitions section.
#[derive(Debug, Clone, Serialize)]
pub struct Definition {
    /// Analysis or rule.
    pub name: String,
    /// What it means.
    pub text: String,
}

/// The sections between the capture summary and the definitions, in the order both forms
/// print them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Section {
    /// The task table.
    Tasks,
    /// Deadline misses and semaphore contention.
    MissesAndSemaphores,
    /// CPU load per core.
    Load,
    /// Response-time histograms and the Gantt chart.
    Charts,
    /// State and channel time (formats with no task life cycle).
    States,
}

impl Report {
    /// Whether task `t`'s value in `col` is highlighted: the largest non-zero value of its
    /// column (`instances`, `instances_left_out` and `response_time_min` are never
    /// highlighted).
    pub fn is_column_max(&self, t: &TaskRow, col: &str) -> bool {
        if matches!(col, "instances" | "instances_left_out" | "response_time_min") {
            return false;
        }
        let Some(v) = t.get(col) else { return false };
        let max = self
            .tasks
            .iter()
            .filter_map(|t| t.get(col))
            .filter(|v| *v > 0.0)
            .fold(None, |m: Option<f64>, v| Some(m.map_or(v, |m: f64| m.max(v))));
        max == Some(v)
    }

    /// The sections this report has. A capture without task life cycles (Paraver, ovni)
    /// shows its states where the task table would be, and none of the task sections, which
    /// would all be empty (nor CPU load, when no core was occupied).
    pub fn sections(&self) -> Vec<Section> {
        use Section::*;
        if self.tasks.is_empty() && self.other_format.is_some() {
            let mut v = vec![States];
            if !self.cpu_load.cores.is_empty() {
                v.push(Load);
            }
            v
        } else {
            vec![Tasks, MissesAndSemaphores, Load, Charts, States]
        }
    }
}
