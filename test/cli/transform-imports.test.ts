// The import rewrite over alias, relative and NodeNext styles: static, type-only, re-exports, dynamic.
import { describe, expect, it } from "vitest";
import { transformSource } from "../../cli/transforms/transform.js";
import type { ImportContext } from "../../cli/transforms/resolve-specifier.js";

const FILES: Record<string, string> = {
  "idempotency/index.ts": "idempotency",
  "idempotency/handler.ts": "idempotency",
  "idempotency/types.ts": "idempotency",
  "idempotency/stores/index.ts": "idempotency",
  "idempotency/stores/postgres-store.ts": "idempotency",
  "idempotency/adapters/express.ts": "idempotency",
  "logger/index.ts": "logger",
};

function context(
  overrides: Partial<ImportContext> & { registryPath?: string | undefined; target?: string },
): ImportContext {
  const blocksDir = overrides.blocksDir ?? "src/blocks";
  const planned = new Map(
    Object.entries(FILES).map(([file, block]) => [file, { target: `${blocksDir}/${file}`, block }]),
  );
  const registryPath = "registryPath" in overrides ? overrides.registryPath : "idempotency/adapters/express.ts";
  return {
    from: {
      registryPath,
      block: registryPath?.split("/")[0],
      target: overrides.target ?? `${blocksDir}/${registryPath}`,
    },
    planned,
    alias: overrides.alias,
    blocksDir,
    moduleStyle: overrides.moduleStyle ?? "extensionless",
  };
}

const SOURCE = `import { IdempotencyHandler } from "../handler";
import type { IdempotencyStore } from '../types';
import * as stores from "../stores";
import express from "express";
import { createHash } from "node:crypto";
export { PostgresStore } from "../stores/postgres-store";
export type * from "../types";
export * from "../stores";
const lazy = await import("../stores/postgres-store");
type Lazy = typeof import("../types");
vi.mock("../handler");
`;

describe("transformSource", () => {
  it("keeps relative imports extensionless for bundler and node10 projects (packages untouched)", () => {
    expect(transformSource(SOURCE, "express.ts", context({}))).toMatchInlineSnapshot(`
      "import { IdempotencyHandler } from "../handler";
      import type { IdempotencyStore } from '../types';
      import * as stores from "../stores";
      import express from "express";
      import { createHash } from "node:crypto";
      export { PostgresStore } from "../stores/postgres-store";
      export type * from "../types";
      export * from "../stores";
      const lazy = await import("../stores/postgres-store");
      type Lazy = typeof import("../types");
      vi.mock("../handler");
      "
    `);
  });

  it("adds .js to every relative specifier for NodeNext, and names directory indexes explicitly", () => {
    expect(transformSource(SOURCE, "express.ts", context({ moduleStyle: "nodenext" }))).toMatchInlineSnapshot(`
      "import { IdempotencyHandler } from "../handler.js";
      import type { IdempotencyStore } from '../types.js';
      import * as stores from "../stores/index.js";
      import express from "express";
      import { createHash } from "node:crypto";
      export { PostgresStore } from "../stores/postgres-store.js";
      export type * from "../types.js";
      export * from "../stores/index.js";
      const lazy = await import("../stores/postgres-store.js");
      type Lazy = typeof import("../types.js");
      vi.mock("../handler.js");
      "
    `);
  });

  const TEMPLATE = `import type { IdempotencyHandler } from "@/blocks/idempotency";
import { logger } from "@/blocks/logger/index";
export { PostgresStore } from "@/blocks/idempotency/stores/postgres-store";
const handler = await import("@/blocks/idempotency/handler");
`;

  it("turns @/blocks imports of a file outside the blocks into the project's alias", () => {
    const ctx = context({ registryPath: undefined, target: "src/jobs/maintenance.ts", alias: "~/blocks" });
    expect(transformSource(TEMPLATE, "maintenance.ts", ctx)).toMatchInlineSnapshot(`
      "import type { IdempotencyHandler } from "~/blocks/idempotency";
      import { logger } from "~/blocks/logger/index";
      export { PostgresStore } from "~/blocks/idempotency/stores/postgres-store";
      const handler = await import("~/blocks/idempotency/handler");
      "
    `);
  });

  it("uses the alias with .js under NodeNext", () => {
    const ctx = context({
      registryPath: undefined,
      target: "src/jobs/maintenance.ts",
      alias: "@/blocks",
      moduleStyle: "nodenext",
    });
    expect(transformSource(TEMPLATE, "maintenance.ts", ctx)).toMatchInlineSnapshot(`
      "import type { IdempotencyHandler } from "@/blocks/idempotency/index.js";
      import { logger } from "@/blocks/logger/index.js";
      export { PostgresStore } from "@/blocks/idempotency/stores/postgres-store.js";
      const handler = await import("@/blocks/idempotency/handler.js");
      "
    `);
  });

  it("falls back to relative paths when the project has no alias", () => {
    const ctx = context({
      registryPath: undefined,
      target: "src/jobs/maintenance.ts",
      alias: undefined,
      moduleStyle: "nodenext",
    });
    expect(transformSource(TEMPLATE, "maintenance.ts", ctx)).toMatchInlineSnapshot(`
      "import type { IdempotencyHandler } from "../blocks/idempotency/index.js";
      import { logger } from "../blocks/logger/index.js";
      export { PostgresStore } from "../blocks/idempotency/stores/postgres-store.js";
      const handler = await import("../blocks/idempotency/handler.js");
      "
    `);
  });

  it("keeps @/blocks imports inside one block relative, so its tests need no alias configuration", () => {
    const source = `import { IdempotencyHandler } from "@/blocks/idempotency";\nimport { logger } from "@/blocks/logger";\n`;
    const ctx = context({ registryPath: "idempotency/examples/metrics.ts", alias: "@/blocks" });
    expect(transformSource(source, "metrics.ts", ctx)).toMatchInlineSnapshot(`
      "import { IdempotencyHandler } from "../index";
      import { logger } from "@/blocks/logger";
      "
    `);
  });

  it("resolves against the planned files, never by basename", () => {
    // "./index" exists in several folders of the plan; only the one beside the importer may match.
    const ctx = context({ registryPath: "idempotency/adapters/express.ts" });
    expect(() => transformSource(`import { x } from "./index";`, "express.ts", ctx)).toThrowError(
      expect.objectContaining({ code: "UNRESOLVED_IMPORT" }),
    );
  });

  it("parses .ts files as TypeScript, not TSX, so generic arrows and casts survive", () => {
    const source = `import { a } from "./handler";\nconst id = <T,>(value: T) => value;\nconst n = <number>(a as unknown);\n`;
    const ctx = context({ registryPath: "idempotency/types.ts", moduleStyle: "nodenext" });
    expect(transformSource(source, "types.ts", ctx)).toContain(`from "./handler.js"`);
  });

  it("leaves non-script files alone", () => {
    const readme = "import x from './handler'\n";
    expect(transformSource(readme, "README.md", context({ moduleStyle: "nodenext" }))).toBe(readme);
  });
});
