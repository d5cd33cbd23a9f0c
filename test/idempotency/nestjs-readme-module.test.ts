// The idempotency README's NestJS module and TypeORM migration, run as written: a Nest + TypeORM user pastes them, so
// the migration must create the table, and the module share the app's DataSource, start the maintenance jobs with the
// app, stop them at shutdown and leave the DataSource for the app's own module to destroy (it once destroyed it under
// TypeOrmModule). Found by trying the block on a `nest new` project.
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { randomUUID } from "node:crypto";
import { Global, Module, type DynamicModule, type OnApplicationShutdown } from "@nestjs/common";
import { NestFactory } from "@nestjs/core";
import { DataSource, type MigrationInterface } from "typeorm";
import { afterAll, describe, expect, it, vi } from "vitest";
import type { IdempotencyHandler } from "@/blocks/idempotency";
import { IDEMPOTENCY_HANDLER } from "@/blocks/idempotency/adapters/nestjs";
import { freshDatabase } from "../cli/fresh-database.js";

// In a project `add` copies the TypeORM variant to setup/database.ts; here that file is the pg one.
vi.mock("@/blocks/idempotency/setup/database", () => import("@/blocks/idempotency/setup/database-typeorm"));

const REPO = path.resolve(import.meta.dirname, "../..");
const url = process.env.DATABASE_URL;

/** The README's ts block that holds `marker`, written where vitest resolves `@/blocks` and the repo's packages. */
function readmeSnippet(marker: string, file: string): string {
  const readme = readFileSync(path.join(REPO, "registry/idempotency/README.md"), "utf8");
  const block = [...readme.matchAll(/```ts\n([\s\S]*?)```/g)]
    .map((match) => (match[1] ?? "").replace(/^ {3}/gm, ""))
    .find((code) => code.includes(marker));
  if (!block) throw new Error(`the README has no snippet with ${marker}`);
  const dir = path.join(import.meta.dirname, ".tmp", `readme-nest-${randomUUID()}`); // inside tsconfig.json's "test": decorators on
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, file), block);
  return path.join(dir, file);
}

/** What TypeOrmModule.forRoot gives the app: an initialized DataSource, destroyed by its own module at shutdown. */
function appDatabase(dataSource: DataSource, destroyedBy: string[]): DynamicModule {
  @Global()
  @Module({})
  class AppDatabaseModule implements OnApplicationShutdown {
    async onApplicationShutdown() {
      destroyedBy.push("app");
      await dataSource.destroy();
    }
  }
  return {
    module: AppDatabaseModule,
    providers: [{ provide: DataSource, useValue: dataSource }],
    exports: [DataSource],
  };
}

describe.skipIf(!url)("the README's NestJS module on TypeORM (needs DATABASE_URL)", () => {
  let database: Awaited<ReturnType<typeof freshDatabase>> | undefined;
  afterAll(async () => {
    await database?.drop();
    rmSync(path.join(import.meta.dirname, ".tmp"), { recursive: true, force: true });
  });

  it("its TypeORM migration creates the table, and its module shares the app's DataSource, starts the jobs with the app, and on close leaves the DataSource to the app's module and no signal listener behind", async () => {
    const { IdempotencyModule } = (await import(readmeSnippet("export class IdempotencyModule", "module.ts"))) as {
      IdempotencyModule: new (...args: never[]) => unknown;
    };
    const migrations = Object.values(
      (await import(readmeSnippet("implements MigrationInterface", "migration.ts"))) as Record<
        string,
        new () => MigrationInterface
      >,
    );
    database = await freshDatabase(url ?? "");
    const dataSource = await new DataSource({ type: "postgres", url: database.url, migrations }).initialize();
    expect((await dataSource.runMigrations()).length).toBe(1);
    const destroyedBy: string[] = [];
    const destroy = vi.spyOn(dataSource, "destroy");
    const listeners = () => process.listenerCount("SIGTERM") + process.listenerCount("SIGINT");
    const idle = listeners();

    @Module({ imports: [appDatabase(dataSource, destroyedBy), IdempotencyModule] })
    class AppModule {}
    const app = await NestFactory.createApplicationContext(AppModule, { logger: false });
    expect(listeners()).toBe(idle + 2); // startMaintenance() ran at bootstrap

    const handler = app.get<IdempotencyHandler<unknown>>(IDEMPOTENCY_HANDLER);
    const scope = { operation: "POST /payments", userId: "u_1", key: randomUUID(), payload: { amount: 1 } };
    let runs = 0;
    const first = await handler.execute(scope, () => ({ id: ++runs }));
    expect(await handler.execute(scope, () => ({ id: ++runs }))).toEqual({ response: first.response, replayed: true });
    expect(runs).toBe(1);

    await app.close();
    expect(destroyedBy).toEqual(["app"]);
    expect(destroy).toHaveBeenCalledTimes(1);
    expect(dataSource.isInitialized).toBe(false);
    expect(listeners()).toBe(idle);
  });
});
