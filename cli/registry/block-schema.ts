// The schema of a block's declaration (`<block>/block.json`): checked when the registry loads and by the registry test.
import { z } from "zod";

const packages = z.record(z.string().min(1), z.string().min(1));
const identifier = z.string().regex(/^[A-Za-z_$][\w$]*$/, "a JavaScript identifier");

const feature = z.strictObject({
  description: z.string().min(1),
  choice: z.string().min(1).optional(),
  flag: z.string().min(1).optional(),
  off: z.string().min(1).optional(),
  prompt: z.boolean().optional(),
  default: z.boolean().optional(),
  needs: z.string().min(1).optional(),
  without: z.array(z.string().min(1)).optional(),
  detect: z.array(z.string().min(1)).optional(),
  dependencies: packages.optional(),
  devDependencies: packages.optional(),
  files: z.array(z.string().min(1)).optional(),
  dynamoDbTable: z.string().min(1).optional(),
  sqlSchema: z
    .strictObject({ dialect: z.enum(["mysql", "sqlite"]), module: z.string().min(1), statements: identifier })
    .optional(),
});

const migration = z.strictObject({
  table: z.string().min(1),
  schema: z.string().min(1).optional(),
  sql: z.unknown().optional(),
  title: z.string().optional(),
  template: z.string().optional(),
  nodePgMigrateTemplate: z.string().optional(),
  feature: z.string().min(1).optional(),
});

/**
 * The rules whose fix a block writes, by the part of `doctor` whose check reports them: a fix names the
 * block's own exports and options (idempotency's `new IdempotencyHandler(store, cache, { logger, metrics })`),
 * which the CLI does not know. The CLI's own rules (cli/doctor/finding.ts) keep their fixes there.
 */
export const BLOCK_RULES = {
  routes: ["route-user-id", "route-permanent-error", "route-require-key"],
  handler: ["handler-observability"],
  cache: ["cache-ttl"],
  maintenance: ["maintenance-scheduled"],
} as const;

export type BlockRule = (typeof BLOCK_RULES)[keyof typeof BLOCK_RULES][number];

const fix = z.string().trim().min(1, "a fix: what to change in the project, and what goes wrong otherwise");

/** One fix for each rule the check reports, keyed by the rule `doctor` prints: none missing, none unknown. */
function fixes<const Rules extends readonly string[]>(rules: Rules) {
  const shape = Object.fromEntries(rules.map((rule) => [rule, fix])) as Record<Rules[number], typeof fix>;
  const list = rules.join(", ");
  return z.strictObject(shape, {
    error: (issue) =>
      issue.code === "unrecognized_keys"
        ? `${issue.keys.join(", ")}: not a rule this check reports (${list})`
        : `one fix for each rule its check reports: ${list}`,
  });
}

/**
 * The names `doctor` looks for in the project's code: the block's exports, declared by the block so
 * the CLI holds none of them, each part with the fixes its findings print. Every part is optional: a
 * block without it is not checked for that rule.
 */
const doctor = z.strictObject({
  /** Calls (and Fastify-style plugins) that protect a route: each needs getUserId, requireKey, isPermanentError. */
  routes: z
    .strictObject({
      calls: z.array(identifier).min(1),
      plugins: z.array(identifier).default([]),
      /** A call that only sees the response, never the thrown error: `isPermanentError` has no effect there. */
      responseOnly: z.array(z.strictObject({ call: identifier, module: z.string().min(1) })).default([]),
      fixes: fixes(BLOCK_RULES.routes),
    })
    .optional(),
  /** The class whose options need a logger (and metrics where `metricsPackage` is declared), at argument `options`. */
  handler: z
    .strictObject({
      class: identifier,
      options: z.number().int().min(0),
      expects: z.array(identifier).min(1),
      metrics: z.strictObject({ option: identifier, package: z.string().min(1) }).optional(),
      /** The record's default lifetime, which no cache entry may outlive. */
      defaultTtlMs: z.number().int().positive(),
      cache: z
        .strictObject({ class: identifier, options: z.number().int().min(0), fixes: fixes(BLOCK_RULES.cache) })
        .optional(),
      fixes: fixes(BLOCK_RULES.handler),
    })
    .optional(),
  /** The call that starts the block's maintenance jobs, and the cron entry a script may run instead. */
  maintenance: z
    .strictObject({ start: identifier, cronEntry: z.string().min(1), fixes: fixes(BLOCK_RULES.maintenance) })
    .optional(),
});

/** All must hold for a variant to be chosen; a choice without any is the fallback. */
const when = z.strictObject({
  /** Features chosen (`client-kysely`). */
  features: z.array(z.string().min(1)).optional(),
  /** Features not chosen (the Redis cache is not wired in front of a Redis store). */
  without: z.array(z.string().min(1)).optional(),
  /** Packages the project declares, and ones it does not (Drizzle over postgres.js rather than pg). */
  declared: z.array(z.string().min(1)).optional(),
  undeclared: z.array(z.string().min(1)).optional(),
  /** Blocks the project has or is adding (the logger block's logger). */
  blocks: z.array(z.string().min(1)).optional(),
  /** One of these frameworks is used (the /metrics route). */
  frameworks: z.array(z.string().min(1)).optional(),
});

/**
 * One file with several versions (setup/database.ts on pg, Kysely, Redis, ...): the first choice whose
 * `when` holds is copied to `target` (a `<path>.test.ts` beside it comes too, as `<target>.test.ts`).
 */
export const variantSchema = z.strictObject({
  target: z.string().min(1),
  choices: z
    .array(
      z.strictObject({
        path: z.string().min(1),
        when: when.optional(),
        /** Packages this version imports besides its feature's own (Kysely's opens a pg Pool): installed with the range a feature of the block gives them. */
        packages: z.array(z.string().min(1)).optional(),
      }),
    )
    .min(1),
});

/**
 * The wiring `add` writes beside the blocks folder for the user to own: written once, never replaced.
 * `table`: the module whose default table name `add --table` replaces; `legacy`: the fingerprints of
 * wiring modules older versions wrote into `target`, which `update` may replace (cli/update/legacy-setup.ts).
 */
const setup = z.strictObject({
  /** The function the wiring module exports for the app to call (idempotency's `createIdempotency`): named in `add`'s next steps and in notes. */
  entry: identifier.optional(),
  files: z.array(z.strictObject({ path: z.string().min(1), target: z.string().min(1) })).default([]),
  table: z.string().min(1).optional(),
  legacy: z.strictObject({ fingerprints: z.string().min(1), target: z.string().min(1) }).optional(),
});

export const blockDeclarationSchema = z.strictObject({
  name: z.string().regex(/^[a-z0-9][a-z0-9-]{0,63}$/, "lower-case letters, digits and dashes"),
  description: z.string().min(1),
  dependencies: packages.optional(),
  devDependencies: packages.optional(),
  registryDependencies: z.array(z.string().min(1)).optional(),
  requires: packages.optional(),
  files: z
    .array(
      z.strictObject({
        path: z.string().min(1),
        framework: z.string().optional(),
        test: z.boolean().optional(),
        target: z.string().optional(),
      }),
    )
    .optional(),
  templates: z
    .array(z.strictObject({ template: z.string().min(1), target: z.string().min(1), framework: z.string().optional() }))
    .optional(),
  migration: migration.optional(),
  features: z.record(z.string().regex(/^[a-z0-9][a-z0-9-]*$/), feature).optional(),
  setup: setup.optional(),
  variants: z.array(variantSchema).optional(),
  doctor: doctor.optional(),
});

export type BlockDeclaration = z.infer<typeof blockDeclarationSchema>;
export type DoctorNames = z.infer<typeof doctor>;
export type RegistrySetup = z.infer<typeof setup>;
export type RegistryVariant = z.infer<typeof variantSchema>;
export type VariantCondition = z.infer<typeof when>;

/**
 * Every problem with a declaration, one line each naming the field, or [] when it is valid.
 *
 * @example
 * declarationProblems({ name: "x" }); // ['description: Invalid input: expected string, received undefined']
 */
export function declarationProblems(raw: unknown): string[] {
  const result = blockDeclarationSchema.safeParse(raw);
  return result.success ? [] : issueLines(result.error.issues);
}

function issueLines(issues: z.core.$ZodIssue[]): string[] {
  return issues.map((issue) => `${issue.path.join(".") || "(the declaration)"}: ${issue.message}`);
}
