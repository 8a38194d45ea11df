// Copyright (c) 2026, snowflake contributors
//
// node-postgres, knex and Drizzle against tables keyed by snowflake_nextval(),
// the way docs/clients.md tells JavaScript users to set them up, and (mode
// "trapped") the settings it warns against; (mode "type") node-postgres and
// knex reading and writing the column type snowflake, in text and in binary
// parameters, and JSON built by the server as PostgREST builds it, parsed with
// JSON.parse.  Run by t/210_client_node.pl, which checks every ID printed
// here against the database, in SQL.
//
// Usage: node clients.js safe|trapped|type
// Connection: the PGHOST, PGPORT, PGDATABASE and PGUSER environment variables.
//
// Output, one line per row, for the test to compare:
//   returned CLIENT NOTE VALUE TYPE   the ID the client handed back for the row
//                                     inserted with NOTE: VALUE is the exact
//                                     decimal value of the JavaScript value,
//                                     TYPE its typeof
//   lookup CLIENT NOTE FOUND          the note of the row found by looking that
//                                     value up again ("NONE" if none)
//   stringify CLIENT RESULT           what JSON.stringify made of BigInt IDs
//   refused CLIENT NOTE SQLSTATE      an insert the server refused
// Notes have no spaces; the mode and client are part of each note, so every
// row of every run is told apart by its note.

'use strict';

const path = require('path');
const pg = require('pg');
const { drizzle } = require('drizzle-orm/node-postgres');
const { pgTable, bigint, text } = require('drizzle-orm/pg-core');
const { eq, sql } = require('drizzle-orm');

const BURST = 50;

// The exact decimal value of whatever a client returned as an ID.  A
// Number above 2^53 is an integer, so BigInt() of it is exact: it shows
// the value the Number really holds, not its shortest printed form.
function exact(value) {
  if (typeof value === 'number') return BigInt(value).toString();
  return String(value);
}

function notes(prefix) {
  return Array.from({ length: BURST }, (_, i) => `${prefix}-${i + 1}`);
}

function printReturned(client, rows) {
  for (const row of rows) {
    console.log(`returned ${client} ${row.note} ${exact(row.id)} ${typeof row.id}`);
  }
}

// Crockford base32, as snowflake_encode() writes it, to a BigInt (the
// function docs/time.md gives).
function decodeSnowflake(encoded) {
  const digits = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
  let value = 0n;
  for (const c of encoded.toUpperCase().replace(/O/g, '0').replace(/[IL]/g, '1')) {
    const d = digits.indexOf(c);
    if (d < 0) throw new Error(`not a base32 digit: ${c}`);
    value = value * 32n + BigInt(d);
  }
  return value;
}

// The documented Drizzle schema: bigint in mode "bigint", default from the
// server.
const items = pgTable('items', {
  id: bigint('id', { mode: 'bigint' }).primaryKey().default(sql`snowflake_nextval()`),
  note: text('note').notNull(),
});

// The same table declared with mode "number": the trap.
const itemsAsNumbers = pgTable('items', {
  id: bigint('id', { mode: 'number' }).primaryKey().default(sql`snowflake_nextval()`),
  note: text('note').notNull(),
});

const bigintReplacer = (key, value) => (typeof value === 'bigint' ? value.toString() : value);

async function safe() {
  // knex: the migration creates the extension and the table; rolling it
  // back and applying it again checks that it is reversible.
  const knex = require('knex')({ client: 'pg', connection: {} });
  const migrations = { directory: path.join(__dirname, 'migrations') };
  await knex.migrate.latest(migrations);
  await knex.migrate.rollback(migrations);
  const gone = await knex.raw("SELECT count(*)::int AS n FROM pg_extension WHERE extname = 'snowflake'");
  console.log(`rollback leaves extensions ${gone.rows[0].n}`);
  await knex.migrate.latest(migrations);

  // node-postgres with its defaults: bigint arrives as a string.
  const pool = new pg.Pool();
  const inserted = await pool.query(
    'INSERT INTO orders (note) SELECT unnest($1::text[]) RETURNING id, note',
    [notes('safe-pg')]);
  printReturned('pg', inserted.rows);
  for (const row of inserted.rows) {
    const found = await pool.query('SELECT note FROM orders WHERE id = $1', [row.id]);
    console.log(`lookup pg ${row.note} ${found.rows.length ? found.rows[0].note : 'NONE'}`);
  }

  // node-postgres with int8 parsed into BigInt, for this pool only: exact.
  const bigintPool = new pg.Pool({
    types: {
      getTypeParser: (oid, format) =>
        (oid === pg.types.builtins.INT8 ? BigInt : pg.types.getTypeParser(oid, format)),
    },
  });
  const asBigInt = await bigintPool.query(
    'INSERT INTO orders (note) SELECT unnest($1::text[]) RETURNING id, note',
    [notes('safe-bigint')]);
  printReturned('pg-bigint', asBigInt.rows);
  for (const row of asBigInt.rows) {
    const found = await bigintPool.query('SELECT note FROM orders WHERE id = $1', [row.id]);
    console.log(`lookup pg-bigint ${row.note} ${found.rows.length ? found.rows[0].note : 'NONE'}`);
  }
  await bigintPool.end();

  // knex: .returning('id'), strings too.
  const knexRows = await knex('orders')
    .insert(notes('safe-knex').map((note) => ({ note })))
    .returning(['id', 'note']);
  printReturned('knex', knexRows);
  for (const row of knexRows) {
    const found = await knex('orders').where({ id: row.id }).first('note');
    console.log(`lookup knex ${row.note} ${found ? found.note : 'NONE'}`);
  }

  // Drizzle, mode "bigint": BigInt values, exact.
  await pool.query(`CREATE TABLE items (
      id bigint PRIMARY KEY DEFAULT snowflake_nextval(),
      note text NOT NULL)`);
  const db = drizzle({ client: pool });
  const drizzleRows = await db.insert(items)
    .values(notes('safe-drizzle').map((note) => ({ note })))
    .returning({ id: items.id, note: items.note });
  printReturned('drizzle', drizzleRows);
  for (const row of drizzleRows) {
    const found = await db.select().from(items).where(eq(items.id, row.id));
    console.log(`lookup drizzle ${row.note} ${found.length ? found[0].note : 'NONE'}`);
  }

  // To JSON: with the replacer, IDs become exact strings; without it,
  // JSON.stringify refuses BigInt.
  const json = JSON.parse(JSON.stringify(drizzleRows, bigintReplacer));
  printReturned('drizzle-json', json.map((row) => ({ id: row.id, note: row.note })));
  try {
    JSON.stringify(drizzleRows);
    console.log('stringify drizzle-no-replacer accepted');
  } catch (e) {
    console.log(`stringify drizzle-no-replacer ${e.name}`);
  }

  // The SQL-side remedies: the ID as text inside JSON, or as base32.
  const asText = await pool.query(`
      SELECT json_build_object('id', id::text, 'note', note) AS j
        FROM orders WHERE note LIKE 'safe-pg-%'`);
  printReturned('json-text', asText.rows.map((r) => ({ id: r.j.id, note: r.j.note })));
  const asBase32 = await pool.query(`
      SELECT snowflake_encode(id) AS code, note FROM orders WHERE note LIKE 'safe-pg-%'`);
  printReturned('base32', asBase32.rows.map((r) => ({ id: decodeSnowflake(r.code), note: r.note })));
  for (const r of asBase32.rows) {
    const found = await pool.query('SELECT note FROM orders WHERE id = snowflake_decode($1)', [r.code]);
    console.log(`lookup base32 ${r.note} ${found.rows.length ? found.rows[0].note : 'NONE'}`);
  }

  await knex.destroy();
  await pool.end();
}

async function trapped() {
  const pool = new pg.Pool();

  // Drizzle, mode "number".
  const db = drizzle({ client: pool });
  const numberRows = await db.insert(itemsAsNumbers)
    .values(notes('trapped-drizzle').map((note) => ({ note })))
    .returning({ id: itemsAsNumbers.id, note: itemsAsNumbers.note });
  printReturned('drizzle', numberRows);
  for (const row of numberRows) {
    const found = await db.select().from(itemsAsNumbers).where(eq(itemsAsNumbers.id, row.id));
    console.log(`lookup drizzle ${row.note} ${found.length ? found[0].note : 'NONE'}`);
  }

  // json_build_object and row_to_json: node-postgres parses json with
  // JSON.parse, whatever parseInt8 says.
  const built = await pool.query(`
      SELECT json_build_object('id', id, 'note', note) AS j
        FROM orders WHERE note LIKE 'safe-pg-%'`);
  printReturned('json_build_object', built.rows.map((r) => r.j));
  const rowJson = await pool.query(`
      SELECT row_to_json(o) AS j FROM orders o WHERE note LIKE 'safe-knex-%'`);
  printReturned('row_to_json', rowJson.rows.map((r) => r.j));

  // parseInt8, for the whole process, as people set it to get counts as
  // numbers.  A new pool, to show it is not about connections made before.
  await pool.end();
  pg.defaults.parseInt8 = true;
  const trappedPool = new pg.Pool();
  const inserted = await trappedPool.query(
    'INSERT INTO orders (note) SELECT unnest($1::text[]) RETURNING id, note',
    [notes('trapped-pg')]);
  printReturned('pg', inserted.rows);
  for (const row of inserted.rows) {
    const found = await trappedPool.query('SELECT note FROM orders WHERE id = $1', [row.id]);
    console.log(`lookup pg ${row.note} ${found.rows.length ? found.rows[0].note : 'NONE'}`);
  }
  await trappedPool.end();
}

// The column type snowflake: to node-postgres a type it does not know, so a
// string whatever int8's settings are, in and out.  JSON that the server
// builds (PostgREST's query shape) holds it as a string, which JSON.parse
// keeps exact; the same query over a bigint key gives numbers it rounds.
async function type() {
  const pool = new pg.Pool();
  await pool.query(`CREATE TABLE typed_orders (
      id snowflake PRIMARY KEY DEFAULT snowflake_nextval(),
      note text NOT NULL)`);
  await pool.query(`CREATE TABLE bigint_orders (
      id bigint PRIMARY KEY DEFAULT snowflake_nextval(),
      note text NOT NULL)`);

  // node-postgres, defaults: strings; lookups with those strings.
  const inserted = await pool.query(
    'INSERT INTO typed_orders (note) SELECT unnest($1::text[]) RETURNING id, note',
    [notes('type-pg')]);
  printReturned('type-pg', inserted.rows);
  for (const row of inserted.rows) {
    const found = await pool.query('SELECT note FROM typed_orders WHERE id = $1', [row.id]);
    console.log(`lookup type-pg ${row.note} ${found.rows.length ? found.rows[0].note : 'NONE'}`);
  }

  // knex: strings too.
  const knex = require('knex')({ client: 'pg', connection: {} });
  const knexRows = await knex('typed_orders')
    .insert(notes('type-knex').map((note) => ({ note })))
    .returning(['id', 'note']);
  printReturned('type-knex', knexRows);
  for (const row of knexRows) {
    const found = await knex('typed_orders').where({ id: row.id }).first('note');
    console.log(`lookup type-knex ${row.note} ${found ? found.note : 'NONE'}`);
  }
  await knex.destroy();

  // Binary parameters: a Buffer is sent in binary format, which the server
  // reads with the type's receive function as bigint's eight bytes, and a
  // negative one is refused.  (Binary results are no use here: this
  // node-postgres decodes every column of a row as UTF-8 text, whatever its
  // format.)
  const binaryPool = new pg.Pool();
  for (const row of inserted.rows.slice(0, 10)) {
    const id = BigInt(row.id) + 1000000n;
    const bytes = Buffer.alloc(8);
    bytes.writeBigInt64BE(id);
    const note = `type-binary-${row.note.slice('type-pg-'.length)}`;
    await binaryPool.query('INSERT INTO typed_orders (id, note) VALUES ($1, $2)', [bytes, note]);
    printReturned('type-binary', [{ id, note }]);
  }
  const negative = Buffer.alloc(8);
  negative.writeBigInt64BE(-1n);
  try {
    await binaryPool.query('INSERT INTO typed_orders (id, note) VALUES ($1, $2)',
      [negative, 'type-binary-negative']);
    console.log('refused type-binary type-binary-negative none');
  } catch (e) {
    console.log(`refused type-binary type-binary-negative ${e.code}`);
  }
  await binaryPool.end();

  // PostgREST's query shape over the table, and over the same kind of rows
  // keyed by bigint, parsed with JSON.parse.
  await pool.query('INSERT INTO bigint_orders (note) SELECT unnest($1::text[])',
    [notes('type-bigint')]);
  for (const [client, table] of [['postgrest-snowflake', 'typed_orders'],
    ['postgrest-bigint', 'bigint_orders']]) {
    const { rows } = await pool.query(`
        SELECT coalesce(json_agg(_postgrest_t), '[]')::text AS body
          FROM (SELECT id, note FROM ${table}
                 WHERE note LIKE 'type-pg-%' OR note LIKE 'type-bigint-%') _postgrest_t`);
    printReturned(client, JSON.parse(rows[0].body));
  }
  await pool.end();

  // parseInt8, the trap for bigint: it does not touch the type.
  pg.defaults.parseInt8 = true;
  const trappedPool = new pg.Pool();
  const again = await trappedPool.query(
    "SELECT id, note FROM typed_orders WHERE note LIKE 'type-pg-%'");
  printReturned('type-parseint8', again.rows.map((r) => ({ id: r.id, note: r.note })));
  await trappedPool.end();
}

const modes = { safe, trapped, type };
const mode = modes[process.argv[2]];
if (!mode) {
  console.error('usage: node clients.js safe|trapped|type');
  process.exit(2);
}
mode().catch((e) => {
  console.error(e);
  process.exit(1);
});
