// One HTTP suite for every adapter: a framework's test file gives a small driver, these files the behaviour.
import { afterAll, beforeAll, describe } from "vitest";
import { checklistSuite } from "./http-checklist";
import type { HttpDriver, Style } from "./http-driver";
import { harness, memoryFixture, type StoreFixture } from "./http-harness";
import { rulesSuite } from "./http-rules";
import { waitSuite } from "./http-wait";
import { SERVICE_START_TIMEOUT_MS, SUITE_TEST_TIMEOUT_MS } from "./services";
import { mysqlStoreKinds } from "./mysql-store-harness";
import { sqliteStoreKinds } from "./sqlite-store-harness";
import { memoryStoreKind, postgresStoreKinds, type StoreHarness, type StoreKind } from "./store-harness";

export * from "./http-driver";

/**
 * The stores every framework's checklist runs on: memory, PostgreSQL (PGlite, plus DATABASE_URL when
 * set), SQLite (better-sqlite3, libSQL) and MySQL / MariaDB (MYSQL_URL when set).
 */
export const defaultHttpStores: StoreKind[] = [
  memoryStoreKind,
  ...postgresStoreKinds,
  ...sqliteStoreKinds,
  ...mysqlStoreKinds,
];

/**
 * Runs the suite for one framework: the checklist for each style against each store (opened once
 * per test file, one fresh store per style), then the HTTP rules per style on a MemoryStore.
 *
 * @example
 * runHttpConformance(expressDriver); // in adapters/express.test.ts
 * runHttpConformance(expressDriver, [...defaultHttpStores, ...scaleOutStoreKinds]);
 */
export function runHttpConformance(driver: HttpDriver, stores: StoreKind[] = defaultHttpStores): void {
  const styles: Style[] = ["wrapper", "capture"];

  describe.each(stores)("$name", { timeout: SUITE_TEST_TIMEOUT_MS }, (kind: StoreKind) => {
    let opened: Awaited<ReturnType<StoreKind["open"]>> | undefined;
    beforeAll(async () => void (opened = await kind.open()), SERVICE_START_TIMEOUT_MS);
    afterAll(() => opened?.close());

    describe.each(styles)("%s style", (style) => {
      let current: StoreHarness | undefined;
      beforeAll(async () => void (current = await opened!.fresh()), SERVICE_START_TIMEOUT_MS);
      afterAll(() => current?.close());
      const fixture = (): StoreFixture => ({ store: current!.store, advance: (ms) => current!.advanceTime(ms) });
      const t = harness(driver, style, fixture);
      checklistSuite(t, kind);
      waitSuite(t);
    });
  });

  describe.each(styles)("%s style, any store", { timeout: SUITE_TEST_TIMEOUT_MS }, (style) =>
    rulesSuite(harness(driver, style, memoryFixture), style, driver),
  );
}
