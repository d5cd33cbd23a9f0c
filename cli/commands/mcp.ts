// `blocks mcp`: serves the project to a coding assistant over the Model Context Protocol (stdio).
import path from "node:path";
import { Command } from "commander";
import { handleError } from "../utils/handle-error.js";
import { configureOutput } from "../utils/logger.js";

export type McpCommandOptions = { cwd?: string; registry?: string };

/**
 * Serves until the client closes stdin. stdout carries the protocol only, so every human line is silenced.
 *
 * @example
 * await runMcp({ cwd: "/app" });
 */
export async function runMcp(options: McpCommandOptions): Promise<void> {
  configureOutput({ silent: true });
  const { StdioServerTransport } = await import("@modelcontextprotocol/sdk/server/stdio.js");
  const { createMcpServer } = await import("../mcp/server.js");
  const server = createMcpServer({ cwd: path.resolve(options.cwd ?? process.cwd()), registry: options.registry });
  await server.connect(new StdioServerTransport());
}

export const mcp = new Command("mcp")
  .description(
    "serve list_blocks, view_block, add_block and doctor (and the ten rules) to a coding assistant over MCP on stdio",
  )
  .option("-c, --cwd <path>", "the project the tools work on (default: the current folder)")
  .option("--registry <path>", "use another registry folder (for block authors)")
  .action(async (opts: McpCommandOptions) => {
    try {
      await runMcp(opts);
    } catch (err) {
      handleError(err);
    }
  });
