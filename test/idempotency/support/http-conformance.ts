// One HTTP suite for every adapter: a framework's test file gives a small driver, these files the behaviour.
import { afterAll, beforeAll, describe } from "vitest";
import { PostgresStore } from "@/blocks/idempotency/stores/postgres-store";
import { checklistSuite } from "./http-checklist";
import type { HttpDriver, Style } from "./http-driver";
import { harness, memoryFixture, type StoreFixture } from "./http-harness";
import { rulesSuite } from "./http-rules";
import {
  dropTables,
  openTestDatabase,
  SERVICE_START_TIMEOUT_MS,
  SUITE_TEST_TIMEOUT_MS,
  testDatabaseNames,
  uniqueTableName,
  type TestDatabase,
} from "./services";

export * from "./http-driver";

/**
 * Runs the suite for one framework: the checklist for each style against memory and PostgreSQL
 * (PGlite, plus DATABASE_URL when set; one database per test file), then the HTTP rules per style.
 *
 * @example
 * runHttpConformance(expressDriver); // in adapters/express.test.ts
 */
export function runHttpConformance(driver: HttpDriver): void {
  const styles: Style[] = ["wrapper", "capture"];
  const stores: Array<"memory" | TestDatabase["name"]> = ["memory", ...testDatabaseNames()];

  describe.each(stores)("%s store", { timeout: SUITE_TEST_TIMEOUT_MS }, (kind) => {
    let open: () => StoreFixture = memoryFixture;
    let close = async () => {};
    beforeAll(async () => {
      if (kind === "memory") return;
      const db = await openTestDatabase(kind);
      const table = uniqueTableName("http");
      const store = new PostgresStore(db.client, { table });
      await store.createSchema();
      // PostgreSQL keeps its own clock: time passes for real, so tests that need it use tiny TTLs.
      open = () => ({ store, advance: (ms) => new Promise((resolve) => setTimeout(resolve, ms)) });
      close = async () => {
        await dropTables(db.client, table);
        await db.close();
      };
    }, SERVICE_START_TIMEOUT_MS);
    afterAll(() => close());

    describe.each(styles)("%s style", (style) => checklistSuite(harness(driver, style, () => open())));
  });

  describe.each(styles)("%s style, any store", { timeout: SUITE_TEST_TIMEOUT_MS }, (style) => rulesSuite(harness(driver, style, memoryFixture), style, driver));
}
