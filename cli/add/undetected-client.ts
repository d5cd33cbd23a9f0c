// A database library `add` has no client adapter for: say which one it found, what it wired instead, and why.

/** Libraries a project may reach PostgreSQL (or its data) through that no adapter in stores/clients/ wraps. */
const WITHOUT_ADAPTER = [
  "sequelize",
  "@mikro-orm/core",
  "objection",
  "pg-promise",
  "slonik",
  "@databases/pg",
  "mongoose",
];

/** `--client` values a user can pick instead. */
const CLIENT_CHOICES = "pg, postgres-js, drizzle, kysely, prisma, typeorm, knex";

/**
 * One note per undetected library, when `add` fell back to pg: without it, a TypeORM project was
 * silently given a second connection pool beside its own.
 *
 * @example
 * undetectedClientNotes(new Set(["sequelize", "pg"]), new Set(["postgres-store", "client-pg"])); // ["found sequelize, which the idempotency block has no adapter for: ..."]
 */
export function undetectedClientNotes(declared: Set<string>, features: ReadonlySet<string>): string[] {
  // pg is the PostgreSQL store's client when no other client was detected or asked for.
  if (!features.has("postgres-store") || !features.has("client-pg")) return [];
  return WITHOUT_ADAPTER.filter((name) => declared.has(name)).map(
    (name) =>
      `found ${name}, which the idempotency block has no adapter for: its PostgreSQL store runs on pg (node-postgres) with a pool of its own ` +
      `beside ${name}'s, so the app holds more connections, and executeInTransaction cannot include writes made through ${name}. ` +
      `Pass --client (${CLIENT_CHOICES}) if the app has one of those, or keep pg for the idempotency records.`,
  );
}
