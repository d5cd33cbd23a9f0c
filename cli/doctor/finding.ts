// What `blocks doctor` reports: one finding per broken rule, at a file and line, with the fix.
import { BLOCK_RULES, type BlockRule } from "../registry/block-schema.js";

/**
 * The CLI's own rules, the same for every block, each with the fix it suggests. The rules a block's
 * declared names are checked by (routes, handler, maintenance) take their fix from the block (block.json's
 * `doctor.<part>.fixes`): it names the block's exports, which the CLI does not know.
 */
export const RULES = {
  "migration-applied":
    "Run `npx blocks migrate --apply` (on the database the store's wiring connects to: DATABASE_URL; MYSQL_URL for a MySQL store; SQLITE_PATH, or LIBSQL_URL on libSQL, for a SQLite store) or your migration tool: the tables the store needs are missing.",
  "runtime-package-in-dev":
    "Move the package to `dependencies`: vendored runtime code imports it, and production installs skip devDependencies.",
  "tests-in-build":
    'Exclude the vendored tests from the build tsconfig: `"exclude": ["<dir>/**/*.test.ts", "<dir>/**/testing/**"]`.',
  "unresolved-conflict":
    "Keep what you want of both sides (yours above =======, the registry's below), delete the three marker lines, then run `npx blocks update` again: it merges nothing into the file while they remain.",
} as const;

export type CliRule = keyof typeof RULES;
export type Rule = BlockRule | CliRule;

/** Every rule doctor may report, the blocks' first. */
export const RULE_NAMES = [...Object.values(BLOCK_RULES).flat(), ...(Object.keys(RULES) as CliRule[])] as [
  Rule,
  ...Rule[],
];

export type Finding = {
  rule: Rule;
  /** Project-relative, forward slashes. */
  file: string;
  line: number;
  message: string;
  fix: string;
};

/**
 * A rule of the CLI's takes its fix from RULES unless given one; a block's rule, from the block's declaration.
 *
 * @example
 * finding("runtime-package-in-dev", "package.json", 1, "pg is a devDependency");
 * finding("route-user-id", "src/app.ts", 12, "idempotent() on POST has no getUserId", routes.fixes["route-user-id"]);
 */
export function finding(rule: CliRule, file: string, line: number, message: string, fix?: string): Finding;
export function finding(rule: BlockRule, file: string, line: number, message: string, fix: string): Finding;
export function finding(rule: Rule, file: string, line: number, message: string, fix?: string): Finding {
  return { rule, file, line, message, fix: fix ?? RULES[rule as CliRule] };
}
