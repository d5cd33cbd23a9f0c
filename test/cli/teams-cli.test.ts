// The CLI for teams end to end: the real `blocks` process adds from a private registry on loopback, searches and views it, as JSON.
import { readFileSync, readdirSync } from "node:fs";
import path from "node:path";
import { execa } from "execa";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runInit } from "../../cli/commands/init.js";
import { tempProject } from "./helpers.js";
import { configureRegistries, servePrivateRegistry, type PrivateRegistry } from "./registry-server.js";

const REPO = path.resolve(import.meta.dirname, "../..");
const CLI = path.join(REPO, "cli/index.ts");

let registry: PrivateRegistry;
beforeAll(async () => {
  registry = await servePrivateRegistry();
});
afterAll(() => registry.close());

/** Runs `blocks` from source (tsx), as a user would run it, with ACME_TOKEN set to `token`. */
function blocks(args: string[], token: string) {
  return execa(process.execPath, ["--import", "tsx", CLI, ...args], {
    cwd: REPO,
    env: { ACME_TOKEN: token, NO_COLOR: "1" },
    reject: false,
    all: true,
  });
}

async function teamProject() {
  const dir = tempProject("hono-bundler");
  await runInit({ cwd: dir, yes: true });
  configureRegistries(dir, {
    "@acme": { url: `${registry.origin}/r/{name}.json`, headers: { Authorization: "Bearer ${ACME_TOKEN}" } },
  });
  return dir;
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => path.join(entry.parentPath, entry.name));
}

describe("blocks for teams, as a process", () => {
  it("adds @acme/audit-log with its dependency into a fresh project; the token is in no file and no output", async () => {
    const dir = await teamProject();
    const run = await blocks(
      ["add", "@acme/audit-log", "--yes", "--no-install", "--framework", "none", "--cwd", dir],
      registry.token,
    );
    expect(run.exitCode, run.all).toBe(0);
    expect(run.all).toContain("tenant-guard, logger, audit-log");
    expect(run.all).not.toContain(registry.token);
    expect(readFileSync(path.join(dir, "src/blocks/tenant-guard/index.ts"), "utf8")).toContain("sameTenant");
    expect(
      JSON.parse(readFileSync(path.join(dir, "blocks.lock.json"), "utf8")).blocks["audit-log"].registry.registry,
    ).toBe("@acme");
    const leaking = filesUnder(dir).filter((file) => readFileSync(file, "latin1").includes(registry.token));
    expect(leaking).toEqual([]);
    expect(registry.requests.some((request) => request.headers.authorization === `Bearer ${registry.token}`)).toBe(
      true,
    );

    // `list` shows what came from the registry next to the built-in blocks.
    const listed = JSON.parse((await blocks(["list", "--json", "--cwd", dir], registry.token)).stdout);
    const fromAcme = listed.blocks.filter((block: { registry: string }) => block.registry === "@acme");
    expect(fromAcme.map((block: { name: string; added: boolean }) => [block.name, block.added]).sort()).toEqual([
      ["audit-log", true],
      ["tenant-guard", true],
    ]);
  });

  it("search --json lists the built-in blocks and the registry's items, as parseable JSON", async () => {
    const dir = await teamProject();
    const run = await blocks(["search", "--json", "--cwd", dir], registry.token);
    expect(run.exitCode, run.stderr).toBe(0);
    const result = JSON.parse(run.stdout);
    const names = result.items.map((item: { name: string }) => item.name);
    expect(names).toEqual(expect.arrayContaining(["idempotency", "logger", "@acme/audit-log", "@acme/tenant-guard"]));
    const filtered = JSON.parse((await blocks(["search", "tenant", "--json", "--cwd", dir], registry.token)).stdout);
    expect(filtered.items).toEqual([
      {
        name: "@acme/tenant-guard",
        registry: "@acme",
        description: "Refuses requests whose tenant does not own the account",
      },
    ]);
  });

  it("view --json describes an item and what add would write here, as parseable JSON", async () => {
    const dir = await teamProject();
    const run = await blocks(["view", "@acme/audit-log", "--json", "--cwd", dir], registry.token);
    expect(run.exitCode, run.stderr).toBe(0);
    const result = JSON.parse(run.stdout);
    expect(result).toMatchObject({
      name: "audit-log",
      source: "@acme/audit-log",
      blocks: ["tenant-guard", "logger", "audit-log"],
      registryDependencies: ["tenant-guard", "logger"],
    });
    expect(result.files.map((file: { target: string }) => file.target)).toEqual([
      "src/blocks/audit-log/README.md",
      "src/blocks/audit-log/index.ts",
    ]);
    expect(result.add.files.map((file: { target: string; state: string }) => `${file.state} ${file.target}`)).toContain(
      "create src/blocks/tenant-guard/index.ts",
    );
    expect(filesUnder(dir).some((file) => file.includes(`${path.sep}blocks${path.sep}`))).toBe(false);
  });

  it("search with a wrong token exits 1 naming the registry, and prints no token", async () => {
    const dir = await teamProject();
    const run = await blocks(["search", "--cwd", dir], "not-the-token");
    expect(run.exitCode).toBe(1);
    expect(run.stderr).toContain("Registry @acme: the index at");
    expect(run.stderr).toContain("HTTP 401");
    expect(run.all).not.toContain("not-the-token");
  });

  it("search goes on without a registry whose index fails: the others' items are listed, the failure is named, and it exits 1", async () => {
    const dir = await teamProject();
    const run = await blocks(["search", "--json", "--cwd", dir], "not-the-token");
    expect(run.exitCode).toBe(1);
    const result = JSON.parse(run.stdout);
    expect(result.ok).toBe(false);
    expect(result.items.map((item: { name: string }) => item.name)).toEqual(
      expect.arrayContaining(["idempotency", "logger"]),
    );
    expect(result.unreachable).toEqual([
      { registry: "@acme", code: expect.any(String), message: expect.stringContaining("HTTP 401") },
    ]);
    expect(run.all).not.toContain("not-the-token");
  });
});
