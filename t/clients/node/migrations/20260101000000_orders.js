// Copyright (c) 2026, snowflake contributors
//
// A knex migration as docs/clients.md shows it: the extension first, then a
// table keyed by snowflake_nextval(); down undoes both.

exports.up = async function up(knex) {
  await knex.raw('CREATE EXTENSION IF NOT EXISTS snowflake');
  await knex.schema.createTable('orders', (t) => {
    t.bigInteger('id').primary().defaultTo(knex.raw('snowflake_nextval()'));
    t.text('note').notNullable();
  });
};

exports.down = async function down(knex) {
  await knex.schema.dropTable('orders');
  await knex.raw('DROP EXTENSION IF EXISTS snowflake');
};
