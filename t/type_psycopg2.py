#!/usr/bin/python3
# Copyright (c) 2026, snowflake contributors
"""psycopg2, and the SQLAlchemy ORM over it, reading and writing the column
type snowflake (extension 1.4), as docs/clients.md describes.

psycopg2 returns a type it does not know as a str; a typecaster registered
for the type's OID makes it an int.  Python ints go in as numeric literals,
which the server casts to the type on assignment.  SQLAlchemy gets the
type as a UserDefinedType whose result processor makes ints.

Usage: type_psycopg2.py HOST PORT DBNAME

Prints one line per row, for t/202_orm_sqlalchemy.pl to check in SQL:
  returned CLIENT NOTE VALUE PYTYPE   the ID read back for the row NOTE
  lookup CLIENT NOTE FOUND            the row found again by that ID
  refused CLIENT NOTE SQLSTATE        an insert the server refused
"""

import sys

import psycopg2
import psycopg2.extensions
from sqlalchemy import Column, ForeignKey, Text, create_engine, select, text
from sqlalchemy.orm import Session, declarative_base, relationship
from sqlalchemy.types import UserDefinedType


def returned(client, note, value):
    print("returned %s %s %s %s" % (client, note, value, type(value).__name__))


def lookup(cur, client, note, value):
    cur.execute("SELECT name FROM typed_authors WHERE id = %s", (value,))
    row = cur.fetchone()
    print("lookup %s %s %s" % (client, note, row[0] if row else "NONE"))


def with_psycopg2(host, port, dbname):
    conn = psycopg2.connect(host=host, port=port, dbname=dbname)
    conn.autocommit = True
    cur = conn.cursor()
    cur.execute("""CREATE TABLE typed_authors (
                       id snowflake PRIMARY KEY DEFAULT snowflake_nextval(),
                       name text NOT NULL UNIQUE)""")

    # Defaults: the ID comes back as a str, and finds its row as a str or
    # as an int.
    ids = []
    for i in range(20):
        note = "psycopg2-%d" % i
        cur.execute("INSERT INTO typed_authors (name) VALUES (%s) RETURNING id", (note,))
        value = cur.fetchone()[0]
        returned("psycopg2", note, value)
        lookup(cur, "psycopg2", note, value)
        lookup(cur, "psycopg2-int", note, int(value))
        ids.append(int(value))

    # Python ints in: a large one, a small one (an integer literal), and a
    # negative one, refused.
    for note, value in (("psycopg2-large", ids[-1] + 1000000), ("psycopg2-small", 7),
                        ("psycopg2-negative", -1)):
        try:
            cur.execute("INSERT INTO typed_authors (id, name) VALUES (%s, %s) RETURNING id",
                        (value, note))
            returned("psycopg2-written", note, cur.fetchone()[0])
        except psycopg2.Error as e:
            print("refused psycopg2 %s %s" % (note, e.pgcode))

    # A typecaster for the type's OID, on this connection: ints.
    cur.execute("SELECT 'snowflake'::regtype::oid")
    oid = cur.fetchone()[0]
    snowflake_type = psycopg2.extensions.new_type(
        (oid,), "SNOWFLAKE", lambda value, cursor: None if value is None else int(value))
    psycopg2.extensions.register_type(snowflake_type, conn)
    cur.execute("SELECT id, name FROM typed_authors WHERE name LIKE 'psycopg2-%%' "
                "AND name NOT IN ('psycopg2-large', 'psycopg2-small')")
    for value, note in cur.fetchall():
        returned("psycopg2-typecaster", note, value)
    conn.close()


class Snowflake(UserDefinedType):
    """The column type snowflake: created as such, read back as an int."""

    cache_ok = True

    def get_col_spec(self, **kw):
        return "snowflake"

    def result_processor(self, dialect, coltype):
        return lambda value: None if value is None else int(value)


Base = declarative_base()


class Author(Base):
    __tablename__ = "sa_authors"

    id = Column(Snowflake, primary_key=True, autoincrement=False,
                server_default=text("snowflake_nextval()"))
    name = Column(Text, nullable=False, unique=True)
    books = relationship("Book", back_populates="author")


class Book(Base):
    __tablename__ = "sa_books"

    id = Column(Snowflake, primary_key=True, autoincrement=False,
                server_default=text("snowflake_nextval()"))
    author_id = Column(Snowflake, ForeignKey("sa_authors.id"), nullable=False)
    title = Column(Text, nullable=False, unique=True)
    author = relationship("Author", back_populates="books")


def with_sqlalchemy(host, port, dbname):
    engine = create_engine("postgresql+psycopg2:///%s" % dbname,
                           connect_args={"host": host, "port": int(port)}, future=True)
    Base.metadata.create_all(engine)
    with Session(engine) as session:
        authors = [Author(name="sqlalchemy-%d" % i, books=[Book(title="book-%d" % i)])
                   for i in range(20)]
        session.add_all(authors)
        session.flush()
        session.commit()
        for author in authors:
            returned("sqlalchemy", author.name, author.id)
            returned("sqlalchemy-book", author.books[0].title, author.books[0].id)
            if author.books[0].author_id != author.id:
                raise SystemExit("book %s does not reference its author" % author.books[0].title)
        for author in authors:
            found = session.execute(select(Author).where(Author.id == author.id)).scalar_one()
            print("lookup sqlalchemy %s %s" % (author.name, found.name))


def main():
    host, port, dbname = sys.argv[1:4]
    with_psycopg2(host, port, dbname)
    with_sqlalchemy(host, port, dbname)


if __name__ == "__main__":
    main()
