// The DynamoDB table of a block whose store is DynamoDB: rendered from the block's own definition into two JSON files.
import { existsSync } from "node:fs";
import path from "node:path";
import type { Registry, RegistryFeature } from "../registry/types.js";
import { BlocksError } from "../utils/errors.js";
import { insideProject } from "../utils/files.js";
import type { RenderedFile } from "./rendered-file.js";
import { importRegistryModule } from "./schemas.js";

/** Where the files go: `aws dynamodb create-table --cli-input-json file://dynamodb/<table>.create-table.json` takes them as they are. */
export const DYNAMODB_FOLDER = "dynamodb";

/** The two inputs, as the AWS SDK and the AWS CLI take them (`CreateTable`, `UpdateTimeToLive`). */
export type DynamoDbTableDefinition = {
  createTable: Record<string, unknown>;
  updateTimeToLive: Record<string, unknown>;
};

export type DynamoDbTablePlan = {
  block: string;
  table: string;
  definition: DynamoDbTableDefinition;
  /** `create-table` then `update-time-to-live`, project-relative. */
  paths: { createTable: string; updateTimeToLive: string };
  /** Files to write; empty when both are already on disk (then `--apply` runs those, your edits included). */
  files: RenderedFile[];
};

/**
 * Renders the table from the block's `dynamoDbTableDefinition(table)`, or finds the files already written.
 *
 * @example
 * const plan = await planDynamoDbTable({ root: "/app", registry, block: "idempotency", feature, table: "idempotency_records" });
 * plan.paths.createTable; // "dynamodb/idempotency_records.create-table.json"
 */
export async function planDynamoDbTable(input: {
  root: string;
  registry: Registry;
  block: string;
  feature: RegistryFeature;
  table: string;
}): Promise<DynamoDbTablePlan> {
  const table = checkDynamoDbTableName(input.table);
  const file = path.resolve(input.registry.root, input.feature.dynamoDbTable as string);
  const { dynamoDbTableDefinition } = await importRegistryModule(file, input.registry.root);
  if (typeof dynamoDbTableDefinition !== "function") {
    throw new BlocksError("INVALID_REGISTRY", `The registry module ${file} does not export dynamoDbTableDefinition().`);
  }
  const definition = (dynamoDbTableDefinition as (table: string) => DynamoDbTableDefinition)(table);
  const paths = {
    createTable: `${DYNAMODB_FOLDER}/${table}.create-table.json`,
    updateTimeToLive: `${DYNAMODB_FOLDER}/${table}.update-time-to-live.json`,
  };
  const rendered = [
    { path: paths.createTable, content: `${JSON.stringify(definition.createTable, null, 2)}\n` },
    { path: paths.updateTimeToLive, content: `${JSON.stringify(definition.updateTimeToLive, null, 2)}\n` },
  ];
  const files = rendered.filter((candidate) => !existsSync(insideProject(input.root, candidate.path)));
  return { block: input.block, table, definition, paths, files };
}

/**
 * DynamoDB's own rule for a table name: 3 to 255 letters, digits, `_`, `-` and `.`.
 *
 * @example
 * checkDynamoDbTableName("payments-idempotency"); // returns it
 */
export function checkDynamoDbTableName(table: string): string {
  if (/^[A-Za-z0-9_.-]{3,255}$/.test(table)) return table;
  throw new BlocksError("INVALID_TABLE_NAME", `"${table}" is not a valid DynamoDB table name.`, {
    suggestion: "Use 3 to 255 letters, digits, '_', '-' or '.': --table idempotency_records",
  });
}
