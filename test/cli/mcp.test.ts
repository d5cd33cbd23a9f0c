// `blocks mcp` driven by the MCP SDK's own client over stdio: list, view, plan, apply and audit a fixture project.
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { getDefaultEnvironment, StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runInit } from "../../cli/commands/init.js";
import { TEN_RULES } from "../../cli/mcp/rules.js";
import { loadRegistry } from "../../cli/registry/manifest.js";
import { configureOutput } from "../../cli/utils/logger.js";
import { configureRegistries, servePrivateRegistry, type PrivateRegistry } from "./registry-server.js";

const REPO = path.resolve(import.meta.dirname, "../..");

/** A route that breaks three rules: no getUserId, no isPermanentError, no requireKey. */
const APP = `import { Hono } from "hono";
import { IdempotencyHandler } from "~/blocks/idempotency";
import { idempotency } from "~/blocks/idempotency/adapters/hono";

declare const store: never;
const handler = new IdempotencyHandler(store, undefined, { ttlMs: 86_400_000 });
export const app = new Hono();
app.post("/orders", idempotency(handler), (c) => c.json({}, 201));
`;

let registry: PrivateRegistry;
let client: Client;
let dir: string;
let stderr = "";
/** The server's own TMPDIR, so what it leaves there is its own. */
let serverTmp: string;
/** Every tool answer, and every message the client could not parse (a stray stdout line would be one). */
const answers: string[] = [];
const protocolErrors: Error[] = [];

beforeAll(async () => {
  registry = await servePrivateRegistry();
  // One project for the whole session (helpers' tempProject is removed after each test).
  configureOutput({ silent: true });
  dir = path.join(mkdtempSync(path.join(tmpdir(), "blocks-mcp-")), "app");
  cpSync(path.join(REPO, "test/fixtures/hono-bundler"), dir, { recursive: true });
  await runInit({ cwd: dir, yes: true });
  configureRegistries(dir, {
    "@acme": { url: `${registry.origin}/r/{name}.json`, headers: { Authorization: "Bearer ${ACME_TOKEN}" } },
  });
  serverTmp = path.join(path.dirname(dir), "tmp");
  mkdirSync(serverTmp);
  // No DATABASE_URL: the audit is the static one, whatever this machine's services.
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: ["--import", "tsx", path.join(REPO, "cli/index.ts"), "mcp", "--cwd", dir],
    cwd: REPO,
    env: { ...getDefaultEnvironment(), ACME_TOKEN: registry.token, NO_COLOR: "1", TMPDIR: serverTmp },
    stderr: "pipe",
  });
  transport.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  client = new Client({ name: "blocks-test", version: "1.0.0" });
  client.onerror = (error) => protocolErrors.push(error);
  await client.connect(transport);
});

afterAll(async () => {
  await client?.close();
  await registry?.close();
  rmSync(path.dirname(dir), { recursive: true, force: true });
});

type ToolResult = {
  isError?: boolean;
  structuredContent?: Record<string, unknown>;
  content: Array<{ type: string; text?: string }>;
};
async function call(name: string, args: Record<string, unknown> = {}): Promise<ToolResult> {
  const result = (await client.callTool({ name, arguments: args })) as ToolResult;
  answers.push(JSON.stringify(result));
  return result;
}

describe("blocks mcp", () => {
  it("offers the four tools and the rules resource", async () => {
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual(["add_block", "doctor", "list_blocks", "view_block"]);
    const { resources } = await client.listResources();
    expect(resources.map((resource) => resource.uri)).toEqual(["blocks://rules"]);
    const rules = await client.readResource({ uri: "blocks://rules" });
    const text = String((rules.contents[0] as { text?: string } | undefined)?.text);
    expect(text.match(/^\d+\. /gm)).toHaveLength(TEN_RULES.length);
    expect(TEN_RULES).toHaveLength(10);
    // A block's rule is listed with the fix the block declares (block.json), the CLI's own with the CLI's.
    const idempotency = (await loadRegistry()).blocks.find((block) => block.name === "idempotency");
    const fix = idempotency?.doctor?.maintenance?.fixes["maintenance-scheduled"] as string;
    expect(text).toContain(`doctor \`maintenance-scheduled\`: ${fix}`);
    expect(text).toContain("doctor `route-user-id`");
    expect(text).toContain("- `tests-in-build`: Exclude the vendored tests");
  });

  it("list_blocks lists the built-in blocks and the private registry's items", async () => {
    const result = await call("list_blocks");
    const names = (result.structuredContent?.items as Array<{ name: string }>).map((item) => item.name);
    expect(names).toEqual(expect.arrayContaining(["idempotency", "rate-limiter", "@acme/audit-log"]));
    expect((await call("list_blocks", { query: "audit" })).structuredContent?.items).toHaveLength(1);
  });

  it("view_block describes a block and what add would write in this project", async () => {
    const result = await call("view_block", { name: "idempotency" });
    const view = result.structuredContent as {
      files: Array<{ target: string }>;
      add: { files: Array<{ target: string; state: string }> };
    };
    expect(view.files.map((file) => file.target)).toContain("src/blocks/idempotency/adapters/hono.ts");
    expect(view.add.files.map((file) => file.target)).toContain("src/blocks/idempotency/adapters/hono.ts");
  });

  it("leaves no item folders behind between calls, however many registry items a session reads", async () => {
    for (let i = 0; i < 3; i++) expect((await call("view_block", { name: "@acme/audit-log" })).isError).toBeFalsy();
    expect(readdirSync(serverTmp).filter((entry) => entry.startsWith("blocks-item-"))).toEqual([]);
    // Reading calls overlap: none removes the folder another is still reading.
    const overlapping = await Promise.all([1, 2, 3].map(() => call("view_block", { name: "@acme/audit-log" })));
    expect(overlapping.map((result) => result.isError ?? false)).toEqual([false, false, false]);
    expect(readdirSync(serverTmp).filter((entry) => entry.startsWith("blocks-item-"))).toEqual([]);
  });

  it("add_block plans without writing, then writes with apply: true", async () => {
    const plan = await call("add_block", { blocks: ["idempotency"] });
    expect(plan.isError, plan.content[0]?.text).toBeFalsy();
    expect(plan.structuredContent).toMatchObject({ dryRun: true, blocks: ["idempotency"], frameworks: ["hono"] });
    expect(existsSync(path.join(dir, "src/blocks"))).toBe(false);
    const applied = await call("add_block", { blocks: ["idempotency"], apply: true, install: false });
    expect(applied.structuredContent).toMatchObject({ dryRun: false, install: { ran: false } });
    expect(existsSync(path.join(dir, "src/blocks/idempotency/adapters/hono.ts"))).toBe(true);
  });

  it("doctor audits the project: each finding as data with its rule, file, line and fix", async () => {
    writeFileSync(path.join(dir, "src/app.ts"), APP);
    const result = await call("doctor");
    const audit = result.structuredContent as {
      ok: boolean;
      checkedDatabase: boolean;
      findings: Array<{ rule: string; file: string; line: number; fix: string }>;
    };
    expect(audit.ok).toBe(false);
    expect(audit.checkedDatabase).toBe(false);
    const line = APP.split("\n").findIndex((text) => text.startsWith("app.post")) + 1;
    expect(
      audit.findings
        .filter((finding) => finding.file === "src/app.ts")
        .map((finding) => `${finding.line} ${finding.rule}`),
    ).toEqual(
      expect.arrayContaining([`${line} route-user-id`, `${line} route-permanent-error`, `${line} route-require-key`]),
    );
    expect(audit.findings.every((finding) => finding.fix.length > 0)).toBe(true);
  });

  it("a tool's failure is a tool error with the CLI's code and suggestion, and the server keeps serving", async () => {
    const result = await call("view_block", { name: "@nowhere/thing" });
    expect(result.isError).toBe(true);
    expect(JSON.parse(result.content[0]?.text ?? "{}").error).toMatchObject({ code: "UNKNOWN_REGISTRY" });
    expect((await call("list_blocks")).isError).toBeFalsy();
  });

  it("keeps stdout for the protocol, and never shows the token in an answer, on stderr or in the lock", () => {
    expect(protocolErrors).toEqual([]);
    expect(answers.length).toBeGreaterThan(5);
    expect(answers.join("\n")).not.toContain(registry.token);
    expect(stderr).not.toContain(registry.token);
    expect(readFileSync(path.join(dir, "blocks.lock.json"), "utf8")).not.toContain(registry.token);
  });
});
