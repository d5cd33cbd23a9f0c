#!/usr/bin/env node
// The `blocks` CLI: one commander program, one command per file in ./commands.
import { existsSync, readdirSync } from "node:fs";
import path from "node:path";
import { Command } from "commander";
import { add } from "./commands/add.js";
import { diff } from "./commands/diff.js";
import { doctor } from "./commands/doctor.js";
import { init } from "./commands/init.js";
import { list } from "./commands/list.js";
import { mcp } from "./commands/mcp.js";
import { migrate } from "./commands/migrate.js";
import { registryCommand } from "./commands/registry.js";
import { search } from "./commands/search.js";
import { update } from "./commands/update.js";
import { defaultRegistryDir } from "./registry/manifest.js";
import { view } from "./commands/view.js";
import { cliVersion } from "./utils/package-root.js";

process.on("SIGINT", () => process.exit(130));
process.on("SIGTERM", () => process.exit(143));

/** The shipped blocks, read from the registry's folders so the help never lags behind them. */
function shippedBlocks(): string {
  const dir = defaultRegistryDir();
  const folders = readdirSync(dir, { withFileTypes: true }).filter(
    (entry) => entry.isDirectory() && existsSync(path.join(dir, entry.name, "block.json")),
  );
  return folders
    .map((entry) => entry.name)
    .sort()
    .join(", ");
}

const program = new Command()
  .name("blocks")
  .description(`Copy production-grade backend blocks (${shippedBlocks()}) into your TypeScript project.`)
  .version(cliVersion(), "-v, --version")
  .showHelpAfterError()
  .addCommand(init)
  .addCommand(add)
  .addCommand(migrate)
  .addCommand(list)
  .addCommand(search)
  .addCommand(view)
  .addCommand(diff)
  .addCommand(update)
  .addCommand(doctor)
  .addCommand(registryCommand)
  .addCommand(mcp);

await program.parseAsync(process.argv);
