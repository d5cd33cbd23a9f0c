// Next.js App Router (Bundler, the tsconfig and eslint.config.mjs create-next-app writes): init, add (detects next -> fetch
// adapter) of all five blocks, the project's own `npm run lint` (eslint-config-next) over them and the wiring, `next build`
// (which type-checks every .ts, vendored tests included), then `next start` on 127.0.0.1 and the HTTP checklist.
import { existsSync } from "node:fs";
import { randomUUID } from "node:crypto";
import path from "node:path";
import { execa } from "execa";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { blocks, command, copyFixture } from "./harness.js";
import { httpChecklist } from "./http-checklist.js";
import { startServer, type RunningServer } from "./http-server.js";

describe("next-app", () => {
  const project = copyFixture("next-app");
  const dir = project.dir;
  let server: RunningServer | undefined;
  afterAll(async () => {
    await server?.stop();
    project.remove();
  });

  beforeAll(async () => {
    const init = await blocks(dir, ["init", "--yes"]);
    expect(init.exitCode, init.stderr).toBe(0);
    const add = await blocks(dir, ["add", "idempotency", "--yes"]);
    expect(add.exitCode, add.stderr).toBe(0);
  }, 600_000);

  it("add copies the fetch adapter for a Next.js project, and no other framework's", () => {
    expect(existsSync(path.join(dir, "src/blocks/idempotency/adapters/fetch.ts"))).toBe(true);
    expect(existsSync(path.join(dir, "src/blocks/idempotency/adapters/express.ts"))).toBe(false);
  });

  it("add rate-limiter error-handler logger outbox vendors them beside idempotency", async () => {
    const add = await blocks(dir, ["add", "rate-limiter", "error-handler", "logger", "outbox", "--yes"]);
    expect(add.exitCode, add.stderr).toBe(0);
    for (const block of ["rate-limiter", "error-handler", "logger", "outbox"])
      expect(existsSync(path.join(dir, `src/blocks/${block}/index.ts`)), block).toBe(true);
  });

  // Found: the wiring's `useDatabase` failed react-hooks/rules-of-hooks, so a Next.js project's first `npm run lint` failed.
  it("npm run lint (eslint-config-next, as create-next-app sets it up) passes on every vendored block and the wiring, and leaves blocks diff empty", async () => {
    const lint = await command(dir, "npm", ["run", "lint", "--silent", "--", "--format", "json"]);
    expect(lint.exitCode, `${lint.stdout.slice(-6000)}${lint.stderr.slice(-2000)}`).toBe(0);
    const linted = (JSON.parse(lint.stdout) as { filePath: string }[]).map((result) =>
      path.relative(dir, result.filePath),
    );
    expect(linted).toEqual(
      expect.arrayContaining([
        "src/idempotency-setup.ts",
        "src/jobs/idempotency-maintenance.ts",
        "src/blocks/idempotency/handler.ts",
        "src/blocks/outbox/index.ts",
      ]),
    );
    const diff = await blocks(dir, ["diff"]);
    expect(diff.exitCode, diff.stdout).toBe(0);
  });

  it("next build passes (type check of every .ts included)", async () => {
    // Longer than the harness's 3 minutes: a production build on a shared CI machine can take that alone.
    const build = await execa("npx", ["--no-install", "next", "build"], {
      cwd: dir,
      reject: false,
      stdin: "ignore",
      all: true,
      timeout: 480_000,
      env: { NEXT_TELEMETRY_DISABLED: "1", CI: "true", NO_COLOR: "1" },
    });
    expect(build.exitCode, String(build.all).slice(-4000)).toBe(0);
  }, 500_000);

  describe("next start", () => {
    beforeAll(async () => {
      server = await startServer(
        dir,
        "npx",
        ["--no-install", "next", "start", "-H", "127.0.0.1", "-p", "$PORT"],
        "/api/runs",
      );
    });

    httpChecklist({ base: () => server!.base, payments: "/api/payments", runs: "/api/runs" });

    it("passes the route's params through, and replays on a dynamic route", async () => {
      const key = randomUUID();
      const send = () =>
        fetch(`${server!.base}/api/orders/o_1/refunds`, {
          method: "POST",
          headers: { "idempotency-key": key, "x-user-id": "u_1" },
        });
      const first = await send();
      expect(first.status).toBe(201);
      expect(await first.json()).toEqual({ refunded: "o_1" });
      expect((await send()).status).toBe(201);
    });
  });
});
