// `blocks add @acme/name` from a registry configured in blocks.json: headers from the environment, registryDependencies, clear refusals.
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { runAdd } from "../../cli/commands/add.js";
import { runDiff } from "../../cli/commands/diff.js";
import { runRegistryBuild } from "../../cli/commands/registry.js";
import { runUpdate } from "../../cli/commands/update.js";
import { runInit } from "../../cli/commands/init.js";
import { runSearch } from "../../cli/commands/search.js";
import { checkConfig } from "../../cli/config/blocks-config.js";
import { indexUrl } from "../../cli/registry/registries-config.js";
import { rejection, tempProject } from "./helpers.js";
import { configureRegistries, servePrivateRegistry, type PrivateRegistry } from "./registry-server.js";

let registry: PrivateRegistry;
beforeAll(async () => {
  registry = await servePrivateRegistry();
});
afterAll(() => registry.close());
afterEach(() => {
  delete process.env.ACME_TOKEN;
  registry.custom.clear();
  registry.requests.length = 0;
});

const auth = { Authorization: "Bearer ${ACME_TOKEN}" };

async function project(
  registries: Record<string, unknown> = { "@acme": { url: `${registry.origin}/r/{name}.json`, headers: auth } },
) {
  const dir = tempProject("hono-bundler");
  await runInit({ cwd: dir, yes: true });
  configureRegistries(dir, registries);
  return dir;
}

/** Every file under dir, recursively, as text. */
function everyFile(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => readFileSync(path.join(entry.parentPath, entry.name), "latin1"));
}

function expectNoToken(error: Error & { suggestion?: string }) {
  expect(
    JSON.stringify({ message: error.message, cause: String(error.cause), suggestion: error.suggestion }),
  ).not.toContain(registry.token);
}

describe("blocks add @registry/name", () => {
  it("adds the item and its dependencies (a sibling by bare name, a shipped block), the token sent and written nowhere", async () => {
    process.env.ACME_TOKEN = registry.token;
    const dir = await project();
    const result = await runAdd({
      blocks: ["@acme/audit-log"],
      cwd: dir,
      yes: true,
      install: false,
      framework: "none",
    });
    expect(result.blocks).toEqual(["tenant-guard", "logger", "audit-log"]);
    expect(readFileSync(path.join(dir, "src/blocks/audit-log/index.ts"), "utf8")).toContain("export function audit");
    expect(existsSync(path.join(dir, "src/blocks/tenant-guard/index.ts"))).toBe(true);
    const lock = JSON.parse(readFileSync(path.join(dir, "blocks.lock.json"), "utf8"));
    expect(lock.blocks["audit-log"].registry).toEqual({
      registry: "@acme",
      url: `${registry.origin}/r/{name}.json`,
      item: "audit-log",
    });
    expect(lock.blocks["tenant-guard"].registry.item).toBe("tenant-guard");
    expect(lock.blocks.logger.registry).toBeUndefined();
    expect(registry.requests.map((request) => request.path)).toEqual(["/r/audit-log.json", "/r/tenant-guard.json"]);
    expect(everyFile(dir).some((text) => text.includes(registry.token))).toBe(false);
  });

  it("a missing variable names the registry and the variable, and nothing is fetched", async () => {
    const error = await rejection(
      runAdd({ blocks: ["@acme/audit-log"], cwd: await project(), yes: true, install: false }),
    );
    expect(error.code).toBe("MISSING_ENV_VAR");
    expect(error.message).toContain("@acme");
    expect(error.message).toContain("ACME_TOKEN");
    expect(registry.requests).toEqual([]);
  });

  it.each([
    ["a wrong token (401)", "/r/{name}.json", "wrong", "refused the credentials (HTTP 401)"],
    ["an item it does not have (404)", "/r/{name}.json", "right", "does not exist (HTTP 404)"],
    ["a non-JSON answer", "/html/{name}.json", "right", "not JSON"],
    ["a redirect to another origin", "/redirect/{name}.json", "right", "redirects to another origin"],
    ["an answer larger than any item", "/huge/{name}.json", "right", "answered more than 16 MB"],
  ])("%s is a clear error naming the registry, never the token", async (_, route, token, why) => {
    process.env.ACME_TOKEN = token === "right" ? registry.token : "wrong-token";
    const dir = await project({ "@acme": { url: `${registry.origin}${route}`, headers: auth } });
    const error = await rejection(
      runAdd({
        blocks: [token === "right" && route.startsWith("/r/") ? "@acme/nothing" : "@acme/audit-log"],
        cwd: dir,
        yes: true,
        install: false,
      }),
    );
    expect(error.code).toBe("REGISTRY_FETCH_FAILED");
    expect(error.message).toContain("Registry @acme");
    expect(error.message).toContain(why);
    expectNoToken(error);
    expect(existsSync(path.join(dir, "src/blocks"))).toBe(false);
  });

  it("a registry that does not answer in timeoutMs is a clear error", async () => {
    process.env.ACME_TOKEN = registry.token;
    const dir = await project({
      "@acme": { url: `${registry.origin}/slow/{name}.json`, headers: auth, timeoutMs: 300 },
    });
    const error = await rejection(runAdd({ blocks: ["@acme/audit-log"], cwd: dir, yes: true, install: false }));
    expect(error.message).toContain('Registry @acme: the item "audit-log" at');
    expect(error.message).toContain("did not answer within 300 ms");
  });

  it("a registry that stops mid-answer is a clear error, not an unexpected one", async () => {
    process.env.ACME_TOKEN = registry.token;
    const dir = await project({
      "@acme": { url: `${registry.origin}/stalls/{name}.json`, headers: auth, timeoutMs: 300 },
    });
    const error = await rejection(runAdd({ blocks: ["@acme/audit-log"], cwd: dir, yes: true, install: false }));
    expect(error.code).toBe("REGISTRY_FETCH_FAILED");
    expect(error.message).toContain("did not finish its answer within 300 ms");
  });

  it("an unreachable registry's cause comes without the token even when the URL carries it", async () => {
    process.env.ACME_TOKEN = registry.token;
    const dir = await project({ "@acme": { url: "http://127.0.0.1:1/{name}.json?token=${ACME_TOKEN}" } });
    const error = await rejection(runAdd({ blocks: ["@acme/audit-log"], cwd: dir, yes: true, install: false }));
    expect(error.message).toContain("cannot be reached");
    expect(error.message).toContain("token=${ACME_TOKEN}");
    expectNoToken(error);
  });

  it("an unknown registry lists the configured ones", async () => {
    const error = await rejection(
      runAdd({ blocks: ["@other/audit-log"], cwd: await project(), yes: true, install: false }),
    );
    expect(error.code).toBe("UNKNOWN_REGISTRY");
    expect(error.suggestion).toContain("@acme");
  });
});

describe("registryDependencies", () => {
  const item = (name: string, registryDependencies: string[] = [], target = `~/src/blocks/${name}/index.ts`) => ({
    name,
    type: "registry:item",
    registryDependencies,
    files: [
      {
        path: `${name}/index.ts`,
        type: "registry:file",
        content: `export const ${name.replace(/-/g, "_")} = 1;\n`,
        target,
      },
    ],
  });
  const custom = () => ({ "@acme": { url: `${registry.origin}/custom/{name}.json`, headers: auth } });

  it("refuses a cycle, naming the chain", async () => {
    process.env.ACME_TOKEN = registry.token;
    registry.custom.set("a", item("a", ["@acme/b"]));
    registry.custom.set("b", item("b", ["c"]));
    registry.custom.set("c", item("c", [`${registry.origin}/custom/a.json`]));
    const error = await rejection(
      runAdd({ blocks: ["@acme/a"], cwd: await project(custom()), yes: true, install: false }),
    );
    expect(error.code).toBe("INVALID_REGISTRY");
    expect(error.message).toContain("cycle: @acme/a -> @acme/b -> @acme/c -> @acme/a");
  });

  it("fetches a shared dependency once, whichever spelling names it (@acme/d, its URL, a bare name); a built-in block by its name", async () => {
    process.env.ACME_TOKEN = registry.token;
    registry.custom.set("top", item("top", ["@acme/left", "right", "logger"]));
    registry.custom.set("left", item("left", ["@acme/d"]));
    registry.custom.set("right", item("right", [`${registry.origin}/custom/d.json`, "d"]));
    registry.custom.set("d", item("d"));
    const result = await runAdd({ blocks: ["@acme/top"], cwd: await project(custom()), yes: true, install: false });
    expect(result.blocks).toEqual(["d", "left", "right", "logger", "top"]);
    expect(registry.requests.map((request) => request.path)).not.toContain("/custom/logger.json");
    expect(registry.requests.filter((request) => request.path === "/custom/d.json")).toHaveLength(1);
  });

  it("sends the registry's headers to its own URLs only: a dependency on another origin gets none", async () => {
    process.env.ACME_TOKEN = registry.token;
    registry.custom.set("top", item("top", [`${registry.origin.replace("127.0.0.1", "localhost")}/custom/d.json`]));
    const error = await rejection(
      runAdd({ blocks: ["@acme/top"], cwd: await project(custom()), yes: true, install: false }),
    );
    expect(error.code).toBe("INVALID_REGISTRY");
    const elsewhere = registry.requests.find((request) => request.headers.host?.startsWith("localhost"));
    expect(elsewhere?.headers.authorization).toBeUndefined();
  });

  it("refuses a dependency that would make add read a local file", async () => {
    process.env.ACME_TOKEN = registry.token;
    registry.custom.set("top", item("top", ["../../etc/item.json"]));
    const error = await rejection(
      runAdd({ blocks: ["@acme/top"], cwd: await project(custom()), yes: true, install: false }),
    );
    expect(error.message).toContain('lists the dependency "../../etc/item.json"');
  });

  it("refuses an item served under another name", async () => {
    process.env.ACME_TOKEN = registry.token;
    registry.custom.set("top", item("logger"));
    const error = await rejection(
      runAdd({ blocks: ["@acme/top"], cwd: await project(custom()), yes: true, install: false }),
    );
    expect(error.message).toContain('answered @acme/top with an item named "logger"');
  });

  it("an option smuggled in as a package of a registry's item is refused as `add <url>` refuses it", async () => {
    process.env.ACME_TOKEN = registry.token;
    registry.custom.set("top", { ...item("top"), dependencies: ["--registry=http://attacker.invalid/@1"] });
    const dir = await project(custom());
    const error = await rejection(runAdd({ blocks: ["@acme/top"], cwd: dir, yes: true, install: false }));
    expect(error.code).toBe("INVALID_REGISTRY");
    expect(error.message).toContain("--registry=http://attacker.invalid/@1");
    expect(existsSync(path.join(dir, "src/blocks"))).toBe(false);
  });

  it("a hostile dependency is refused as `add <url>` refuses it, and nothing is written", async () => {
    process.env.ACME_TOKEN = registry.token;
    registry.custom.set("top", item("top", ["@acme/evil"]));
    registry.custom.set("evil", item("evil", [], "~/../outside.ts"));
    const dir = await project(custom());
    const error = await rejection(runAdd({ blocks: ["@acme/top"], cwd: dir, yes: true, install: false }));
    expect(error.code).toBe("INVALID_REGISTRY");
    expect(error.message).toContain("leads outside the project");
    expect(existsSync(path.join(dir, "src/blocks"))).toBe(false);
  });
});

describe("blocks registry build --registry <a team's folder>", () => {
  it("lets a team's block depend on a shipped block, which stays a bare name when --base-url makes siblings URLs", async () => {
    const out = mkdtempSync(path.join(tmpdir(), "blocks-team-build-"));
    try {
      await runRegistryBuild({ out, registry: registry.source, baseUrl: "https://r.acme.dev/r/", silent: true });
      const item = JSON.parse(readFileSync(path.join(out, "audit-log.json"), "utf8"));
      expect(item.registryDependencies).toEqual(["https://r.acme.dev/r/tenant-guard.json", "logger"]);
      expect(readdirSync(out).sort()).toEqual(["audit-log.json", "registry.json", "tenant-guard.json"]);
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  });
});

describe("update and diff of a block added from a registry", () => {
  it("fetch the item again from its registry (they failed with UNKNOWN_BLOCK: only built-in blocks were loaded)", async () => {
    process.env.ACME_TOKEN = registry.token;
    const served = (content: string) => ({
      name: "ledger",
      type: "registry:item",
      files: [{ path: "ledger/index.ts", type: "registry:file", content, target: "~/src/blocks/ledger/index.ts" }],
    });
    registry.custom.set("ledger", served("export const version = 1;\n"));
    const dir = await project({ "@acme": { url: `${registry.origin}/custom/{name}.json`, headers: auth } });
    await runAdd({ blocks: ["@acme/ledger"], cwd: dir, yes: true, install: false, framework: "none" });
    registry.custom.set("ledger", served("export const version = 2;\n"));
    const diff = await runDiff({ cwd: dir });
    expect(diff.changes.map((change) => `${change.status} ${change.file}`)).toEqual([
      "outdated src/blocks/ledger/index.ts",
    ]);
    await runUpdate({ cwd: dir, yes: true });
    expect(readFileSync(path.join(dir, "src/blocks/ledger/index.ts"), "utf8")).toBe("export const version = 2;\n");
    expect(JSON.parse(readFileSync(path.join(dir, "blocks.lock.json"), "utf8")).blocks.ledger.registry.registry).toBe(
      "@acme",
    );
  });

  it("diff and update of a team block that imports the shipped logger it depends on (UNRESOLVED_IMPORT: the logger was not among the files planned)", async () => {
    process.env.ACME_TOKEN = registry.token;
    const served = (content: string) => ({
      name: "ledger-log",
      type: "registry:item",
      registryDependencies: ["logger"],
      files: [
        { path: "ledger-log/index.ts", type: "registry:file", content, target: "~/src/blocks/ledger-log/index.ts" },
      ],
    });
    const importing = (version: number) =>
      `import { logger } from "../logger/index";\n\nexport const version = ${version};\nexport const log = logger;\n`;
    registry.custom.set("ledger-log", served(importing(1)));
    const dir = await project({ "@acme": { url: `${registry.origin}/custom/{name}.json`, headers: auth } });
    await runAdd({ blocks: ["@acme/ledger-log"], cwd: dir, yes: true, install: false, framework: "none" });
    registry.custom.set("ledger-log", served(importing(2)));
    const diff = await runDiff({ cwd: dir, block: "ledger-log" });
    expect(diff.changes.map((change) => `${change.status} ${change.file}`)).toEqual([
      "outdated src/blocks/ledger-log/index.ts",
    ]);
    await runUpdate({ cwd: dir, yes: true, blocks: ["ledger-log"] });
    expect(readFileSync(path.join(dir, "src/blocks/ledger-log/index.ts"), "utf8")).toContain(
      "export const version = 2;",
    );
  });
});

describe("blocks.json registries", () => {
  const base = {
    dir: "src/blocks",
    alias: null,
    moduleStyle: "extensionless",
    packageManager: "npm",
    database: { dialect: "postgresql", migrations: "migrations", layout: "sql" },
  };
  const check = (registries: unknown) => () => checkConfig({ ...base, registries });

  it('reads the index from the url with "registry" for the name, or from "index"', async () => {
    expect(indexUrl({ name: "@acme", url: "https://r.acme.dev/r/{name}.json" })).toBe(
      "https://r.acme.dev/r/registry.json",
    );
    process.env.ACME_TOKEN = registry.token;
    const dir = await project({
      "@acme": {
        url: `${registry.origin}/custom/{name}.json`,
        index: `${registry.origin}/r/registry.json`,
        headers: auth,
      },
    });
    const { items } = await runSearch({ cwd: dir, query: "audit" });
    expect(items.map((item) => item.name)).toEqual(["@acme/audit-log"]);
    expect(registry.requests.map((request) => request.path)).toEqual(["/r/registry.json"]);
  });

  it("init --force keeps them (it rewrote blocks.json from what it detects, and the team's registries were lost)", async () => {
    const registries = { "@acme": { url: `${registry.origin}/r/{name}.json`, headers: auth } };
    const dir = await project(registries);
    await runInit({ cwd: dir, yes: true, force: true });
    expect(JSON.parse(readFileSync(path.join(dir, "blocks.json"), "utf8")).registries).toEqual(registries);
  });

  it("reads the shorthand string as { url }", () => {
    expect(checkConfig({ ...base, registries: { "@oss": "https://r.example.org/{name}.json" } }).registries).toEqual({
      "@oss": { url: "https://r.example.org/{name}.json" },
    });
  });

  it.each([
    ["a name without @", { acme: "https://r.acme.dev/{name}.json" }, 'the registry name "acme" must start with "@"'],
    ["a url without {name}", { "@acme": { url: "https://r.acme.dev/item.json" } }, 'needs a "url" with {name}'],
    ["a url that is not http(s)", { "@acme": { url: "file:///etc/{name}.json" } }, "must be an http(s) URL"],
    [
      "a header that is not a string",
      { "@acme": { url: "https://r.acme.dev/{name}.json", headers: { Authorization: 1 } } },
      "the header Authorization must be a string",
    ],
    [
      "an unknown field",
      { "@acme": { url: "https://r.acme.dev/{name}.json", header: {} } },
      'unknown field(s) "header"',
    ],
    [
      "headers over plain http to another machine",
      { "@acme": { url: "http://r.acme.dev/{name}.json", headers: auth } },
      "sends headers over plain http to r.acme.dev",
    ],
    [
      "headers over plain http to its index",
      { "@acme": { url: "https://r.acme.dev/{name}.json", index: "http://idx.acme.dev/registry.json", headers: auth } },
      "sends headers over plain http to idx.acme.dev",
    ],
    [
      "a timeout that is not a whole number",
      { "@acme": { url: "https://r.acme.dev/{name}.json", timeoutMs: 0.5 } },
      '"timeoutMs" must be a whole number',
    ],
  ])("refuses %s, naming it", (_, registries, message) => {
    expect(check(registries)).toThrow(message);
  });
});
