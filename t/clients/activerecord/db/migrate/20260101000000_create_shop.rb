# Copyright (c) 2026, snowflake contributors
#
# A migration as docs/clients.md shows it: the extension first, then tables
# keyed by snowflake_nextval().

class CreateShop < ActiveRecord::Migration[6.1]
  def change
    enable_extension "snowflake"

    create_table :customers, id: :bigint, default: -> { "snowflake_nextval()" } do |t|
      t.text :name, null: false, index: { unique: true }
    end

    create_table :orders, id: :bigint, default: -> { "snowflake_nextval()" } do |t|
      t.references :customer, null: false, foreign_key: true
      t.text :note, null: false, index: { unique: true }
    end
  end
end
