// The manifest is derived: files from each block's folder, tags from their names, imports checked for every selection.
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { runRegistryBuild } from "../../cli/commands/registry.js";
import { checkBlockImports } from "../../cli/registry/check-imports.js";
import { tagFile } from "../../cli/registry/derive-files.js";
import { loadRegistry } from "../../cli/registry/manifest.js";

const REGISTRY = path.resolve(import.meta.dirname, "../../registry");

/** The house limit on a vendored file: users read and own every one, so each stays small enough to read whole. */
const MAX_LINES = 300;
/** Lines as `wc -l` counts them: a final newline ends the last line, it does not start another. */
const lineCount = (text: string) => text.split("\n").length - (text.endsWith("\n") ? 1 : 0);

describe("the derived registry", async () => {
  const registry = await loadRegistry(REGISTRY);

  it("has a block for every folder with a block.json, named after it", () => {
    const folders = readdirSync(REGISTRY).filter((name) => statSync(path.join(REGISTRY, name)).isDirectory());
    expect(registry.blocks.map((block) => block.name).sort()).toEqual(folders.sort());
  });

  it("tags tests (*.test.ts and testing/ helpers) and framework variants (adapters/<fw>.ts, middleware/<fw>.ts, <name>-<fw>.ts)", () => {
    const frameworks = ["express", "fastify", "hono", "koa"];
    expect(tagFile("idempotency/adapters/express.ts", frameworks)).toEqual({
      path: "idempotency/adapters/express.ts",
      framework: "express",
    });
    expect(tagFile("logger/adapters/koa.test.ts", frameworks)).toEqual({
      path: "logger/adapters/koa.test.ts",
      framework: "koa",
      test: true,
    });
    expect(tagFile("idempotency/examples/metrics-hono.ts", frameworks)).toMatchObject({ framework: "hono" });
    expect(tagFile("idempotency/testing/recorders.ts", frameworks)).toEqual({
      path: "idempotency/testing/recorders.ts",
      test: true,
    });
    expect(tagFile("idempotency/http/express-like.ts", frameworks)).toEqual({
      path: "idempotency/http/express-like.ts",
    });
    expect(registry.blocks.flatMap((block) => block.files).some((file) => file.path.endsWith("block.json"))).toBe(
      false,
    );
  });

  it("carries every other field of a block.json through unchanged", async () => {
    const declared = JSON.parse(readFileSync(path.join(REGISTRY, "idempotency/block.json"), "utf8")) as Record<
      string,
      unknown
    >;
    const block = registry.blocks.find((candidate) => candidate.name === "idempotency");
    expect(block).toMatchObject(declared);
  });

  it(`keeps every vendored runtime file at ${MAX_LINES} lines or fewer (tests and testing/ helpers aside)`, () => {
    const over = registry.blocks
      .flatMap((block) => block.files)
      .filter((file) => !file.test && file.path.endsWith(".ts"))
      .map((file) => ({ path: file.path, lines: lineCount(readFileSync(path.join(REGISTRY, file.path), "utf8")) }))
      .filter((file) => file.lines > MAX_LINES)
      .map((file) => `${file.path}: ${file.lines} lines`);
    expect(over).toEqual([]);
  });

  it.each(registry.blocks.map((block) => [block.name, block] as const))(
    "%s: every relative import of a vendored file resolves inside the selection, and every package it imports is declared",
    async (_, block) => {
      expect(await checkBlockImports(registry, block)).toEqual([]);
    },
  );
});

describe("the import check", () => {
  it("names a core file importing an adapter, a missing file, an undeclared package and a runtime devDependency; registry build refuses it", async () => {
    const root = mkdtempSync(path.join(tmpdir(), "blocks-registry-"));
    try {
      const write = (file: string, text: string) => {
        mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
        writeFileSync(path.join(root, file), text);
      };
      write("registry.json", JSON.stringify({ version: 1, frameworks: { express: { packages: ["express"] } } }));
      write(
        "demo/block.json",
        JSON.stringify({
          name: "demo",
          description: "d",
          dependencies: { pg: "^8" },
          devDependencies: { vitest: "^4" },
        }),
      );
      write(
        "demo/index.ts",
        'import "./adapters/express";\nimport { x } from "./gone";\nimport lodash from "lodash";\nimport { it } from "vitest";\nimport pg from "pg";\n',
      );
      write("demo/adapters/express.ts", 'import express from "express";\n');
      write("demo/index.test.ts", 'import { it } from "vitest";\nimport "./index";\n');
      const registry = await loadRegistry(root);
      const problems = (await checkBlockImports(registry, registry.blocks[0] as never)).join("\n");
      expect(problems).toContain(
        'demo/index.ts: imports "./adapters/express", which this selection does not copy (frameworks: none',
      );
      expect(problems).toContain('imports "./gone"');
      expect(problems).toContain('imports the undeclared package "lodash"');
      expect(problems).toContain('imports "vitest" at runtime, but it is only a devDependency');
      expect(problems).not.toContain("index.test.ts");
      expect(problems).not.toContain('"pg"');
      const refused = await runRegistryBuild({ out: path.join(root, "out"), registry: root }).catch(
        (err: { code?: string }) => err,
      );
      expect(refused).toMatchObject({ code: "INVALID_REGISTRY" });
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it("a file outside a store feature must not import the store (`add --store` leaves it out); re-exporting it is fine, and so is a feature that needs it", async () => {
    const root = mkdtempSync(path.join(tmpdir(), "blocks-registry-"));
    try {
      const write = (file: string, text: string) => {
        mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
        writeFileSync(path.join(root, file), text);
      };
      const store = (choice: string, file: string, extra = {}) => ({
        description: choice,
        flag: "store",
        choice,
        prompt: false,
        files: [file],
        ...extra,
      });
      const features = {
        "sql-store": store("sql", "demo/stores/sql.ts", { default: true }),
        "kv-store": store("kv", "demo/stores/kv.ts", { off: "sql" }),
        "client-x": {
          description: "x",
          flag: "client",
          choice: "x",
          prompt: false,
          needs: "sql-store",
          files: ["demo/stores/client-x.ts"],
        },
      };
      write("registry.json", JSON.stringify({ version: 1, frameworks: {} }));
      write("demo/block.json", JSON.stringify({ name: "demo", description: "d", features }));
      write("demo/index.ts", 'export { SqlStore } from "./stores/sql";\nexport { KvStore } from "./stores/kv";\n');
      write("demo/handler.ts", 'import type { SqlStore } from "./stores/sql";\nexport type H = SqlStore;\n');
      write("demo/stores/sql.ts", "export class SqlStore {}\n");
      write("demo/stores/kv.ts", "export class KvStore {}\n");
      write("demo/stores/client-x.ts", 'import type { SqlStore } from "./sql";\nexport type X = SqlStore;\n');
      const registry = await loadRegistry(root);
      const problems = await checkBlockImports(registry, registry.blocks[0] as never);
      expect(problems).toEqual([
        'demo/handler.ts: imports "./stores/sql", which this selection does not copy (frameworks: none, tests: false, without sql-store)',
        'demo/handler.ts: imports "./stores/sql", which this selection does not copy (frameworks: none, tests: true, without sql-store)',
      ]);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
