import type { z } from "zod";
export const SCHEMA_FILE: string;
export const REFERENCE_FILE: string;
export function configJsonSchema(schema: z.ZodType): Record<string, unknown>;
export function configJsonSchemaText(schema: z.ZodType): string;
export function configReferenceMarkdown(schema: z.ZodType): string;
