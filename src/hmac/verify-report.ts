import type { VerifyResult } from "./verify-result.js";

/**
 * The validator's answer as text lines: `valid`, or the failing check, why,
 * and what the caller should have sent. Never the secret or a signature.
 */
export function formatVerifyReport(result: VerifyResult): string[] {
  if (result.ok) return ["valid"];
  const lines = [`invalid: ${result.check}`, `reason: ${result.message}`];
  if (result.clientId !== undefined) lines.push(`client id: ${JSON.stringify(result.clientId)}`);
  if (result.expectedDigest !== undefined) lines.push(`expected Digest header: ${result.expectedDigest}`);
  if (result.expectedSigningString !== undefined) {
    lines.push("expected signing string (lines joined by a single \\n, no trailing newline):");
    for (const line of result.expectedSigningString.split("\n")) lines.push(`  ${line}`);
    lines.push(`expected signing string as JSON: ${JSON.stringify(result.expectedSigningString)}`);
  }
  return lines;
}
