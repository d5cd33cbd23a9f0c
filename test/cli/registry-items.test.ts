// `blocks registry build` writes shadcn registry items that shadcn's own schema accepts; `blocks add <file|url>` installs them.
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { tmpdir } from "node:os";
import path from "node:path";
import { registryItemSchema, registrySchema } from "shadcn/schema";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { planAdd } from "../../cli/add/plan-add.js";
import { runAdd } from "../../cli/commands/add.js";
import { runInit } from "../../cli/commands/init.js";
import { runRegistryBuild } from "../../cli/commands/registry.js";
import { loadRegistry } from "../../cli/registry/manifest.js";
import { rejection, tempProject } from "./helpers.js";

const out = mkdtempSync(path.join(tmpdir(), "blocks-items-"));
let server: Server;
let baseUrl = "";

beforeAll(async () => {
  await runRegistryBuild({ out, silent: true });
  server = createServer((request, response) => {
    const file = path.join(out, path.basename(request.url ?? ""));
    if (!existsSync(file)) return void response.writeHead(404).end();
    response.writeHead(200, { "content-type": "application/json" }).end(readFileSync(file));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  baseUrl = `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}`;
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  rmSync(out, { recursive: true, force: true });
});

const item = (name: string) =>
  JSON.parse(readFileSync(path.join(out, `${name}.json`), "utf8")) as Record<string, unknown> & {
    files: Array<{ type: string; target: string }>;
  };

async function initialised() {
  const dir = tempProject("hono-bundler");
  await runInit({ cwd: dir, yes: true });
  return dir;
}

describe("blocks registry build", () => {
  it("writes <block>.json, one <block>-<framework>.json per framework, and the index registry.json", async () => {
    const registry = await loadRegistry();
    const expected = registry.blocks.flatMap((block) => [
      block.name,
      ...new Set(block.files.flatMap((file) => (file.framework ? [`${block.name}-${file.framework}`] : []))),
    ]);
    expect(readdirSync(out).sort()).toEqual([...expected.map((name) => `${name}.json`), "registry.json"].sort());
    expect(expected).toEqual(
      expect.arrayContaining(["idempotency", "idempotency-express", "idempotency-koa", "logger-hono"]),
    );
  });

  it("every item validates against shadcn's own registryItemSchema", () => {
    for (const file of readdirSync(out).filter((name) => name !== "registry.json")) {
      const parsed = registryItemSchema.safeParse(JSON.parse(readFileSync(path.join(out, file), "utf8")));
      expect(parsed.success, `${file}: ${JSON.stringify(parsed.error?.issues?.slice(0, 3))}`).toBe(true);
    }
  });

  it("the index validates against shadcn's registrySchema and lists every item without its files' content", () => {
    const index = JSON.parse(readFileSync(path.join(out, "registry.json"), "utf8"));
    const parsed = registrySchema.safeParse(index);
    expect(parsed.success, JSON.stringify(parsed.error?.issues?.slice(0, 3))).toBe(true);
    expect(index.items.map((entry: { name: string }) => `${entry.name}.json`).sort()).toEqual(
      readdirSync(out)
        .filter((name) => name !== "registry.json")
        .sort(),
    );
    expect(JSON.stringify(index)).not.toContain('"content"');
  });

  it("is a universal item: registry:item, every file a registry:file with a ~/ target, packages as name@range", () => {
    const hono = item("idempotency-hono");
    expect(hono.type).toBe("registry:item");
    expect(
      hono.files.every((file) => file.type === "registry:file" && file.target.startsWith("~/src/blocks/idempotency/")),
    ).toBe(true);
    expect(hono.files.map((file) => file.target)).toContain("~/src/blocks/idempotency/adapters/hono.ts");
    expect(hono.files.map((file) => file.target)).not.toContain("~/src/blocks/idempotency/adapters/express.ts");
    expect(hono.dependencies).toContain("pg@^8.23.1");
  });
});

describe("blocks add <file-or-url>", () => {
  it("installs a block from an item file, with the project's rewriting and lock", async () => {
    const dir = await initialised();
    const result = await runAdd({ blocks: [path.join(out, "logger.json")], cwd: dir, yes: true, install: false });
    expect(result.blocks).toEqual(["logger"]);
    expect(result.files.map((file) => file.target)).toContain("src/blocks/logger/adapters/hono.ts");
    expect(result.files.map((file) => file.target)).not.toContain("src/blocks/logger/adapters/express.ts");
    const lock = JSON.parse(readFileSync(path.join(dir, "blocks.lock.json"), "utf8"));
    expect(Object.keys(lock.blocks.logger.files)).toContain("src/blocks/logger/logger.ts");
  });

  it("installs a block from a loopback URL, migration included", async () => {
    const dir = await initialised();
    const result = await runAdd({ blocks: [`${baseUrl}/idempotency.json`], cwd: dir, yes: true, install: false });
    expect(result.blocks).toEqual(["idempotency"]);
    expect(readFileSync(path.join(dir, "src/blocks/idempotency/adapters/hono.ts"), "utf8")).toContain('from "../');
    expect(result.migrations.map((migration) => migration.table)).toEqual(["idempotency_records"]);
    expect(result.install.commands.join(" ")).toContain("pg@^8.23.1");
  });

  it("round trip: the built item carries its migration as SQL, never its schema module, and adding it writes what adding the block writes", async () => {
    const built = item("idempotency") as unknown as { meta: { blocks: { migration: Record<string, unknown> } } };
    expect(built.meta.blocks.migration).not.toHaveProperty("schema");
    expect(built.meta.blocks.migration).toMatchObject({
      table: "idempotency_records",
      sql: { maxNameLength: 40, tables: ["{{table}}", "{{table}}_retries"] },
    });
    const options = { table: "billing.orders_idempotency", yes: true, framework: "hono" };
    const fromItem = await planAdd({
      blocks: [path.join(out, "idempotency.json")],
      cwd: await initialised(),
      ...options,
    });
    const fromRegistry = await planAdd({ blocks: ["idempotency"], cwd: await initialised(), ...options });
    expect(fromItem.migrations.map((migration) => migration.sql)).toEqual(
      fromRegistry.migrations.map((migration) => migration.sql),
    );
    expect(fromItem.migrations[0]?.sql).toContain("CREATE TABLE IF NOT EXISTS billing.orders_idempotency_retries (");
    expect(fromItem.migrations[0]?.sql).toContain("CONSTRAINT orders_idempotency_scope_key PRIMARY KEY");
  });

  it("a --table the block's rule refuses is refused for an item as for the block", async () => {
    const error = await rejection(
      runAdd({
        blocks: [path.join(out, "idempotency.json")],
        cwd: await initialised(),
        table: "a".repeat(41),
        dryRun: true,
      }),
    );
    expect(error.code).toBe("INVALID_TABLE_NAME");
  });

  it.each([
    ["a ../ target", "~/../outside.ts"],
    ["an absolute target", "/tmp/blocks-absolute.ts"],
    ["a ../ hidden inside the path", "~/src/blocks/evil/../../../outside.ts"],
  ])("refuses an item with %s, and writes nothing", async (_, target) => {
    const dir = await initialised();
    const evil = path.join(mkdtempSync(path.join(tmpdir(), "blocks-evil-")), "evil.json");
    writeFileSync(
      evil,
      JSON.stringify({
        name: "evil",
        type: "registry:item",
        files: [{ path: "x.ts", type: "registry:file", content: "export {};\n", target }],
      }),
    );
    const error = await rejection(runAdd({ blocks: [evil], cwd: dir, yes: true, install: false }));
    expect(error.code).toBe("INVALID_REGISTRY");
    expect(existsSync(path.join(dir, "src/blocks"))).toBe(false);
    expect(existsSync("/tmp/blocks-absolute.ts")).toBe(false);
  });

  it("a URL that answers 404 is a clear error", async () => {
    const error = await rejection(
      runAdd({ blocks: [`${baseUrl}/missing.json`], cwd: await initialised(), yes: true, install: false }),
    );
    expect(error.code).toBe("INVALID_REGISTRY");
    expect(error.message).toContain("missing.json");
  });
});
