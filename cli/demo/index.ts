// `npm run demo`: the built CLI vendors idempotency into a throwaway Express app, then a client plays against it.
import { rmSync } from "node:fs";
import path from "node:path";
import { execa } from "execa";
import { highlighter } from "../utils/highlighter.js";
import { logger } from "../utils/logger.js";
import { packageRoot } from "../utils/package-root.js";
import { playScenario, type Exchange } from "./client.js";
import { scaffoldDemoApp } from "./scaffold.js";

const CLI = path.join(packageRoot(), "dist/cli/index.js");
const keep = process.argv.includes("--keep");

async function blocks(dir: string, args: string[]): Promise<Record<string, unknown>> {
  const { stdout } = await execa("node", [CLI, ...args, "--json"], { cwd: dir, stdin: "ignore" });
  return JSON.parse(stdout) as Record<string, unknown>;
}

function describe(exchange: Exchange): string {
  if (exchange.status < 300) return exchange.body;
  const { error } = JSON.parse(exchange.body) as { error: { code: string } };
  const retryAfter = exchange.headers.get("retry-after");
  return `${error.code}${retryAfter ? ` (Retry-After: ${retryAfter})` : ""}`;
}

async function main(): Promise<void> {
  const dir = scaffoldDemoApp();
  logger.log(highlighter.path(`blocks demo: a throwaway Express app in ${dir}`));
  logger.log(highlighter.dim("(packages: this repository's node_modules, linked; nothing is downloaded)"));

  const init = (await blocks(dir, ["init", "--yes"])) as { config: { dir: string; alias: string } };
  logger.success(`blocks init: blocks go to ${init.config.dir}, imported as ${init.config.alias}/...`);
  const add = (await blocks(dir, ["add", "idempotency", "--yes", "--no-install"])) as {
    files: unknown[];
    frameworks: string[];
    install: { commands: string[] };
  };
  logger.success(
    `blocks add idempotency: ${add.files.length} files (core, ${add.frameworks.join(", ")} adapter, tests, maintenance job)`,
  );
  const migrate = (await blocks(dir, ["migrate"])) as { written: string[]; existing: string[] };
  logger.success(`blocks migrate: ${[...migrate.written, ...migrate.existing].join(", ")}`);
  await execa("npx", ["--no-install", "tsc", "--noEmit"], { cwd: dir, stdin: "ignore" });
  logger.success("tsc --noEmit: the vendored code type-checks in the app");

  const server = execa("node", ["--import", "tsx", "src/server.ts"], { cwd: dir, stdin: "ignore", buffer: false });
  try {
    const port = await new Promise<string>((resolve, reject) => {
      server.stdout?.on("data", (chunk: Buffer) => {
        const match = /READY (\d+)/.exec(chunk.toString());
        if (match?.[1]) resolve(match[1]);
      });
      server.catch(reject);
      setTimeout(() => reject(new Error("the demo app did not start within 30 s")), 30_000).unref();
    });
    logger.success(`app started on PGlite (embedded PostgreSQL), port ${port}, schema from the migration file`);
    logger.break();
    const scenario = await playScenario(`http://127.0.0.1:${port}`);
    for (const exchange of scenario.exchanges) {
      const status =
        exchange.status < 300
          ? highlighter.success(String(exchange.status))
          : highlighter.warn(String(exchange.status));
      logger.log(`  ${exchange.label.padEnd(34)} ${status}  ${describe(exchange)}`);
    }
    logger.break();
    const [first, , reused, , duplicate] = scenario.exchanges;
    const checks: Array<[boolean, string]> = [
      [first?.status === 201, "the first request executed"],
      [scenario.replayIdentical, "the retry replayed the identical response (status and body bytes)"],
      [
        reused?.status === 409 && reused.body.includes("KEY_REUSED_WITH_DIFFERENT_REQUEST"),
        "a different payload under the same key got 409",
      ],
      [
        duplicate?.status === 409 && duplicate.body.includes("REQUEST_IN_PROGRESS"),
        "the concurrent duplicate got 409 in progress",
      ],
      [scenario.charges === 2, `the card was charged ${scenario.charges} times for 5 requests (expected 2)`],
    ];
    for (const [ok, text] of checks) logger.log(`${ok ? highlighter.success("✔") : highlighter.error("✖")} ${text}`);
    process.exitCode = checks.every(([ok]) => ok) ? 0 : 1;
  } finally {
    server.kill();
    await server.catch(() => {});
    if (keep) logger.log(highlighter.dim(`kept ${dir}`));
    else rmSync(path.dirname(dir), { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  logger.error(`demo failed: ${err instanceof Error ? err.message : String(err)}`);
  process.exitCode = 1;
});
