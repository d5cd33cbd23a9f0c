// The transaction guard's reading of SQL text: what ends or leaves a transaction is refused, however it is spelled.
import { describe, expect, it } from "vitest";
import { refuseTransactionControl, TransactionControlError } from "./transaction-guard";

const refused = (text: string) => expect(() => refuseTransactionControl(text), text).toThrow(TransactionControlError);
const allowed = (text: string) => expect(() => refuseTransactionControl(text), text).not.toThrow();

describe("refuseTransactionControl", () => {
  it("refuses statements that end, open or reconfigure a transaction, in any case and after comments", () => {
    for (const text of [
      "COMMIT",
      "commit work",
      "End",
      "ROLLBACK",
      "abort",
      "begin",
      "START TRANSACTION",
      "PREPARE TRANSACTION 'x'",
    ])
      refused(text);
    for (const text of ["set transaction read only", "SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY"])
      refused(text);
    for (const text of ["  \n\tcommit", "/* why */ commit", "/* a /* nested */ comment */ commit", "-- why\ncommit"])
      refused(text);
  });

  it("refuses text with more than one statement: drivers run every statement of parameterless text", () => {
    for (const text of [
      "select 1; commit",
      "insert into t values (1);\nselect 2",
      "select 'a'';'; rollback",
      "select $q$ x $q$; commit",
    ])
      refused(text);
  });

  it("reads a backslash-escaped quote both ways, so neither reading hides a statement", () => {
    refused("select E'\\''; commit; --'");
    refused("select 'C:\\'; commit");
  });

  it("lets savepoints, ordinary statements and semicolons inside literals, identifiers and comments through", () => {
    for (const text of [
      "SAVEPOINT a",
      "ROLLBACK TO SAVEPOINT a",
      "rollback work to a",
      "RELEASE SAVEPOINT a",
      "SET LOCAL lock_timeout = '1s'",
    ])
      allowed(text);
    for (const text of [
      "select ';commit'",
      "select $$ ; commit $$",
      'select 1 as "x; commit"',
      "select 1 -- ; commit",
      "select 1;",
      "PREPARE q AS select 1",
    ])
      allowed(text);
  });

  it("on MySQL, also refuses what commits implicitly (DDL, table locks, autocommit) and executable comments", () => {
    const mysqlRefused = (text: string) =>
      expect(() => refuseTransactionControl(text, "mysql"), text).toThrow(TransactionControlError);
    for (const text of [
      "CREATE TABLE t (id INT)",
      "alter table t add c int",
      "DROP TABLE t",
      "TRUNCATE t",
      "RENAME TABLE a TO b",
      "LOCK TABLES t WRITE",
      "UNLOCK TABLES",
    ])
      mysqlRefused(text);
    for (const text of [
      "SET autocommit = 1",
      "set session autocommit = 1",
      "XA START 'x'",
      "/*!COMMIT*/",
      "select 1 /*M!100000 ; commit */",
      "COMMIT AND CHAIN",
    ])
      mysqlRefused(text);
    for (const text of [
      "CREATE TEMPORARY TABLE t (id INT)",
      "DROP TEMPORARY TABLE t",
      "SAVEPOINT a",
      "ROLLBACK TO SAVEPOINT a",
      "select 1",
    ]) {
      expect(() => refuseTransactionControl(text, "mysql"), text).not.toThrow();
    }
    // PostgreSQL's DDL is transactional: it stays allowed there.
    allowed("CREATE TABLE t (id INT)");
  });

  it("refuses a call with no SQL text to check, naming the problem", () => {
    expect(() => refuseTransactionControl(undefined)).toThrow(/no SQL text/);
  });

  it("says why and what to do instead, with a code to match on", () => {
    let thrown: unknown;
    try {
      refuseTransactionControl("commit");
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toMatchObject({
      code: "TRANSACTION_CONTROL_REFUSED",
      message: expect.stringMatching(/return to commit, throw to roll back/) as unknown,
    });
  });
});
