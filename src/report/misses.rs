//! Deadline misses explained for the report: where a capture's deadlines came from
//! ([`deadlines_note`]) and, for each missed instance, who ran on its core between its
//! activation and its start ([`explain_misses`]).
use super::*;

/// Says when the two captures were ingested with different deadline rules (the `deadlines`
/// table): each capture's tasks are judged by its own, so the same timing can miss in one
/// and not in the other, and the miss counts compared are not judged alike. None when the
/// rules are the same (or both have none).
pub(super) fn deadlines_note(
    conn: &duckdb::Connection,
    id: i64,
    base: i64,
    file: Option<&str>,
) -> Result<Option<String>> {
    let counts = rows(
        conn,
        &format!(
            "WITH a AS (SELECT entity, deadline FROM deadlines WHERE capture_id = {id}), \
                  b AS (SELECT entity, deadline FROM deadlines WHERE capture_id = {base}) \
             SELECT (SELECT count(*) FROM a) AS here, (SELECT count(*) FROM b) AS there, \
                    (SELECT count(*) FROM (SELECT * FROM a EXCEPT SELECT * FROM b)) \
                  + (SELECT count(*) FROM (SELECT * FROM b EXCEPT SELECT * FROM a)) AS apart"
        ),
    )?;
    let Some(r) = counts.first() else { return Ok(None) };
    let n = |col: &str| num(r, col).unwrap_or(0.0) as u64;
    if n("apart") == 0 {
        return Ok(None);
    }
    let rules = |k: u64| match k {
        0 => "none".to_string(),
        1 => "1 rule".to_string(),
        k => format!("{k} rules"),
    };
    let remedy = match file {
        Some(f) => format!(
            "--deadlines {f} judges both captures by one file where it names a task (it does for \
             the tasks it names; the others keep their own capture's)"
        ),
        None => "--deadlines FILE judges both captures by one file where it names a task".into(),
    };
    Ok(Some(format!(
        "the deadlines stored at ingest differ (this capture: {}, the baseline: {}): a task \
         is judged against its own capture's deadline, so its misses may differ with the same \
         timing; {remedy}",
        rules(n("here")),
        rules(n("there"))
    )))
}

/// Adds to each deadline miss who delayed it: `blocked_by`, what the instance waited for and
/// who held or set it (`blocking_instances`: `SEM_A held by TASK_2 #66`, and, when that
/// holder was preempted meanwhile, who ran on its core instead, from `priority_inversions`:
/// ` (kept off its core by TASK_5 #3 for 12.000 us)`, and for the holders after it in a
/// mutex's queue `; later held by TASK_7 #2, kept off its core by ISR_1 #9 for 2.000 us`), and
/// `preempted_by`, who took its core and how often (`preemption_instances`: `ISR_1 ×2`), and
/// `start_delayed_by`, who ran on the core it started on between its activation and its
/// start, and for how long (`TASK_3 #7 for 80.000 us`); NULL when nobody did.
pub(super) fn explain_misses(conn: &duckdb::Connection, id: i64, misses: &mut [Row]) -> Result<()> {
    if misses.is_empty() {
        return Ok(());
    }
    // The misses' instances, as a VALUES list the analyses' rows are joined with; each once:
    // an instance can miss twice (its implicit-period deadline and the kernel's recorded
    // miss), and a repeated key would repeat its causes and double its preemptions.
    let quote = |s: &str| format!("'{}'", s.replace('\'', "''"));
    let keys: std::collections::BTreeSet<String> = misses
        .iter()
        .filter_map(|m| {
            let instance = num(m, "instance")?;
            Some(format!("({}, {instance})", quote(&text(m, "entity"))))
        })
        .collect();
    let keys: Vec<String> = keys.into_iter().collect();
    if keys.is_empty() {
        return Ok(());
    }
    let keys = format!("(VALUES {}) k(entity, instance)", keys.join(", "));
    let mut said: std::collections::HashMap<(String, String), (Vec<String>, Vec<String>)> =
        std::collections::HashMap::new();
    // A semaphore's holder kept off its core meanwhile (priority_inversions): who ran there
    // instead, and for how long.
    let blocked = format!(
        "SELECT b.entity, b.instance, b.cause_type, b.cause, b.blocked_by, b.blocked_by_instance, \
                (SELECT string_agg(CASE WHEN q.holder = b.blocked_by \
                                         AND q.holder_instance = b.blocked_by_instance \
                                        THEN '' \
                                        ELSE 'later held by ' || q.holder || ' #' || q.holder_instance || ', ' \
                                   END || 'kept off its core by ' || q.ran, '; ' ORDER BY q.first_ts) \
                 FROM (SELECT p.holder, p.holder_instance, min(p.first_ts) AS first_ts, \
                              string_agg(p.ran || ' #' || p.ran_instance || ' for ' || fmt_ns(p.delay), \
                                         ', ' ORDER BY p.delay DESC, p.ran, p.ran_instance) AS ran \
                       FROM priority_inversions p \
                       WHERE b.cause_type = 'semaphore' AND p.capture_id = b.capture_id \
                         AND p.semaphore = b.cause AND p.waiter = b.entity \
                         AND p.waiter_instance = b.instance AND p.request_ts = b.cause_ts \
                       GROUP BY ALL) q) AS ran_instead \
         FROM blocking_instances b JOIN {keys} USING (entity, instance) \
         WHERE b.capture_id = {id} AND b.cause IS NOT NULL ORDER BY b.cause_ts"
    );
    for c in rows(conn, &blocked)? {
        let (cause, by) = (text(&c, "cause"), text(&c, "blocked_by"));
        let verb = if text(&c, "cause_type") == "event" { "set by" } else { "held by" };
        let mut desc = if by.is_empty() {
            cause
        } else {
            format!("{cause} {verb} {by} #{}", text(&c, "blocked_by_instance"))
        };
        let ran_instead = text(&c, "ran_instead");
        if !ran_instead.is_empty() {
            desc.push_str(&format!(" ({ran_instead})"));
        }
        said.entry((text(&c, "entity"), text(&c, "instance"))).or_default().0.push(desc);
    }
    let preempted = format!(
        "SELECT p.preempted AS entity, p.instance, p.preempted_by, count(*) AS n \
         FROM preemption_instances p JOIN {keys} ON k.entity = p.preempted AND k.instance = p.instance \
         WHERE p.capture_id = {id} AND p.preempted_by IS NOT NULL \
         GROUP BY ALL ORDER BY n DESC, p.preempted_by"
    );
    for c in rows(conn, &preempted)? {
        let desc = format!("{} ×{}", text(&c, "preempted_by"), text(&c, "n"));
        said.entry((text(&c, "entity"), text(&c, "instance"))).or_default().1.push(desc);
    }
    // Who ran on its core between its activation and its first start (the core it started
    // on), in 2^20 ns buckets: each window and each occupancy listed in the buckets it
    // spans, a pair counted in the first bucket they share (a join on the core alone
    // compares every window with every occupancy of the core). Over a capture longer than
    // 2^36 ns (69 s) the buckets widen, so that nothing spans more than 2^16 of them: an
    // occupancy of 2^62 ns made a list of 2^42 buckets, which DuckDB refuses.
    let start = format!(
        "WITH sh AS ( \
             SELECT greatest(20, coalesce(CAST(ceil(log2(greatest(ts_max - ts_min, 2)::DOUBLE)) \
                                               AS INTEGER), 0) - 16) AS s \
             FROM captures WHERE capture_id = {id} \
         ), w AS ( \
             SELECT i.entity, i.instance, i.core, i.activate_ts AS w0, i.start_ts AS w1, sh.s \
             FROM instances i JOIN {keys} USING (entity, instance), sh \
             WHERE i.capture_id = {id} AND i.core IS NOT NULL AND i.start_ts > i.activate_ts \
         ), wb AS ( \
             SELECT w.*, unnest(range(w.w0 >> w.s, ((w.w1 - 1) >> w.s) + 1)) AS bucket FROM w \
         ), occ AS ( \
             SELECT entity AS ran, instance AS ran_instance, core, ts, ts + dur AS te, sh.s \
             FROM intervals, sh \
             WHERE capture_id = {id} AND channel = 'state' \
               AND (state IN ('running', 'polling')) IS TRUE AND core IS NOT NULL AND dur > 0 \
               AND (entity_type IN ('T', 'I', 'ISR')) IS TRUE AND core IN (SELECT core FROM w) \
         ), ob AS ( \
             SELECT o.*, unnest(range(o.ts >> o.s, ((o.te - 1) >> o.s) + 1)) AS bucket FROM occ o \
         ), ran AS ( \
             SELECT wb.entity, wb.instance, ob.ran, ob.ran_instance, \
                    sum(overlap(ob.ts, ob.te - ob.ts, wb.w0, wb.w1 - wb.w0)) AS t \
             FROM wb JOIN ob ON ob.core = wb.core AND ob.bucket = wb.bucket \
             WHERE ob.ts < wb.w1 AND ob.te > wb.w0 \
               AND wb.bucket = greatest(ob.ts >> wb.s, wb.w0 >> wb.s) \
             GROUP BY ALL \
         ) \
         SELECT entity, instance, string_agg(ran || ' #' || ran_instance || ' for ' || fmt_ns(t), \
                ', ' ORDER BY t DESC, ran, ran_instance) AS ran \
         FROM ran GROUP BY ALL"
    );
    let mut before_start = std::collections::HashMap::new();
    for c in rows(conn, &start)? {
        before_start.insert((text(&c, "entity"), text(&c, "instance")), text(&c, "ran"));
    }
    for m in misses {
        let key = (text(m, "entity"), text(m, "instance"));
        let ran = before_start.get(&key).filter(|r| !r.is_empty());
        m.insert("start_delayed_by".into(), ran.map_or(Value::Null, |r| Value::String(r.clone())));
        let found = said.get(&(text(m, "entity"), text(m, "instance")));
        let list = |l: &Vec<String>| {
            if l.is_empty() {
                Value::Null
            } else {
                Value::String(l.join("; "))
            }
        };
        m.insert("blocked_by".into(), found.map_or(Value::Null, |f| list(&f.0)));
        m.insert("preempted_by".into(), found.map_or(Value::Null, |f| list(&f.1)));
    }
    Ok(())
}
