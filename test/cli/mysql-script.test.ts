// How `migrate --apply` splits a file written for the mysql client: as that client does, DELIMITER lines
// included, and never at a terminator inside quotes or comments.
import { describe, expect, it } from "vitest";
import { batchesOf } from "../../cli/migrate/apply-dialect-migration.js";
import { dialectSql } from "../../cli/migrate/dialect-migration.js";
import { mysqlClientStatements } from "../../cli/migrate/mysql-script.js";
import { mySqlSchemaStatements } from "../../registry/idempotency/stores/mysql-schema.js";

describe("mysqlClientStatements", () => {
  it("gives back the store's statements from the file `blocks migrate` writes, the procedure body whole", () => {
    const statements = mySqlSchemaStatements("t");
    const split = mysqlClientStatements(dialectSql("mysql", statements, "t"));
    // The file's header comments ride along with the first statement, as they do in the mysql client.
    expect(split.map((statement) => statement.replace(/^(?:--[^\n]*\n|\n)*/, ""))).toEqual(statements);
  });

  it("ends nothing at a terminator in quotes, backticks or comments; takes DELIMITER in any case; drops comment-only tails", () => {
    const script = [
      "SELECT 'a;b', \"c;\", 'it''s;', 'x\\';' -- d;e",
      "; # f;",
      "/* g; */ SELECT `h;`;",
      "DELIMITER $$",
      "CREATE PROCEDURE p() BEGIN SELECT 1; SELECT 2; END$$",
      "delimiter ;",
      "SELECT 3;",
      "-- the end;",
    ].join("\n");
    expect(mysqlClientStatements(script)).toEqual([
      "SELECT 'a;b', \"c;\", 'it''s;', 'x\\';' -- d;e",
      "# f;\n/* g; */ SELECT `h;`",
      "CREATE PROCEDURE p() BEGIN SELECT 1; SELECT 2; END",
      "SELECT 3",
    ]);
  });

  it("batchesOf: drizzle's breakpoints first, then the mysql client's DELIMITER, else the file whole (as Prisma sends it)", () => {
    expect(batchesOf("mysql", "CREATE TABLE a (x int);\n--> statement-breakpoint\nCREATE TABLE b (x int);\n")).toEqual([
      "CREATE TABLE a (x int);\n",
      "\nCREATE TABLE b (x int);\n",
    ]);
    expect(batchesOf("mysql", "SELECT 1;\nDELIMITER //\nSELECT 2 //\n")).toEqual(["SELECT 1", "SELECT 2"]);
    expect(batchesOf("mysql", "SELECT 1;\nSELECT 2;\n")).toEqual(["SELECT 1;\nSELECT 2;\n"]);
    expect(batchesOf("sqlite", "DELIMITER is not special here;")).toEqual(["DELIMITER is not special here;"]);
  });
});
