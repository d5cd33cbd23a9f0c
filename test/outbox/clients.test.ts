// addToOutbox on every client's own transaction object: the message commits and rolls back with the business write.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { addToOutbox } from "@/blocks/outbox/add-to-outbox";
import { openClient, type ClientName, type OpenedClient } from "../idempotency/support/client-harness";
import { databaseUrl, freshOutbox, uniqueName } from "./support/outbox-tables";

const clients: Array<[ClientName, string, boolean]> = [
  ["pglite", "PGlite transaction", true],
  ["drizzle-pglite", "Drizzle tx over PGlite", true],
  ["pg-pool", "[DATABASE_URL] pg PoolClient", Boolean(databaseUrl)],
  ["pg-client", "[DATABASE_URL] pg Client", Boolean(databaseUrl)],
  ["postgres-js", "[DATABASE_URL] postgres.js sql.begin", Boolean(databaseUrl)],
  ["drizzle-pg", "[DATABASE_URL] Drizzle tx over node-postgres", Boolean(databaseUrl)],
  ["drizzle-postgres-js", "[DATABASE_URL] Drizzle tx over postgres.js", Boolean(databaseUrl)],
  ["prisma", "[DATABASE_URL] Prisma interactive tx", Boolean(databaseUrl)],
  ["kysely", "[DATABASE_URL] Kysely trx", Boolean(databaseUrl)],
];

for (const [name, label, available] of clients) {
  describe.skipIf(!available)(`addToOutbox on ${label}`, { timeout: 60_000 }, () => {
    let opened: OpenedClient<unknown>;
    let outbox: { table: string; drop(): Promise<void> };
    let orders: string;
    beforeAll(async () => {
      opened = await openClient(name);
      outbox = await freshOutbox(opened.client, "outbox_clients");
      orders = uniqueName("outbox_orders");
      await opened.client.query(`CREATE TABLE ${orders} (id serial PRIMARY KEY, key text NOT NULL)`, []);
    });
    afterAll(async () => {
      await outbox?.drop();
      await opened?.client.query(`DROP TABLE IF EXISTS ${orders}`, []);
      await opened?.close();
    });

    const rows = async () =>
      (
        await opened.client.query(
          `SELECT o.id::text, o.topic, o.key, o.payload, o.headers FROM ${outbox.table} o ORDER BY o.created_at`,
          [],
        )
      ).rows;

    it("a committed transaction's message is there with its write; a rolled-back one's is not", async () => {
      const id = await opened.client.transaction(async (_sql, tx) => {
        await opened.write(tx, orders, "ord_1");
        return addToOutbox(
          tx as never,
          {
            topic: "order.created",
            key: "ord_1",
            payload: { amount: 1200, lines: [1, 2] },
            headers: { tenant: "acme" },
          },
          { table: outbox.table },
        );
      });
      await opened.client
        .transaction(async (_sql, tx) => {
          await opened.write(tx, orders, "ord_2");
          await addToOutbox(
            tx as never,
            { topic: "order.created", key: "ord_2", payload: { amount: 1 } },
            { table: outbox.table },
          );
          throw new Error("card declined");
        })
        .catch(() => {});
      expect(await rows()).toEqual([
        {
          id,
          topic: "order.created",
          key: "ord_1",
          payload: { amount: 1200, lines: [1, 2] },
          headers: { tenant: "acme" },
        },
      ]);
      expect((await opened.client.query(`SELECT key FROM ${orders}`, [])).rows).toEqual([{ key: "ord_1" }]);
    });

    it("with notify, the same one statement also notifies (its void result is no problem for the client)", async () => {
      const id = await opened.client.transaction((_sql, tx) =>
        addToOutbox(tx as never, { topic: "order.paid", payload: [1] }, { table: outbox.table, notify: true }),
      );
      expect(await rows()).toContainEqual({ id, topic: "order.paid", key: null, payload: [1], headers: {} });
    });
  });
}
