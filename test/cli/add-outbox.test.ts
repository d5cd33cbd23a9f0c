// `blocks add outbox`: the core always, a publisher only where the project has its broker's package, the
// outbox_messages migration, and a project that type-checks (NodeNext `.js` imports, strict settings).
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { runAdd } from "../../cli/commands/add.js";
import { runMigrate } from "../../cli/commands/migrate.js";
import { sampleProject, typeCheck } from "./wiring-projects.js";

const BLOCK = "src/blocks/outbox";

describe("blocks add outbox", () => {
  it("copies the publishers of the brokers the project uses, writes the outbox_messages migration, and type-checks", async () => {
    const dir = await sampleProject("express-nodenext", ["bullmq", "nats"]);
    const result = await runAdd({ blocks: ["outbox"], cwd: dir, yes: true, install: false });
    const targets = result.files.map((file) => file.target);
    expect(targets).toEqual(
      expect.arrayContaining([
        `${BLOCK}/add-to-outbox.ts`,
        `${BLOCK}/relay.ts`,
        `${BLOCK}/publishers/bullmq.ts`,
        `${BLOCK}/publishers/nats.ts`,
      ]),
    );
    expect(targets).toEqual(
      expect.arrayContaining([`${BLOCK}/publishers/bullmq.test.ts`, `${BLOCK}/publishers/nats.test.ts`]),
    );
    expect(targets.filter((target) => target.includes("amqp"))).toEqual([]);
    expect(result.features.sort()).toEqual(["publisher-bullmq", "publisher-nats"]);
    expect(result.migrations).toMatchObject([{ table: "outbox_messages" }]);
    const lock = JSON.parse(readFileSync(path.join(dir, "blocks.lock.json"), "utf8")) as {
      migrations: Record<string, string>;
    };
    const [file] = Object.values(lock.migrations);
    expect(file).toMatch(/^migrations\/\d+_create_outbox_messages\.sql$/);
    const sql = readFileSync(path.join(dir, file as string), "utf8");
    expect(sql).toContain("CREATE TABLE IF NOT EXISTS outbox_messages");
    expect(sql).toContain(
      "CREATE INDEX IF NOT EXISTS outbox_messages_due_idx ON outbox_messages (available_at) WHERE published_at IS NULL AND dead_at IS NULL",
    );
    expect(typeCheck(dir)).toEqual([]);
    // Run again, migrate finds the migration in place.
    expect(await runMigrate({ cwd: dir })).toMatchObject({ written: [] });
  }, 120_000);

  it("with amqplib and prom-client (a Bundler project): the RabbitMQ publisher and the metrics adapter, and it type-checks", async () => {
    const dir = await sampleProject("hono-bundler", ["amqplib", "prom-client"]);
    const result = await runAdd({ blocks: ["outbox"], cwd: dir, yes: true, install: false });
    expect(result.features.sort()).toEqual(["metrics", "publisher-amqp"]);
    expect(result.files.map((file) => file.target)).toEqual(
      expect.arrayContaining([`${BLOCK}/publishers/amqp.ts`, `${BLOCK}/utils/prometheus-metrics.ts`]),
    );
    expect(typeCheck(dir)).toEqual([]);
  }, 120_000);
});
