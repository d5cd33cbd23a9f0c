// Writes planned migrations and DynamoDB table files into the project, and records each migration in the lock.
import { writeLock, type Lock } from "../config/lock-file.js";
import { assertWritable, insideProject, writeProjectFile } from "../utils/files.js";
import { highlighter } from "../utils/highlighter.js";
import { logger } from "../utils/logger.js";
import type { DialectMigrationPlan } from "./dialect-migration.js";
import type { DynamoDbTablePlan } from "./dynamodb-table.js";
import type { MigrationPlan } from "./render-migration.js";
import type { RenderedFile } from "./rendered-file.js";

/**
 * Writes each DynamoDB table's JSON files that are not on disk yet; `hint`: says how to create the table.
 *
 * @example
 * await writeTables(root, [await planDynamoDbTable({ root, registry, block, feature, table })], { hint: true });
 */
export async function writeTables(
  root: string,
  tables: DynamoDbTablePlan[],
  { hint }: { hint: boolean },
): Promise<string[]> {
  const written: string[] = [];
  for (const table of tables) {
    if (!table.files.length) {
      logger.info(`DynamoDB table ${table.table} already written: ${table.paths.createTable}`);
      continue;
    }
    written.push(...(await writeFiles(root, table.files)));
    if (hint)
      logger.info(
        `Create it with \`blocks migrate --apply\`, or \`aws dynamodb create-table --cli-input-json file://${table.paths.createTable}\` ` +
          `then \`aws dynamodb update-time-to-live --cli-input-json file://${table.paths.updateTimeToLive}\`.`,
      );
  }
  return written;
}

/** Checks every file can be written before writing any, so a refusal leaves nothing half-done. */
async function writeFiles(root: string, files: RenderedFile[]): Promise<string[]> {
  const targets = files.map((file) => ({ ...file, absolute: insideProject(root, file.path) }));
  for (const file of targets) await assertWritable(file.absolute);
  for (const file of targets) {
    await writeProjectFile(file.absolute, file.content);
    logger.success(`Wrote ${highlighter.path(file.path)}`);
  }
  return files.map((file) => file.path);
}

/**
 * Writes each migration not written yet, warns its notes, and records its first file in the lock.
 *
 * @example
 * await writeMigrations(root, planMigrations(inputs), lock); // ["migrations/20260101120000_create_idempotency_records.sql"]
 */
export async function writeMigrations(
  root: string,
  plans: Array<MigrationPlan | DialectMigrationPlan>,
  lock: Lock,
): Promise<string[]> {
  const written: string[] = [];
  for (const plan of plans) {
    if (plan.existing) {
      logger.info(`Migration for ${plan.table} already written: ${plan.existing}`);
      continue;
    }
    written.push(...(await writeFiles(root, plan.files)));
    for (const note of "notes" in plan ? plan.notes : []) logger.warn(note);
    lock.migrations[plan.table] = plan.files[0]?.path ?? "";
  }
  if (written.length) await writeLock(root, lock);
  return written;
}
