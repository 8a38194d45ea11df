#!/usr/bin/python3
# Copyright (c) 2026, snowflake contributors
"""Insert a batch of objects through the SQLAlchemy ORM into tables whose
primary keys default to snowflake_nextval() on the server, and print the
IDs the ORM read back.

Usage: orm_sqlalchemy.py HOST PORT DBNAME

Prints one line per object: "author ID" or "book ID AUTHOR_ID", then
"returning N" with the number of INSERT ... RETURNING statements seen.
Used by t/202_orm_sqlalchemy.pl, which checks the IDs in SQL.
"""

import sys

from sqlalchemy import (BigInteger, Column, ForeignKey, Text, create_engine,
                        event, select, text)
from sqlalchemy.orm import Session, declarative_base, relationship

Base = declarative_base()


class Author(Base):
    __tablename__ = "authors"

    # The documented way to use snowflake IDs with SQLAlchemy: a BigInteger
    # primary key whose value the server generates.  No Sequence(), no
    # autoincrement: SQLAlchemy reads the value back with RETURNING.
    id = Column(BigInteger, primary_key=True, autoincrement=False,
                server_default=text("snowflake_nextval()"))
    name = Column(Text, nullable=False)
    books = relationship("Book", back_populates="author")


class Book(Base):
    __tablename__ = "books"

    id = Column(BigInteger, primary_key=True, autoincrement=False,
                server_default=text("snowflake_nextval()"))
    author_id = Column(BigInteger, ForeignKey("authors.id"), nullable=False)
    title = Column(Text, nullable=False)
    author = relationship("Author", back_populates="books")


def main():
    host, port, dbname = sys.argv[1:4]
    engine = create_engine(
        "postgresql+psycopg2:///%s" % dbname,
        connect_args={"host": host, "port": int(port)},
        future=True)

    returning = []

    @event.listens_for(engine, "before_cursor_execute")
    def count_returning(conn, cursor, statement, params, context, many):
        if statement.startswith("INSERT") and "RETURNING" in statement:
            returning.append(statement)

    Base.metadata.create_all(engine)

    with Session(engine) as session:
        authors = [Author(name="author %d" % i,
                          books=[Book(title="book %d" % i)])
                   for i in range(100)]
        session.add_all(authors)
        # flush sends the INSERTs and fills in the primary keys from
        # RETURNING; the books need their author's ID for the foreign key.
        session.flush()
        for author in authors:
            if author.id is None or author.books[0].author_id != author.id:
                raise SystemExit("ID not read back for %s" % author.name)
        session.commit()

        for author in authors:
            print("author %d" % author.id)
            for book in author.books:
                print("book %d %d" % (book.id, book.author_id))

        # The ORM sees what it wrote.
        rows = session.execute(select(Book).join(Author)).all()
        if len(rows) != 100:
            raise SystemExit("expected 100 books, found %d" % len(rows))

    print("returning %d" % len(returning))


if __name__ == "__main__":
    main()
