-- free [0,10) used [10,30) (used -> used does not split) full [30,40) overfull [40,50)
-- (repeated overfull does not split) full [50,60) used [60,70) free [70,80) full [80,90)
-- free [90,100) used [100,100] open. The second unlock at 95 (state free, expected full) is
-- an invalid_transition; the machine stays free (resynchronised on the action's target).
SELECT state, value, ts, dur, start_action, end_action, open FROM intervals ORDER BY ts;
SELECT severity, kind, position, ts, message FROM diagnostics;
