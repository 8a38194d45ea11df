# Copyright (c) 2026, snowflake contributors
#
# Active Record without Rails, through the same ActiveRecord::Tasks that
# `rails db:migrate`, `db:schema:dump` and `db:schema:load` call, against
# the tables of db/migrate (keyed by snowflake_nextval()).
#
# Usage: ruby app.rb migrate|dump|load|type|type-load DATABASE [--ignore-registry]
#   migrate    runs the migrations, dumps db/schema.rb, inserts
#   dump       dumps db/schema.rb
#   load       loads db/schema.rb into DATABASE, which must be empty, inserts
#   type       creates tables keyed by the column type snowflake (extension
#              1.4), inserts, dumps db/schema.rb and db/structure.sql
#   type-load  loads db/structure.sql into DATABASE, which must be empty,
#              inserts into the typed tables
# Inserting means: insert rows through the models and print the IDs Active
# Record read back:
#   customer ID NAME      Model.create!
#   order ID NOTE         Model.insert_all(..., returning:)
#   lookup NAME FOUND     the row found again by that ID ("NONE" if none)
# The typed tables print "typed-customer ID NAME", "typed-order ID NOTE",
# "typed-reference ID CUSTOMER_ID", "lookup NAME FOUND", "class ATTRIBUTE
# CLASS" (the Ruby class a model without attribute declarations reads the
# key as) and "refused NAME SQLSTATE" (an insert the server refused).
# --ignore-registry dumps with the workaround docs/clients.md gives for
# extension versions that keep their registry table in the application's
# schema.  Connection: PGHOST, PGPORT and PGUSER.  t/212_client_activerecord.pl
# checks the output in SQL.

require "active_record"

mode, database, *options = ARGV
abort "usage: ruby app.rb migrate|dump|load|type|type-load DATABASE [--ignore-registry]" unless %w[migrate dump load type type-load].include?(mode) && database

ENV["VERBOSE"] = "false" # quiet migrations, as `rails db:migrate VERBOSE=false`
ActiveRecord::SchemaDumper.ignore_tables += ["snowflake_workers"] if options.include?("--ignore-registry")

tasks = ActiveRecord::Tasks::DatabaseTasks
tasks.root = __dir__
tasks.env = "development"
tasks.db_dir = File.join(__dir__, "db")
tasks.migrations_paths = [File.join(__dir__, "db", "migrate")]
ActiveRecord::Base.configurations = {
  "development" => {
    "adapter" => "postgresql",
    "host" => ENV.fetch("PGHOST"),
    "port" => ENV.fetch("PGPORT"),
    "username" => ENV.fetch("PGUSER"),
    "database" => database,
  },
}
db_config = ActiveRecord::Base.configurations.configs_for(env_name: "development", name: "primary")
ActiveRecord::Base.establish_connection(db_config)

# The column type snowflake: Active Record does not know it and would read
# it as a String (logging "unknown OID"), so the models declare their keys
# big integers.  schema.rb cannot describe the type, so these tables are
# dumped to structure.sql (config.active_record.schema_format = :sql).
if mode.start_with?("type")
  ActiveRecord::Base.logger = nil
  if mode == "type"
    connection = ActiveRecord::Base.connection
    connection.enable_extension "snowflake"
    connection.create_table :typed_customers, id: :snowflake, default: -> { "snowflake_nextval()" } do |t|
      t.text :name, null: false, index: { unique: true }
    end
    connection.create_table :typed_orders, id: :snowflake, default: -> { "snowflake_nextval()" } do |t|
      t.references :typed_customer, type: :snowflake, null: false, foreign_key: true
      t.text :note, null: false, index: { unique: true }
    end
  else
    tasks.load_schema(db_config, :sql, File.join(tasks.db_dir, "structure.sql"))
  end

  class TypedCustomer < ActiveRecord::Base
    attribute :id, :big_integer
    has_many :typed_orders
  end

  class TypedOrder < ActiveRecord::Base
    attribute :id, :big_integer
    attribute :typed_customer_id, :big_integer
    belongs_to :typed_customer
  end

  class UndeclaredCustomer < ActiveRecord::Base
    self.table_name = "typed_customers"
  end

  customers = Array.new(10) { |i| TypedCustomer.create!(name: "#{database}-typed-customer-#{i}") }
  customers.each { |c| puts "typed-customer #{c.id} #{c.name}" }
  orders = customers.map { |c| c.typed_orders.create!(note: "#{database}-typed-order-#{c.name[/\d+\z/]}") }
  orders.each do |o|
    puts "typed-order #{o.id} #{o.note}"
    puts "typed-reference #{o.id} #{o.typed_customer_id}"
  end
  customers.each do |c|
    found = TypedCustomer.find_by(id: c.id)
    puts "lookup #{c.name} #{found ? found.name : 'NONE'}"
  end
  orders.each do |o|
    found = TypedOrder.find(o.id)
    puts "lookup #{o.note} #{found.typed_customer == o.typed_customer ? found.note : 'NONE'}"
  end
  puts "class id #{UndeclaredCustomer.first.id.class}"
  begin
    TypedCustomer.create!(id: -1, name: "#{database}-negative")
    puts "refused #{database}-negative none"
  rescue ActiveRecord::ActiveRecordError => e
    puts "refused #{database}-negative #{e.cause.result.error_field(PG::Result::PG_DIAG_SQLSTATE)}"
  end

  if mode == "type"
    tasks.dump_schema(db_config, :ruby)
    tasks.dump_schema(db_config, :sql)
  end
  exit
end

case mode
when "migrate"
  tasks.migrate
  tasks.dump_schema(db_config, :ruby)
when "dump"
  tasks.dump_schema(db_config, :ruby)
  exit
when "load"
  tasks.load_schema(db_config, :ruby, File.join(tasks.db_dir, "schema.rb"))
end

class Customer < ActiveRecord::Base
  has_many :orders
end

class Order < ActiveRecord::Base
  belongs_to :customer
end

customers = Array.new(10) { |i| Customer.create!(name: "#{database}-customer-#{i}") }
customers.each { |c| puts "customer #{c.id} #{c.name}" }

orders = Order.insert_all(
  customers.map { |c| { customer_id: c.id, note: "#{database}-order-#{c.name[/\d+\z/]}" } },
  returning: %w[id note])
orders.each { |row| puts "order #{row['id']} #{row['note']}" }

customers.each do |c|
  found = Customer.find_by(id: c.id)
  puts "lookup #{c.name} #{found ? found.name : 'NONE'}"
end
orders.each do |row|
  found = Order.find_by(id: row["id"])
  puts "lookup #{row['note']} #{found ? found.note : 'NONE'}"
end
