--
-- Decoding fixed IDs under the default layout (41/10/12 bits, epoch
-- 2025-01-01 00:00:00+00): the output must never change.
--
SET TimeZone = 'UTC';
SELECT id, p.*
  FROM (VALUES (0::bigint),
               (1),
               (4095),                                  -- last sequence
               (4096),                                  -- worker 1
               (4194303),                               -- worker 1023, seq 4095
               (4194304),                               -- 1 ms
               ((1000::bigint << 22) | (5 << 12) | 7),  -- 1 s, worker 5, seq 7
               ((86400000::bigint << 22) | (1023 << 12) | 4095),
               (250099318017519616),                    -- an ID issued in 2026
               (9223372036854775807)                    -- the last ID of the layout
       ) v(id),
       snowflake_parse(id) p
 ORDER BY id;

-- TimeZone changes the display, not the instant
SET TimeZone = 'America/New_York';
SELECT created_at FROM snowflake_parse(250099318017519616);
RESET TimeZone;
