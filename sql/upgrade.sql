--
-- The upgrade path: install the first release, update it one release at a
-- time to the current version, exercising each, and pin what the update
-- produced.  Later tests run against a fresh install.
--
CREATE EXTENSION snowflake VERSION '1.0';
SELECT extversion FROM pg_extension WHERE extname = 'snowflake';
SELECT snowflake_nextval() > 0 AS works_in_1_0;

ALTER EXTENSION snowflake UPDATE TO '1.1';
SELECT extversion FROM pg_extension WHERE extname = 'snowflake';
SELECT snowflake_nextval() > 0 AS works_in_1_1;
SELECT ids_issued > 0 AS stats_in_1_1 FROM snowflake_stats;

ALTER EXTENSION snowflake UPDATE;
SELECT extversion = (SELECT default_version FROM pg_available_extensions
                      WHERE name = 'snowflake') AS is_current
  FROM pg_extension WHERE extname = 'snowflake';
SELECT snowflake_nextval() > 0 AS works_after_update;
SELECT largest_drift_ms >= 0 AS stats_in_1_2 FROM snowflake_stats;

-- every member object of the updated extension, with its markings,
-- whether it has a comment, and its privileges (the owner shown as OWNER),
-- pinned: a later upgrade script that forgets a COMMENT, a GRANT or a
-- marking shows up here.  (There is no full install script for the current
-- version, so CREATE EXTENSION runs this same chain of scripts and a
-- comparison with a fresh install would compare the chain with itself.)
SELECT pg_describe_object(d.classid, d.objid, d.objsubid) AS object,
       (SELECT provolatile::text || proisstrict::text || proparallel::text
          FROM pg_proc WHERE d.classid = 'pg_proc'::regclass AND oid = d.objid) AS markings,
       obj_description(d.objid, (SELECT relname FROM pg_class WHERE oid = d.classid))
           IS NOT NULL AS commented,
       regexp_replace(coalesce((SELECT proacl::text FROM pg_proc
                                 WHERE d.classid = 'pg_proc'::regclass AND oid = d.objid),
                               (SELECT relacl::text FROM pg_class
                                 WHERE d.classid = 'pg_class'::regclass AND oid = d.objid)),
                      '\m' || current_user || '\M', 'OWNER', 'g') AS acl
  FROM pg_depend d
 WHERE d.refclassid = 'pg_extension'::regclass
   AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'snowflake')
   AND d.deptype = 'e'
 ORDER BY object;

-- later tests start from CREATE EXTENSION
DROP EXTENSION snowflake;
CREATE EXTENSION snowflake;
