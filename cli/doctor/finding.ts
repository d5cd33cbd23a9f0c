// What `blocks doctor` reports: one finding per broken rule, at a file and line, with the fix.

/** The seed's rules doctor can check, each with the fix it suggests. */
export const RULES = {
  "route-user-id":
    "Pass `getUserId: (req) => <the authenticated user's id>`: without it, keys are scoped to one shared anonymous user.",
  "route-permanent-error":
    "Pass `isPermanentError: (err) => <true for errors a retry cannot fix>` (validation, declined card): otherwise every error frees the key for a retry.",
  "route-require-key":
    "Pass `requireKey: true` on state-changing routes: without it a request with no Idempotency-Key runs unprotected.",
  "maintenance-scheduled":
    "Call `createIdempotency().startMaintenance()` (the wiring module `add` wrote) at startup, or run its cron entry (`jobs/idempotency-maintenance`) from a package.json script or your scheduler: stuck records are never recovered and expired ones never deleted otherwise.",
  "migration-applied":
    "Run `npx blocks migrate --apply` (on the database the store's wiring connects to: DATABASE_URL; MYSQL_URL for MySqlStore; SQLITE_PATH, or LIBSQL_URL on libSQL, for SqliteStore) or your migration tool: the tables the store needs are missing.",
  "handler-observability":
    "Pass `logger` (and `metrics`, since the project has prom-client) to `new IdempotencyHandler(store, cache, { logger, metrics })`: without them failures are silent and unmeasured.",
  "runtime-package-in-dev":
    "Move the package to `dependencies`: vendored runtime code imports it, and production installs skip devDependencies.",
  "tests-in-build":
    'Exclude the vendored tests from the build tsconfig: `"exclude": ["<dir>/**/*.test.ts", "<dir>/**/testing/**"]`.',
  "unresolved-conflict":
    "Keep what you want of both sides (yours above =======, the registry's below), delete the three marker lines, then run `npx blocks update` again: it merges nothing into the file while they remain.",
  "cache-ttl":
    "Give the cache a TTL no longer than the handler's `ttlMs`: a cached answer must not outlive its record.",
} as const;

export type Rule = keyof typeof RULES;

export type Finding = {
  rule: Rule;
  /** Project-relative, forward slashes. */
  file: string;
  line: number;
  message: string;
  fix: string;
};

/**
 * @example
 * finding("route-user-id", "src/app.ts", 12, "POST /orders: idempotent() without getUserId");
 */
export function finding(rule: Rule, file: string, line: number, message: string, fix: string = RULES[rule]): Finding {
  return { rule, file, line, message, fix };
}
