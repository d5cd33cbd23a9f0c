// Which client reaches a SQLite store: better-sqlite3 unless the project chose libSQL (`migrate` and `doctor` connect the same way).

/** The client SqliteStore runs on: better-sqlite3 unless the project has @libsql/client (or `--client libsql`). */
export type SqliteClientName = "better-sqlite3" | "libsql";

/**
 * @example
 * sqliteClientOf(new Set(["sqlite-store", "client-libsql"])); // "libsql"
 */
export function sqliteClientOf(features: Set<string>): SqliteClientName {
  return features.has("client-libsql") ? "libsql" : "better-sqlite3";
}
