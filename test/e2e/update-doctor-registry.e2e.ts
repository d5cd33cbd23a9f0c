// The built CLI on a fixture: `update` merges and conflicts, `registry build` + `add <url|file>` type-check, `doctor` finds and clears.
import { cpSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { tmpdir } from "node:os";
import path from "node:path";
import { registryItemSchema, registrySchema } from "shadcn/schema";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REPO, blocks, copyFixture, inProject } from "./harness.js";

const NO_DATABASE = { DATABASE_URL: "" };

describe("blocks update (built CLI)", () => {
  const project = copyFixture("hono-bundler");
  const upstream = mkdtempSync(path.join(tmpdir(), "blocks-upstream-"));
  const registry = path.join(upstream, "registry");
  const vendored = (name: string) => path.join(project.dir, "src/blocks/logger", name);
  const edit = (file: string, change: (text: string) => string) =>
    writeFileSync(file, change(readFileSync(file, "utf8")));
  const update = (...args: string[]) => blocks(project.dir, ["update", "--registry", registry, ...args], NO_DATABASE);

  beforeAll(async () => {
    cpSync(path.join(REPO, "registry"), registry, { recursive: true });
    cpSync(path.join(REPO, "templates"), path.join(upstream, "templates"), { recursive: true });
    expect((await blocks(project.dir, ["init", "--yes"])).exitCode).toBe(0);
    const add = await blocks(project.dir, ["add", "logger", "--yes", "--no-install", "--registry", registry]);
    expect(add.exitCode, add.stderr).toBe(0);
  });
  afterAll(() => {
    project.remove();
    rmSync(upstream, { recursive: true, force: true });
  });

  it("--dry-run shows the plan and writes nothing", async () => {
    edit(path.join(registry, "logger/context.ts"), (text) => `${text}// upstream: context\n`);
    const before = readFileSync(vendored("context.ts"), "utf8");
    const run = await update("--dry-run", "--json");
    expect(run.exitCode, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout).files).toContainEqual({
      block: "logger",
      target: "src/blocks/logger/context.ts",
      status: "updated",
    });
    expect(readFileSync(vendored("context.ts"), "utf8")).toBe(before);
  });

  it("an edit here and a change upstream in another place both survive; an untouched file is replaced; a deleted one stays deleted", async () => {
    // An edit of a line the file really has: a replace that finds nothing would test nothing.
    expect(readFileSync(vendored("request-id.ts"), "utf8")).toContain("// A request's id:");
    edit(vendored("request-id.ts"), (text) => text.replace("// A request's id:", "// Our request ids"));
    edit(path.join(registry, "logger/request-id.ts"), (text) => `${text}\nexport const REQUEST_ID_MAX = 128;\n`);
    rmSync(vendored("logger.ts"));
    edit(path.join(registry, "logger/logger.ts"), (text) => `${text}// upstream: logger\n`);
    const run = await update("--yes");
    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.stdout).toContain("src/blocks/logger/request-id.ts: merged");
    expect(run.stdout).toContain("src/blocks/logger/logger.ts: you deleted it: it stays deleted");
    expect(readFileSync(vendored("request-id.ts"), "utf8")).toMatch(
      /^\/\/ Our request ids[\s\S]*REQUEST_ID_MAX = 128;\n$/,
    );
    expect(readFileSync(vendored("context.ts"), "utf8")).toMatch(/\/\/ upstream: context\n$/);
    expect(existsSync(vendored("logger.ts"))).toBe(false);
  });

  it("the same line changed on both sides: conflict markers, the file listed, exit 1", async () => {
    edit(vendored("request-id.ts"), (text) => text.replace('"x-request-id"', '"x-correlation-id"'));
    edit(path.join(registry, "logger/request-id.ts"), (text) => text.replace('"x-request-id"', '"x-trace-id"'));
    const run = await update("--yes");
    expect(run.exitCode).toBe(1);
    expect(run.stdout).toContain("src/blocks/logger/request-id.ts: CONFLICT");
    expect(run.stderr).toContain("1 file(s) need you: src/blocks/logger/request-id.ts");
    expect(readFileSync(vendored("request-id.ts"), "utf8")).toContain(
      '<<<<<<< yours\nexport const REQUEST_ID_HEADER = "x-correlation-id";\n=======\nexport const REQUEST_ID_HEADER = "x-trace-id";\n>>>>>>> registry\n',
    );
  });

  it("diff exits 1 when there are differences, 0 when there are none", async () => {
    expect((await blocks(project.dir, ["diff", "--registry", registry])).exitCode).toBe(1);
    const other = copyFixture("hono-bundler");
    try {
      await blocks(other.dir, ["init", "--yes"]);
      await blocks(other.dir, ["add", "logger", "--yes", "--no-install"]);
      expect((await blocks(other.dir, ["diff"])).exitCode).toBe(0);
    } finally {
      other.remove();
    }
  });
});

describe("registry items and blocks doctor (built CLI)", () => {
  const project = copyFixture("hono-bundler");
  const out = mkdtempSync(path.join(tmpdir(), "blocks-r-"));
  let server: Server;
  let url = "";
  const app = path.join(project.dir, "src/app.ts");
  const original = readFileSync(app, "utf8");

  beforeAll(async () => {
    const build = await blocks(REPO, ["registry", "build", "--out", out]);
    expect(build.exitCode, build.stderr).toBe(0);
    server = createServer((request, response) => {
      const file = path.join(out, path.basename(request.url ?? ""));
      if (!existsSync(file)) return void response.writeHead(404).end();
      response.writeHead(200, { "content-type": "application/json" }).end(readFileSync(file));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const address = server.address();
    url = `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}`;
    expect((await blocks(project.dir, ["init", "--yes"])).exitCode).toBe(0);
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
    project.remove();
    rmSync(out, { recursive: true, force: true });
  });

  it("registry build output validates against shadcn's schemas: each item against registryItemSchema, the index registry.json against registrySchema", () => {
    for (const file of readdirSync(out)) {
      const schema = file === "registry.json" ? registrySchema : registryItemSchema;
      expect(schema.safeParse(JSON.parse(readFileSync(path.join(out, file), "utf8"))).success, file).toBe(true);
    }
  });

  it("add from a loopback URL and from a file vendors blocks that type-check", async () => {
    const fromUrl = await blocks(project.dir, ["add", `${url}/idempotency.json`, "--yes"]);
    expect(fromUrl.exitCode, fromUrl.stderr).toBe(0);
    const fromFile = await blocks(project.dir, ["add", path.join(out, "logger.json"), "--yes"]);
    expect(fromFile.exitCode, fromFile.stderr).toBe(0);
    expect(existsSync(path.join(project.dir, "src/blocks/idempotency/adapters/hono.ts"))).toBe(true);
    expect(existsSync(path.join(project.dir, "src/blocks/logger/adapters/hono.ts"))).toBe(true);
    const tsc = await inProject(project.dir, "tsc", ["--noEmit"]);
    expect(tsc.exitCode, tsc.stdout).toBe(0);
  });

  it("a hostile item (issue 25): its schema module never runs, even transpiled by the built CLI, and its option never reaches npm", async () => {
    const hostile = copyFixture("hono-bundler");
    const scratch = mkdtempSync(path.join(tmpdir(), "blocks-hostile-"));
    let requests = 0;
    const attacker = createServer((_, response) => void (requests++, response.writeHead(404).end()));
    await new Promise<void>((resolve) => attacker.listen(0, "127.0.0.1", resolve));
    try {
      expect((await blocks(hostile.dir, ["init", "--yes"])).exitCode).toBe(0);
      const marker = path.join(scratch, "ran");
      const trapped = (migration?: Record<string, unknown>) => {
        const item = JSON.parse(readFileSync(path.join(out, "idempotency.json"), "utf8")) as {
          files: Array<{ target: string; content: string }>;
          meta: { blocks: Record<string, unknown> };
        };
        const schema = item.files.find((file) => file.target.endsWith("/stores/postgres-schema.ts"));
        if (schema)
          schema.content = `import { writeFileSync } from "node:fs";\nwriteFileSync(${JSON.stringify(marker)}, "ran");\n${schema.content}`;
        if (migration) item.meta.blocks.migration = migration;
        const file = path.join(mkdtempSync(path.join(scratch, "item-")), "idempotency.json");
        writeFileSync(file, JSON.stringify(item));
        return file;
      };
      const fromData = await blocks(hostile.dir, ["add", trapped(), "--dry-run"]);
      expect(fromData.exitCode, fromData.stderr).toBe(0);
      const fromModule = await blocks(hostile.dir, [
        "add",
        trapped({ table: "idempotency_records", schema: "idempotency/stores/postgres-schema.ts" }),
        "--dry-run",
      ]);
      expect(fromModule.exitCode).toBe(1);
      expect(fromModule.stderr).toContain("idempotency/stores/postgres-schema.ts");
      expect(existsSync(marker)).toBe(false);

      const specifier = `--registry=http://127.0.0.1:${(attacker.address() as { port: number }).port}/@1`;
      const evil = path.join(scratch, "evil.json");
      const files = [
        {
          path: "registry/evil/index.ts",
          type: "registry:file",
          content: "export {};\n",
          target: "~/src/blocks/evil/index.ts",
        },
      ];
      writeFileSync(
        evil,
        JSON.stringify({ name: "evil", type: "registry:item", dependencies: [specifier, "is-number@^7.0.0"], files }),
      );
      const injected = await blocks(hostile.dir, ["add", evil, "--yes"]);
      expect(injected.exitCode).toBe(1);
      expect(injected.stderr).toContain(JSON.stringify(specifier));
      expect(requests).toBe(0);
      expect(existsSync(path.join(hostile.dir, "src/blocks/evil"))).toBe(false);
    } finally {
      await new Promise((resolve) => attacker.close(resolve));
      hostile.remove();
      rmSync(scratch, { recursive: true, force: true });
    }
  });

  it("doctor lists each broken rule with file:line and exits 1, then exits 0 once they are fixed", async () => {
    const pkgFile = path.join(project.dir, "package.json");
    const pkg = JSON.parse(readFileSync(pkgFile, "utf8"));
    writeFileSync(
      app,
      `${original}
import { IdempotencyHandler, PostgresStore } from "~/blocks/idempotency";
import { idempotency } from "~/blocks/idempotency/adapters/hono";
declare const pool: ConstructorParameters<typeof PostgresStore>[0];
const handler = new IdempotencyHandler(new PostgresStore(pool));
app.post("/orders", idempotency(handler), (c) => c.json({}, 201));
`,
    );
    writeFileSync(pkgFile, JSON.stringify({ ...pkg, scripts: { build: "tsc -p tsconfig.json" } }, null, 2));
    const broken = await blocks(project.dir, ["doctor"], NO_DATABASE);
    expect(broken.exitCode).toBe(1);
    for (const rule of [
      "route-user-id",
      "route-permanent-error",
      "route-require-key",
      "handler-observability",
      "maintenance-scheduled",
      "tests-in-build",
    ]) {
      expect(broken.stdout).toMatch(new RegExp(`\\S+:\\d+ ${rule} `));
    }
    writeFileSync(
      app,
      `${original}
import { IdempotencyHandler, PostgresStore } from "~/blocks/idempotency";
import { idempotency } from "~/blocks/idempotency/adapters/hono";
import { startMaintenance } from "./jobs/idempotency-maintenance";
declare const pool: ConstructorParameters<typeof PostgresStore>[0] & Parameters<typeof startMaintenance>[1];
declare const logger: never, metrics: never;
const handler = new IdempotencyHandler(new PostgresStore(pool), undefined, { logger, metrics });
startMaintenance(handler, pool);
app.post("/orders", idempotency(handler, { getUserId: () => "user", isPermanentError: () => false, requireKey: true }), (c) => c.json({}, 201));
`,
    );
    writeFileSync(pkgFile, JSON.stringify({ ...pkg, scripts: {} }, null, 2));
    const fixed = await blocks(project.dir, ["doctor", "--json"], NO_DATABASE);
    expect(JSON.parse(fixed.stdout).findings).toEqual([]);
    expect(fixed.exitCode).toBe(0);
  });
});
