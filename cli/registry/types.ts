// The registry as the CLI holds it once loaded (manifest.ts reads it): its frameworks and blocks, and each block's parts.
import type { MigrationSql } from "../migrate/migration-sql.js";
import type { DoctorNames, RegistrySetup, RegistryVariant } from "./block-schema.js";

/** One file of a block; `path` is relative to the registry folder, and lands at `<dir>/<target ?? path>`. */
export type RegistryFile = {
  path: string;
  /** Copied only when the project uses this framework (adapters, framework middlewares and their tests). */
  framework?: string;
  /** A test that ships with the block; skipped by `add --no-tests`. */
  test?: boolean;
  target?: string;
};

/** A file rendered from templates/: `template` is relative to the registry folder, `target` to `<dir>`. */
export type RegistryTemplate = { template: string; target: string; framework?: string };

/** A block's schema: the module (registry-relative) that renders its DDL, and how its migration file looks. */
export type RegistryMigration = {
  table: string;
  /** The registry module that renders the DDL (code: read only from the shipped registry or a `--registry` folder). */
  schema?: string;
  /** The DDL as data: what a registry item carries, and what `schema` is rendered into. */
  sql?: MigrationSql;
  /** What the tables hold, for the migration's title line. */
  title?: string;
  /** Registry-relative templates with {{title}}, {{up}} (and {{down}}) for the plain and node-pg-migrate layouts. */
  template?: string;
  nodePgMigrateTemplate?: string;
  /** The feature whose store the table belongs to (`postgres-store`): no migration when another store is chosen. */
  feature?: string;
};

/** Where a block added from a configured registry came from: what blocks.lock.json records (no header, no expanded value). */
export type ItemOrigin = { registry: string; url: string; item: string };

export type RegistryBlock = {
  name: string;
  description: string;
  /** Other blocks added first. */
  registryDependencies?: string[];
  /** `name -> range`, installed unless the project already declares the package. */
  dependencies?: Record<string, string>;
  /** What the vendored tests need (vitest, PGlite, driver typings). */
  devDependencies?: Record<string, string>;
  files: RegistryFile[];
  templates?: RegistryTemplate[];
  /** Blocks with a schema: `add` and `migrate` render their migration (default table name). */
  migration?: RegistryMigration;
  /** Optional parts the user chooses at `add` (e.g. `cache`, `metrics`): their packages and files come only when chosen. */
  features?: Record<string, RegistryFeature>;
  /** `package -> minimum version` the block's adapters need (e.g. `hono: "4.8.0"` for `hono/route`); checked at `add`. */
  requires?: Record<string, string>;
  /** The wiring `add` writes for the user to own (src/idempotency-setup.ts and its cron entry): see block-schema.ts. */
  setup?: RegistrySetup;
  /** Files with one version per choice (the database client, the cache): see block-schema.ts and add/plan-variants.ts. */
  variants?: RegistryVariant[];
  /** The names `doctor` looks for in the project's code (the block's exports): see block-schema.ts. */
  doctor?: DoctorNames;
  /** Loaded from a configured registry (`add @acme/x`): recorded in blocks.lock.json. */
  origin?: ItemOrigin;
};

/** One optional part of a block: chosen with `--<name> <choice>` or at the prompt; `--yes` picks it when a `detect` package is declared. */
export type RegistryFeature = {
  description: string;
  /** The value that turns it on (`--cache redis`); `off` (default "none") turns it off. */
  choice: string;
  /** The command-line flag, when several features share one (`--store redis|dynamodb`). @default the feature's name */
  flag?: string;
  /** The value that turns it off. @default "none" */
  off?: string;
  /** `false`: never asked; on exactly when a `detect` package is declared (or the flag says so). */
  prompt?: boolean;
  /** The flag's default (`--store postgres`): on unless another feature sharing its flag is; its `off` is not a value of its own. */
  default?: boolean;
  /** A feature this one only works with (a PostgreSQL client needs `postgres-store`): off without it, and asking for both is an error. */
  needs?: string;
  /** Features it never goes with (the Redis cache in front of a Redis store): off beside one, and asking for both is an error. */
  without?: string[];
  detect?: string[];
  /** Installed as `dependencies` only when chosen: production code imports them. */
  dependencies?: Record<string, string>;
  /** What the feature's vendored tests need, installed only when chosen. */
  devDependencies?: Record<string, string>;
  /** Registry paths (also listed in, or derived into, `files`) copied only when chosen. */
  files?: string[];
  /**
   * The feature is a DynamoDB store: the registry module (one of `files`) exporting
   * `dynamoDbTableDefinition(table)`, whose table `blocks migrate` writes and `--apply` creates.
   */
  dynamoDbTable?: string;
  /**
   * The feature is a store on another SQL database: the registry module (one of `files`) whose
   * `statements(table)` export gives the DDL `blocks migrate` writes as that dialect's plain SQL file.
   */
  sqlSchema?: { dialect: "mysql" | "sqlite"; module: string; statements: string };
};

/** A framework is "used" when the project declares one of `packages`; its dev typings come along. */
export type RegistryFramework = { packages: string[]; devDependencies?: Record<string, string> };

export type Registry = {
  version: 1;
  /** Absolute folder the manifest paths are relative to. */
  root: string;
  frameworks: Record<string, RegistryFramework>;
  blocks: RegistryBlock[];
  /** What `blocks add <file-or-url>` was given -> the name of the block loaded from it. */
  sources?: Record<string, string>;
};
