// The MCP server behind `blocks mcp`: search, view, add (a plan unless apply) and doctor over one project, and the ten rules as a resource.
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { runAdd } from "../commands/add.js";
import { runDoctor } from "../commands/doctor.js";
import { runSearch } from "../commands/search.js";
import { runView } from "../commands/view.js";
import { RULE_NAMES } from "../doctor/finding.js";
import { loadRegistry } from "../registry/manifest.js";
import { withItemFolders } from "../registry/registry-item-source.js";
import { BlocksError, isBlocksError } from "../utils/errors.js";
import { cliVersion } from "../utils/package-root.js";
import { rulesMarkdown } from "./rules.js";

export type McpOptions = {
  /** The project every tool works on. */
  cwd: string;
  /** Another registry folder (for block authors). */
  registry?: string | undefined;
};

export const RULES_URI = "blocks://rules";

const findingSchema = z.object({
  rule: z.enum(RULE_NAMES),
  file: z.string(),
  line: z.number(),
  message: z.string(),
  fix: z.string(),
});

/**
 * @example
 * await createMcpServer({ cwd: "/app" }).connect(new StdioServerTransport());
 */
export function createMcpServer(options: McpOptions): McpServer {
  const server = new McpServer({ name: "blocks", version: cliVersion() });
  const { cwd, registry } = options;
  // Reading calls run side by side. A call that writes the project (add_block with apply) waits for
  // the writes before it and holds back the next one, so two never interleave in blocks.lock.json.
  let writing: Promise<unknown> = Promise.resolve();
  const answer = (run: () => Promise<Record<string, unknown>>, writes = false): Promise<CallToolResult> => {
    const next = writing.then(() => answerNow(run));
    if (writes) writing = next;
    return next;
  };

  server.registerTool(
    "list_blocks",
    {
      description:
        "List the blocks this project can add (built-in ones and the items of the registries in blocks.json), optionally only those matching a query.",
      inputSchema: { query: z.string().optional().describe("words that must all appear in the name or description") },
      annotations: { readOnlyHint: true },
    },
    ({ query }) => answer(() => runSearch({ query, cwd, ...(registry ? { registry } : {}) })),
  );

  server.registerTool(
    "view_block",
    {
      description:
        "Describe one block or registry item (`idempotency`, `@acme/audit-log`): files, packages, dependencies, and every file `add` would write in this project.",
      inputSchema: { name: z.string().describe("a block name or @registry/name") },
      annotations: { readOnlyHint: true },
    },
    ({ name }) => answer(() => runView({ name, cwd, ...(registry ? { registry } : {}) })),
  );

  server.registerTool(
    "add_block",
    {
      description:
        "Plan adding blocks to this project (nothing is written), or add them with apply: true. Files the user changed are never replaced. Show the user the plan before applying it.",
      inputSchema: {
        blocks: z.array(z.string()).min(1).describe("block names or @registry/name items"),
        apply: z
          .boolean()
          .optional()
          .describe("write the files (and install packages unless install is false); default: only the plan"),
        install: z.boolean().optional().describe("install npm packages when applying (default true)"),
        framework: z
          .string()
          .optional()
          .describe(
            "adapters, comma-separated (express, fastify, hono, koa, nestjs, fetch) or none; default: detected",
          ),
        store: z.string().optional().describe("postgres, redis, dynamodb, mysql or sqlite"),
        client: z
          .string()
          .optional()
          .describe(
            "database client adapter: pg, drizzle, kysely, postgres-js, prisma, typeorm or knex (postgres); drizzle-mysql or kysely-mysql (mysql); better-sqlite3 or libsql (sqlite)",
          ),
        cache: z.string().optional().describe("redis or none"),
        metrics: z.string().optional().describe("prometheus or none"),
      },
      annotations: { destructiveHint: false, idempotentHint: true },
    },
    ({ blocks, apply, install, ...choices }) => {
      const flags = Object.fromEntries(Object.entries(choices).filter(([, value]) => value !== undefined));
      const common = { blocks, cwd, yes: true, ...flags, ...(registry ? { registry } : {}) };
      return apply
        ? answer(() => runAdd({ ...common, install: install !== false }), true)
        : answer(() => runAdd({ ...common, dryRun: true }));
    },
  );

  server.registerTool(
    "doctor",
    {
      description:
        "Audit this project against the blocks' rules (see the blocks://rules resource): each finding with its rule, file, line and fix. The database is checked when DATABASE_URL is set (a MySQL store: MYSQL_URL; a SQLite store: SQLITE_PATH or LIBSQL_URL); notes say where a check had to guess.",
      inputSchema: {},
      outputSchema: {
        ok: z.boolean(),
        checkedDatabase: z.boolean(),
        findings: z.array(findingSchema),
        notes: z.array(z.string()),
      },
      annotations: { readOnlyHint: true },
    },
    () => answer(() => runDoctor({ cwd, ...(registry ? { registry } : {}) })),
  );

  server.registerResource(
    "rules",
    RULES_URI,
    {
      title: "The ten rules of idempotency",
      description: "The rules every idempotent route keeps, with the doctor checks that audit each.",
      mimeType: "text/markdown",
    },
    async (uri) => {
      const declared = (await loadRegistry(registry)).blocks.flatMap((block) => block.doctor ?? []);
      return { contents: [{ uri: uri.href, mimeType: "text/markdown", text: rulesMarkdown(declared) }] };
    },
  );
  return server;
}

/** A command's result as JSON text and structured content; its error (code, message, suggestion) as a tool error the assistant can act on. */
async function answerNow(run: () => Promise<Record<string, unknown>>): Promise<CallToolResult> {
  try {
    // The registry items a call reads are written to folders of its own, removed when it ends.
    const value = await withItemFolders(run);
    return { content: [{ type: "text", text: JSON.stringify(value, null, 2) }], structuredContent: value };
  } catch (err) {
    const error = isBlocksError(err)
      ? err
      : new BlocksError("UNEXPECTED", err instanceof Error ? err.message : String(err));
    return {
      isError: true,
      content: [{ type: "text", text: JSON.stringify({ ok: false, error: error.toJSON() }, null, 2) }],
    };
  }
}
