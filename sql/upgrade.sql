--
-- The upgrade path: install the first release, update it one release at a
-- time to the current version, and check that the result matches a fresh
-- install object for object.  Later tests run against the fresh install.
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

-- every member object with its markings, comment and privileges
CREATE FUNCTION pg_temp.snowflake_members()
RETURNS TABLE (object text, markings text, comment text, acl text)
LANGUAGE sql AS $$
    SELECT pg_describe_object(d.classid, d.objid, d.objsubid),
           (SELECT provolatile::text || proisstrict::text || proparallel::text
              FROM pg_proc WHERE d.classid = 'pg_proc'::regclass AND oid = d.objid),
           obj_description(d.objid, (SELECT relname FROM pg_class WHERE oid = d.classid)),
           coalesce((SELECT proacl::text FROM pg_proc
                      WHERE d.classid = 'pg_proc'::regclass AND oid = d.objid),
                    (SELECT relacl::text FROM pg_class
                      WHERE d.classid = 'pg_class'::regclass AND oid = d.objid))
      FROM pg_depend d
     WHERE d.refclassid = 'pg_extension'::regclass
       AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'snowflake')
       AND d.deptype = 'e'
$$;
CREATE TEMP TABLE upgraded AS SELECT * FROM pg_temp.snowflake_members();

DROP EXTENSION snowflake;
CREATE EXTENSION snowflake;
CREATE TEMP TABLE fresh AS SELECT * FROM pg_temp.snowflake_members();

-- no differences either way
(SELECT 'only after update' AS side, * FROM upgraded EXCEPT SELECT 'only after update', * FROM fresh)
UNION ALL
(SELECT 'only in fresh install', * FROM fresh EXCEPT SELECT 'only in fresh install', * FROM upgraded);
SELECT count(*) > 0 AS compared_something FROM fresh;
DROP TABLE upgraded, fresh;
