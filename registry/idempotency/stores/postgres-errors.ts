// The database error PostgresStore tells apart: a function of its schema missing from a database migrated before it existed.

/** The error that says what to run when `err` is the schema's function `name` missing; undefined for any other error. */
export function missingFunction(err: unknown, name: string, table: string): Error | undefined {
  if (!isMissingFunction(err, name)) return undefined;
  return new Error(
    `PostgresStore: the function ${name}() is missing on this database; the migration that created ${table} predates it. ` +
      "Run `npx blocks migrate --apply` (or `npx blocks migrate` and apply the file it writes with your migration tool).",
    { cause: err },
  );
}

/** SQLSTATE 42883 (no function of that name and arguments), found by code or, through an ORM's wrapper, by its message. */
function isMissingFunction(err: unknown, name: string): boolean {
  const { code, message } = (typeof err === "object" && err !== null ? err : {}) as {
    code?: unknown;
    message?: unknown;
  };
  const text = String(message ?? err);
  return text.includes(name.split(".").pop() as string) && (code === "42883" || /does not exist/.test(text));
}
