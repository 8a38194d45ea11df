--
-- Every function's volatility, strictness, parallel safety and comment,
-- pinned from pg_proc.
--
SELECT p.oid::regprocedure AS function,
       p.provolatile AS volatile,
       p.proisstrict AS strict,
       p.proparallel AS parallel,
       CASE WHEN p.proretset THEN 'setof ' ELSE '' END || p.prorettype::regtype AS returns,
       obj_description(p.oid, 'pg_proc') IS NOT NULL AS has_comment
  FROM pg_proc p
  JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid
  JOIN pg_extension e ON d.refclassid = 'pg_extension'::regclass AND d.refobjid = e.oid
 WHERE e.extname = 'snowflake'
 ORDER BY p.oid::regprocedure::text;
