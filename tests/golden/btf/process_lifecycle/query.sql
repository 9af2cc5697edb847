-- Every process transition once. By hand:
--   active [0,10) running [10,20) polling [20,30) parking [30,40) polling [40,50)
--   running [50,60) waiting [60,70) ready [70,80) running [80,90) ready [90,100)
--   running [100,110) polling [110,115) parking [115,120) ready [120,130) running [130,140)
--   net_exec = 10+10+10+10+10 = 50; ready = 10+10+10 = 30; waiting = 10;
--   polling = 10+10+5 = 25; parking = 10+5 = 15; 10 active + 130 = 140 = response_time.
--   Core_0 is occupied while running or polling: [10,30) [40,60) [80,90) [100,115) [130,140).
--   mtalimitexceeded changes nothing.
SELECT channel, entity, state, ts, dur, core, start_action, end_action, open
FROM intervals ORDER BY channel, ts;
SELECT entity, instance, activate_ts, start_ts, terminate_ts, core, response_time, start_delay,
       gross_exec, net_exec, ready_time, waiting_time, polling_time, parking_time, preemptions,
       migrations, complete
FROM instances;
SELECT count(*) AS diagnostics FROM diagnostics;
