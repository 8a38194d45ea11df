# Copyright (c) 2026, snowflake contributors
#
# Active Record without Rails, through the same ActiveRecord::Tasks that
# `rails db:migrate`, `db:schema:dump` and `db:schema:load` call, against
# the tables of db/migrate (keyed by snowflake_nextval()).
#
# Usage: ruby app.rb migrate|dump|load DATABASE [--ignore-registry]
#   migrate  runs the migrations, dumps db/schema.rb, inserts
#   dump     dumps db/schema.rb
#   load     loads db/schema.rb into DATABASE, which must be empty, inserts
# Inserting means: insert rows through the models and print the IDs Active
# Record read back:
#   customer ID NAME      Model.create!
#   order ID NOTE         Model.insert_all(..., returning:)
#   lookup NAME FOUND     the row found again by that ID ("NONE" if none)
# --ignore-registry dumps with the workaround docs/clients.md gives for
# extension versions that keep their registry table in the application's
# schema.  Connection: PGHOST, PGPORT and PGUSER.  t/212_client_activerecord.pl
# checks the output in SQL.

require "active_record"

mode, database, *options = ARGV
abort "usage: ruby app.rb migrate|dump|load DATABASE [--ignore-registry]" unless %w[migrate dump load].include?(mode) && database

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
