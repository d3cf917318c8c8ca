import { PreconditionFailedError, RelcastError } from "../core/errors.js";
import { redactUrl } from "../core/redact-url.js";

export type WriteCondition = "if-match" | "if-none-match";

/** What was being done, so an error can say where it happened. */
export interface S3ErrorContext {
  operation: string;
  bucket: string;
  key?: string;
  endpoint?: string;
  /** Set on conditional writes: a lost condition becomes PreconditionFailedError. */
  condition?: WriteCondition;
}

interface SdkErrorShape {
  name?: string;
  code?: string;
  Code?: string;
  message?: string;
  $metadata?: { httpStatusCode?: number };
}

const NETWORK_CODES = new Set(["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "ECONNRESET", "ETIMEDOUT", "EHOSTUNREACH", "ENETUNREACH", "EPIPE"]);
const CREDENTIAL_NAMES = new Set(["InvalidAccessKeyId", "SignatureDoesNotMatch", "InvalidToken", "ExpiredToken", "CredentialsProviderError"]);

export function httpStatusOf(err: unknown): number | undefined {
  return (err as SdkErrorShape | undefined)?.$metadata?.httpStatusCode;
}

function nameOf(err: unknown): string {
  const e = err as SdkErrorShape | undefined;
  return e?.name ?? e?.Code ?? "";
}

/** 404 of any flavour: NoSuchKey on GET, bodiless NotFound on HEAD. */
export function isNotFound(err: unknown): boolean {
  const name = nameOf(err);
  return name === "NoSuchKey" || name === "NotFound" || (httpStatusOf(err) === 404 && name !== "NoSuchBucket");
}

function isNetworkError(err: unknown): boolean {
  const e = err as SdkErrorShape & { cause?: SdkErrorShape };
  const code = e?.code ?? e?.cause?.code ?? "";
  return NETWORK_CODES.has(code) || e?.name === "TimeoutError" || (e?.$metadata?.httpStatusCode === undefined && /connect|socket|network|getaddrinfo/i.test(e?.message ?? ""));
}

function where(ctx: S3ErrorContext): string {
  return `s3://${ctx.bucket}${ctx.key ? `/${ctx.key}` : ""}`;
}

/**
 * Turns an SDK error into what the pipeline understands: PreconditionFailedError
 * for a lost conditional write, E_NETWORK when the endpoint cannot be
 * reached, otherwise a RelcastError E_STORE whose hint names the fix.
 */
export function mapS3Error(err: unknown, ctx: S3ErrorContext): Error {
  if (err instanceof RelcastError || err instanceof PreconditionFailedError) return err;
  const status = httpStatusOf(err);
  const name = nameOf(err);
  const said = (err as SdkErrorShape)?.message ?? String(err);
  // An SDK message can quote the endpoint it failed to reach: never with its password or signed query.
  const detail = `${name || "error"}${status ? ` (HTTP ${status})` : ""}: ${ctx.endpoint ? said.split(ctx.endpoint).join(redactUrl(ctx.endpoint)) : said}`;
  const fail = (message: string, hint: string) => new RelcastError("E_STORE", `${ctx.operation} ${where(ctx)} failed: ${message}`, hint, { cause: err });

  if (name === "NoSuchUpload") {
    // Raised where a Complete (or a part) found its upload gone and no object of its own at the key (s3-complete-recovery.ts).
    return fail(
      "the multipart upload was no longer there (NoSuchUpload): it was aborted before it was completed, and nothing was written to this key",
      "another relcast run, `relcast gc` or a bucket lifecycle rule that aborts incomplete multipart uploads may have aborted it; run the same command again (it uploads the file anew)",
    );
  }
  if (ctx.condition) {
    // 409 ConditionalRequestConflict: a concurrent write raced ours; callers re-read and retry.
    if (status === 412 || name === "PreconditionFailed" || status === 409 || name === "ConditionalRequestConflict") {
      return new PreconditionFailedError(ctx.key ?? "", ctx.condition);
    }
    // S3 answers If-Match on a missing key with 404: the object we expected is gone.
    if (ctx.condition === "if-match" && isNotFound(err)) return new PreconditionFailedError(ctx.key ?? "", ctx.condition);
  }
  if (name === "NoSuchBucket" || (ctx.operation === "HeadBucket" && status === 404)) {
    return fail(`bucket "${ctx.bucket}" does not exist`, `create the bucket, or fix the bucket name in --store / s3 config${ctx.endpoint ? ` (endpoint ${redactUrl(ctx.endpoint)})` : ""}`);
  }
  if (CREDENTIAL_NAMES.has(name) || /credential/i.test(name)) {
    return fail(detail, "check AWS credentials: AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, AWS_PROFILE, or the OIDC role in CI");
  }
  if (status === 403 || name === "AccessDenied" || name === "Forbidden") {
    // A HEAD answer has no body, so S3 cannot say whether the key is unknown or only lacks permission.
    const shown = name && !["AccessDenied", "Unknown", "Forbidden", "403"].includes(name) ? ` (${name})` : "";
    return fail(`access denied${shown}`, `check the AWS credentials in use (AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, AWS_PROFILE, or the OIDC role in CI) and that they may s3:GetObject, s3:PutObject, s3:ListBucket and s3:DeleteObject on bucket "${ctx.bucket}"`);
  }
  if (/region is missing/i.test((err as SdkErrorShape)?.message ?? "")) {
    return fail("no region configured", "set s3.region in the config or AWS_REGION in the environment");
  }
  if (isNetworkError(err)) {
    // The network class (exit 13), as the exit-code table promises: the store may be fine, the way to it is not.
    return new RelcastError("E_NETWORK", `${ctx.operation} ${where(ctx)} failed: endpoint unreachable (${detail})`, `check s3.endpoint${ctx.endpoint ? ` (${redactUrl(ctx.endpoint)})` : ""}, the network and any proxy; the request was retried with backoff`, { cause: err });
  }
  if (status === 501 || name === "NotImplemented") {
    return fail(detail, "this S3-compatible provider lacks a feature relcast needs (conditional writes); see docs/s3-store.md");
  }
  return fail(detail, status && status >= 500 ? "the store kept failing after retries; try again later" : "see the provider's error code above");
}
