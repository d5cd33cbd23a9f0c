// The demo's Express app: the vendored idempotency block on PGlite, with the migration `blocks migrate` wrote.
import { readdirSync, readFileSync } from "node:fs";
import { PGlite } from "@electric-sql/pglite";
import express from "express";
import { IdempotencyHandler, PostgresStore } from "@/blocks/idempotency";
import { idempotent } from "@/blocks/idempotency/adapters/express";

const db = new PGlite();
// Run exactly the SQL the CLI emitted, so the demo proves the migration creates a working schema.
for (const file of readdirSync("migrations").filter((name) => name.endsWith(".sql"))) {
  await db.exec(readFileSync(`migrations/${file}`, "utf8"));
}

const handler = new IdempotencyHandler(new PostgresStore(db));

let charges = 0;
const app = express();
app.use(express.json());

app.post(
  "/payments",
  idempotent(handler, {
    getUserId: (req) => req.header("x-user-id") ?? "demo-user",
    requireKey: true,
    run: async (req) => {
      // The side effect: slow enough that a concurrent duplicate arrives while it runs.
      await new Promise((resolve) => setTimeout(resolve, 400));
      charges += 1;
      const { amount, currency } = req.body as { amount: number; currency: string };
      return { status: 201, body: { id: `pay_${charges}`, amount, currency, status: "captured" } };
    },
  }),
);

app.get("/charges", (_req, res) => {
  res.json({ charges });
});

const server = app.listen(0, () => {
  const address = server.address();
  console.log(`READY ${typeof address === "object" && address ? address.port : ""}`);
});
