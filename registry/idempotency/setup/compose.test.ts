// The composition's close: it ends the database client it opened, and leaves one the app passed in to the app.
import { describe, expect, it } from "vitest";
import { MemoryStore } from "../testing/memory-store";
import { composeIdempotency } from "./compose";
import type { DatabaseVariant } from "./variants";

type FakeDb = { name: string; ended: boolean };

function variant(opened: FakeDb[]): DatabaseVariant<FakeDb, never> {
  return {
    connectDatabase: () => {
      const db = { name: "the setup's own", ended: false };
      opened.push(db);
      return db;
    },
    openDatabase: (db) => ({
      store: new MemoryStore(),
      jobs: () => ({ start: () => ({ stop: () => {} }), runOnce: () => Promise.resolve() }),
      end: () => {
        db.ended = true;
        return Promise.resolve();
      },
    }),
  };
}

describe("composeIdempotency's close()", () => {
  it("ends the client it opened itself", async () => {
    const opened: FakeDb[] = [];
    await composeIdempotency(variant(opened), { redis: null }).close();
    expect(opened).toEqual([{ name: "the setup's own", ended: true }]);
  });

  it("leaves the app's own client open: the app's other work still uses it, and the app closes it", async () => {
    const opened: FakeDb[] = [];
    const app = { name: "the app's", ended: false };
    await composeIdempotency(variant(opened), { db: app, redis: null }).close();
    expect(app.ended).toBe(false);
    expect(opened).toEqual([]);
  });
});
