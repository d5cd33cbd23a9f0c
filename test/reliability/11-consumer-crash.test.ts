// Scenario 11: a RabbitMQ consumer SIGKILLed inside a message's transaction; the broker redelivers its unacked
// messages to the next consumer, and every message's effect (a row in PostgreSQL, written with the inbox record) happens once.
import { fork, type ChildProcess } from "node:child_process";
import { randomUUID } from "node:crypto";
import { fileURLToPath } from "node:url";
import { connect, type Channel, type ChannelModel } from "amqplib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FiguresCollector, doubleExecutions, sum } from "./support/figures";
import { openScenarioDb, type ScenarioDb } from "./support/scenario-db";
import { missingServices } from "./support/services";
import { recordsByStatus } from "./support/tables";

const amqpUrl = process.env.AMQP_URL;
const MESSAGES = 40;
const REPEATS = 10;

type Consumer = { child: ChildProcess; events: Array<{ event: string; key: string }>; exited: Promise<unknown> };

describe.skipIf(missingServices() || !amqpUrl)(
  "[DATABASE_URL] [AMQP_URL] 11. RabbitMQ consumer SIGKILLed mid-message",
  () => {
    const figures = new FiguresCollector(11, "RabbitMQ consumer SIGKILLed inside a message's transaction, redelivered");
    const children: ChildProcess[] = [];
    let db: ScenarioDb;
    let connection: ChannelModel;
    let channel: Channel;
    const queue = `inbox-crash-${randomUUID()}`;

    beforeAll(async () => {
      db = await openScenarioDb("inbox");
      connection = await connect(amqpUrl as string);
      channel = await connection.createChannel();
      await channel.assertQueue(queue, { durable: false });
    });
    afterAll(async () => {
      for (const child of children) child.kill("SIGKILL");
      await channel?.deleteQueue(queue);
      await connection?.close();
      await db?.close();
    });

    const consumer = (workerId: string, holdAt: number): Consumer => {
      const child = fork(
        fileURLToPath(new URL("./workers/inbox-consumer.ts", import.meta.url)),
        [queue, db.table, db.effectsTable, workerId, String(holdAt)],
        {
          execArgv: ["--import", "tsx"],
          stdio: ["ignore", "ignore", "inherit", "ipc"],
        },
      );
      children.push(child);
      const events: Consumer["events"] = [];
      child.on("message", (message: { event: string; key: string }) => events.push(message));
      return { child, events, exited: new Promise((resolve) => child.once("exit", resolve)) };
    };
    const until = async (condition: () => Promise<boolean> | boolean, what: string) => {
      const deadline = Date.now() + 30_000;
      while (!(await condition())) {
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    };

    it("each message's effect happens once: the killed transaction rolled back, its message ran again elsewhere", async () => {
      for (let i = 0; i < MESSAGES; i++)
        channel.sendToQueue(queue, Buffer.from(JSON.stringify({ amount: i })), { messageId: `m-${i}` });
      // The producer's own retries: the same ids again, as a publisher that never saw its confirms sends them.
      for (let i = 0; i < REPEATS; i++)
        channel.sendToQueue(queue, Buffer.from(JSON.stringify({ amount: i })), { messageId: `m-${i}` });
      await channel.checkQueue(queue);

      const victim = consumer("victim", 12);
      await until(() => victim.events.some((e) => e.event === "inside"), "the victim inside its 12th message");
      victim.child.kill("SIGKILL");
      await victim.exited;
      const before = await db.executions();

      const survivor = consumer("survivor", 0);
      await until(async () => (await db.executions()).size === MESSAGES, "every message's effect");
      await until(async () => (await channel.checkQueue(queue)).messageCount === 0, "the queue drained");
      await new Promise((resolve) => setTimeout(resolve, 300));
      survivor.child.kill("SIGTERM");

      const executions = await db.executions();
      const records = await recordsByStatus(db.pool, db.table);
      const duplicates = [...victim.events, ...survivor.events].filter((e) => e.event === "duplicate").length;
      for (let i = 0; i < MESSAGES + REPEATS; i++) figures.record(200, 0, false);
      figures.duplicatesServed = duplicates;
      expect([executions.size, sum(executions), doubleExecutions(executions)]).toEqual([MESSAGES, MESSAGES, 0]);
      expect(records).toEqual({ SUCCESS: MESSAGES });
      figures.save({
        executions: sum(executions),
        doubleExecutions: doubleExecutions(executions),
        notes: `${MESSAGES} messages + ${REPEATS} republished ids; killed inside its 12th transaction with ${sum(before)} effects committed; consumeInTransaction, prefetch 4; ${duplicates} deliveries answered duplicate`,
      });
    });
  },
);
