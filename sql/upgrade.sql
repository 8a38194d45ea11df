--
-- The upgrade path: install the first release, update it one release at a
-- time to the current version, exercising each; then prove that the chain
-- of scripts gives exactly what the full install script of the current
-- version gives.  Later tests run against that fresh install.
--
CREATE EXTENSION snowflake VERSION '1.0';
SELECT extversion FROM pg_extension WHERE extname = 'snowflake';
SELECT snowflake_nextval() > 0 AS works_in_1_0;

ALTER EXTENSION snowflake UPDATE TO '1.1';
SELECT snowflake_nextval() > 0 AS works_in_1_1;
SELECT ids_issued > 0 AS stats_in_1_1 FROM snowflake_stats;

ALTER EXTENSION snowflake UPDATE TO '1.2';
SELECT largest_drift_ms >= 0 AS stats_in_1_2 FROM snowflake_stats;

-- 1.3 moves the registry into a schema of its own; an empty schema of that
-- name, as Rails' schema.rb creates, makes way for it
CREATE SCHEMA snowflake;
ALTER EXTENSION snowflake UPDATE TO '1.3';
SELECT snowflake_check_worker() IS NOT NULL AS registry_in_1_3;

-- 1.4 binds the functions' references to each other when they are created
ALTER EXTENSION snowflake UPDATE;
SELECT worker_id FROM snowflake_worker_identity();
SELECT snowflake_check_worker() IS NOT NULL AS registry_in_1_4;
SELECT extversion = (SELECT default_version FROM pg_available_extensions
                      WHERE name = 'snowflake') AS is_current
  FROM pg_extension WHERE extname = 'snowflake';
SELECT snowflake_nextval() > 0 AS works_after_update;
-- 1.4 adds the column type snowflake, a string to JSON
SELECT to_json('250592571728859136'::snowflake) AS type_in_1_4;

-- Everything the extension defines, one row per (object, aspect): each
-- member's comment and privileges; a function's whole definition as
-- pg_get_functiondef prints it (arguments, result, language, markings,
-- settings, C symbol or body); a relation's kind, replica identity,
-- columns (type, NOT NULL, default, comment), constraints, indexes,
-- triggers (with their firing mode) and view query; an operator's
-- function and types; a type's storage, category, I/O functions and
-- privileges; a cast's context, method and function; the tables pg_dump
-- treats as configuration.
-- A temporary view, so that it outlives DROP EXTENSION.
CREATE TEMP VIEW snowflake_surface (object, aspect, value) AS
WITH member AS (
    SELECT d.classid, d.objid,
           pg_describe_object(d.classid, d.objid, 0) AS object
      FROM pg_depend d
      JOIN pg_extension e ON d.refclassid = 'pg_extension'::regclass
                         AND d.refobjid = e.oid
     WHERE e.extname = 'snowflake' AND d.deptype = 'e'
       -- a table's or view's row type comes with it, and a type's array
       -- type with the type (only some PostgreSQL versions list them as
       -- members)
       AND NOT EXISTS (SELECT FROM pg_type t
                        WHERE d.classid = 'pg_type'::regclass
                          AND t.oid = d.objid
                          AND (t.typrelid <> 0
                               OR EXISTS (SELECT FROM pg_type el
                                           WHERE el.oid = t.typelem
                                             AND el.typarray = t.oid)))
),
rel AS (
    SELECT m.object, c.*
      FROM member m JOIN pg_class c ON m.classid = 'pg_class'::regclass
                                   AND c.oid = m.objid
)
SELECT object, 'comment',
       obj_description(objid, (SELECT relname FROM pg_class WHERE oid = classid))
  FROM member
UNION ALL
SELECT m.object, 'function', pg_get_functiondef(p.oid)
  FROM member m JOIN pg_proc p ON m.classid = 'pg_proc'::regclass AND p.oid = m.objid
UNION ALL
SELECT m.object, 'privileges', p.proacl::text
  FROM member m JOIN pg_proc p ON m.classid = 'pg_proc'::regclass AND p.oid = m.objid
UNION ALL
SELECT object, 'privileges', relacl::text FROM rel
UNION ALL
SELECT m.object, 'privileges', n.nspacl::text
  FROM member m JOIN pg_namespace n ON m.classid = 'pg_namespace'::regclass
                                   AND n.oid = m.objid
UNION ALL
SELECT object, 'kind', relkind::text || ', replica identity ' || relreplident::text FROM rel
UNION ALL
SELECT object, 'query', pg_get_viewdef(oid) FROM rel WHERE relkind = 'v'
UNION ALL
SELECT r.object, 'column ' || a.attnum || ' ' || a.attname,
       format_type(a.atttypid, a.atttypmod)
       || CASE WHEN a.attnotnull THEN ' NOT NULL' ELSE '' END
       || coalesce(' DEFAULT ' || pg_get_expr(ad.adbin, ad.adrelid), '')
       || coalesce(' -- ' || col_description(r.oid, a.attnum), '')
  FROM rel r
  JOIN pg_attribute a ON a.attrelid = r.oid AND a.attnum > 0 AND NOT a.attisdropped
  LEFT JOIN pg_attrdef ad ON ad.adrelid = r.oid AND ad.adnum = a.attnum
UNION ALL
SELECT r.object, 'constraint ' || co.conname, pg_get_constraintdef(co.oid)
  FROM rel r JOIN pg_constraint co ON co.conrelid = r.oid
 -- NOT NULL is compared with the columns above; from PostgreSQL 18 it is
 -- also a constraint, named after the table's name when it was made
 WHERE co.contype <> 'n'
UNION ALL
SELECT r.object, 'index ' || i.indexrelid::regclass::text,
       pg_get_indexdef(i.indexrelid)
       || CASE WHEN i.indisreplident THEN ' (replica identity)' ELSE '' END
  FROM rel r JOIN pg_index i ON i.indrelid = r.oid
UNION ALL
SELECT r.object, 'trigger ' || t.tgname,
       pg_get_triggerdef(t.oid) || ' (enabled ' || t.tgenabled::text || ')'
  FROM rel r JOIN pg_trigger t ON t.tgrelid = r.oid AND NOT t.tgisinternal
UNION ALL
SELECT m.object, 'operator',
       format('%s(%s, %s) returns %s, commutator %s, negator %s',
              o.oprcode, o.oprleft::regtype, o.oprright::regtype,
              o.oprresult::regtype, o.oprcom::regoper, o.oprnegate::regoper)
  FROM member m JOIN pg_operator o ON m.classid = 'pg_operator'::regclass
                                  AND o.oid = m.objid
UNION ALL
SELECT m.object, 'type',
       format('length %s, by value %s, alignment %s, storage %s, category %s, preferred %s, '
              'input %s, output %s, receive %s, send %s, array %s, privileges %s',
              t.typlen, t.typbyval, t.typalign, t.typstorage, t.typcategory,
              t.typispreferred, t.typinput::regprocedure, t.typoutput::regprocedure,
              t.typreceive::regprocedure, t.typsend::regprocedure, t.typarray::regtype,
              t.typacl)
  FROM member m JOIN pg_type t ON m.classid = 'pg_type'::regclass AND t.oid = m.objid
UNION ALL
SELECT m.object, 'cast',
       format('context %s, method %s, function %s',
              c.castcontext, c.castmethod, c.castfunc::regprocedure)
  FROM member m JOIN pg_cast c ON m.classid = 'pg_cast'::regclass AND c.oid = m.objid
UNION ALL
SELECT 'extension snowflake', 'configuration tables',
       extconfig::regclass[]::text || ' ' || coalesce(extcondition::text, '')
  FROM pg_extension WHERE extname = 'snowflake';

CREATE TEMP TABLE surface_by_updates AS SELECT * FROM snowflake_surface;

DROP EXTENSION snowflake;
CREATE EXTENSION snowflake;
CREATE TEMP TABLE surface_installed AS SELECT * FROM snowflake_surface;

-- The two must be the same, row for row: no rows here.
(SELECT 'only after updates' AS found, * FROM surface_by_updates
 EXCEPT ALL
 SELECT 'only after updates', * FROM surface_installed)
UNION ALL
(SELECT 'only when installed', * FROM surface_installed
 EXCEPT ALL
 SELECT 'only when installed', * FROM surface_by_updates)
ORDER BY 2, 3, 1;

-- and the comparison covered every object and aspect
SELECT count(DISTINCT object) AS objects, count(*) AS aspects,
       count(*) FILTER (WHERE aspect = 'comment' AND value IS NOT NULL) AS commented
  FROM surface_installed;

-- The members of the current version, each with a one-line comment, and
-- what roles other than the owner may do with it (the owner's own
-- privileges differ between PostgreSQL versions, so they are left out).
SELECT s.object,
       length(s.value) <= 100 AND s.value NOT LIKE E'%\n%' AS one_line_comment,
       (SELECT string_agg(CASE WHEN a.grantee = 0 THEN 'PUBLIC'
                               ELSE a.grantee::regrole::text END
                          || ': ' || a.privilege_type, ', '
                          ORDER BY a.grantee, a.privilege_type)
          FROM pg_depend d
          JOIN pg_extension e ON d.refobjid = e.oid AND e.extname = 'snowflake'
          CROSS JOIN LATERAL aclexplode(coalesce(
                 (SELECT coalesce(proacl, acldefault('f', proowner)) FROM pg_proc
                   WHERE d.classid = 'pg_proc'::regclass AND oid = d.objid),
                 (SELECT coalesce(relacl, acldefault('r', relowner)) FROM pg_class
                   WHERE d.classid = 'pg_class'::regclass AND oid = d.objid),
                 (SELECT coalesce(nspacl, acldefault('n', nspowner)) FROM pg_namespace
                   WHERE d.classid = 'pg_namespace'::regclass AND oid = d.objid),
                 (SELECT coalesce(typacl, acldefault('T', typowner)) FROM pg_type
                   WHERE d.classid = 'pg_type'::regclass AND oid = d.objid))) a
         WHERE d.refclassid = 'pg_extension'::regclass AND d.deptype = 'e'
           AND pg_describe_object(d.classid, d.objid, 0) = s.object
           AND a.grantee <> a.grantor) AS others_may
  FROM surface_installed s
 WHERE s.aspect = 'comment'
 ORDER BY s.object;

-- Every column of its tables and views has a one-line comment too: no
-- rows here.
SELECT c.oid::regclass AS relation, a.attname AS column_name,
       col_description(c.oid, a.attnum) AS comment
  FROM pg_depend d
  JOIN pg_extension e ON d.refobjid = e.oid AND e.extname = 'snowflake'
  JOIN pg_class c ON d.classid = 'pg_class'::regclass AND c.oid = d.objid
  JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
 WHERE d.refclassid = 'pg_extension'::regclass AND d.deptype = 'e'
   AND coalesce(length(col_description(c.oid, a.attnum)) > 100
                OR col_description(c.oid, a.attnum) LIKE E'%\n%', true)
 ORDER BY 1, a.attnum;

DROP TABLE surface_by_updates, surface_installed;
DROP VIEW snowflake_surface;
